/*
 * Barrier by dissemination: in round k member i signals member i + 2^k and
 * waits for member i - 2^k (mod N); ceil(log2 N) rounds, no shared counter.
 * Cost: ceil(log2 N) * line, plus a wake-up per round when ranks share workers.
 */
#include <math.h>

#include "coll/coll_impl.h"

int coll_barrier_dissemination(struct coll_ctx *x)
{
    int n = x->size;
    int k = 0;
    for (int d = 1; d < n; d <<= 1, k++) {
        int to = (x->rank + d) % n;
        coll_set(x, &x->sh->m[to].round[k], x->seq, to);
        coll_wait(x, &x->me->round[k], x->seq);
    }
    return MPI_SUCCESS;
}

double coll_barrier_dissemination_cost(const struct coll_ctx *x, size_t nbytes)
{
    (void)nbytes;
    double rounds = x->size > 1 ? ceil(log2((double)x->size)) : 0;
    int per = coll_max_per_worker(x->sh);
    return rounds * (coll_model.line_s + (per > 1 ? per * coll_model.wake_s : 0));
}
