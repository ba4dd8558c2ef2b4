/*
 * Allreduce for small vectors: every member packs its input into its post's
 * cell, then folds all N cells (in rank order) into its own buffer. One * round of flags, no fence;
 * a cell is reused only once every member is done with the call that filled it (coll_impl.h,
 * "Publication"). Cost: N * line (the cells) + N * m / copy (+ remote(q N (D - 1) / D * m): the
 * cells of other memory domains, q members in the busiest of D). Applies when m <= COLL_CELL and
 * the type is contiguous.
 */

#include "coll/coll_impl.h"

int coll_allreduce_allread(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    const struct loom_type *t = a->rtype;
    size_t nb = a->rcount * t->size;
    if (nb > COLL_CELL || !t->contig)
        return coll_allreduce_tiled(x); /* forced on a call it cannot do */
    struct coll_post *mine = coll_publish_begin(x);
    loom_type_pack(coll_post_cell(mine, nb), coll_input(a), t, 0, nb);
    mine->nbytes = nb;
    mine->copied_in = true;
    coll_publish_done(x, mine, true);

    const void *const *in;
    int rc = coll_collect(x, x->size, coll_post_cell(mine, nb) - t->true_lb, COLL_PICK_CELL, &in);
    if (rc == MPI_SUCCESS && a->rcount)
        rc = coll_fold(x, a->op, t, in, x->size, a->rbuf, -1, 0, a->rcount);
    return rc;
}

double coll_allreduce_allread_cost(const struct coll_ctx *x, size_t nbytes)
{
    const struct coll_model *m = &coll_model;
    if (nbytes > COLL_CELL || !x->a->rtype->contig)
        return -1;
    double n = x->size;
    double wake = coll_max_per_worker(x->sh) > 1 ? n * m->wake_s : 0;
    double q = x->sh->dom_max, nd = x->sh->ndom;
    return n * m->line_s * (n > 8 ? n / 8 : 1) + n * nbytes / m->copy_bps + wake +
           coll_remote_s(x->sh, q * n * (nd - 1) / nd * nbytes);
}
