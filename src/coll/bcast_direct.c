/*
 * Broadcast in one stage: every member copies straight from the root's
 * buffer into its own. Up to COLL_CELL bytes the root first packs the data
 * into its post's cell and returns at once (copy-in; readers unpack from
 * the cell and the root waits for them only when it reuses that cell).
 * Larger, a nonblocking root publishes a copy (coll_expose), so that it
 * need not wait for readers that may be computing.
 * Cost: line + m / copy (large: when m overflows the last-level caches, the
 * readers running at once share the root's memory: m * max(1 / copy,
 * min(N - 1, W) / mem), W the workers the members run on; within them they
 * do not: loom-tune, 2026-11-23, calibrated model: direct 1.4-1.8x faster
 * than twostage at 32 KiB-1 MiB on 8 and 16 ranks); small: 2 * line + N *
 * line (flag reads).
 * (Readers at once were N - 1; loom-tune on 2 cores, 2026-11-23, measured
 * direct fastest at 8 and 16 ranks where the model took twostage/pipeline.)
 * Several memory domains: the q readers of each other domain (q in the
 * busiest) read across: + remote(q m) (coll_remote_s(); 0 with one domain).
 */
#include "coll/coll_impl.h"

int coll_bcast_direct(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    int root = a->root;
    if (x->size == 1)
        return MPI_SUCCESS;
    if (x->rank == root) {
        size_t n = a->rcount * a->rtype->size;
        struct coll_post *p = coll_publish_begin(x);
        p->nbytes = n;
        p->copied_in = n <= COLL_CELL;
        if (p->copied_in)
            loom_type_pack(coll_post_cell(p, n), a->rbuf, a->rtype, 0, n);
        if (!p->copied_in) {
            p->data = coll_expose(x, p, a->rbuf, a->rcount, a->rtype, false);
            coll_expect_reads(x, p, x->size - 1);
        }
        coll_publish_done(x, p, true);
        if (!p->copied_in)
            coll_await_reads(x, p);
        return MPI_SUCCESS;
    }
    const struct coll_post *p = coll_peer_post(x, root);
    if (!p) {
        coll_peer_release(x, root);
        return x->err;
    }
    return coll_bcast_direct_receive(x, p);
}

int coll_bcast_direct_receive(struct coll_ctx *x, const struct coll_post *p)
{
    const struct loom_coll_args *a = x->a;
    size_t n = p->nbytes;
    int rc;
    if (p->copied_in)
        rc = coll_unpack(x, (struct coll_block){a->rbuf, a->rcount, a->rtype}, coll_post_cell(p, n),
                         n);
    else
        rc = coll_copy(x, a->rbuf, a->rcount, a->rtype, p->data, p->args.rcount, p->args.rtype);
    if (!p->copied_in)
        coll_read_done(x, p, a->root);
    return rc;
}

double coll_bcast_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    const struct coll_model *m = &coll_model;
    double readers = x->size - 1;
    if (nbytes <= COLL_CELL)
        return (2 + readers) * m->line_s + nbytes / m->copy_bps;
    double at_once = readers < x->sh->nlocal ? readers : x->sh->nlocal;
    return m->line_s + coll_parallel_copy_s(at_once, (double)nbytes, (double)nbytes) +
           coll_remote_s(x->sh, x->sh->dom_max * (double)nbytes);
}
