/*
 * Allreduce with many ranks per worker (commutative operations, contiguous
 * types). The members of a worker arrive one at a time (no synchronization:
 * the worker runs one member at a time); the last to arrive represents the
 * worker: it folds the worker's inputs into the worker's accumulator,
 * publishes it, folds all workers' accumulators into the worker's result,
 * meets the other representatives and wakes its members, which copy the
 * result out.
 * Order (docs/collectives.md#reproducible-reductions): each member leaves
 * its input's address in its fixed slot (its index among the worker's
 * members, in rank order), then folds into the accumulator the slots that
 * are next in that order and there: its own and those of later members that
 * arrived before it, acc = x_k op (... op (x_1 op x_0)). Members arriving in
 * rank order each fold their own input on arrival; a late member folds the
 * inputs that waited for it (their owners wait for the result, so their
 * buffers stay). Every representative folds the accumulators in worker
 * order. So the result depends only on the placement, never on who arrives
 * when, and every member gets the same bits. Where the order cannot change
 * the bits (loom_op_exact: integers, logical, bitwise) or the user allows it
 * (coll_reduce_arrival), each member folds its own input on arrival, as
 * this algorithm did before 2026-11-26.
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

/* The array of n input pointers in the call's workspace, NULL when out of
 * memory. */
static const void **inputs(struct coll_ctx *x, int n)
{
    struct coll_ws *ws = x->ws;
    if (ws->inputs_cap < n) {
        const void **a = realloc(ws->inputs, (size_t)n * sizeof *a);
        if (!a)
            return NULL;
        ws->inputs = a;
        ws->inputs_cap = n;
    }
    return ws->inputs;
}

/* acc = in op acc for the k-th input folded in this call (k == 0: a copy). */
static void fold_in(const struct loom_coll_args *a, struct coll_local *loc, int k, const char *data,
                    size_t nb)
{
    const struct loom_type *t = a->rtype;
    if (k == 0)
        memcpy(loc->acc, data, nb);
    else
        loom_op_apply(a->op, data - t->true_lb, (char *)loc->acc - t->true_lb, a->rcount, t);
}

int coll_allreduce_perworker(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    const struct loom_type *t = a->rtype;
    struct coll_shared *sh = x->sh;
    if (!applies(x))
        return coll_allreduce_tiled(x); /* forced on a call it cannot do */
    size_t nb = a->rcount * t->size;
    bool arrival = x->arrival || loom_op_exact(a->op, t);
    struct coll_local *loc;
    int idx = coll_local_arrive(x, &loc);
    int rc = MPI_SUCCESS;
    /* The accumulator grows at a call's first arrival (see reserve()). */
    if (idx == 0) {
        rc = reserve(&loc->acc, &loc->acc_cap, nb);
        loc->folded = 0;
    }
    if (loc->acc_cap < nb) /* the first arrival ran out of memory */
        rc = MPI_ERR_NO_MEM;
    /* Buffers as buffers of type t (contiguous: data at true_lb). */
    const char *data = (const char *)coll_input(a) + t->true_lb;
    if (arrival) {
        if (rc == MPI_SUCCESS && nb)
            fold_in(a, loc, idx, data, nb);
    } else {
        /* The members of a worker run one at a time and none yields in
         * here: the slots and the count need no synchronization. */
        int me = sh->local_idx[x->rank];
        loc->slot[me] = data;
        loc->slot_seq[me] = x->seq;
        for (int k = loc->folded; k < loc->size && loc->slot_seq[k] == x->seq; k++) {
            if (rc == MPI_SUCCESS && nb)
                fold_in(a, loc, k, loc->slot[k], nb);
            loc->folded = k + 1;
        }
    }
    coll_local_arrived(loc);
    if (idx < loc->size - 1) {
        coll_local_wait(x, loc);
        if (nb && loc->res_cap >= nb)
            memcpy((char *)a->rbuf + t->true_lb, loc->res, nb);
        return rc;
    }
    /* Representative (every input is folded by now): publish, fold every
     * worker's accumulator in worker order, meet. */
    if (rc == MPI_SUCCESS)
        rc = reserve(&loc->res, &loc->res_cap, nb);
    if (rc != MPI_SUCCESS)
        nb = 0; /* still take part in the synchronization */
    atomic_store_explicit(&loc->posted, x->seq, memory_order_seq_cst);
    for (int g = 0; g < sh->nlocal; g++)
        if (&sh->local[g] != loc)
            coll_notify(x, atomic_load_explicit(&sh->local[g].rep, memory_order_seq_cst));
    const void **in = nb ? inputs(x, sh->nlocal) : NULL;
    if (nb && !in) {
        rc = MPI_ERR_NO_MEM;
        nb = 0;
    }
    for (int g = 0; g < sh->nlocal; g++) {
        struct coll_local *o = &sh->local[g];
        if (o != loc)
            coll_wait(x, &o->posted, x->seq);
        if (nb && o->acc_cap < nb) { /* that worker ran out of memory */
            rc = MPI_ERR_NO_MEM;
            nb = 0;
        }
        if (nb)
            in[g] = (char *)o->acc - t->true_lb;
    }
    if (nb)
        rc =
            coll_fold(x, a->op, t, in, sh->nlocal, (char *)loc->res - t->true_lb, -1, 0, a->rcount);
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
