/*
 * Allreduce for small vectors: every member packs its input into its post's
 * cell, then folds all N cells (in rank order) into its own buffer. One * round of flags, no fence;
 * a cell is reused only once every member is done with the call that filled it (coll_impl.h,
 * "Publication"). Cost: N * line (the cells) + N * m / copy. Applies when m <= COLL_CELL and the
 * type is contiguous.
 */
#include <stdlib.h>

#include "coll/coll_impl.h"

int coll_allreduce_allread(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    int n = x->size, me = x->rank, rc = MPI_SUCCESS;
    const struct loom_type *t = a->rtype;
    size_t nb = a->rcount * t->size;
    if (nb > COLL_CELL || !t->contig)
        return coll_allreduce_tiled(x); /* forced on a call it cannot do */
    struct coll_post *mine = coll_publish_begin(x);
    loom_type_pack(coll_post_cell(mine, nb), coll_input(a), t, 0, nb);
    mine->nbytes = nb;
    mine->copied_in = true;
    coll_publish_done(x, mine, true);

    const void *stack_in[16];
    const void **in = n <= 16 ? stack_in : malloc((size_t)n * sizeof *in);
    if (!in)
        return MPI_ERR_NO_MEM;
    for (int r = 0; r < n; r++) {
        const struct coll_post *p = r == me ? mine : coll_peer_post(x, r);
        if (!p) {
            rc = x->err;
            p = mine;
        }
        in[r] = coll_post_cell(p, nb) - t->true_lb; /* the packed cell as a buffer of type t */
    }
    if (rc == MPI_SUCCESS && a->rcount)
        rc = coll_fold(x, a->op, t, in, n, a->rbuf, -1, 0, a->rcount);
    if (in != stack_in)
        free(in);
    return rc;
}

double coll_allreduce_allread_cost(const struct coll_ctx *x, size_t nbytes)
{
    const struct coll_model *m = &coll_model;
    if (nbytes > COLL_CELL || !x->a->rtype->contig)
        return -1;
    double n = x->size;
    double wake = coll_max_per_worker(x->sh) > 1 ? n * m->wake_s : 0;
    return n * m->line_s * (n > 8 ? n / 8 : 1) + n * nbytes / m->copy_bps + wake;
}
