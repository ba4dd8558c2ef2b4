/*
 * The per-worker stage of collectives with many ranks per core (the MPC
 * paper's per-core stage): the members running on one worker arrive one at a
 * time (a worker runs one ULT at a time), so they combine in the worker's
 * coll_local with plain program order; the last to arrive represents the
 * worker in an inter-worker stage among one representative per worker, then
 * wakes the others, each woken once in O(1).
 */
#include "coll/coll_impl.h"

int coll_local_arrive(struct coll_ctx *x, struct coll_local **loc_p)
{
    struct coll_local *loc = &x->sh->local[x->sh->local_of[x->rank]];
    *loc_p = loc;
    /* The members of this worker never run concurrently, and none yields
     * between this load and its coll_local_arrived(): a plain counter would
     * do; acquire/release show the sanitizers the order of contributions. */
    uint64_t k = atomic_load_explicit(&loc->arrived, memory_order_acquire);
    int idx = (int)(k % (uint64_t)loc->size);
    if (idx == 0) {
        loc->call_kind = (int)x->kind;
        loc->call_root = x->a->root;
        loc->call_first = x->rank;
    } else if (loc->call_kind != (int)x->kind || loc->call_root != x->a->root) {
        /* Safe to compare: the worker's first member of the next call
         * arrives only after every member of this one. Between workers,
         * a representative that waits for another worker's step that a
         * different call never takes stalls, and coll_wait's stall check
         * compares the members' call records (core.c). */
        /* The algorithm cannot go on: its members would read each other's
         * state as their own. */
        coll_mismatch_abort(x, loc->call_first, loc->call_kind, loc->call_root);
    }
    if (idx == loc->size - 1) /* seq_cst: read by other workers' notifiers */
        atomic_store_explicit(&loc->rep, x->rank, memory_order_seq_cst);
    return idx;
}

void coll_local_arrived(struct coll_local *loc)
{
    uint64_t k = atomic_load_explicit(&loc->arrived, memory_order_relaxed);
    atomic_store_explicit(&loc->arrived, k + 1, memory_order_release);
}

void coll_local_rep_barrier(struct coll_ctx *x, struct coll_local *loc)
{
    struct coll_shared *sh = x->sh;
    uint64_t c = ++loc->rep_calls;
    if (sh->nlocal == 1)
        return;
    if (atomic_fetch_add_explicit(&sh->rep_arrived, 1, memory_order_acq_rel) + 1 ==
        c * (uint64_t)sh->nlocal) {
        atomic_store_explicit(&sh->rep_gen, c, memory_order_seq_cst);
        for (int g = 0; g < sh->nlocal; g++)
            if (&sh->local[g] != loc)
                coll_notify(x, atomic_load_explicit(&sh->local[g].rep, memory_order_seq_cst));
        return;
    }
    coll_wait(x, &sh->rep_gen, c);
}

void coll_local_release(struct coll_ctx *x, struct coll_local *loc)
{
    atomic_store_explicit(&loc->done, x->seq, memory_order_release);
    for (int i = 0; i < loc->size; i++)
        if (loc->members[i] != x->rank)
            coll_notify(x, loc->members[i]);
}

void coll_local_wait(struct coll_ctx *x, struct coll_local *loc)
{
    coll_wait(x, &loc->done, x->seq);
}
