/*
 * Reduce in two stages over the memory domains (NUMA nodes, else packages),
 * chunk by chunk (coll_tiles: q tiles a chunk, q the most members of a
 * domain, so that a chunk stays in cache):
 *  1. in each domain, the owner of tile j (member j mod q of the domain)
 *     folds tile j of its domain's inputs, in rank order, into its own
 *     scratch: the domain's partial, read from local memory only, every
 *     core of every domain at once;
 *  2. the root folds the D partials of each tile, in domain order, into its
 *     receive buffer as the owners signal them (progress: seq << COLL_PROGRESS_BITS | chunk
 *     * 4 + 1), so it combines chunk c while the owners reduce chunk c + 1;
 *     then it releases everybody (progress FINAL).
 * Only D - 1 partials per tile cross domains, all towards the root's.
 * Domain order is rank order only when every domain is a range of
 * consecutive ranks: a non-commutative operation needs that; the partials'
 * scratch needs a positive extent (else: not applicable; forced, the call
 * runs direct).
 * Cost (q members in the busiest domain, D domains, per most members on one
 * worker, C chunks): (q^2 / 4 + (C + 1) N) * line (the domain's posts, the
 * root's reads of every owner's flag a chunk, the release) + (per + D) *
 * m / copy (the root reduces its tiles, m, and combines D partials of every
 * tile, D m; members sharing its worker take turns with it) + remote((D - 1)
 * m) (the partials crossing into the root's domain) + (per > 1: (N - 1 + C
 * per) * wake: members park until the root is done, and per chunk).
 * With one domain it is a tiled reduce into scratch the root then copies
 * again: not applicable (-1).
 */
#include "coll/coll_impl.h"

static bool applies(const struct coll_ctx *x)
{
    const struct loom_type *t = x->a->rtype;
    return (x->a->op->commutative || x->sh->dom_contig) && t->ub - t->lb > 0;
}

/* Tiles member i of a domain of q members owns in each chunk. */
static size_t owned(const struct coll_tiles *tl, int i, int q)
{
    return (size_t)((tl->ntiles - i + q - 1) / q);
}

/* Where the owner (member i of a domain of q) keeps its partial of tile j of
 * chunk c in its scratch tmp, as a buffer of type t whose element e0 (the
 * tile's first) is the partial's first. */
static char *partial(const struct coll_tiles *tl, const struct loom_type *t, const void *tmp, int i,
                     int q, uint64_t c, int j, size_t e0)
{
    size_t slot = (size_t)c * owned(tl, i, q) + (size_t)((j - i) / q);
    return (char *)tmp + ((MPI_Aint)(slot * tl->tile) - (MPI_Aint)e0) * (t->ub - t->lb);
}

int coll_reduce_numa(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    const struct loom_type *t = a->rtype;
    struct coll_shared *sh = x->sh;
    if (!applies(x))
        return coll_reduce_direct(x); /* forced on a call it cannot do */
    int me = x->rank, root = a->root, d = sh->dom[me], q = coll_dom_size(sh, d);
    int i = sh->dom_idx[me], nd = sh->ndom;
    struct coll_tiles tl;
    coll_tiles_init(sh, t, a->rcount, &tl);
    int nt = tl.ntiles;

    /* Scratch: the domain's inputs, room for the D partials of a tile, then
     * the partials of every tile this member owns (element 0 at tmp). */
    size_t head =
        ((size_t)(q + nd) * sizeof(void *) + LOOM_CACHE_LINE - 1) & ~(size_t)(LOOM_CACHE_LINE - 1);
    size_t k_el = (size_t)tl.nchunks * owned(&tl, i, q) * tl.tile;
    size_t span = (size_t)((MPI_Aint)(k_el - 1) * (t->ub - t->lb) + t->true_ub - t->true_lb);
    char *s = coll_scratch(x, 0, head + span);
    const void **in = (const void **)s;
    char *tmp = s ? s + head - t->true_lb : NULL;
    /* Out of memory, the member still signals every chunk: the root waits. */
    int rc = s ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    struct coll_post *mine = coll_publish_begin(x);
    mine->data = tmp;
    coll_publish_done(x, mine, true);
    if (in)
        rc = coll_collect_domain(x, in);
    uint64_t base = x->seq << COLL_PROGRESS_BITS;
    size_t e0, ne;
    for (uint64_t c = 0; c < tl.nchunks; c++) {
        /* 1. This domain's partials of my tiles. */
        for (int j = i; j < nt; j += q)
            if ((ne = coll_tile(&tl, c, j, &e0)) && !rc)
                rc =
                    coll_fold(x, a->op, t, in, q, partial(&tl, t, tmp, i, q, c, j, e0), -1, e0, ne);
        /* Release: coll_notify() orders its look at the slot (loom_notify_fence). */
        atomic_store_explicit(&x->me->progress, base | (c * 4 + 1), memory_order_release);
        if (me != root) {
            coll_notify(x, root);
            continue;
        }
        /* 2. The root: combine the partials of every tile of the chunk. */
        for (int j = 0; j < nt; j++) {
            ne = coll_tile(&tl, c, j, &e0);
            for (int k = 0; k < nd; k++) {
                int qk = coll_dom_size(sh, k), ik = j % qk, r = coll_dom_member(sh, k, ik);
                const void *pt = tmp;
                if (r != me) {
                    coll_wait(x, &sh->m[r].progress, base | (c * 4 + 1));
                    const struct coll_post *p = coll_peer_post(x, r);
                    if (!p && !rc)
                        rc = x->err;
                    pt = p ? p->data : NULL;
                }
                if (in && pt)
                    in[q + k] = partial(&tl, t, pt, ik, qk, c, j, e0);
                else if (!rc)
                    rc = MPI_ERR_OTHER; /* the owner had no memory for its partials */
            }
            if (ne && !rc)
                rc = coll_fold(x, a->op, t, in + q, nd, a->rbuf, -1, e0, ne);
        }
    }
    /* The root read every partial, so every input was read too. */
    if (me == root) {
        atomic_store_explicit(&x->me->progress, base | COLL_TILES_FINAL, memory_order_release);
        for (int r = 0; r < x->size; r++)
            if (r != me)
                coll_notify(x, r);
    } else {
        coll_wait(x, &sh->m[root].progress, base | COLL_TILES_FINAL);
    }
    return rc;
}

double coll_reduce_numa_cost(const struct coll_ctx *x, size_t nbytes)
{
    const struct coll_shared *sh = x->sh;
    if (sh->ndom < 2 || !applies(x))
        return -1;
    const struct coll_model *m = &coll_model;
    struct coll_tiles tl;
    coll_tiles_init(sh, x->a->rtype, x->a->rcount, &tl);
    double n = x->size, q = sh->dom_max, nd = sh->ndom, c = (double)tl.nchunks;
    double per = coll_max_per_worker(sh);
    double wake = per > 1 ? (n - 1 + c * per) * m->wake_s : 0;
    return (q * q / 4 + (c + 1) * n) * m->line_s + (per + nd) * nbytes / m->copy_bps +
           coll_remote_s(sh, (nd - 1) * nbytes) + wake;
}
