/*
 * Barrier by a 4-ary combining tree over the members ordered by topology
 * group (NUMA node or worker), so that subtrees stay within a group and only
 * the top levels cross it: children report to their parent, the root
 * releases its children, each releases its own.
 * Cost: 2 * ceil(log4 N) * line (+ wake-ups where ranks share workers).
 */
#include <math.h>

#include "coll/coll_impl.h"

#define ARITY 4

int coll_barrier_tree(struct coll_ctx *x)
{
    struct coll_shared *sh = x->sh;
    int n = x->size, p = sh->pos[x->rank];
    for (int c = ARITY * p + 1; c <= ARITY * p + ARITY && c < n; c++)
        coll_wait(x, &sh->m[sh->order[c]].ready, x->seq);
    if (p > 0) {
        int parent = sh->order[(p - 1) / ARITY];
        coll_set(x, &x->me->ready, x->seq, parent);
        coll_wait(x, &x->me->release, x->seq);
    }
    for (int c = ARITY * p + 1; c <= ARITY * p + ARITY && c < n; c++)
        coll_set(x, &sh->m[sh->order[c]].release, x->seq, sh->order[c]);
    return MPI_SUCCESS;
}

double coll_barrier_tree_cost(const struct coll_ctx *x, size_t nbytes)
{
    (void)nbytes;
    double depth = x->size > 1 ? ceil(log((double)x->size) / log(ARITY)) : 0;
    int per = coll_max_per_worker(x->sh);
    return 2 * depth * coll_model.line_s + (per > 1 ? 2 * per * coll_model.wake_s : 0);
}
