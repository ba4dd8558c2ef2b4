/*
 * Window synchronization: fence, passive-target locks, PSCW (rma.h).
 *
 * Every RMA operation is complete when its call returns (a direct copy or
 * atomic update by the origin), so synchronization only has to order
 * accesses and to wait: no operation is ever queued or progressed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "coll/coll.h"
#include "rma/rma.h"
#include "runtime/job.h"

/* A wait's description for the deadlock detector: the text in arg. */
static void rma_describe(const struct loom_mpi_wait *w, char *buf, size_t n)
{
    snprintf(buf, n, "%s", (const char *)w->arg);
}

int loom_win_fence(struct loom_win *w, int assert)
{
    /* The barrier orders every member's accesses before the fence with
     * every access after it (its flags are release/acquire). */
    atomic_thread_fence(memory_order_release);
    struct loom_coll_args a = {0};
    const char *why = NULL;
    int rc = loom_coll_run(w->comm, LOOM_COLL_BARRIER, &a, &why);
    atomic_thread_fence(memory_order_acquire);
    w->fence = !(assert &MPI_MODE_NOSUCCEED);
    return rc;
}

/* ---- passive target ---- */

static bool lock_free_for(const struct loom_win_shared *sh, int type, int t)
{
    if (t < 0) /* lock_all */
        return sh->nexcl == 0;
    if (type == MPI_LOCK_SHARED)
        return sh->m[t].lock >= 0;
    return sh->m[t].lock == 0 && sh->lock_all == 0;
}

static void lock_take(struct loom_win_shared *sh, int type, int t)
{
    if (t < 0) {
        sh->lock_all++;
    } else if (type == MPI_LOCK_SHARED) {
        sh->m[t].lock++;
    } else {
        sh->m[t].lock = -1;
        sh->nexcl++;
    }
}

static bool popped(const void *arg)
{
    return atomic_load_explicit((const _Atomic bool *)arg, memory_order_acquire);
}

/* Takes lock (type, t) (t < 0: lock_all) for the caller, parking in the
 * window's queue while it conflicts with locks held. */
static void acquire(struct loom_win *w, int type, int t)
{
    struct loom_win_shared *sh = w->sh;
    struct loom_win_member *me = &sh->m[w->rank];
    for (;;) {
        loom_win_lk(sh);
        if (lock_free_for(sh, type, t)) {
            lock_take(sh, type, t);
            loom_win_unlk(sh);
            return;
        }
        atomic_store_explicit(&me->lock_popped, false, memory_order_relaxed);
        me->lock_next = sh->waiters;
        sh->waiters = w->rank;
        loom_win_unlk(sh);
        /* An unlock after this point finds us in the queue (it takes lk
         * after releasing its lock), pops us and sets lock_popped. */
        struct loom_mpi_wait dw = {rma_describe, NULL,
                                   "in MPI_Win_lock (or lock_all), for a lock "
                                   "another rank holds on the window",
                                   0, false};
        loom_mpi_wait_enter(&dw);
        loom_ult_wait(popped, &me->lock_popped, &me->lock_slot);
        loom_mpi_wait_leave();
    }
}

/* Releases lock (type, t) and wakes every queued waiter to try again. */
static void release(struct loom_win *w, int type, int t)
{
    struct loom_win_shared *sh = w->sh;
    loom_win_lk(sh);
    if (t < 0)
        sh->lock_all--;
    else if (type == MPI_LOCK_SHARED)
        sh->m[t].lock--;
    else {
        sh->m[t].lock = 0;
        sh->nexcl--;
    }
    int q = sh->waiters;
    sh->waiters = -1;
    loom_win_unlk(sh);
    while (q >= 0) {
        struct loom_win_member *m = &sh->m[q];
        q = m->lock_next; /* read before the waiter may run and queue again */
        atomic_store_explicit(&m->lock_popped, true, memory_order_release);
        loom_ult_notify(&m->lock_slot);
    }
}

static void *lazy(void **p, size_t n, size_t each)
{
    if (!*p)
        *p = calloc(n, each);
    return *p;
}

int loom_win_lock(struct loom_win *w, int type, int t, bool nocheck)
{
    if (!lazy((void **)&w->locked, (size_t)w->sh->size, 1) ||
        !lazy((void **)&w->lock_nocheck, (size_t)w->sh->size, 1))
        return LOOM_ERR_NOMEM;
    /* MPI_MODE_NOCHECK: no other rank holds or asks for a conflicting lock,
     * so there is nothing to take. */
    if (!nocheck)
        acquire(w, type, t);
    atomic_thread_fence(memory_order_acquire);
    w->locked[t] = type == MPI_LOCK_SHARED ? LOOM_WIN_LOCKED_SHARED : LOOM_WIN_LOCKED_EXCLUSIVE;
    w->lock_nocheck[t] = nocheck;
    w->nlocks++;
    return LOOM_OK;
}

void loom_win_unlock(struct loom_win *w, int t)
{
    atomic_thread_fence(memory_order_seq_cst); /* the epoch's accesses before the release */
    if (!w->lock_nocheck[t])
        release(w, w->locked[t] == LOOM_WIN_LOCKED_SHARED ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE,
                t);
    w->locked[t] = 0;
    w->nlocks--;
}

void loom_win_lock_all(struct loom_win *w, bool nocheck)
{
    if (!nocheck)
        acquire(w, MPI_LOCK_SHARED, -1);
    atomic_thread_fence(memory_order_acquire);
    w->nocheck_all = nocheck;
    w->lock_all = true;
}

void loom_win_unlock_all(struct loom_win *w)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (!w->nocheck_all)
        release(w, MPI_LOCK_SHARED, -1);
    w->lock_all = false;
}

/* ---- post / start / complete / wait ---- */

/* Member o's post counters, made by whoever needs them first. */
static _Atomic unsigned *posts_of(struct loom_win_shared *sh, int o)
{
    _Atomic unsigned *p = atomic_load_explicit(&sh->m[o].posts, memory_order_acquire);
    if (p)
        return p;
    _Atomic unsigned *mine = calloc((size_t)sh->size, sizeof *mine);
    if (!mine)
        return NULL;
    if (atomic_compare_exchange_strong_explicit(&sh->m[o].posts, &p, mine, memory_order_acq_rel,
                                                memory_order_acquire))
        return mine;
    free(mine);
    return p;
}

int loom_win_post(struct loom_win *w, int n, const int *ranks)
{
    struct loom_win_shared *sh = w->sh;
    for (int i = 0; i < n; i++)
        if (!posts_of(sh, ranks[i]))
            return LOOM_ERR_NOMEM;
    w->posted = true;
    w->completes_expected += (unsigned)n;
    /* release: the target's stores before the post are seen by an origin
     * that sees the post. */
    for (int i = 0; i < n; i++) {
        int o = ranks[i];
        atomic_fetch_add_explicit(
            &atomic_load_explicit(&sh->m[o].posts, memory_order_relaxed)[w->rank], 1,
            memory_order_release);
        loom_ult_notify(&sh->m[o].post_slot);
    }
    return LOOM_OK;
}

struct count_wait {
    const _Atomic unsigned *p;
    unsigned want; /* done when *p - want, as a signed number, >= 0 */
};

static bool count_reached(const void *arg)
{
    const struct count_wait *c = arg;
    return (int)(atomic_load_explicit(c->p, memory_order_acquire) - c->want) >= 0;
}

int loom_win_start(struct loom_win *w, int n, const int *ranks, bool nocheck)
{
    (void)nocheck; /* the posts are there already: waiting for them costs a look */
    struct loom_win_shared *sh = w->sh;
    _Atomic unsigned *posts = posts_of(sh, w->rank);
    int *keep = malloc((size_t)(n ? n : 1) * sizeof *keep);
    if (!posts || !keep || !lazy((void **)&w->post_seen, (size_t)sh->size, sizeof(unsigned)) ||
        !lazy((void **)&w->in_start, (size_t)sh->size, 1)) {
        free(keep);
        return LOOM_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        int t = ranks[i];
        struct count_wait c = {&posts[t], w->post_seen[t] + 1};
        if (!count_reached(&c)) {
            struct loom_mpi_wait dw = {rma_describe, NULL,
                                       "in MPI_Win_start, for a target's MPI_Win_post", 0, false};
            loom_mpi_wait_enter(&dw);
            loom_ult_wait(count_reached, &c, &sh->m[w->rank].post_slot);
            loom_mpi_wait_leave();
        }
        w->post_seen[t]++;
        w->in_start[t] = 1;
        keep[i] = t;
    }
    free(w->start_ranks);
    w->start_ranks = keep;
    w->nstart = n;
    w->started = true;
    return LOOM_OK;
}

void loom_win_complete(struct loom_win *w)
{
    struct loom_win_shared *sh = w->sh;
    /* release: the epoch's accesses before the target sees the complete. */
    for (int i = 0; i < w->nstart; i++) {
        int t = w->start_ranks[i];
        w->in_start[t] = 0;
        atomic_fetch_add_explicit(&sh->m[t].completes, 1, memory_order_release);
        loom_ult_notify(&sh->m[t].complete_slot);
    }
    w->nstart = 0;
    w->started = false;
}

bool loom_win_wait(struct loom_win *w, bool test)
{
    struct loom_win_member *me = &w->sh->m[w->rank];
    struct count_wait c = {&me->completes, w->completes_expected};
    if (!count_reached(&c)) {
        if (test)
            return false;
        struct loom_mpi_wait dw = {rma_describe, NULL,
                                   "in MPI_Win_wait, for an origin's MPI_Win_complete", 0, false};
        loom_mpi_wait_enter(&dw);
        loom_ult_wait(count_reached, &c, &me->complete_slot);
        loom_mpi_wait_leave();
    }
    w->posted = false;
    return true;
}
