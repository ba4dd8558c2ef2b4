/*
 * Scan and Exscan: every member publishes its input (in place: a snapshot,
 * since its receive buffer is overwritten) and member i folds the inputs of
 * members 0..i (Exscan: 0..i-1; member 0's buffer is left alone) in rank
 * order into its receive buffer; a fence ends the call.
 * Cost: N * line + i * m / copy at member i (the last member does the most).
 */

#include "coll/coll_impl.h"

static int scan(struct coll_ctx *x, bool exclusive)
{
    const struct loom_coll_args *a = x->a;
    const struct loom_type *t = a->rtype;
    int me = x->rank;
    const void *input = a->in_place ? coll_snapshot(x, a->rbuf, a->rcount, t) : a->sbuf;
    if (!input)
        return MPI_ERR_NO_MEM;
    struct coll_post *mine = coll_publish_begin(x);
    mine->data = input;
    coll_publish_done(x, mine, true);
    int upto = exclusive ? me : me + 1; /* inputs folded: 0..upto-1 */
    const void *const *in;
    int rc = coll_collect(x, upto, input, COLL_PICK_DATA, &in);
    if (rc == MPI_SUCCESS && upto && a->rcount)
        rc = coll_fold(x, a->op, t, in, upto, a->rbuf, -1, 0, a->rcount);
    coll_fence(x);
    return rc;
}

int coll_scan_direct(struct coll_ctx *x)
{
    return scan(x, false);
}

int coll_exscan_direct(struct coll_ctx *x)
{
    return scan(x, true);
}

double coll_scan_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    return 2 * x->size * coll_model.line_s + x->size * nbytes / coll_model.copy_bps;
}

double coll_exscan_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    return coll_scan_direct_cost(x, nbytes);
}
