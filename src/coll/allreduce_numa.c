/*
 * Allreduce over the memory domains (NUMA nodes, else packages; the HMPI
 * paper's tiled reduce inside each socket, then across sockets, then a
 * two-stage broadcast), chunk by chunk (coll_tiles: ntiles = q tiles a chunk,
 * q the most members of a domain, so that a chunk stays in cache):
 *  1. in each domain, the owner of tile j (member j mod q of the domain)
 *     folds tile j of its domain's inputs, in rank order, into its receive
 *     buffer: the domain's partial, read from local memory only;
 *  2. the owner of tile j in domain (j + c) mod D (chunk c, D domains: the
 *     combining rotates over the domains) folds the D partials of tile j into
 *     its receive buffer, in domain order;
 *  3. the owners of tile j in the other domains copy the result from it: one
 *     reader per domain crosses domains;
 *  4. every member copies the tiles it does not own from its own domain's
 *     owners (the broadcast's local stage).
 * A fence ends the call. Each stage of a chunk is signalled in the member's
 * progress flag (seq << COLL_PROGRESS_BITS | chunk * 4 + stage); every wait is for a stage
 * of the same chunk that comes earlier, so the stages pipeline over chunks.
 * Domain order is rank order only when every domain is a range of
 * consecutive ranks: a non-commutative operation needs that (else: not
 * applicable; forced, the call runs tiled).
 * Cost (q members in the busiest domain, D domains, per most members on one
 * worker, C chunks): (q^2 / 4 + D + 2 N + 6 C) * line (its domain's posts,
 * the remote partials, the fence, three handshakes a chunk) + (per + (per +
 * 1) / 2) * m / copy (as tiled: a tile of each of q inputs, then q - 1
 * tiles) + (D + 1) * m / (q * copy) (combining, fetching the result) +
 * remote(2 m (D - 1) / D) (what crosses into each domain: the partials it
 * combines, the results it fetches) + (per > 1: (2 N + 3 C per) * wake).
 * With one domain it is tiled with more handshakes: not applicable (-1).
 */
#include "coll/coll_impl.h"

static bool applies(const struct coll_ctx *x)
{
    return x->a->op->commutative || x->sh->dom_contig;
}

/* Sets the caller's progress to stage s of chunk c (a release store: the
 * waiters are notified after it, and coll_notify() orders its look at their
 * slots, loom_notify_fence). */
static void reach(struct coll_ctx *x, uint64_t c, int s)
{
    atomic_store_explicit(&x->me->progress, x->seq << COLL_PROGRESS_BITS | (c * 4 + (uint64_t)s),
                          memory_order_release);
}

/* Waits until member r reached stage s of chunk c; its post, NULL on a
 * mismatch (*rc set). */
static const struct coll_post *wait_stage(struct coll_ctx *x, int r, uint64_t c, int s, int *rc)
{
    coll_wait(x, &x->sh->m[r].progress, x->seq << COLL_PROGRESS_BITS | (c * 4 + (uint64_t)s));
    const struct coll_post *p = coll_peer_post(x, r);
    if (!p && !*rc)
        *rc = x->err;
    return p;
}

int coll_allreduce_numa(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    const struct loom_type *t = a->rtype;
    struct coll_shared *sh = x->sh;
    if (!applies(x))
        return coll_allreduce_tiled(x); /* forced on a call it cannot do */
    int me = x->rank, d = sh->dom[me], q = coll_dom_size(sh, d), i = sh->dom_idx[me];
    int nd = sh->ndom;
    struct coll_post *mine = coll_publish_begin(x);
    coll_publish_done(x, mine, true);

    /* The domain's inputs, then room for the D partials of a tile. Out of
     * memory, the member still signals every stage: the others wait for it. */
    const void **in = coll_scratch(x, 0, (size_t)(q + nd) * sizeof *in);
    int rc = in ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (in)
        rc = coll_collect_domain(x, in);
    struct coll_tiles tl;
    coll_tiles_init(sh, t, a->rcount, &tl);
    int nt = tl.ntiles;
    size_t e0, ne;
    for (uint64_t c = 0; c < tl.nchunks; c++) {
        /* 1. This domain's partials of my tiles. */
        for (int j = i; j < nt; j += q)
            if ((ne = coll_tile(&tl, c, j, &e0)) && !rc)
                rc = coll_fold(x, a->op, t, in, q, a->rbuf, a->in_place ? i : -1, e0, ne);
        reach(x, c, 1);
        for (int j = i; j < nt; j += q) {
            int k = (int)((j + c) % (uint64_t)nd);
            int r = coll_dom_member(sh, k, j % coll_dom_size(sh, k));
            if (r != me)
                coll_notify(x, r);
        }
        /* 2. Combine the tiles this domain combines in this chunk. */
        for (int j = i; j < nt; j += q) {
            if ((int)((j + c) % (uint64_t)nd) != d)
                continue;
            for (int k = 0; k < nd; k++) {
                int r = coll_dom_member(sh, k, j % coll_dom_size(sh, k));
                const struct coll_post *p = r == me ? NULL : wait_stage(x, r, c, 1, &rc);
                if (in)
                    in[q + k] = p ? p->args.rbuf : a->rbuf;
            }
            if ((ne = coll_tile(&tl, c, j, &e0)) && !rc)
                rc = coll_fold(x, a->op, t, in + q, nd, a->rbuf, d, e0, ne);
        }
        reach(x, c, 2);
        for (int j = i; j < nt; j += q)
            if ((int)((j + c) % (uint64_t)nd) == d)
                for (int k = 0; k < nd; k++)
                    if (k != d)
                        coll_notify(x, coll_dom_member(sh, k, j % coll_dom_size(sh, k)));
        /* 3. Fetch the results of my tiles that another domain combined. */
        for (int j = i; j < nt; j += q) {
            int k = (int)((j + c) % (uint64_t)nd);
            if (k == d)
                continue;
            const struct coll_post *p =
                wait_stage(x, coll_dom_member(sh, k, j % coll_dom_size(sh, k)), c, 2, &rc);
            if (p && (ne = coll_tile(&tl, c, j, &e0)))
                loom_type_copy(a->rbuf, t, p->args.rbuf, p->args.rtype, e0 * t->size, ne * t->size);
        }
        reach(x, c, 3);
        for (int k = 0; k < q; k++)
            if (k != i)
                coll_notify(x, coll_dom_member(sh, d, k));
        /* 4. Copy the other tiles from their owners in this domain. */
        for (int j = 0; j < nt; j++) {
            if (j % q == i)
                continue;
            const struct coll_post *p = wait_stage(x, coll_dom_member(sh, d, j % q), c, 3, &rc);
            if (p && (ne = coll_tile(&tl, c, j, &e0)))
                loom_type_copy(a->rbuf, t, p->args.rbuf, p->args.rtype, e0 * t->size, ne * t->size);
        }
    }
    coll_fence(x);
    return rc;
}

double coll_allreduce_numa_cost(const struct coll_ctx *x, size_t nbytes)
{
    const struct coll_shared *sh = x->sh;
    if (sh->ndom < 2 || !applies(x))
        return -1;
    const struct coll_model *m = &coll_model;
    struct coll_tiles tl;
    coll_tiles_init(sh, x->a->rtype, x->a->rcount, &tl);
    double n = x->size, q = sh->dom_max, nd = sh->ndom, c = (double)tl.nchunks;
    double per = coll_max_per_worker(sh);
    double wake = per > 1 ? (2 * n + 3 * c * per) * m->wake_s : 0;
    return (q * q / 4 + nd + 2 * n + 6 * c) * m->line_s +
           (per + (per + 1) / 2) * nbytes / m->copy_bps + (nd + 1) * nbytes / (q * m->copy_bps) +
           coll_remote_s(sh, 2 * nbytes * (nd - 1) / nd) + wake;
}
