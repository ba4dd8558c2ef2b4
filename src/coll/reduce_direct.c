/*
 * Reduce by the root alone: it folds every member's input, in rank order,
 * strip by strip (COLL_STRIP bytes of every input at a time, so the partial
 * result stays in cache), straight into its receive buffer; then releases
 * the others.
 * Cost: N * line + N * m / copy (the root reads everything).
 */
#include <stdlib.h>

#include "coll/coll_impl.h"

int coll_reduce_direct(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    int n = x->size, root = a->root;
    if (x->rank != root) {
        struct coll_post *p = coll_publish_begin(x);
        coll_publish_done(x, p, false);
        coll_notify(x, root);
        coll_wait(x, &x->me->release, x->seq);
        return MPI_SUCCESS;
    }
    const void *stack_in[16];
    const void **in = n <= 16 ? stack_in : malloc((size_t)n * sizeof *in);
    if (!in)
        return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    for (int r = 0; r < n; r++) {
        if (r == root) {
            in[r] = coll_input(a);
            continue;
        }
        const struct coll_post *p = coll_peer_post(x, r);
        if (!p) {
            rc = MPI_ERR_OTHER;
            in[r] = coll_input(a); /* keep going: release everybody */
            continue;
        }
        in[r] = coll_input(&p->args);
    }
    if (rc == MPI_SUCCESS)
        rc = coll_fold(x, a->op, a->rtype, in, n, a->rbuf, a->in_place ? root : -1, 0, a->rcount);
    for (int r = 0; r < n; r++)
        if (r != root)
            coll_set(x, &x->sh->m[r].release, x->seq, r);
    if (in != stack_in)
        free(in);
    return rc;
}

double coll_reduce_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    const struct coll_model *m = &coll_model;
    return x->size * (m->line_s + nbytes / m->copy_bps);
}
