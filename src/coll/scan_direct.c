/*
 * Scan and Exscan: every member publishes its input (in place: a snapshot,
 * since its receive buffer is overwritten) and member i folds the inputs of
 * members 0..i (Exscan: 0..i-1; member 0's buffer is left alone) in rank
 * order into its receive buffer; it counts itself done with every input,
 * and returns once members i+1..N-1 are done with its own.
 * Cost: N * line + i * m / copy at member i (the last member does the most),
 * but at least N (N + 1) / 2 * m / (min(N, W) * copy): the W workers the
 * members run on fold at once, so with many ranks per worker the folds
 * queue up (scan/chain folds N vectors in all); and then N (N - 1) / 2
 * wake-ups queued the same way.
 */

#include "coll/coll_impl.h"

static int scan(struct coll_ctx *x, bool exclusive)
{
    const struct loom_coll_args *a = x->a;
    const struct loom_type *t = a->rtype;
    int me = x->rank;
    struct coll_post *mine = coll_publish_begin(x);
    const void *input = coll_expose(x, mine, coll_input(a), a->rcount, t, a->in_place);
    int rc = input ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    mine->data = input = input ? input : coll_input(a);
    coll_expect_reads(x, mine, x->size - 1 - me);
    coll_publish_done(x, mine, true);
    int upto = exclusive ? me : me + 1; /* inputs folded: 0..upto-1 */
    const void *const *in;
    int e = coll_collect(x, upto, input, COLL_PICK_DATA, &in);
    rc = rc ? rc : e;
    if (rc == MPI_SUCCESS && upto && a->rcount)
        rc = coll_fold(x, a->op, t, in, upto, a->rbuf, -1, 0, a->rcount);
    coll_read_done_upto(x, upto);
    coll_await_reads(x, mine);
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
    const struct coll_model *m = &coll_model;
    double n = x->size, at_once = n < x->sh->nlocal ? n : x->sh->nlocal;
    double last = n * nbytes / m->copy_bps,
           queued = n * (n + 1) / 2 * nbytes / (at_once * m->copy_bps);
    /* Ranks sharing a worker: member i waits for i posts and N - 1 - i
     * readers, a wake-up each on the workers in turn. */
    double wakes = coll_max_per_worker(x->sh) > 1
                       ? n * (n - 1) / (2 * at_once) * m->local_wake_s + n * m->wake_s
                       : 0;
    return 2 * n * m->line_s + (last > queued ? last : queued) + wakes;
}

double coll_exscan_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    return coll_scan_direct_cost(x, nbytes);
}
