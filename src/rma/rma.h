/*
 * One-sided communication (MPI-3.1 chapter 11) between ranks that share one
 * address space: a window of another rank is ordinary memory of this
 * process, so Put and Get are a typed copy by the origin straight into (or
 * out of) the target's memory, complete when the call returns, and
 * accumulates are atomic updates of the target's elements in place.
 *
 * A window has a part shared by its members (struct loom_win_shared: each
 * member's memory, the passive-target lock words, the PSCW counters) and a
 * part per member rank (struct loom_win: handle, error handler, attributes,
 * name, hints, and the rank's epochs). A window handle belongs to the rank
 * that made it, as a communicator handle does.
 *
 * Synchronization (sync.c):
 * - fence: a barrier of the window's own communicator (a duplicate of the
 *   one it was made from), which orders every member's accesses before it
 *   with every access after it;
 * - post/start/complete/wait: per-target counters of posts and completes,
 *   waited on by parking (loom_ult_wait);
 * - lock/unlock, lock_all: a lock word per target, a count of lock_all
 *   holders and of exclusive locks, all under one spin lock per window
 *   (held for a few instructions, never across a switch); a rank that must
 *   wait parks in a queue of waiters that an unlock wakes;
 * - flush*, sync: a full fence (every operation is complete at its call).
 *
 * Accumulate atomicity (ops.c): every accumulate, fetch-and-op and
 * compare-and-swap holds the stripe locks of the bytes it touches (a
 * job-wide table of spin locks by address) and combines with the
 * operation's vector kernel; under an exclusive lock of the target it takes
 * none.
 *
 * Depends on: coll (barrier and allgather on the window's communicator,
 * reduction kernels), comm, datatype, runtime, util.
 */
#ifndef LOOM_RMA_H
#define LOOM_RMA_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "comm/comm.h"
#include "datatype/datatype.h"
#include "runtime/ult.h"
#include "util/common.h"

struct loom_op;
struct loom_info;
struct loom_keyval;

/* A region a rank attached to a dynamic window. */
struct loom_win_region {
    char *base;
    size_t size;
};

/* One member's part of the shared window. */
struct loom_win_member {
    char *base;
    MPI_Aint size;
    int disp_unit;
    /* passive target: -1 locked exclusively, n > 0 by n shared locks
     * (under loom_win_shared.lk) */
    int lock;
    /* waiting for a lock: next in the queue (-1: last), under lk; an
     * unlock that takes the queue sets lock_popped and wakes lock_slot */
    int lock_next;
    _Atomic bool lock_popped;
    loom_waiter_slot lock_slot;
    /* dynamic windows: attached regions (under lk) */
    struct loom_win_region *regions;
    int nregions, capregions;
    /* PSCW, exposure side: MPI_Win_complete calls of origins to this target */
    _Atomic unsigned completes LOOM_ALIGNED_CL;
    loom_waiter_slot complete_slot;
    /* PSCW, access side: posts[t] counts MPI_Win_post calls of target t
     * naming this member; made by the first poster or starter */
    _Atomic(_Atomic unsigned *) posts LOOM_ALIGNED_CL;
    loom_waiter_slot post_slot;
} LOOM_ALIGNED_CL;

struct loom_win_shared {
    _Atomic int refs;
    int size;
    int flavor;  /* MPI_WIN_FLAVOR_* */
    void *block; /* Win_allocate_shared, contiguous: every member's memory */
    size_t block_bytes;
    int *rank_of_world; /* [job's ranks] the window rank of a world rank, or -1 */
    _Atomic int lk LOOM_ALIGNED_CL;
    int lock_all; /* MPI_Win_lock_all holders (shared locks on every member) */
    int nexcl;    /* exclusive locks held */
    int waiters;  /* first member waiting for a lock, or -1 */
    struct loom_win_member m[];
};

/* Hints (MPI_Win_set_info), as the window uses them. */
struct loom_win_hints {
    bool no_locks;
    bool same_size, same_disp_unit;
    bool alloc_shared_noncontig;
    char accumulate_ordering[64];
    char accumulate_ops[32];
};

struct loom_win_attr;

enum { LOOM_WIN_LOCKED_SHARED = 1, LOOM_WIN_LOCKED_EXCLUSIVE = 2 };

/* The calling rank's window object. */
struct loom_win {
    struct loom_win_shared *sh;
    struct loom_comm *comm; /* the window's own communicator */
    int rank;               /* in the window */
    int owner;              /* world rank */
    int handle;
    MPI_Errhandler errhandler;
    char name[MPI_MAX_OBJECT_NAME];
    struct loom_win_attr *attrs; /* newest first */
    void *priv_attr_vals;        /* what MPI_WIN_SIZE... point at (src/mpi/win.c) */
    struct loom_win_hints hints;
    void *own_alloc; /* Win_allocate / noncontig shared: this rank's memory */
    /* epochs of this rank */
    bool fence; /* the last fence opened an epoch (no MPI_MODE_NOSUCCEED) */
    bool lock_all;
    int nlocks;                  /* targets locked with MPI_Win_lock */
    signed char *locked;         /* [size] 0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE; lazily */
    bool nocheck_all;            /* lock_all with MPI_MODE_NOCHECK: nothing was taken */
    unsigned char *lock_nocheck; /* [size] that lock took nothing (MPI_MODE_NOCHECK) */
    /* PSCW: access (start) and exposure (post) epochs */
    bool started; /* an access epoch of MPI_Win_start is open */
    int nstart;
    int *start_ranks;        /* [nstart] window ranks of the start group */
    unsigned char *in_start; /* [size] lazily */
    unsigned *post_seen;     /* [size] posts of each target consumed; lazily */
    bool posted;
    unsigned completes_expected;
};

/* The calling rank's window behind h, or NULL (null, freed, another rank's). */
struct loom_win *loom_win_lookup(MPI_Win h);
/* Why h is not a window of the caller, for a message. */
const char *loom_win_problem(MPI_Win h, char *buf, size_t len);

/* Window creation, collective over c (MPI layer checked the arguments).
 * flavor: MPI_WIN_FLAVOR_*. For CREATE base/size/disp_unit describe the
 * caller's memory; ALLOCATE and SHARED allocate size bytes (base_p gets
 * them); DYNAMIC has none. Returns LOOM_OK or LOOM_ERR_NOMEM (on every
 * member alike when allocation fails on one, via an agreement). */
int loom_win_create(struct loom_comm *c, int flavor, void *base, MPI_Aint size, int disp_unit,
                    const struct loom_win_hints *hints, void *base_p,
                    struct loom_win **w_p) LOOM_MUST_CHECK;
/* Collective free: waits for every member, then releases the caller's part
 * (attributes are the caller's business before). */
void loom_win_free(struct loom_win *w);

/* Target memory of member t for an access of [disp*disp_unit + lo, ... + hi)
 * bytes: the address of displacement disp, or NULL when the range is
 * outside the window (dynamic windows: no attached region holds it). */
char *loom_win_target(struct loom_win *w, int t, MPI_Aint disp, MPI_Aint lo, MPI_Aint hi);

/* Dynamic windows. attach: LOOM_ERR_INVALID when the region overlaps an
 * attached one, LOOM_ERR_NOMEM; detach: LOOM_ERR_INVALID when base does
 * not start an attached region. */
int loom_win_attach(struct loom_win *w, void *base, size_t size) LOOM_MUST_CHECK;
int loom_win_detach(struct loom_win *w, const void *base) LOOM_MUST_CHECK;

/* The window's spin lock (held for a few instructions, never across a
 * switch: a ULT holding it is never descheduled by Loom). */
static inline void loom_win_lk(struct loom_win_shared *sh)
{
    while (atomic_exchange_explicit(&sh->lk, 1, memory_order_acquire))
        while (atomic_load_explicit(&sh->lk, memory_order_relaxed))
            loom_cpu_relax();
}
static inline void loom_win_unlk(struct loom_win_shared *sh)
{
    atomic_store_explicit(&sh->lk, 0, memory_order_release);
}

/* Whether the caller may access target t now (an access epoch covers it). */
static inline bool loom_win_may_access(const struct loom_win *w, int t)
{
    return w->fence || w->lock_all || (w->locked && w->locked[t]) ||
           (w->in_start && w->in_start[t]);
}

/* ---- communication (ops.c) ---- */

/* Element-wise target = origin op target on `count` elements of the target
 * layout tt at taddr, origin data packed contiguous in `in` (NULL for
 * MPI_NO_OP); when `out` is not NULL the old target values are packed into
 * it first (Get_accumulate). basic: the predefined type of the elements.
 * Atomic with respect to every other accumulate (see the file header),
 * unless `exclusive` (the origin holds the target's exclusive lock: nobody
 * else may access it). */
void loom_rma_accumulate(char *taddr, size_t count, const struct loom_type *tt,
                         const struct loom_type *basic, const struct loom_op *op, const void *in,
                         void *out, bool exclusive);
/* *result = target; if target == compare then target = origin; atomically,
 * for one element of predefined type t. */
void loom_rma_cas(char *taddr, const struct loom_type *t, const void *origin, const void *compare,
                  void *result);

/* ---- synchronization (sync.c); the MPI layer checked the epochs ---- */

int loom_win_fence(struct loom_win *w, int assert) LOOM_MUST_CHECK;
/* Takes a lock (MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE) on target t,
 * parking until it is granted. */
int loom_win_lock(struct loom_win *w, int type, int t, bool nocheck) LOOM_MUST_CHECK;
void loom_win_unlock(struct loom_win *w, int t);
void loom_win_lock_all(struct loom_win *w, bool nocheck);
void loom_win_unlock_all(struct loom_win *w);
/* PSCW over window ranks ranks[0..n-1]. */
int loom_win_post(struct loom_win *w, int n, const int *ranks) LOOM_MUST_CHECK;
int loom_win_start(struct loom_win *w, int n, const int *ranks, bool nocheck) LOOM_MUST_CHECK;
void loom_win_complete(struct loom_win *w);
/* Waits (or with `test`, looks) for the completes of the exposure epoch;
 * returns whether it ended. */
bool loom_win_wait(struct loom_win *w, bool test);

#endif
