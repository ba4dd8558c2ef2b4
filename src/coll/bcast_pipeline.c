/*
 * Broadcast down a chain in chunks: members in topology order starting at
 * the root; each copies chunk c from its predecessor's buffer as soon as the
 * predecessor has it, so N - 1 copies overlap and each reads from a
 * neighbour (cache- and NUMA-near) rather than all from the root.
 * Cost: (N - 1 + chunks - 1) * (line + chunk / copy) + 3 (N - 1) * line,
 * but at least (N - 1) * m / (min(N - 1, W) * copy): only the W workers the
 * members run on copy at once, so with many ranks per worker the chain's
 * copies queue up (measured by loom-tune on 2 cores, 2026-11-23: 8 and 16
 * ranks, 512 KiB and 1 MiB, pipeline 3-5x slower than direct). Several
 * memory domains: the chain enters each once: + remote(m) (coll_remote_s()).
 */
#include "coll/coll_impl.h"

int coll_bcast_pipeline(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    struct coll_shared *sh = x->sh;
    int n = x->size, root = a->root, rc = MPI_SUCCESS;
    if (n == 1)
        return MPI_SUCCESS;
    int q = (sh->pos[x->rank] - sh->pos[root] + n) % n; /* place in the chain */
    int pred = sh->order[(sh->pos[x->rank] - 1 + n) % n];
    int succ = q == n - 1 ? -1 : sh->order[(sh->pos[x->rank] + 1) % n];
    uint64_t base = x->seq << COLL_PROGRESS_BITS;

    struct coll_post *mine = coll_publish_begin(x);
    if (succ >= 0)
        coll_expect_reads(x, mine, 1);
    coll_publish_done(x, mine, false);
    if (succ >= 0)
        coll_notify(x, succ);

    if (q == 0) {
        size_t nb = a->rcount * a->rtype->size;
        coll_set(x, &x->me->progress,
                 base | ((nb + coll_chunk_bytes(nb) - 1) / coll_chunk_bytes(nb)), succ);
    } else {
        const struct coll_post *p = coll_peer_post(x, pred);
        if (!p) {
            /* Let both neighbours go on: the predecessor's post is read,
             * and every chunk is "here" for the successor. */
            coll_peer_release(x, pred);
            if (succ >= 0)
                coll_set(x, &x->me->progress, base | (((uint64_t)1 << COLL_PROGRESS_BITS) - 1),
                         succ);
            return x->err;
        }
        size_t nb = p->args.rcount * p->args.rtype->size;
        size_t chunk = coll_chunk_bytes(nb), nchunks = (nb + chunk - 1) / chunk;
        if (nb > a->rcount * a->rtype->size) {
            rc = coll_copy(x, a->rbuf, a->rcount, a->rtype, p->args.rbuf, p->args.rcount,
                           p->args.rtype);
            nb = 0; /* pass nothing on; the successor reports its own error */
        }
        for (size_t c = 0; c < nchunks; c++) {
            coll_wait(x, &sh->m[pred].progress, base | (c + 1));
            size_t off = c * chunk, len = nb - off < chunk ? nb - off : chunk;
            if (nb)
                loom_type_copy(a->rbuf, a->rtype, p->args.rbuf, p->args.rtype, off, len);
            if (succ >= 0)
                coll_set(x, &x->me->progress, base | (c + 1), succ);
        }
        coll_read_done(x, p, pred);
    }
    if (succ >= 0)
        coll_await_reads(x, mine);
    return rc;
}

double coll_bcast_pipeline_cost(const struct coll_ctx *x, size_t nbytes)
{
    const struct coll_model *m = &coll_model;
    double chunk = (double)coll_chunk_bytes(nbytes), chunks = nbytes / chunk;
    if (chunks < 1)
        chunks = 1;
    double step = m->line_s + (nbytes < chunk ? nbytes : chunk) / m->copy_bps;
    /* + each hop's handshake (post, progress, acknowledgement): the root
     * waits for its successor, unlike a small one-stage broadcast. */
    double hops = x->size - 1, at_once = hops < x->sh->nlocal ? hops : x->sh->nlocal;
    double chain = (hops + chunks - 1) * step,
           queued = at_once > 0 ? hops * nbytes / (at_once * m->copy_bps) : 0;
    return (chain > queued ? chain : queued) + 3 * hops * m->line_s + coll_remote_s(x->sh, nbytes);
}
