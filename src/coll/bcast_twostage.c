/*
 * Broadcast in two stages: one member per group (NUMA node when the members
 * span several, else worker) copies from the root, then the other members
 * of each group copy from their group's leader, whose copy is near them (same
 * NUMA node) or still in cache (same worker). The root's own group reads
 * from the root.
 * Cost: 2 * (line + m / copy), with the groups' second stages in parallel,
 * + remote(m) with several memory domains (coll_remote_s(): the leader of
 * each crosses; remote(q m) when the groups are workers, q the members of
 * the busiest domain).
 */
#include "coll/coll_impl.h"

/* Whom member r reads from. */
static int source_of(const struct coll_shared *sh, int r, int root)
{
    int g = sh->group[r];
    if (g == sh->group[root] || sh->leader[g] == r)
        return root;
    return sh->leader[g];
}

int coll_bcast_twostage(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    struct coll_shared *sh = x->sh;
    int root = a->root, rc = MPI_SUCCESS;
    if (x->size == 1)
        return MPI_SUCCESS;
    if (x->rank != root) {
        int src = source_of(sh, x->rank, root);
        const struct coll_post *p = coll_peer_post(x, src);
        if (!p) {
            coll_peer_release(x, src);
            return x->err;
        }
        rc =
            coll_copy(x, a->rbuf, a->rcount, a->rtype, p->args.rbuf, p->args.rcount, p->args.rtype);
        coll_read_done(x, p, src);
    }
    uint64_t readers = 0;
    for (int r = 0; r < x->size; r++)
        if (r != x->rank && r != root && source_of(sh, r, root) == x->rank)
            readers++;
    if (readers == 0)
        return rc;
    struct coll_post *p = coll_publish_begin(x);
    coll_expect_reads(x, p, (int)readers);
    coll_publish_done(x, p, false);
    for (int r = 0; r < x->size; r++)
        if (r != x->rank && r != root && source_of(sh, r, root) == x->rank)
            coll_notify(x, r);
    coll_await_reads(x, p);
    return rc;
}

double coll_bcast_twostage_cost(const struct coll_ctx *x, size_t nbytes)
{
    const struct coll_model *m = &coll_model;
    if (x->sh->ngroups < 2 || x->sh->ngroups == x->size)
        return -1; /* one stage would do the same */
    /* Crossing into a domain: one leader when the groups are the domains,
     * else every group's (worker's) leader in it. */
    double across = x->sh->ngroups == x->sh->ndom ? 1 : x->sh->dom_max;
    return 2 * (m->line_s + nbytes / m->copy_bps) + x->size * m->line_s +
           coll_remote_s(x->sh, across * nbytes);
}
