/*
 * Allreduce with many ranks per worker (commutative operations, contiguous
 * types): each member folds its input into its worker's accumulator as it
 * arrives (no synchronization: the worker runs one member at a time); the
 * last member of each worker publishes the accumulator, folds all workers'
 * accumulators into the worker's result, meets the other representatives
 * and wakes its members, which copy the result out.
 * Cost: W * (line + m / copy) + N/W * (m / copy + local wake-up): a member
 * waits, on average, for half of its worker's folds and half of its
 * copy-outs, N/W * m / copy in all. (The code had 2 m / copy per member, the
 * worker's whole work; loom-tune on 2 cores, 2026-11-23, measured perworker
 * fastest at 8 and 16 ranks from 32 KiB, where the model took tiled.)
 * Several memory domains (D): the W / D representatives of a domain each
 * read (D - 1) / D of the W accumulators from other domains: + remote(W / D
 * * W (D - 1) / D * m) (coll_remote_s(); 0 with one domain).
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_impl.h"

static bool applies(const struct coll_ctx *x)
{
    return coll_max_per_worker(x->sh) > 1 && x->a->op->commutative && x->a->rtype->contig;
}

/* Grows one of the worker's buffers to nb bytes. The accumulator grows at a
 * call's first arrival: the other workers' representatives finished reading
 * the previous one before that call's members were released. The result
 * grows at the representative: by then every member of the worker has
 * arrived in this call, so none is still copying out the previous result. */
static int reserve(void **buf, size_t *cap, size_t nb)
{
    if (*cap >= nb)
        return MPI_SUCCESS;
    size_t want = nb < 256 ? 256 : nb;
    void *p = malloc(want);
    if (!p)
        return MPI_ERR_NO_MEM;
    free(*buf);
    *buf = p;
    *cap = want;
    return MPI_SUCCESS;
}

int coll_allreduce_perworker(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    const struct loom_type *t = a->rtype;
    struct coll_shared *sh = x->sh;
    if (!applies(x))
        return coll_allreduce_tiled(x); /* forced on a call it cannot do */
    size_t nb = a->rcount * t->size;
    struct coll_local *loc;
    int idx = coll_local_arrive(x, &loc);
    int rc = MPI_SUCCESS;
    /* Buffers as buffers of type t (contiguous: data at true_lb). */
    if (idx == 0)
        rc = reserve(&loc->acc, &loc->acc_cap, nb);
    char *acc = (char *)loc->acc - t->true_lb;
    if (loc->acc_cap < nb) /* the first arrival ran out of memory */
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && nb) {
        if (idx == 0)
            memcpy(loc->acc, (const char *)coll_input(a) + t->true_lb, nb);
        else
            loom_op_apply(a->op, coll_input(a), acc, a->rcount, t);
    }
    coll_local_arrived(loc);
    if (idx < loc->size - 1) {
        coll_local_wait(x, loc);
        if (nb && loc->res_cap >= nb)
            memcpy((char *)a->rbuf + t->true_lb, loc->res, nb);
        return rc;
    }
    /* Representative: publish, fold every worker's accumulator, meet. */
    if (rc == MPI_SUCCESS)
        rc = reserve(&loc->res, &loc->res_cap, nb);
    if (rc != MPI_SUCCESS)
        nb = 0; /* still take part in the synchronization */
    char *res = (char *)loc->res - t->true_lb;
    atomic_store_explicit(&loc->posted, x->seq, memory_order_seq_cst);
    for (int g = 0; g < sh->nlocal; g++)
        if (&sh->local[g] != loc)
            coll_notify(x, atomic_load_explicit(&sh->local[g].rep, memory_order_seq_cst));
    if (nb)
        memcpy(loc->res, loc->acc, nb);
    for (int g = 0; g < sh->nlocal; g++) {
        struct coll_local *o = &sh->local[g];
        if (o == loc)
            continue;
        coll_wait(x, &o->posted, x->seq);
        if (nb)
            loom_op_apply(a->op, (char *)o->acc - t->true_lb, res, a->rcount, t);
    }
    coll_local_rep_barrier(x, loc);
    if (nb)
        memcpy((char *)a->rbuf + t->true_lb, loc->res, nb);
    coll_local_release(x, loc);
    return rc;
}

double coll_allreduce_perworker_cost(const struct coll_ctx *x, size_t nbytes)
{
    if (!applies(x))
        return -1;
    const struct coll_model *m = &coll_model;
    double w = x->sh->nlocal, per = coll_max_per_worker(x->sh);
    double nd = x->sh->ndom;
    return w * (m->line_s + nbytes / m->copy_bps) + per * (nbytes / m->copy_bps + m->local_wake_s) +
           coll_remote_s(x->sh, w / nd * w * (nd - 1) / nd * nbytes);
}
