/*
 * Creating communicators by collective agreement (rendezvous.c): Comm_dup,
 * Comm_idup, Comm_split (and split_type), Comm_create, Comm_create_group.
 * The last member to arrive builds the shared parts; every member then makes
 * its own per-rank object. Comm_create meets only the members of the group
 * (the others just advance the parent's sequence number), so no rank waits
 * for a rank that gets MPI_COMM_NULL. Comm_idup waits for nobody: its shared
 * part is made by the first member to arrive, and the last completes all.
 */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_impl.h"
#include "runtime/job.h"

/* Undoes a compute step that failed half-way: one release per member. */
static int compute_failed(int n, struct loom_rdv_out *out)
{
    for (int i = 0; i < n; i++)
        if (out[i].sh)
            loom_comm_shared_release(out[i].sh);
    return LOOM_ERR_NOMEM;
}

/* Every member gets rank i of one new communicator over `arg` (world ranks). */
static int compute_same(int n, const struct loom_rdv_in *in, struct loom_rdv_out *out,
                        const void *arg)
{
    const int *world = arg;
    struct loom_comm_shared *sh = loom_comm_shared_new(n);
    if (!sh)
        return LOOM_ERR_NOMEM;
    memcpy(sh->world_of, world, (size_t)n * sizeof *world);
    for (int i = 0; i < n; i++)
        out[i] = (struct loom_rdv_out){sh, i, NULL, 0};
    return LOOM_OK;
}

static int by_color_key_rank(const void *a, const void *b)
{
    const struct loom_rdv_in *x = a, *y = b;
    if (x->color != y->color)
        return x->color < y->color ? -1 : 1;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* One communicator per color, ordered by (key, parent rank). */
static int compute_split(int n, const struct loom_rdv_in *in, struct loom_rdv_out *out,
                         const void *arg)
{
    struct loom_rdv_in *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return LOOM_ERR_NOMEM;
    int m = 0;
    for (int i = 0; i < n; i++) {
        out[i] = (struct loom_rdv_out){NULL, MPI_UNDEFINED, NULL, 0};
        if (in[i].color != MPI_UNDEFINED)
            v[m++] = in[i];
    }
    qsort(v, (size_t)m, sizeof *v, by_color_key_rank);
    for (int lo = 0, hi; lo < m; lo = hi) {
        for (hi = lo + 1; hi < m && v[hi].color == v[lo].color; hi++)
            ;
        struct loom_comm_shared *sh = loom_comm_shared_new(hi - lo);
        if (!sh) {
            free(v);
            return compute_failed(n, out);
        }
        for (int j = lo; j < hi; j++) {
            sh->world_of[j - lo] = v[j].world;
            out[v[j].rank] = (struct loom_rdv_out){sh, j - lo, NULL, 0};
        }
    }
    free(v);
    return LOOM_OK;
}

/* Makes the caller's object for its result (NULL for MPI_COMM_NULL). */
static int finish(struct loom_comm *parent, int rc, const struct loom_rdv_out *out,
                  struct loom_comm **newc_p)
{
    if (rc != LOOM_OK)
        return rc;
    if (!out->sh) {
        *newc_p = NULL;
        return LOOM_OK;
    }
    rc = loom_comm_new(out->sh, out->rank, parent->errhandler, newc_p);
    if (rc != LOOM_OK)
        loom_comm_shared_release(out->sh);
    return rc;
}

static struct loom_rdv_key whole_key(struct loom_comm *parent, int n)
{
    return (struct loom_rdv_key){.context_id = parent->sh->context_id,
                                 .kind = LOOM_RDV_WHOLE,
                                 .seq_or_tag = (int)loom_comm_priv(parent)->seq++,
                                 .n = n};
}

int loom_comm_dup(struct loom_comm *parent, struct loom_comm **newc_p)
{
    struct loom_rdv_key k = whole_key(parent, parent->sh->size);
    struct loom_rdv_in in = {0, 0, parent->rank, parent->owner, 0};
    struct loom_rdv_out out;
    int rc = loom_rdv_run(&k, parent->rank, &in, compute_same, parent->sh->world_of, &out);
    return finish(parent, rc, &out, newc_p);
}

int loom_comm_idup(struct loom_comm *parent, loom_rdv_done_fn done, void *done_arg,
                   struct loom_comm **newc_p)
{
    struct loom_rdv_key k = whole_key(parent, parent->sh->size);
    struct loom_rdv_out out = {NULL, parent->rank, NULL, 0};
    int rc = loom_rdv_arrive(&k, parent->rank, parent->sh->world_of, done, done_arg, &out.sh);
    if (rc != LOOM_OK) {
        done(done_arg); /* never arrived: nobody else will call it */
        return rc;
    }
    return finish(parent, rc, &out, newc_p);
}

int loom_comm_split(struct loom_comm *parent, int color, int key, struct loom_comm **newc_p)
{
    struct loom_rdv_key k = whole_key(parent, parent->sh->size);
    struct loom_rdv_in in = {color, key, parent->rank, parent->owner, 0};
    struct loom_rdv_out out;
    int rc = loom_rdv_run(&k, parent->rank, &in, compute_split, NULL, &out);
    return finish(parent, rc, &out, newc_p);
}

int loom_comm_create(struct loom_comm *parent, const struct loom_group *g,
                     struct loom_comm **newc_p)
{
    /* Every rank of the parent advances its sequence, members or not. */
    struct loom_rdv_key k = whole_key(parent, g->size);
    int me = loom_group_rank_of(g, parent->owner);
    if (me == MPI_UNDEFINED) {
        *newc_p = NULL;
        return LOOM_OK;
    }
    k.kind = LOOM_RDV_CREATE;
    k.members = g->world;
    struct loom_rdv_in in = {0, 0, parent->rank, parent->owner, 0};
    struct loom_rdv_out out;
    int rc = loom_rdv_run(&k, me, &in, compute_same, g->world, &out);
    return finish(parent, rc, &out, newc_p);
}

int loom_comm_create_group(struct loom_comm *parent, const struct loom_group *g, int tag,
                           struct loom_comm **newc_p)
{
    int me = loom_group_rank_of(g, parent->owner);
    if (me == MPI_UNDEFINED) {
        *newc_p = NULL;
        return LOOM_OK;
    }
    struct loom_rdv_key k = {.context_id = parent->sh->context_id,
                             .kind = LOOM_RDV_GROUP,
                             .seq_or_tag = tag,
                             .n = g->size,
                             .members = g->world};
    struct loom_rdv_in in = {0, 0, parent->rank, parent->owner, 0};
    struct loom_rdv_out out;
    int rc = loom_rdv_run(&k, me, &in, compute_same, g->world, &out);
    return finish(parent, rc, &out, newc_p);
}

/* MPI_Comm_create_from_group: no parent, so the meeting is keyed by the
 * reserved context LOOM_RDV_NO_PARENT, the string tag's hash and the
 * member list; eh is the new communicator's error handler. */
int loom_comm_create_from_group(const struct loom_group *g, uint32_t tag_hash, MPI_Errhandler eh,
                                struct loom_comm **newc_p)
{
    int self = loom_rank_self()->rank;
    int me = loom_group_rank_of(g, self);
    if (me == MPI_UNDEFINED)
        return LOOM_ERR_INVALID;
    struct loom_rdv_key k = {.context_id = LOOM_RDV_NO_PARENT,
                             .kind = LOOM_RDV_GROUP,
                             .seq_or_tag = (int)tag_hash,
                             .n = g->size,
                             .members = g->world};
    struct loom_rdv_in in = {.rank = me, .world = self};
    struct loom_rdv_out out;
    int rc = loom_rdv_run(&k, me, &in, compute_same, g->world, &out);
    if (rc != LOOM_OK)
        return rc;
    rc = loom_comm_new(out.sh, out.rank, eh, newc_p);
    if (rc != LOOM_OK)
        loom_comm_shared_release(out.sh);
    return rc;
}
