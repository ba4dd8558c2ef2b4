/*
 * Allreduce as a tree reduce to member 0 followed by a one-stage broadcast
 * from it (two calls' worth of flags: the broadcast runs as the next call).
 * Cost: reduce_tree + bcast_direct.
 */
#include "coll/coll_impl.h"

int coll_allreduce_reduce_bcast(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    struct loom_coll_args r = *a;
    r.root = 0;
    x->a = &r;
    int rc = coll_reduce_tree(x);
    struct loom_coll_args b = {.rbuf = a->rbuf, .rcount = a->rcount, .rtype = a->rtype, .root = 0};
    x->seq = ++x->me->seq;
    x->kind = LOOM_COLL_BCAST;
    x->a = &b;
    int rc2 = coll_bcast_direct(x);
    x->a = a;
    x->kind = LOOM_COLL_ALLREDUCE;
    return rc ? rc : rc2;
}

double coll_allreduce_reduce_bcast_cost(const struct coll_ctx *x, size_t nbytes)
{
    return coll_reduce_tree_cost(x, nbytes) + coll_bcast_direct_cost(x, nbytes);
}
