/*
 * Allreduce by every member alone: each folds all N inputs, in rank order
 * and strip-mined, into its own receive buffer. Up to COLL_CELL bytes of a
 * contiguous type the inputs travel in the posts' cells (copy-in: one round
 * of flags, no fence; a cell is reused only once every member is done with
 * the call that filled it, coll_impl.h "Publication"). Larger, each reads
 * the others' input buffers (in place: a snapshot) and counts itself done
 * with them; a member returns once all others have read its input. Nobody
 * ever waits for another member's fold, so a nonblocking call progresses
 * while a member computes.
 * Cost: N * line (the posts) + N * m / copy per member (concurrent); larger
 * than a cell, when the N inputs overflow the last-level caches, the N
 * members' reads share memory: N * m * min(N, W) / mem;
 * + remote(q N (D - 1) / D * m): the inputs of other memory domains, q
 * members in the busiest of D.
 */

#include "coll/coll_impl.h"

int coll_allreduce_allread(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    const struct loom_type *t = a->rtype;
    int n = x->size;
    size_t nb = a->rcount * t->size;
    const void *const *in;
    int rc;
    if (nb <= COLL_CELL && t->contig) {
        struct coll_post *mine = coll_publish_begin(x);
        loom_type_pack(coll_post_cell(mine, nb), coll_input(a), t, 0, nb);
        mine->nbytes = nb;
        mine->copied_in = true;
        coll_publish_done(x, mine, true);
        rc = coll_collect(x, n, coll_post_cell(mine, nb) - t->true_lb, COLL_PICK_CELL, &in);
        if (rc == MPI_SUCCESS && a->rcount)
            rc = coll_fold(x, a->op, t, in, n, a->rbuf, -1, 0, a->rcount);
        return rc;
    }
    struct coll_post *mine = coll_publish_begin(x);
    const void *input = coll_expose(x, mine, coll_input(a), a->rcount, t, a->in_place);
    rc = input ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    mine->data = input = input ? input : coll_input(a);
    coll_expect_reads(x, mine, n - 1);
    coll_publish_done(x, mine, true);
    int e = coll_collect(x, n, input, COLL_PICK_DATA, &in);
    rc = rc ? rc : e;
    if (rc == MPI_SUCCESS && a->rcount)
        rc = coll_fold(x, a->op, t, in, n, a->rbuf, -1, 0, a->rcount);
    coll_read_done_upto(x, n);
    coll_await_reads(x, mine);
    return rc;
}

double coll_allreduce_allread_cost(const struct coll_ctx *x, size_t nbytes)
{
    const struct coll_model *m = &coll_model;
    double n = x->size;
    double wake = coll_max_per_worker(x->sh) > 1 ? n * m->wake_s : 0;
    double q = x->sh->dom_max, nd = x->sh->ndom;
    double remote = coll_remote_s(x->sh, q * n * (nd - 1) / nd * nbytes);
    if (nbytes <= COLL_CELL && x->a->rtype->contig)
        return n * m->line_s * (n > 8 ? n / 8 : 1) + n * nbytes / m->copy_bps + wake + remote;
    double at_once = n < x->sh->nlocal ? n : x->sh->nlocal;
    return 2 * n * m->line_s + coll_parallel_copy_s(at_once, n * nbytes, n * nbytes) + wake +
           remote;
}
