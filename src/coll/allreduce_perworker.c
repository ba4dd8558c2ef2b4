/*
 * Allreduce with many ranks per worker (commutative operations, contiguous
 * types). The members of a worker arrive one at a time (no synchronization:
 * the worker runs one member at a time) and combine their inputs; the last
 * to arrive represents the worker: it publishes the worker's combined input,
 * folds all workers' combined inputs into the worker's result, meets the
 * other representatives and wakes its members, which copy the result out.
 * Order (docs/collectives.md#reproducible-reductions): a worker's members
 * (in rank order) form runs of consecutive members (one run up to
 * COLL_CELL bytes, else at most 8 runs), and the runs are the leaves of a
 * fixed balanced binary tree. An arriving member leaves its buffers'
 * addresses in its slots, folds into its run's partial (the receive buffer
 * of the run's first member) the run's members that are next in rank order
 * and there, x_k op (... op (x_1 op x_0)), strip by strip; the member that
 * completes a run computes the tree nodes on its path whose halves are both
 * complete: node = left op right, kept in the receive buffer of the first
 * member of its last run. So most folds happen as members arrive, in any
 * order, and the last one does a few (the rest of its run, at most log2(8)
 * nodes); the owners of those receive buffers wait for the result, which
 * overwrites them. Every representative folds the workers' combined inputs
 * in worker order. The result depends only on the placement and the count,
 * never on who arrives when, and every member gets the same bits. Where the
 * order cannot change the bits (loom_op_exact: integers, logical, bitwise)
 * or the user allows it (coll_reduce_arrival), each member folds its input
 * into the worker's accumulator on arrival instead, as this algorithm did
 * before 2026-11-26: the last arrival then folds only its own input, which
 * is why the fixed order costs 10-20% at 16 and 64 ranks from 64 KiB
 * (docs/collectives.md).
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

static bool aligned(const void *p, size_t align)
{
    return ((uintptr_t)p & (align - 1)) == 0;
}

/* Members per run: up to COLL_CELL bytes one run (a fold costs less than
 * the bookkeeping of a tree), else at most 8 runs, so that at most 8
 * partials are kept. */
static int run_len(const struct coll_local *loc, size_t nb)
{
    return nb <= COLL_CELL ? loc->size : (loc->size + 7) / 8;
}

/* Where node [lo, hi) of the tree over the runs holds its value: a run of
 * one member, that member's input; a longer run, its first member's
 * receive buffer; an inner node, the one of its last run. */
static const char *node_value(const struct coll_local *loc, int g, int lo, int hi)
{
    if (hi - lo == 1 && (g == 1 || loc->size - lo * g == 1))
        return loc->slot_in[lo * g];
    return loc->slot_out[(hi - 1) * g];
}

/* out = a op b over the call's count (out may be b). */
static void combine(const struct loom_coll_args *a, const struct loom_op_kernels *k, const char *pa,
                    const char *pb, char *out)
{
    const struct loom_type *t = a->rtype;
    if (k && aligned(pa, k->align) && aligned(pb, k->align) && aligned(out, k->align))
        k->three(pa, pb, out, a->rcount); /* what loom_op_reduce3 runs, without its checks */
    else
        loom_op_reduce3(a->op, pa - t->true_lb, pb - t->true_lb, out - t->true_lb, a->rcount, t);
}

/* Run r's value = x_hi-1 op (... op (x_lo+1 op x_lo)) in its first member's
 * receive buffer, folding members [from, to) into it, strip by strip (the
 * partial's strip stays in cache); any split into calls gives the same
 * bits. */
static void fold_run(const struct loom_coll_args *a, const struct loom_op_kernels *k,
                     struct coll_local *loc, int lo, int from, int to, size_t nb)
{
    const struct loom_type *t = a->rtype;
    char *acc0 = (char *)loc->slot_out[lo];
    size_t step = t->size < COLL_STRIP ? COLL_STRIP / t->size * t->size : t->size;
    for (size_t o = 0; o < nb; o += step) {
        size_t len = nb - o < step ? nb - o : step, n = len / t->size;
        char *acc = acc0 + o;
        int j = from;
        if (j == lo && loc->slot_in[j++] != acc0)
            memcpy(acc, loc->slot_in[lo] + o, len);
        for (; j < to; j++) {
            const char *in = loc->slot_in[j] + o;
            if (k && aligned(in, k->align) && aligned(acc, k->align))
                k->two(in, acc, n);
            else
                loom_op_apply(a->op, in - t->true_lb, acc - t->true_lb, n, t);
        }
    }
}

/* Run r is complete: completes, bottom up, the nodes of the tree over the
 * runs on its path whose other half is complete too: node [lo, hi) =
 * [lo, mid) op [mid, hi), into the receive buffer of the first member of
 * its last run (which holds [mid, hi) already, or is the input of that
 * member in place: out is b, else neither operand). Returns the root's
 * value once the tree is complete, else NULL. */
static const char *tree_arrive(struct coll_ctx *x, const struct loom_op_kernels *k,
                               struct coll_local *loc, int g, int r, bool fold)
{
    int nruns = (loc->size + g - 1) / g;
    int lo_[32], hi_[32], id_[32], depth = 0;
    int lo = 0, hi = nruns, id = 1;
    for (;;) {
        lo_[depth] = lo, hi_[depth] = hi, id_[depth] = id, depth++;
        if (hi - lo == 1)
            break;
        int mid = lo + (hi - lo + 1) / 2;
        if (r < mid)
            hi = mid, id = 2 * id;
        else
            lo = mid, id = 2 * id + 1;
    }
    loc->node_seq[id_[depth - 1]] = x->seq;
    for (int d = depth - 2; d >= 0; d--) {
        int l = lo_[d], h = hi_[d], mid = l + (h - l + 1) / 2, i = id_[d];
        if (loc->node_seq[2 * i] != x->seq || loc->node_seq[2 * i + 1] != x->seq)
            return NULL;
        if (fold)
            combine(x->a, k, node_value(loc, g, l, mid), node_value(loc, g, mid, h),
                    (char *)loc->slot_out[(h - 1) * g]);
        loc->node_seq[i] = x->seq;
    }
    return node_value(loc, g, 0, nruns);
}

/* Fixed order: member me left its buffers; folds what its run can fold now
 * and, when the run is complete, what the tree over the runs can. Returns
 * the worker's combined input once everything is folded, else NULL. */
static const char *fixed_arrive(struct coll_ctx *x, struct coll_local *loc, int me, size_t nb)
{
    const struct loom_type *t = x->a->rtype;
    const struct loom_op_kernels *k = loom_op_kernels_for(x->a->op, t);
    int g = run_len(loc, nb), r = me / g, lo = r * g, hi = lo + g < loc->size ? lo + g : loc->size;
    loc->slot_in[me] = (const char *)coll_input(x->a) + t->true_lb;
    loc->slot_out[me] = (char *)x->a->rbuf + t->true_lb;
    loc->slot_seq[me] = x->seq;
    if (loc->run_seq[r] != x->seq) {
        loc->run_seq[r] = x->seq;
        loc->run_folded[r] = 0;
    }
    int from = lo + loc->run_folded[r], to = from;
    while (to < hi && loc->slot_seq[to] == x->seq)
        to++;
    if (to == from)
        return NULL;
    if (nb && hi - lo > 1)
        fold_run(x->a, k, loc, lo, from, to, nb);
    loc->run_folded[r] = to - lo;
    return to == hi ? tree_arrive(x, k, loc, g, r, nb > 0) : NULL;
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
    const char *combined = NULL;
    if (arrival) {
        /* The accumulator grows at a call's first arrival (see reserve()). */
        if (idx == 0)
            rc = reserve(&loc->acc, &loc->acc_cap, nb);
        if (loc->acc_cap < nb) /* the first arrival ran out of memory */
            rc = MPI_ERR_NO_MEM;
        /* Buffers as buffers of type t (contiguous: data at true_lb). */
        if (rc == MPI_SUCCESS && nb) {
            if (idx == 0)
                memcpy(loc->acc, (const char *)coll_input(a) + t->true_lb, nb);
            else
                loom_op_apply(a->op, coll_input(a), (char *)loc->acc - t->true_lb, a->rcount, t);
        }
        combined = rc == MPI_SUCCESS ? loc->acc : NULL;
    } else {
        /* The members of a worker run one at a time and none yields in
         * here: the slots, runs and tree need no synchronization. */
        combined = fixed_arrive(x, loc, sh->local_idx[x->rank], nb);
    }
    coll_local_arrived(loc);
    if (idx < loc->size - 1) {
        coll_local_wait(x, loc);
        if (nb && loc->res_cap >= nb)
            memcpy((char *)a->rbuf + t->true_lb, loc->res, nb);
        return rc;
    }
    /* Representative (the worker's inputs are combined by now): publish,
     * fold every worker's combined input in worker order, meet. */
    if (rc == MPI_SUCCESS)
        rc = reserve(&loc->res, &loc->res_cap, nb);
    if (rc != MPI_SUCCESS)
        nb = 0; /* still take part in the synchronization */
    loc->combined = nb ? combined : NULL;
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
        if (nb && !o->combined) { /* that worker ran out of memory */
            rc = MPI_ERR_NO_MEM;
            nb = 0;
        }
        if (nb)
            in[g] = o->combined - t->true_lb;
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
