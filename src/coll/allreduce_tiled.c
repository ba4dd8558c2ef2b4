/*
 * Allreduce by tiles: the vector is cut into N tiles; member i folds tile i
 * of every input (in rank order, strip-mined) into its own receive buffer,
 * then every member copies the other tiles from their owners' buffers. All
 * cores reduce at once and every byte is read once per reduction.
 * Cost: N * line + m / copy (reduce: N inputs of m / N) + m / copy (gather
 * the tiles) + a fence. Members of one worker run one after another
 * (per = most members on a worker): a member waits at the fence for all its
 * worker's tiles (per * m / copy) and, on average, for half of their
 * gathers ((per + 1) / 2 * m / copy). (Was 2 m / copy whatever per; loom-tune
 * on 2 cores, 2026-11-23, measured perworker 1.2-2x faster at 8 and 16 ranks
 * from 32 KiB, where the model took tiled.)
 * Several memory domains (D, q members in the busiest): (D - 1) / D of
 * each member's reads, 2 m, cross domains: + remote(2 m q (D - 1) / D)
 * (coll_remote_s(); 0 with one domain).
 */

#include "coll/coll_impl.h"

static void tile(size_t count, int n, int i, size_t *e0, size_t *ne)
{
    size_t q = count / (size_t)n, r = count % (size_t)n, ui = (size_t)i;
    *e0 = ui * q + (ui < r ? ui : r);
    *ne = q + (ui < r ? 1 : 0);
}

int coll_allreduce_tiled(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    struct coll_shared *sh = x->sh;
    int n = x->size, me = x->rank;
    const struct loom_type *t = a->rtype;
    struct coll_post *mine = coll_publish_begin(x);
    coll_publish_done(x, mine, true);

    const void *const *in;
    int rc = coll_collect(x, n, coll_input(a), COLL_PICK_INPUT, &in);
    size_t e0, ne;
    tile(a->rcount, n, me, &e0, &ne);
    if (rc == MPI_SUCCESS && ne)
        rc = coll_fold(x, a->op, t, in, n, a->rbuf, a->in_place ? me : -1, e0, ne);
    /* Release: coll_notify() orders its look at the slots (loom_notify_fence). */
    atomic_store_explicit(&x->me->ready, x->seq, memory_order_release);
    for (int r = 0; r < n; r++)
        if (r != me)
            coll_notify(x, r);
    for (int k = 1; k < n; k++) {
        int r = (me + k) % n;
        coll_wait(x, &sh->m[r].ready, x->seq);
        tile(a->rcount, n, r, &e0, &ne);
        const struct coll_post *p = &sh->m[r].post[coll_ring_index(x)];
        if (ne)
            loom_type_copy(a->rbuf, t, p->args.rbuf, p->args.rtype, e0 * t->size, ne * t->size);
    }
    coll_fence(x);
    return rc;
}

double coll_allreduce_tiled_cost(const struct coll_ctx *x, size_t nbytes)
{
    const struct coll_model *m = &coll_model;
    double n = x->size;
    double per = coll_max_per_worker(x->sh);
    double wake = per > 1 ? 2 * n * m->wake_s : 0;
    double q = x->sh->dom_max, nd = x->sh->ndom;
    return (n * n / 4 + 2 * n) * m->line_s + (per + (per + 1) / 2) * nbytes / m->copy_bps + wake +
           coll_remote_s(x->sh, 2 * nbytes * q * (nd - 1) / nd);
}
