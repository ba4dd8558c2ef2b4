/*
 * Scan and Exscan down a chain in chunks: member i waits for member i - 1's
 * prefix (in_0 op ... op in_{i-1}) chunk by chunk and folds it with its own
 * input, in rank order, into its own prefix, which member i + 1 reads in
 * turn. Every member folds two inputs once, so the whole call folds N
 * vectors where scan/direct folds N (N + 1) / 2: with many ranks per core
 * the direct algorithm's folds queue up on the few cores (64 ranks on 2
 * cores, 1 MiB: 10-15x Open MPI's time, 2026-11-25), the chain's do not.
 * The prefix is the receive buffer for Scan; for Exscan (whose receive
 * buffer holds the exclusive prefix) a scratch buffer, and member 0's
 * input. Member i returns once member i + 1 has read its prefix.
 * Cost: (N - 1 + chunks) * (line + 2 chunk / copy) + 3 (N - 1) * line,
 * but at least 2 N m / (min(N, W) * copy): the W workers fold at once;
 * with ranks sharing workers, + (N - 1) wake-ups (each hop wakes the next).
 */
#include "coll/coll_impl.h"

/* Elements per chunk for count elements of size bytes each: the chunk a
 * pipeline takes for their bytes (coll_chunk_bytes()), in whole elements. */
static size_t chunk_elems(size_t count, size_t size)
{
    if (size == 0)
        return count ? count : 1;
    return (coll_chunk_bytes(count * size) + size - 1) / size;
}

static int scan(struct coll_ctx *x, bool exclusive)
{
    const struct loom_coll_args *a = x->a;
    struct loom_type *t = a->rtype;
    struct coll_shared *sh = x->sh;
    int me = x->rank, n = x->size, pred = me - 1, succ = me + 1 < n ? me + 1 : -1;
    size_t count = a->rcount, ce = chunk_elems(count, t->size);
    size_t nchunks = count ? (count + ce - 1) / ce : 0;
    uint64_t base = x->seq << COLL_PROGRESS_BITS;
    const void *input = coll_input(a);
    int rc = MPI_SUCCESS;

    /* The prefix this member passes on. */
    const void *prefix = a->rbuf;
    if (exclusive && me == 0)
        prefix = input;
    else if (exclusive && succ >= 0 && count)
        prefix = coll_tempbuf(x, 0, count, t);
    struct coll_post *mine = coll_publish_begin(x);
    if (!prefix) {
        rc = MPI_ERR_NO_MEM;
        prefix = a->rbuf; /* never read: the successor is told every chunk is there */
    }
    mine->data = prefix;
    if (succ >= 0)
        coll_expect_reads(x, mine, 1);
    coll_publish_done(x, mine, false);
    if (succ >= 0)
        coll_notify(x, succ);

    const struct coll_post *p = NULL;
    if (pred >= 0 && !(p = coll_peer_post(x, pred))) {
        coll_peer_release(x, pred); /* the predecessor's post counts as read */
        rc = x->err;
    }
    if (rc != MPI_SUCCESS) {
        if (p)
            coll_read_done(x, p, pred);
        if (succ >= 0) {
            /* Every chunk is "here" for the successor, which goes on. */
            coll_set(x, &x->me->progress, base | (((uint64_t)1 << COLL_PROGRESS_BITS) - 1), succ);
            coll_await_reads(x, mine);
        }
        return rc;
    }
    /* Exscan: member 0's prefix is its input, all there. */
    bool input_passed = me == 0 && exclusive;
    if (input_passed && succ >= 0)
        coll_set(x, &x->me->progress, base | nchunks, succ);
    for (size_t c = 0; c < nchunks && !input_passed; c++) {
        size_t e0 = c * ce, ne = count - e0 < ce ? count - e0 : ce;
        int e = MPI_SUCCESS;
        if (me == 0) {
            /* Scan: member 0's result is its input. */
            e = coll_fold(x, a->op, t, &input, 1, a->rbuf, -1, e0, ne);
        } else {
            coll_wait(x, &sh->m[pred].progress, base | (c + 1));
            const void *in[2] = {p->data, input};
            if (!exclusive) {
                /* rbuf = prefix(i - 1) op input: in place, the input is
                 * rbuf itself, which coll_fold reads before it writes. */
                e = coll_fold(x, a->op, t, in, 2, a->rbuf, a->in_place ? 1 : -1, e0, ne);
            } else {
                /* The prefix passed on first: in place, the input is
                 * rbuf, about to be overwritten with the predecessor's. */
                if (succ >= 0)
                    e = coll_fold(x, a->op, t, in, 2, (void *)prefix, -1, e0, ne);
                if (e == MPI_SUCCESS)
                    e = coll_fold(x, a->op, t, in, 1, a->rbuf, -1, e0, ne);
            }
        }
        if (e && !rc)
            rc = e;
        if (succ >= 0)
            coll_set(x, &x->me->progress, base | (c + 1), succ);
    }
    if (p)
        coll_read_done(x, p, pred);
    if (succ >= 0)
        coll_await_reads(x, mine);
    return rc;
}

int coll_scan_chain(struct coll_ctx *x)
{
    return scan(x, false);
}

int coll_exscan_chain(struct coll_ctx *x)
{
    return scan(x, true);
}

double coll_scan_chain_cost(const struct coll_ctx *x, size_t nbytes)
{
    const struct coll_model *m = &coll_model;
    double n = x->size, chunk = (double)coll_chunk_bytes(nbytes), chunks = nbytes / chunk;
    if (chunks < 1)
        chunks = 1;
    double step = m->line_s + 2 * (nbytes < chunk ? nbytes : chunk) / m->copy_bps;
    double at_once = n < x->sh->nlocal ? n : x->sh->nlocal;
    double chain = (n - 1 + chunks) * step, queued = 2 * n * nbytes / (at_once * m->copy_bps);
    /* Ranks sharing a worker: each hop wakes the next member. */
    double wakes = coll_max_per_worker(x->sh) > 1 ? (n - 1) * m->wake_s : 0;
    return (chain > queued ? chain : queued) + 3 * (n - 1) * m->line_s + wakes +
           coll_remote_s(x->sh, nbytes);
}

double coll_exscan_chain_cost(const struct coll_ctx *x, size_t nbytes)
{
    return coll_scan_chain_cost(x, nbytes);
}
