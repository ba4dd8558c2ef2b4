/*
 * Barrier with many ranks per worker: the members of each worker arrive at
 * its per-worker stage (no synchronization), the last one of each worker
 * joins a central barrier of one representative per worker, then wakes its
 * worker's other members.
 * Cost: W * line (W workers) + (N/W - 1) * local wake-ups per worker.
 * Applies when some worker runs several members.
 */
#include "coll/coll_impl.h"

int coll_barrier_perworker(struct coll_ctx *x)
{
    struct coll_local *loc;
    int idx = coll_local_arrive(x, &loc);
    coll_local_arrived(loc);
    if (idx < loc->size - 1) {
        coll_local_wait(x, loc);
        return MPI_SUCCESS;
    }
    coll_local_rep_barrier(x, loc);
    coll_local_release(x, loc);
    return MPI_SUCCESS;
}

double coll_barrier_perworker_cost(const struct coll_ctx *x, size_t nbytes)
{
    (void)nbytes;
    int per = coll_max_per_worker(x->sh);
    if (per < 2)
        return -1;
    return x->sh->nlocal * coll_model.line_s + per * coll_model.local_wake_s;
}
