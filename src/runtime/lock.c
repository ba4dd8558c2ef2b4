/*
 * A rank that waits on a pthread mutex, a condition variable or a POSIX
 * semaphore parks, and its worker runs the other ranks (issue 18;
 * docs/adr/0004). libloom defines the waits and the releases: on a rank's
 * ULT a wait tries glibc's non-blocking form, then queues the ULT under the
 * object's address in a table of buckets (a parking lot), tries once more
 * and parks; a release does glibc's release and wakes the first ULT queued
 * on that address. glibc's objects do the locking itself, so threads that
 * are not ranks (a rank's own threads, Loom's) keep using them with libc's
 * calls, and a release by any thread wakes parked ranks.
 *
 * No lost wake-up: a waiter increments its bucket's count and then retries;
 * a releaser releases and then reads the count; a full fence on each side.
 *
 * Recursive and error-checking mutexes: glibc's owner is the kernel thread
 * (the worker), so the table also records which ULT holds each such mutex
 * that a ULT locked, and answers for it as glibc would for threads:
 * another rank of the worker waits (trylock: EBUSY), the holder relocking
 * an error-checking mutex gets EDEADLK, and an unlock by a rank that does
 * not hold it gets EPERM.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "runtime/ult.h"
#include "util/common.h"
#include "util/options.h"

/* Under the sanitizers these calls are intercepted by their runtimes, which
 * would pass libloom's own locks to the definitions here as the program's:
 * glibc's alone there (docs/adr/0004). */
#if !defined(LOOM_SANITIZE_address) && !defined(LOOM_SANITIZE_thread)

LOOM_EXPORT int pthread_mutex_lock(pthread_mutex_t *m);
LOOM_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m);
LOOM_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime);
LOOM_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
                                        const struct timespec *abstime);
LOOM_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m);
LOOM_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
LOOM_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                       const struct timespec *abstime);
LOOM_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                                       const struct timespec *abstime);
LOOM_EXPORT int pthread_cond_signal(pthread_cond_t *c);
LOOM_EXPORT int pthread_cond_broadcast(pthread_cond_t *c);
LOOM_EXPORT int sem_wait(sem_t *s);
LOOM_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abstime);
LOOM_EXPORT int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abstime);
LOOM_EXPORT int sem_post(sem_t *s);

static struct {
    int (*mutex_lock)(pthread_mutex_t *);
    int (*mutex_trylock)(pthread_mutex_t *);
    int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
    int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
    int (*mutex_unlock)(pthread_mutex_t *);
    int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
    int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
    int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
    int (*cond_signal)(pthread_cond_t *);
    int (*cond_broadcast)(pthread_cond_t *);
    int (*sem_wait)(sem_t *);
    int (*sem_timedwait)(sem_t *, const struct timespec *);
    int (*sem_clockwait)(sem_t *, clockid_t, const struct timespec *);
    int (*sem_post)(sem_t *);
} libc;

/* libloom's own code: [text_lo, text_hi). */
static uintptr_t text_lo, text_hi;
static bool forked;
static int enabled = -1; /* LOOM_PARK_LOCKS, read at the first wait */

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (info->dlpi_addr != *(uintptr_t *)arg)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
            text_lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            text_hi = text_lo + info->dlpi_phdr[i].p_memsz;
        }
    return 1;
}

static void after_fork_child(void)
{
    forked = true;
}

#define RESOLVE(field, name)                                                                       \
    __atomic_store_n((void **)&libc.field, dlsym(RTLD_NEXT, name), __ATOMIC_RELAXED)

__attribute__((constructor)) static void resolve(void)
{
    RESOLVE(mutex_lock, "pthread_mutex_lock");
    RESOLVE(mutex_trylock, "pthread_mutex_trylock");
    RESOLVE(mutex_timedlock, "pthread_mutex_timedlock");
    RESOLVE(mutex_clocklock, "pthread_mutex_clocklock");
    RESOLVE(mutex_unlock, "pthread_mutex_unlock");
    RESOLVE(cond_wait, "pthread_cond_wait");
    RESOLVE(cond_timedwait, "pthread_cond_timedwait");
    RESOLVE(cond_clockwait, "pthread_cond_clockwait");
    RESOLVE(cond_signal, "pthread_cond_signal");
    RESOLVE(cond_broadcast, "pthread_cond_broadcast");
    RESOLVE(sem_wait, "sem_wait");
    RESOLVE(sem_timedwait, "sem_timedwait");
    RESOLVE(sem_clockwait, "sem_clockwait");
    RESOLVE(sem_post, "sem_post");
}

__attribute__((constructor)) static void init(void)
{
    Dl_info info;
    struct link_map *self = NULL;
    if (dladdr1((void *)init, &info, (void **)&self, RTLD_DL_LINKMAP) && self) {
        uintptr_t base = self->l_addr;
        dl_iterate_phdr(find_text, &base);
    }
    pthread_atfork(NULL, NULL, after_fork_child);
}

/* libc's fn (resolving all of them if a caller came before the constructor). */
#define LIBC(fn)                                                                                   \
    (LOOM_LIKELY(__atomic_load_n(&libc.fn, __ATOMIC_RELAXED) != NULL) ? libc.fn                    \
                                                                      : (resolve(), libc.fn))

/* The calling ULT when a call from ret (the caller's address) is a rank's
 * to park, else NULL. */
static inline struct loom_ult *rank_caller(const void *ret)
{
    struct loom_ult *self = loom_ult_self();
    if (LOOM_LIKELY(self == NULL) || forked || (uintptr_t)ret - text_lo < text_hi - text_lo)
        return NULL;
    if (LOOM_UNLIKELY(enabled < 0))
        enabled = loom_opt_flag(LOOM_OPT_PARK_LOCKS);
    return enabled ? self : NULL;
}

/* ---- the parking lot -------------------------------------------------------- */

/* After glibc's release, before reading a bucket's waiter count: a full
 * fence. On x86-64 glibc's releases (mutex unlock, sem_post) are locked
 * instructions, which are one already: only the compiler is kept from
 * moving the load. */
static inline void after_release(void)
{
#if defined(__x86_64__)
    atomic_signal_fence(memory_order_seq_cst);
#else
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

struct waiter {
    const void *addr;
    struct loom_ult *u;
    struct waiter *next;
    _Atomic bool queued; /* in its bucket's list (written under the bucket's lock) */
};

/* A recursive or error-checking mutex held by a ULT. */
struct holder {
    const void *addr;
    struct loom_ult *u;
    struct holder *next;
};

#define BUCKETS 256
static struct bucket {
    _Atomic int lock;
    _Atomic unsigned nwait; /* waiters queued */
    struct waiter *head;
    struct holder *holders;
} LOOM_ALIGNED_CL lot[BUCKETS];

static struct bucket *bucket_of(const void *addr)
{
    uint64_t h = ((uintptr_t)addr >> 3) * 0x9e3779b97f4a7c15ull;
    return &lot[h >> (64 - 8)];
}

static void bucket_lock(struct bucket *b)
{
    while (atomic_exchange_explicit(&b->lock, 1, memory_order_acquire))
        while (atomic_load_explicit(&b->lock, memory_order_relaxed))
            loom_cpu_relax();
}

static void bucket_unlock(struct bucket *b)
{
    atomic_store_explicit(&b->lock, 0, memory_order_release);
}

/* Queues w (if not queued) and then fences: the caller retries after. */
static void enqueue(struct bucket *b, struct waiter *w)
{
    bucket_lock(b);
    if (!w->queued) {
        struct waiter **p = &b->head;
        while (*p)
            p = &(*p)->next;
        w->next = NULL;
        *p = w;
        w->queued = true;
        atomic_fetch_add_explicit(&b->nwait, 1, memory_order_relaxed);
    }
    bucket_unlock(b);
    atomic_thread_fence(memory_order_seq_cst);
}

static void dequeue_locked(struct bucket *b, struct waiter *w)
{
    for (struct waiter **p = &b->head; *p; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            w->queued = false;
            atomic_fetch_sub_explicit(&b->nwait, 1, memory_order_relaxed);
            return;
        }
}

static void dequeue(struct bucket *b, struct waiter *w)
{
    bucket_lock(b);
    if (w->queued)
        dequeue_locked(b, w);
    bucket_unlock(b);
}

/* After a release of addr: wakes the first ULT queued on it. */
static void wake_one(const void *addr)
{
    struct bucket *b = bucket_of(addr);
    after_release();
    if (LOOM_LIKELY(atomic_load_explicit(&b->nwait, memory_order_relaxed) == 0))
        return;
    struct loom_ult *u = NULL;
    bucket_lock(b);
    for (struct waiter *w = b->head; w; w = w->next)
        if (w->addr == addr) {
            u = w->u;
            dequeue_locked(b, w);
            break;
        }
    bucket_unlock(b);
    if (u)
        loom_ult_wake(u);
}

/* Wakes every ULT queued on addr (a condition variable's broadcast). */
static void wake_all(const void *addr)
{
    struct bucket *b = bucket_of(addr);
    atomic_thread_fence(memory_order_seq_cst);
    if (LOOM_LIKELY(atomic_load_explicit(&b->nwait, memory_order_relaxed) == 0))
        return;
    for (;;) {
        struct loom_ult *u = NULL;
        bucket_lock(b);
        for (struct waiter *w = b->head; w; w = w->next)
            if (w->addr == addr) {
                u = w->u;
                dequeue_locked(b, w);
                break;
            }
        bucket_unlock(b);
        if (!u)
            return;
        loom_ult_wake(u);
    }
}

/* The deadline in loom_time_ns() of abstime on clock (0 where abstime is
 * invalid: *bad set). */
static uint64_t deadline_of(clockid_t clock, const struct timespec *abstime, bool *bad)
{
    struct timespec now;
    if (!abstime || abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000 ||
        clock_gettime(clock, &now) != 0) {
        *bad = true;
        return 0;
    }
    int64_t left =
        (int64_t)(abstime->tv_sec - now.tv_sec) * 1000000000 + (abstime->tv_nsec - now.tv_nsec);
    uint64_t t = loom_time_ns();
    return left > 0 ? t + (uint64_t)left : t;
}

/* Parks the caller until woken, until deadline (0: none) or for *pause_ns,
 * which doubles up to PAUSE_MAX_NS: a release that Loom does not see (glibc's
 * pthread_cond_wait unlocks its mutex inside libc) is noticed within that. */
#define PAUSE_MIN_NS 100000ull
#define PAUSE_MAX_NS 10000000ull
static void park(uint64_t deadline, uint64_t *pause_ns)
{
    uint64_t until = loom_time_ns() + *pause_ns;
    loom_ult_park_until(deadline && deadline < until ? deadline : until);
    if (*pause_ns < PAUSE_MAX_NS)
        *pause_ns *= 2;
}

/* ---- mutexes ---------------------------------------------------------------- */

/* glibc's mutex kind (pthread_mutex_t.__data.__kind): the type in the low
 * bits; robust, priority-inheritance and -protection mutexes are libc's. */
#define KIND_TYPE    3
#define KIND_SPECIAL (16 | 32 | 64)

static int kind_of(const pthread_mutex_t *m)
{
    return __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED);
}

static bool owned(int kind)
{
    return (kind & KIND_TYPE) == PTHREAD_MUTEX_RECURSIVE ||
           (kind & KIND_TYPE) == PTHREAD_MUTEX_ERRORCHECK;
}

static struct holder *holder_of(struct bucket *b, const void *m)
{
    for (struct holder *h = b->holders; h; h = h->next)
        if (h->addr == m)
            return h;
    return NULL;
}

/* Forgets holder record h of bucket b (locked). */
static void drop_holder(struct bucket *b, struct holder *h)
{
    for (struct holder **p = &b->holders; *p; p = &(*p)->next)
        if (*p == h) {
            *p = h->next;
            break;
        }
    free(h);
}

/* Whether m's holder is a thread other than the caller's (glibc records
 * the holder's thread id in every kind of mutex). */
#define SPIN_TRIES 100
static __thread pid_t my_tid;
static bool held_elsewhere(const pthread_mutex_t *m)
{
    if (LOOM_UNLIKELY(my_tid == 0))
        my_tid = gettid();
    int owner = __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);
    return owner != 0 && owner != my_tid;
}

/* Tries to lock m for self: 0, EBUSY, or glibc's or the type's error. */
static int try_mutex(pthread_mutex_t *m, struct loom_ult *self, int kind, bool trylock)
{
    if (!owned(kind))
        return LIBC(mutex_trylock)(m);
    struct bucket *b = bucket_of(m);
    bucket_lock(b);
    struct holder *h = holder_of(b, m);
    if (h && __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED) == 0) {
        /* Unlocked in glibc's eyes: a record left by a rank that ended
         * holding it, or by a mutex since destroyed and made again at this
         * address. glibc's state wins. */
        drop_holder(b, h);
        h = NULL;
    }
    int rc;
    if (h && h->u != self)
        rc = EBUSY; /* another rank of this worker holds it */
    else if (h && (kind & KIND_TYPE) == PTHREAD_MUTEX_ERRORCHECK)
        rc = trylock ? EBUSY : EDEADLK;
    else {
        rc = LIBC(mutex_trylock)(m); /* a recursive relock counts in glibc */
        if (rc == 0 && !h) {
            h = malloc(sizeof *h);
            if (h) {
                *h = (struct holder){m, self, b->holders};
                b->holders = h;
            } else {
                LIBC(mutex_unlock)(m);
                rc = EAGAIN;
            }
        }
    }
    bucket_unlock(b);
    return rc;
}

/* Locks m for self, parking while it is busy: 0 or an error (ETIMEDOUT
 * after deadline when it is not 0). */
static int lock_mutex(pthread_mutex_t *m, struct loom_ult *self, uint64_t deadline)
{
    int kind = kind_of(m);
    int rc = try_mutex(m, self, kind, false);
    if (rc != EBUSY)
        return rc;
    /* Held by another worker's thread: it is running, and critical sections
     * are short, so spin a little first (as glibc's adaptive mutexes do).
     * Held on this worker: its holder cannot run until this rank parks. */
    for (int i = 0; i < SPIN_TRIES && held_elsewhere(m); i++) {
        for (int j = 0; j < 16; j++)
            loom_cpu_relax();
        if (__atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED) == 0 &&
            (rc = try_mutex(m, self, kind, false)) != EBUSY)
            return rc;
    }
    struct bucket *b = bucket_of(m);
    struct waiter w = {.addr = m, .u = self};
    uint64_t pause = PAUSE_MIN_NS;
    for (;;) {
        enqueue(b, &w);
        rc = try_mutex(m, self, kind, false);
        if (rc != EBUSY)
            break;
        if (deadline && loom_time_ns() >= deadline) {
            rc = ETIMEDOUT;
            break;
        }
        park(deadline, &pause);
    }
    dequeue(b, &w);
    return rc;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
    struct loom_ult *self = rank_caller(__builtin_return_address(0));
    if (!self || (kind_of(m) & KIND_SPECIAL))
        return LIBC(mutex_lock)(m);
    return lock_mutex(m, self, 0);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
    struct loom_ult *self = rank_caller(__builtin_return_address(0));
    int kind = kind_of(m);
    if (!self || (kind & KIND_SPECIAL))
        return LIBC(mutex_trylock)(m);
    return try_mutex(m, self, kind, true);
}

static int timed_lock(pthread_mutex_t *m, struct loom_ult *self, clockid_t clock,
                      const struct timespec *abstime)
{
    int kind = kind_of(m);
    int rc = try_mutex(m, self, kind, false);
    if (rc != EBUSY)
        return rc;
    bool bad = false;
    uint64_t deadline = deadline_of(clock, abstime, &bad);
    if (bad)
        return EINVAL;
    return lock_mutex(m, self, deadline);
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
    struct loom_ult *self = rank_caller(__builtin_return_address(0));
    if (!self || (kind_of(m) & KIND_SPECIAL))
        return LIBC(mutex_timedlock)(m, abstime);
    return timed_lock(m, self, CLOCK_REALTIME, abstime);
}

int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
    struct loom_ult *self = rank_caller(__builtin_return_address(0));
    if (!self || (kind_of(m) & KIND_SPECIAL) ||
        (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC))
        return LIBC(mutex_clocklock)(m, clock, abstime);
    return timed_lock(m, self, clock, abstime);
}

/* Unlocks m for the calling rank or thread, and wakes a rank waiting for it. */
static int unlock_mutex(pthread_mutex_t *m)
{
    int kind = kind_of(m);
    if (owned(kind) && !(kind & KIND_SPECIAL)) {
        struct bucket *b = bucket_of(m);
        bucket_lock(b);
        struct holder *h = holder_of(b, m);
        if (h) {
            struct loom_ult *self = loom_ult_self();
            if (h->u != self || forked) {
                bucket_unlock(b);
                return EPERM; /* held by another rank (or thread) */
            }
            /* The last unlock of a recursive one releases it: no holder. */
            if ((kind & KIND_TYPE) == PTHREAD_MUTEX_ERRORCHECK || m->__data.__count <= 1)
                drop_holder(b, h);
        }
        bucket_unlock(b);
    }
    int rc = LIBC(mutex_unlock)(m);
    if (rc == 0)
        wake_one(m);
    return rc;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
    const void *ret = __builtin_return_address(0);
    if ((uintptr_t)ret - text_lo < text_hi - text_lo)
        return LIBC(mutex_unlock)(m); /* libloom's own: no rank waits on it */
    return unlock_mutex(m);
}

/* ---- condition variables ------------------------------------------------------
 *
 * A rank waits on a condition variable in the parking lot, under the
 * variable's address, and never in glibc's: it queues itself while it still
 * holds the mutex, unlocks, parks until a signal dequeues it (or its
 * deadline), and locks the mutex again as pthread_mutex_lock does. A signal
 * or broadcast does glibc's (for threads that are not ranks) and then wakes
 * one or every rank queued on the variable. Threads that are not ranks wait
 * in glibc's as before; a signal may then wake one of each kind, which the
 * standard allows (a spurious wake-up). */

static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, struct loom_ult *self,
                     uint64_t deadline)
{
    struct bucket *b = bucket_of(c);
    struct waiter w = {.addr = c, .u = self};
    enqueue(b, &w); /* before the unlock: a signal after it finds this rank */
    int rc = unlock_mutex(m);
    if (rc != 0) {
        dequeue(b, &w);
        return rc;
    }
    bool timed_out = false;
    while (atomic_load_explicit(&w.queued, memory_order_acquire)) {
        if (deadline && loom_time_ns() >= deadline) {
            timed_out = true;
            break;
        }
        if (deadline)
            loom_ult_park_until(deadline);
        else
            loom_ult_park();
    }
    dequeue(b, &w);
    rc = lock_mutex(m, self, 0);
    return rc ? rc : timed_out ? ETIMEDOUT : 0;
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    struct loom_ult *self = rank_caller(__builtin_return_address(0));
    if (!self || (kind_of(m) & KIND_SPECIAL))
        return LIBC(cond_wait)(c, m);
    return cond_wait(c, m, self, 0);
}

static int cond_timed(pthread_cond_t *c, pthread_mutex_t *m, struct loom_ult *self, clockid_t clock,
                      const struct timespec *abstime)
{
    bool bad = false;
    uint64_t deadline = deadline_of(clock, abstime, &bad);
    if (bad)
        return EINVAL;
    return cond_wait(c, m, self, deadline);
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
    struct loom_ult *self = rank_caller(__builtin_return_address(0));
    if (!self || (kind_of(m) & KIND_SPECIAL))
        return LIBC(cond_timedwait)(c, m, abstime);
    /* The variable's clock (pthread_condattr_setclock) is glibc's to know:
     * its __wrefs bit 1 says CLOCK_MONOTONIC (bit 0: process-shared). */
    clockid_t clock = (__atomic_load_n(&c->__data.__wrefs, __ATOMIC_RELAXED) & 2) ? CLOCK_MONOTONIC
                                                                                  : CLOCK_REALTIME;
    return cond_timed(c, m, self, clock, abstime);
}

int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                           const struct timespec *abstime)
{
    struct loom_ult *self = rank_caller(__builtin_return_address(0));
    if (!self || (kind_of(m) & KIND_SPECIAL) ||
        (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC))
        return LIBC(cond_clockwait)(c, m, clock, abstime);
    return cond_timed(c, m, self, clock, abstime);
}

int pthread_cond_signal(pthread_cond_t *c)
{
    int rc = LIBC(cond_signal)(c);
    if ((uintptr_t)__builtin_return_address(0) - text_lo >= text_hi - text_lo) {
        /* glibc's signal with no waiter of its own is plain loads: fence */
        atomic_thread_fence(memory_order_seq_cst);
        wake_one(c);
    }
    return rc;
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
    int rc = LIBC(cond_broadcast)(c);
    if ((uintptr_t)__builtin_return_address(0) - text_lo >= text_hi - text_lo)
        wake_all(c);
    return rc;
}

/* ---- semaphores ------------------------------------------------------------- */

/* Waits on s for self: 0, or -1 with errno (ETIMEDOUT after deadline when
 * it is not 0). */
static int wait_sem(sem_t *s, struct loom_ult *self, uint64_t deadline)
{
    struct bucket *b = bucket_of(s);
    struct waiter w = {.addr = s, .u = self};
    uint64_t pause = PAUSE_MIN_NS;
    int rc, err = 0;
    for (;;) {
        enqueue(b, &w);
        if ((rc = sem_trywait(s)) == 0)
            break;
        if (errno != EAGAIN) {
            err = errno;
            break;
        }
        if (deadline && loom_time_ns() >= deadline) {
            err = ETIMEDOUT;
            rc = -1;
            break;
        }
        park(deadline, &pause);
    }
    dequeue(b, &w);
    if (rc != 0)
        errno = err;
    return rc;
}

static int timed_wait(sem_t *s, struct loom_ult *self, clockid_t clock,
                      const struct timespec *abstime)
{
    int saved = errno;
    if (sem_trywait(s) == 0) {
        errno = saved;
        return 0;
    }
    if (errno != EAGAIN)
        return -1;
    bool bad = false;
    uint64_t deadline = deadline_of(clock, abstime, &bad);
    if (bad) {
        errno = EINVAL;
        return -1;
    }
    int rc = wait_sem(s, self, deadline);
    if (rc == 0)
        errno = saved;
    return rc;
}

int sem_wait(sem_t *s)
{
    struct loom_ult *self = rank_caller(__builtin_return_address(0));
    if (!self)
        return LIBC(sem_wait)(s);
    int saved = errno;
    if (sem_trywait(s) == 0) {
        errno = saved;
        return 0;
    }
    if (errno != EAGAIN)
        return -1;
    int rc = wait_sem(s, self, 0);
    if (rc == 0)
        errno = saved;
    return rc;
}

int sem_timedwait(sem_t *s, const struct timespec *abstime)
{
    struct loom_ult *self = rank_caller(__builtin_return_address(0));
    if (!self)
        return LIBC(sem_timedwait)(s, abstime);
    return timed_wait(s, self, CLOCK_REALTIME, abstime);
}

int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abstime)
{
    struct loom_ult *self = rank_caller(__builtin_return_address(0));
    if (!self || (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC))
        return LIBC(sem_clockwait)(s, clock, abstime);
    return timed_wait(s, self, clock, abstime);
}

int sem_post(sem_t *s)
{
    int rc = LIBC(sem_post)(s);
    if (rc == 0)
        wake_one(s);
    return rc;
}

#endif /* !LOOM_SANITIZE */
