/*
 * Barrier by posts alone: every member publishes its post for the call (a
 * copy-in post with no data: nobody counts reads), wakes the others, then
 * waits for every other member's post of the call. Nothing is shared between
 * calls but the posts, so barriers of one member may run at the same time
 * (nonblocking: MPI_Ibarrier), which the central counter cannot, and a
 * member that has published leaves the others nothing to wait for.
 * Cost: each member reads the N - 1 other posts, which every other member
 * also reads, and notifies N - 1: N * line + (oversubscribed ? N * wake :
 * 0), as the central counter (which the selector prefers on a tie).
 */
#include "coll/coll_impl.h"

int coll_barrier_posts(struct coll_ctx *x)
{
    if (x->size == 1)
        return MPI_SUCCESS;
    struct coll_post *p = coll_publish_begin(x);
    p->copied_in = true;
    coll_publish_done(x, p, true);
    int rc = MPI_SUCCESS;
    for (int k = 1; k < x->size; k++) {
        int r = coll_peer(x->sh, x->rank, k);
        if (!coll_peer_post(x, r)) {
            coll_peer_release(x, r); /* it may count its readers */
            if (!rc)
                rc = x->err;
        }
    }
    return rc;
}

double coll_barrier_posts_cost(const struct coll_ctx *x, size_t nbytes)
{
    (void)nbytes;
    double n = x->size;
    return n * coll_model.line_s + (coll_max_per_worker(x->sh) > 1 ? n * coll_model.wake_s : 0);
}
