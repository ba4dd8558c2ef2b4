/*
 * Groups: ordered lists of world ranks, owned by the rank that made them.
 * MPI_GROUP_EMPTY is one static object; every operation whose result is
 * empty returns it. Set operations live in src/mpi/group.c.
 */
#include <stdlib.h>

#include "comm/comm_impl.h"
#include "runtime/job.h"
#include "util/handle.h"

static struct loom_group empty_group = {.handle = MPI_GROUP_EMPTY, .owner = -1};

struct loom_group *loom_group_lookup(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY)
        return &empty_group;
    struct loom_group *g = loom_handle_get(LOOM_KIND_GROUP, h);
    struct loom_rank *r = loom_rank_self();
    return g && r && g->owner == r->rank ? g : NULL;
}

struct loom_group *loom_group_new(int size)
{
    if (size == 0)
        return &empty_group;
    struct loom_group *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->world = malloc((size_t)size * sizeof *g->world);
    if (!g->world)
        goto err_free;
    g->size = size;
    g->owner = loom_rank_self()->rank;
    atomic_init(&g->refs, 1);
    g->handle = loom_handle_alloc(LOOM_KIND_GROUP, g);
    if (!g->handle)
        goto err_free;
    return g;

err_free:
    free(g->world);
    free(g);
    return NULL;
}

void loom_group_release(struct loom_group *g)
{
    if (g == &empty_group)
        return;
    if (atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) != 1)
        return;
    loom_handle_free(LOOM_KIND_GROUP, g->handle);
    free(g->world);
    free(g);
}

int loom_group_rank_of(const struct loom_group *g, int w)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == w)
            return i;
    return MPI_UNDEFINED;
}

int loom_members_compare(int n1, const int *w1, int n2, const int *w2)
{
    if (n1 != n2)
        return MPI_UNEQUAL;
    bool same_order = true;
    for (int i = 0; i < n1; i++)
        if (w1[i] != w2[i]) {
            same_order = false;
            break;
        }
    if (same_order)
        return MPI_IDENT;
    /* Same set? Mark the members of w1 in a bitmap over world ranks. */
    int nw = loom_job.nranks;
    unsigned char *in = calloc((size_t)nw, 1);
    if (!in)
        return MPI_UNEQUAL;
    for (int i = 0; i < n1; i++)
        in[w1[i]] = 1;
    int res = MPI_SIMILAR;
    for (int i = 0; i < n2; i++)
        if (!in[w2[i]]) {
            res = MPI_UNEQUAL;
            break;
        }
    free(in);
    return res;
}
