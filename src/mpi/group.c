/*
 * Group entry points (MPI-3.1 6.3): groups are lists of world ranks
 * (src/comm/group.c); errors go to MPI_COMM_WORLD's handler. Results that
 * are empty are MPI_GROUP_EMPTY.
 */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_impl.h"
#include "mpi/mpi_impl.h"

#define W MPI_COMM_WORLD

static int bad_group(MPI_Group h, const char *fn)
{
    if (h == MPI_GROUP_NULL)
        return loom_mpi_err(W, MPI_ERR_GROUP, fn, "the group is MPI_GROUP_NULL");
    return loom_mpi_err(W, MPI_ERR_GROUP, fn, "0x%x is not a valid group of this rank",
                        (unsigned)h);
}

#define GROUP_ARG(g, h, fn)                                                                        \
    struct loom_group *g;                                                                          \
    do {                                                                                           \
        int rc_ = loom_mpi_check_init(fn);                                                         \
        if (rc_)                                                                                   \
            return rc_;                                                                            \
        if (!(g = loom_group_lookup(h)))                                                           \
            return bad_group(h, fn);                                                               \
    } while (0)

#define NULL_ARG(p, fn)                                                                            \
    do {                                                                                           \
        if (!(p))                                                                                  \
            return loom_mpi_err(W, MPI_ERR_ARG, fn, "%s is NULL", #p);                             \
    } while (0)

static int nomem(const char *fn)
{
    return loom_mpi_err(W, MPI_ERR_NO_MEM, fn, "out of memory");
}

/* pos[w] = rank of world rank w in g, or -1 (caller frees). */
static int *positions(const struct loom_group *g)
{
    int *pos = malloc((size_t)loom_job.nranks * sizeof *pos);
    if (!pos)
        return NULL;
    memset(pos, 0xff, (size_t)loom_job.nranks * sizeof *pos);
    for (int i = 0; i < g->size; i++)
        pos[g->world[i]] = i;
    return pos;
}

/* A new group of the n world ranks in w; its handle in *newgroup. */
static int make_group(int n, const int *w, MPI_Group *newgroup, const char *fn)
{
    struct loom_group *g = loom_group_new(n);
    if (!g)
        return nomem(fn);
    if (n)
        memcpy(g->world, w, (size_t)n * sizeof *w);
    *newgroup = g->handle;
    return MPI_SUCCESS;
}

int PMPI_Group_size(MPI_Group group, int *size)
{
    GROUP_ARG(g, group, "MPI_Group_size");
    NULL_ARG(size, "MPI_Group_size");
    *size = g->size;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Group_size);

int PMPI_Group_rank(MPI_Group group, int *rank)
{
    GROUP_ARG(g, group, "MPI_Group_rank");
    NULL_ARG(rank, "MPI_Group_rank");
    *rank = loom_group_rank_of(g, loom_rank_self()->rank);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Group_rank);

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[])
{
    const char *fn = "MPI_Group_translate_ranks";
    GROUP_ARG(g1, group1, fn);
    GROUP_ARG(g2, group2, fn);
    if (n < 0)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "n = %d is negative", n);
    if (n > 0 && (!ranks1 || !ranks2))
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "ranks1 or ranks2 is NULL");
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= g1->size))
            return loom_mpi_err(W, MPI_ERR_RANK, fn, "ranks1[%d] = %d is not in a group of size %d",
                                i, ranks1[i], g1->size);
    int *pos = positions(g2);
    if (!pos)
        return nomem(fn);
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        int p = pos[g1->world[ranks1[i]]];
        ranks2[i] = p < 0 ? MPI_UNDEFINED : p;
    }
    free(pos);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Group_translate_ranks);

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    GROUP_ARG(g1, group1, "MPI_Group_compare");
    GROUP_ARG(g2, group2, "MPI_Group_compare");
    NULL_ARG(result, "MPI_Group_compare");
    *result = loom_members_compare(g1->size, g1->world, g2->size, g2->world);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Group_compare);

enum setop { UNION, INTERSECTION, DIFFERENCE };

static int set_op(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, enum setop op,
                  const char *fn)
{
    GROUP_ARG(g1, group1, fn);
    GROUP_ARG(g2, group2, fn);
    NULL_ARG(newgroup, fn);
    int *pos2 = positions(g2);
    int *w = malloc((size_t)(g1->size + g2->size + 1) * sizeof *w);
    if (!pos2 || !w) {
        free(pos2);
        free(w);
        return nomem(fn);
    }
    int n = 0;
    for (int i = 0; i < g1->size; i++) {
        bool in2 = pos2[g1->world[i]] >= 0;
        if (op == UNION || (op == INTERSECTION) == in2)
            w[n++] = g1->world[i];
    }
    if (op == UNION) {
        int *pos1 = positions(g1);
        if (!pos1) {
            free(pos2);
            free(w);
            return nomem(fn);
        }
        for (int i = 0; i < g2->size; i++)
            if (pos1[g2->world[i]] < 0)
                w[n++] = g2->world[i];
        free(pos1);
    }
    int rc = make_group(n, w, newgroup, fn);
    free(pos2);
    free(w);
    return rc;
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, newgroup, UNION, "MPI_Group_union");
}
LOOM_MPI_ALIAS(Group_union);

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, newgroup, INTERSECTION, "MPI_Group_intersection");
}
LOOM_MPI_ALIAS(Group_intersection);

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, newgroup, DIFFERENCE, "MPI_Group_difference");
}
LOOM_MPI_ALIAS(Group_difference);

/* Checks a list of n distinct ranks of g; marks them in sel[] (size g). */
static int check_ranks(const struct loom_group *g, int n, const int ranks[], unsigned char *sel,
                       const char *fn)
{
    if (n < 0 || n > g->size)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "n = %d is not in [0, %d]", n, g->size);
    if (n > 0 && !ranks)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "ranks is NULL");
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return loom_mpi_err(W, MPI_ERR_RANK, fn, "rank %d is not in a group of size %d",
                                ranks[i], g->size);
        if (sel[ranks[i]])
            return loom_mpi_err(W, MPI_ERR_RANK, fn, "rank %d appears twice", ranks[i]);
        sel[ranks[i]] = 1;
    }
    return MPI_SUCCESS;
}

/* The ranks of g selected (keep = 1) or not (keep = 0) by sel, in g's order,
 * or in the order of order[0..n) when given. */
static int select_group(const struct loom_group *g, const unsigned char *sel, int keep, int n,
                        const int *order, MPI_Group *newgroup, const char *fn)
{
    int *w = malloc((size_t)(g->size + 1) * sizeof *w);
    if (!w)
        return nomem(fn);
    int m = 0;
    if (order) {
        for (int i = 0; i < n; i++)
            w[m++] = g->world[order[i]];
    } else {
        for (int i = 0; i < g->size; i++)
            if (sel[i] == keep)
                w[m++] = g->world[i];
    }
    int rc = make_group(m, w, newgroup, fn);
    free(w);
    return rc;
}

static int incl_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup, bool incl,
                     const char *fn)
{
    GROUP_ARG(g, group, fn);
    NULL_ARG(newgroup, fn);
    unsigned char *sel = calloc((size_t)g->size + 1, 1);
    if (!sel)
        return nomem(fn);
    int rc = check_ranks(g, n, ranks, sel, fn);
    if (rc == MPI_SUCCESS && incl && n == 0)
        rc = make_group(0, NULL, newgroup, fn); /* MPI_GROUP_EMPTY (ranks may be NULL) */
    else if (rc == MPI_SUCCESS)
        rc = select_group(g, sel, 0, n, incl ? ranks : NULL, newgroup, fn);
    free(sel);
    return rc;
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl(group, n, ranks, newgroup, true, "MPI_Group_incl");
}
LOOM_MPI_ALIAS(Group_incl);

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl(group, n, ranks, newgroup, false, "MPI_Group_excl");
}
LOOM_MPI_ALIAS(Group_excl);

/* Expands n (first, last, stride) triplets into a rank list (caller frees). */
static int expand_ranges(const struct loom_group *g, int n, int ranges[][3], int **list_p,
                         int *count_p, const char *fn)
{
    if (n < 0)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "n = %d is negative", n);
    if (n > 0 && !ranges)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "ranges is NULL");
    long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0)
            return loom_mpi_err(W, MPI_ERR_ARG, fn, "ranges[%d] has stride 0", i);
        if (first < 0 || first >= g->size)
            return loom_mpi_err(W, MPI_ERR_RANK, fn, "rank %d is not in a group of size %d", first,
                                g->size);
        if (last < 0 || last >= g->size)
            return loom_mpi_err(W, MPI_ERR_RANK, fn, "rank %d is not in a group of size %d", last,
                                g->size);
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            return loom_mpi_err(W, MPI_ERR_ARG, fn, "ranges[%d] = (%d, %d, %d) runs the wrong way",
                                i, first, last, stride);
        total += (last - first) / stride + 1;
        if (total > g->size)
            return loom_mpi_err(W, MPI_ERR_RANK, fn, "the ranges name more than %d ranks", g->size);
    }
    int *list = malloc((size_t)(total + 1) * sizeof *list);
    if (!list)
        return nomem(fn);
    int m = 0;
    for (int i = 0; i < n; i++)
        for (int r = ranges[i][0]; ranges[i][2] > 0 ? r <= ranges[i][1] : r >= ranges[i][1];
             r += ranges[i][2])
            list[m++] = r;
    *list_p = list;
    *count_p = m;
    return MPI_SUCCESS;
}

static int range_op(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup, bool incl,
                    const char *fn)
{
    GROUP_ARG(g, group, fn);
    NULL_ARG(newgroup, fn);
    int *list = NULL, m = 0;
    int rc = expand_ranges(g, n, ranges, &list, &m, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    unsigned char *sel = calloc((size_t)g->size + 1, 1);
    if (!sel) {
        free(list);
        return nomem(fn);
    }
    rc = check_ranks(g, m, list, sel, fn);
    if (rc == MPI_SUCCESS)
        rc = select_group(g, sel, 0, m, incl ? list : NULL, newgroup, fn);
    free(sel);
    free(list);
    return rc;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_op(group, n, ranges, newgroup, true, "MPI_Group_range_incl");
}
LOOM_MPI_ALIAS(Group_range_incl);

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return range_op(group, n, ranges, newgroup, false, "MPI_Group_range_excl");
}
LOOM_MPI_ALIAS(Group_range_excl);

int PMPI_Group_free(MPI_Group *group)
{
    NULL_ARG(group, "MPI_Group_free");
    GROUP_ARG(g, *group, "MPI_Group_free");
    loom_group_release(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Group_free);
