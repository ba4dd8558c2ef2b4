/*
 * Barrier: one shared counter. Every member adds 1; the last one publishes
 * the new generation and wakes the others.
 * Cost: N serialized atomic increments on one line, then N - 1 wake-ups by
 * the last arriver: N * line + (oversubscribed ? N * wake : 0).
 */
#include "coll/coll_impl.h"

int coll_barrier_central(struct coll_ctx *x)
{
    coll_fence(x);
    return MPI_SUCCESS;
}

double coll_barrier_central_cost(const struct coll_ctx *x, size_t nbytes)
{
    (void)nbytes;
    double n = x->size;
    return n * coll_model.line_s + (coll_max_per_worker(x->sh) > 1 ? n * coll_model.wake_s : 0);
}
