/*
 * User-level threads on pinned workers: run queues, park/wake, wait, stacks
 * and idle sleep (interface and semantics in ult.h).
 *
 * Each worker owns a local FIFO run queue (touched only by its own thread)
 * and a lock-free multi-producer inbox (a Treiber stack that the owner takes
 * whole and reverses). A wake from the owning worker pushes onto the local
 * queue; a wake from anywhere else pushes onto the inbox and, if the owner
 * announced it is asleep, FUTEX_WAKEs it. Nothing ever scans all ULTs.
 *
 * Switches go straight from ULT to ULT when another is ready; the worker's
 * scheduler context (its kernel thread's own stack) runs only when nothing
 * is ready. Every switch passes the context it left to the one it enters,
 * and the code after every switch point finishes what the previous context
 * started (after_switch): completing a park (PARKING -> PARKED) or reaping an
 * exited ULT. That way no ULT can be resumed, by any worker, while it still
 * runs on its own stack.
 *
 * Per-ULT state word: RUN (running or queued), PARKING (decided to park,
 * still on its stack), PARKED (off every queue), DONE, plus a NOTIFY bit
 * (a permit left by a wake that found the ULT not parked). A wake is a CAS
 * PARKED -> RUN plus an enqueue, or sets NOTIFY; a park consumes NOTIFY and
 * returns at once. Both are O(1).
 *
 * Idle workers poll for idle_spin_ns, then sleep on a futex. The sleeper
 * stores `sleeping = 1` and then reads its inbox; a waker pushes into the
 * inbox and then reads `sleeping`. Both sides use seq_cst, so (Dekker) at
 * least one sees the other: no lost wake-ups.
 *
 * Watched parking (loom_lazy_notify): a notifier makes a waiter's condition
 * true with a plain release store and then looks at the waiter's slot, with
 * no fence in between, because a full fence there stalls the notifier for
 * a whole cache-line transfer on every message and every collective call.
 * Its look may then run before its store is visible, miss a waiter that
 * registered meanwhile, and that waiter may park on a stale condition. The
 * waiter's worker repairs this: a ULT that parks in loom_ult_wait (or
 * loom_ult_park_watched) leaves its condition in the worker's watch list,
 * and the worker re-checks the list every WATCH_EVERY (+ WATCH_PER_RECORD
 * per record) scheduling decisions and on every turn of its idle loop (a
 * store becomes visible within nanoseconds; it is only its order that may
 * differ). Before the worker sleeps on its futex it issues
 * membarrier(PRIVATE_EXPEDITED), a full fence on every thread of the
 * process, and re-checks once more: any notifier whose store that check
 * misses looks at the slot after the fence and sees the waiter (asymmetric
 * Dekker). Without membarrier, notifiers fence.
 */
#define _GNU_SOURCE
#include "runtime/ult.h"

#include "runtime/ult_ctx.h"
#include "util/common.h"
#include "util/log.h"
#include "util/options.h"

#include <dlfcn.h>
#include <errno.h>
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <linux/futex.h>
#include <locale.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(LOOM_SANITIZE_address)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(LOOM_SANITIZE_thread)
#include <sanitizer/tsan_interface.h>
#endif
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define LOOM_HAVE_VALGRIND 1
#endif
#endif

enum {
    ST_RUN = 0,
    ST_PARKING = 1,
    ST_PARKED = 2,
    ST_DONE = 3,
    ST_NOTIFY = 4,
    ST_LENT = 8, /* parked, its stack lent (loom_ult_borrow_stack): not resumable */
};

#define DEFAULT_STACK (256 * 1024)
/* How often a waiting ULT yields to the worker's other ready ULTs before it
 * parks (LOOM_WAIT_YIELDS overrides, for measurements). */
static int yields_before_park = 16;

bool loom_lazy_notify;

/* Scheduling decisions between two re-checks of a worker's watch list:
 * WATCH_EVERY, plus WATCH_PER_RECORD per record, so that with many parked
 * ULTs the re-checks stay a small share of the switches. */
#define WATCH_EVERY      128u
#define WATCH_PER_RECORD 8u
/* How often a sleeping worker with a deadline among its parked ULTs wakes
 * up to look at them (loom_ult_wait_for). */
#define IDLE_DEADLINE_TICK_NS 20000000

/* A parked ULT's condition, re-checked by its worker (watched parking).
 * Lives in the parked ULT's frame; linked and unlinked by that ULT, read by
 * its worker's scheduler: one thread. */
struct watch {
    struct watch *prev, *next;
    loom_cond_fn done;
    const void *arg;
    struct loom_ult *u;
    uint64_t deadline; /* loom_time_ns() to resume at though !done; 0: none */
};

struct loom_ult {
    /* Touched by remote wakers. */
    _Atomic uint32_t state;
    _Atomic(struct loom_ult *) next; /* run queue or inbox link */
    struct worker *w;
    void *sp; /* saved stack pointer while switched out */
    int saved_errno;
    bool is_sched;
    void *locale;          /* locale_t to install while it runs; NULL: the global one */
    void *fs;              /* working directory to install while it runs (loom_ult_set_fs) */
    _Atomic uint32_t attn; /* 1: look at its signals when it next runs (loom_ult_attn) */
    uint64_t cpu_ticks;    /* ticks run since accounting started (loom_cpu_epoch) */
    void **lib_blocks;     /* its libraries' thread-local blocks (NULL: none yet) */

    /* Cold. */
    LOOM_ALIGNED_CL loom_ult_fn fn;
    void *arg;
    void *data;
    uint64_t cpu_split[2]; /* loom_ult_cputime_self's *split_p */
    /* Its own counts (loom_ult_stats): parks, resumptions after a park or
     * a wake that came first, and yields to another ready ULT. */
    uint64_t parks, wakeups, yields;
    _Atomic(struct loom_ult *) held_next; /* in g.held (loom_ult_hold_begin) */
    _Atomic bool in_held;                 /* parked in held_here: watches leave it */
    bool lib_foreign;      /* lib_blocks point at glibc's blocks (not ours to free) */
    void *guard, *lo, *hi; /* mapping is [guard, hi) */
    struct loom_ult *all_next;
#if defined(LOOM_SANITIZE_address)
    void *asan_fake;
    const void *asan_bottom;
    size_t asan_size;
#endif
#if defined(LOOM_SANITIZE_thread)
    void *tsan_fiber;
#endif
#if defined(LOOM_HAVE_VALGRIND)
    unsigned vg_id;
#endif
};

struct worker {
    /* Owner-only hot state. */
    struct loom_ult *rq_head, *rq_tail;
    struct loom_ult *current;
    void *locale;        /* the locale_t installed on this thread (NULL: global) */
    void *fs;            /* the working directory installed on this thread */
    struct watch *watch; /* parked ULTs' conditions (watched parking) */
    unsigned nwatch;     /* records in it */
    unsigned ndeadline;  /* of them with a deadline */
    unsigned picks;      /* scheduling decisions since the last re-check */
    uint64_t since;      /* loom_cpu_ticks() at the last switch (0: none since the epoch) */
    int id;
    bool lib_ready;    /* lib_orig is set and the thread's dtv up to date */
    void *lib_orig[8]; /* this thread's own blocks of lib_tls's modules (LIB_TLS_MAX) */

    /* Written by wakers on other threads. */
    LOOM_ALIGNED_CL _Atomic(struct loom_ult *) inbox;
    _Atomic int sleeping; /* futex word: 1 while asleep or about to */

    /* Cold. */
    LOOM_ALIGNED_CL _Atomic unsigned long sleeps;
    pthread_t thread;
    bool thread_started;
    struct loom_ult sched; /* the worker's scheduler context */
} LOOM_ALIGNED_CL;

static struct {
    struct worker *workers;
    int nworkers;
    long spin_ns;
    long idle_spin_ns;
    long page;
    void (*on_worker_start)(int worker);
    void (*on_attn)(void);        /* loom_ult_set_attn_hook */
    void (*install_fs)(void *fs); /* loom_ult_set_fs_hook */
    int *cpus;                    /* -1: do not pin */
    cpu_set_t *sets;              /* per worker when cpusets were given, else NULL */
    bool ran;
    bool joined;
    cpu_set_t saved_affinity;
    bool restore_affinity;

    LOOM_ALIGNED_CL _Atomic long live; /* ULTs created and not yet finished */
    _Atomic int stop;
    _Atomic int started; /* futex word: workers wait for loom_sched_run */

    pthread_mutex_t all_lock;
    struct loom_ult *all;
    _Atomic int hold;      /* loom_ult_hold_begin: resumed ULTs wait */
    _Atomic int held_lock; /* guards held, and hold's clearing */
    /* ULTs parked again in held_here; under held_lock, and atomic for TSAN,
     * which misses the spin lock's ordering inside intercepted calls. */
    _Atomic(struct loom_ult *) held;
} g = {.all_lock = PTHREAD_MUTEX_INITIALIZER};

/* initial-exec: libloom is loaded with the program (mpiexec, or a program
 * run directly), so its TLS is static and needs no __tls_get_addr call. */
static __thread struct worker *tls_worker __attribute__((tls_model("initial-exec")));
__thread void *loom_ult_tls_data __attribute__((tls_model("initial-exec")));
unsigned loom_wait_fast_polls;

/* ---- futex ---------------------------------------------------------------- */

static void futex_wait(_Atomic int *word, int expected, const struct timespec *timeout)
{
    syscall(SYS_futex, (int *)word, FUTEX_WAIT_PRIVATE, expected, timeout, NULL, 0);
}

static void futex_wake(_Atomic int *word, int n)
{
    syscall(SYS_futex, (int *)word, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* ---- sanitizer and valgrind hooks ---------------------------------------- */

/* Announces a switch from `from` to `to`; dying: from never runs again. */
static inline void san_before_switch(struct loom_ult *from, struct loom_ult *to, bool dying)
{
#if defined(LOOM_SANITIZE_address)
    __sanitizer_start_switch_fiber(dying ? NULL : &from->asan_fake, to->asan_bottom, to->asan_size);
#endif
#if defined(LOOM_SANITIZE_thread)
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
    (void)from, (void)to, (void)dying;
}

/* Completes a switch into self, coming from prev (records prev's stack, which
 * is how the scheduler context's stack becomes known). */
static inline void san_after_switch(struct loom_ult *self, struct loom_ult *prev)
{
#if defined(LOOM_SANITIZE_address)
    const void *bottom;
    size_t size;
    __sanitizer_finish_switch_fiber(self->asan_fake, &bottom, &size);
    if (prev->is_sched) {
        prev->asan_bottom = bottom;
        prev->asan_size = size;
    }
#endif
    (void)self, (void)prev;
}

/* ---- run queues ----------------------------------------------------------- */

static inline void rq_push(struct worker *w, struct loom_ult *u)
{
    atomic_store_explicit(&u->next, NULL, memory_order_relaxed);
    if (w->rq_tail)
        atomic_store_explicit(&w->rq_tail->next, u, memory_order_relaxed);
    else
        w->rq_head = u;
    w->rq_tail = u;
}

static inline struct loom_ult *rq_pop(struct worker *w)
{
    struct loom_ult *u = w->rq_head;
    if (u) {
        w->rq_head = atomic_load_explicit(&u->next, memory_order_relaxed);
        if (!w->rq_head)
            w->rq_tail = NULL;
    }
    return u;
}

/* Moves everything in the inbox to the tail of the local queue, oldest
 * first. Owner only. */
static void inbox_drain(struct worker *w)
{
    /* Acquire: pairs with the pushers' release CAS, so the ULTs' state and
     * everything their wakers wrote before the wake are visible here. */
    struct loom_ult *u = atomic_exchange_explicit(&w->inbox, NULL, memory_order_acquire);
    struct loom_ult *rev = NULL;
    while (u) {
        struct loom_ult *n = atomic_load_explicit(&u->next, memory_order_relaxed);
        atomic_store_explicit(&u->next, rev, memory_order_relaxed);
        rev = u;
        u = n;
    }
    while (rev) {
        struct loom_ult *n = atomic_load_explicit(&rev->next, memory_order_relaxed);
        rq_push(w, rev);
        rev = n;
    }
}

static inline bool inbox_nonempty(struct worker *w)
{
    return atomic_load_explicit(&w->inbox, memory_order_relaxed) != NULL;
}

/* Wakes w's thread if it announced it sleeps. Call after a seq_cst write
 * that w re-checks after announcing (the inbox, or stop). */
static inline void kick(struct worker *w)
{
    /* Seq_cst: orders the caller's seq_cst push before this load (Dekker
     * with the store of sleeping = 1 and the inbox re-check in idle()). */
    if (atomic_load_explicit(&w->sleeping, memory_order_seq_cst) &&
        atomic_exchange_explicit(&w->sleeping, 0, memory_order_relaxed))
        futex_wake(&w->sleeping, 1);
}

/* Pushes u onto w's inbox from any thread and wakes w if it sleeps. */
static void inbox_push(struct worker *w, struct loom_ult *u)
{
    struct loom_ult *head = atomic_load_explicit(&w->inbox, memory_order_relaxed);
    do {
        atomic_store_explicit(&u->next, head, memory_order_relaxed);
        /* Release publishes u->next and the waker's writes to the drainer;
         * seq_cst also orders the push before kick()'s load of sleeping. */
    } while (!atomic_compare_exchange_weak_explicit(&w->inbox, &head, u, memory_order_seq_cst,
                                                    memory_order_relaxed));
    kick(w);
}

/* Makes a RUN ULT ready on its worker. */
static inline void enqueue(struct loom_ult *u)
{
    struct worker *w = u->w;
    if (tls_worker == w)
        rq_push(w, u);
    else
        inbox_push(w, u);
}

/* Readies every parked ULT of w whose watched condition holds; true if it
 * readied any. Owner only: a watched ULT's frame stays put until w itself
 * resumes it, even when another thread has just made it RUN. */
static bool watch_scan(struct worker *w)
{
    bool woke = false;
    uint64_t now = w->ndeadline ? loom_time_ns() : 0;
    for (struct watch *r = w->watch; r; r = r->next) {
        uint32_t s = atomic_load_explicit(&r->u->state, memory_order_relaxed);
        if (s != ST_PARKED || (!r->done(r->arg) && (!r->deadline || now < r->deadline)))
            continue;
        /* Held (loom_ult_hold_begin): the end of the hold wakes it. */
        if (LOOM_UNLIKELY(atomic_load_explicit(&r->u->in_held, memory_order_relaxed)))
            continue;
        /* Acq_rel as in loom_ult_wake: we resume it ourselves. */
        if (atomic_compare_exchange_strong_explicit(&r->u->state, &s, ST_RUN, memory_order_acq_rel,
                                                    memory_order_relaxed)) {
            rq_push(w, r->u);
            woke = true;
        }
    }
    return woke;
}

/* The next ready ULT of w, or NULL. Owner only. */
static inline struct loom_ult *pick_next(struct worker *w)
{
    if (inbox_nonempty(w))
        inbox_drain(w);
    if (LOOM_UNLIKELY(w->watch != NULL) &&
        ++w->picks >= WATCH_EVERY + WATCH_PER_RECORD * w->nwatch) {
        w->picks = 0;
        watch_scan(w);
    }
    return rq_pop(w);
}

/* ---- switching ------------------------------------------------------------ */

static void stop_all(void);

/* Runs on the context just entered, for the context just left. */
static void after_switch(struct worker *w, struct loom_ult *prev)
{
    uint32_t s = atomic_load_explicit(&prev->state, memory_order_relaxed);
    if (s == ST_RUN)
        return;
    if (s == ST_PARKING) {
        /* Acq_rel: publishes that prev is off its stack (release) to the
         * waker that will CAS PARKED -> RUN and resume it; on failure,
         * acquires the NOTIFY bit's writer. */
        if (atomic_compare_exchange_strong_explicit(&prev->state, &s, ST_PARKED,
                                                    memory_order_acq_rel, memory_order_acquire))
            return;
    }
    if (s == (ST_PARKING | ST_NOTIFY)) {
        /* Woken while parking: nobody else touches a state with NOTIFY set. */
        atomic_store_explicit(&prev->state, ST_RUN, memory_order_relaxed);
        rq_push(w, prev);
        return;
    }
    if (s == ST_DONE) {
#if defined(LOOM_SANITIZE_thread)
        __tsan_destroy_fiber(prev->tsan_fiber);
        prev->tsan_fiber = NULL;
#endif
#if defined(LOOM_HAVE_VALGRIND)
        VALGRIND_STACK_DEREGISTER(prev->vg_id);
#endif
#if defined(LOOM_SANITIZE_address)
        ASAN_UNPOISON_MEMORY_REGION(prev->lo, (size_t)((char *)prev->hi - (char *)prev->lo));
#endif
        /* The stack goes back now, so finished ranks cost no memory; the
         * struct stays until loom_sched_fini (stale wakes may read it). */
        munmap(prev->guard, (size_t)((char *)prev->hi - (char *)prev->guard));
        prev->guard = prev->lo = prev->hi = NULL;
        if (atomic_fetch_sub_explicit(&g.live, 1, memory_order_acq_rel) == 1)
            stop_all();
    }
}

/* ---- libraries' thread-locals, per ULT ---------------------------------------
 *
 * The libraries a program links are loaded once, and their thread-locals are
 * per kernel thread: per worker, shared by every rank the worker runs. A rank
 * parked in a catch block or while unwinding left libstdc++'s caught-exception
 * stack and uncaught count to the next rank of its worker, whose `throw;` then
 * rethrew the other rank's exception. The modules registered by
 * loom_ult_keep_lib_tls are per ULT instead: each ULT has its own blocks
 * (made from the module's initial image when it first runs), and a switch
 * points the thread's dtv entries of those modules at the blocks of the ULT
 * it runs, so that __tls_get_addr, which every access to such a variable goes
 * through, finds them; the scheduler's context gets the thread's own blocks
 * back. The blocks' addresses are stable (a pointer to a thread-local stays
 * valid wherever its ULT runs next), unlike a copy in and out.
 *
 * Only modules in dynamic TLS qualify: a library built for initial-exec TLS
 * (libgomp: DF_STATIC_TLS) reads its variables at fixed offsets from the
 * thread pointer, which Loom does not switch. The dtv is glibc's: a pointer
 * at a fixed slot of the thread control block, entries {val, to_free}, which
 * glibc has kept since 2.x on x86-64 and AArch64; glibc frees only to_free,
 * which is left alone. Off (one load and a branch per switch) until a module
 * is registered. */
#define LIB_TLS_MAX 8
static struct {
    _Atomic unsigned n; /* published with release once the arrays are set */
    size_t modid[LIB_TLS_MAX], size[LIB_TLS_MAX], filesz[LIB_TLS_MAX], off[LIB_TLS_MAX];
    const void *image[LIB_TLS_MAX];
    size_t align, total; /* of a ULT's allocation: the pointers, then the blocks */
} lib_tls;

/* glibc's: the calling thread's block of a TLS module (allocated if need be;
 * brings the thread's dtv up to date). */
struct loom_tls_index {
    unsigned long module, offset;
};
extern void *__tls_get_addr(struct loom_tls_index *ti);

union loom_dtv {
    size_t counter;
    struct {
        void *val, *to_free;
    } pointer;
};

static inline union loom_dtv *thread_dtv(void)
{
#if defined(__x86_64__)
    union loom_dtv *d;
    __asm__ volatile("mov %%fs:8, %0" : "=r"(d)); /* tcbhead_t: tcb, dtv, self */
    return d;
#else
    return *(union loom_dtv **)__builtin_thread_pointer(); /* tcbhead_t: dtv, private */
#endif
}

static void *lib_module_block(size_t modid)
{
    struct loom_tls_index ti = {modid, 0};
    return __tls_get_addr(&ti);
}

/* u's blocks, made now if it has none (NULL: out of memory). */
static void **lib_blocks_of(struct loom_ult *u, unsigned n)
{
    if (u->lib_blocks)
        return u->lib_blocks;
    size_t head = (n * sizeof(void *) + lib_tls.align - 1) & ~(lib_tls.align - 1);
    void *p;
    if (posix_memalign(&p, lib_tls.align, head + lib_tls.total))
        return NULL;
    void **b = p;
    for (unsigned i = 0; i < n; i++) {
        b[i] = (char *)p + head + lib_tls.off[i];
        memcpy(b[i], lib_tls.image[i], lib_tls.filesz[i]);
        memset((char *)b[i] + lib_tls.filesz[i], 0, lib_tls.size[i] - lib_tls.filesz[i]);
    }
    u->lib_blocks = b;
    return b;
}

/* The thread's own blocks become those of u, the ULT that has been using
 * them (NULL: none). */
static void lib_adopt(struct worker *w, struct loom_ult *u, unsigned n)
{
    if (!u || u->is_sched || u->lib_blocks)
        return;
    void **b = malloc(n * sizeof(void *));
    if (!b)
        return;
    memcpy(b, w->lib_orig, n * sizeof(void *));
    u->lib_blocks = b;
    u->lib_foreign = true;
}

static LOOM_NOINLINE void lib_tls_install(struct worker *w, struct loom_ult *to)
{
    unsigned n = atomic_load_explicit(&lib_tls.n, memory_order_acquire);
    if (!w->lib_ready) {
        for (unsigned i = 0; i < n; i++)
            w->lib_orig[i] = lib_module_block(lib_tls.modid[i]);
        w->lib_ready = true;
        /* The ULT running here when the modules were registered (on another
         * worker) may have used the thread's blocks since: they are its. */
        lib_adopt(w, w->current, n);
    }
    void **b = to->is_sched ? w->lib_orig : lib_blocks_of(to, n);
    if (!b)
        return; /* out of memory: it shares what is there */
    union loom_dtv *dtv = thread_dtv();
    for (unsigned i = 0; i < n; i++)
        dtv[lib_tls.modid[i]].pointer.val = b[i];
}

/* Before running `to` on w (w->current: the ULT it leaves): its libraries'
 * thread-locals. */
static inline void switch_lib_tls(struct worker *w, struct loom_ult *to)
{
    if (LOOM_UNLIKELY(atomic_load_explicit(&lib_tls.n, memory_order_relaxed) != 0))
        lib_tls_install(w, to);
}

int loom_ult_keep_lib_tls(const struct loom_lib_tls *mods, int n)
{
    struct worker *w = tls_worker;
    if (n <= 0 || !w || w->current->is_sched ||
        atomic_load_explicit(&lib_tls.n, memory_order_relaxed))
        return LOOM_ERR_INVALID;
    /* A module glibc placed in static TLS (at start-up, or later for
     * initial-exec or TLS-descriptor accesses) is read at a fixed offset from
     * the thread pointer, not through the dtv: it is left per worker. */
    void (*static_info)(size_t *, size_t *) =
        (void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
    if (!static_info)
        return LOOM_ERR_UNSUPPORTED;
    size_t static_size = 0, static_align = 0;
    static_info(&static_size, &static_align);
    const char *tp = __builtin_thread_pointer();
    unsigned k = 0;
    size_t align = 16, total = 0;
    for (int i = 0; i < n && k < LIB_TLS_MAX; i++) {
        const struct loom_lib_tls *m = &mods[i];
        if (m->static_tls || m->size == 0 || m->filesz > m->size || (m->align & (m->align - 1)))
            continue;
        const char *block = lib_module_block(m->modid);
        if (block >= tp - static_size && block < tp + static_size)
            continue;
        size_t a = m->align > 16 ? m->align : 16;
        total = (total + a - 1) & ~(a - 1);
        lib_tls.modid[k] = m->modid;
        lib_tls.size[k] = m->size;
        lib_tls.filesz[k] = m->filesz;
        lib_tls.image[k] = m->image;
        lib_tls.off[k] = total;
        total += m->size;
        if (a > align)
            align = a;
        w->lib_orig[k] = (void *)block;
        k++;
    }
    if (!k)
        return 0;
    lib_tls.align = align;
    lib_tls.total = total;
    /* The caller's values so far are in this thread's blocks: they become its
     * own; every other ULT starts from the initial images. */
    w->lib_ready = true;
    lib_adopt(w, w->current, k);
    atomic_store_explicit(&lib_tls.n, k, memory_order_release);
    return (int)k;
}

/* Installs `to`'s locale on this thread (only ranks that called setlocale
 * have one, so a switch between others costs one compare). */
static inline void switch_locale(struct worker *w, struct loom_ult *to)
{
    if (__builtin_expect(to->locale != w->locale, 0)) {
        uselocale(to->locale ? (locale_t)to->locale : LC_GLOBAL_LOCALE);
        w->locale = to->locale;
    }
}

/* Installs `to`'s working directory on this thread (only ranks that called
 * chdir have one of their own: a switch between others costs one compare). */
static inline void switch_fs(struct worker *w, struct loom_ult *to)
{
    if (__builtin_expect(to->fs != w->fs, 0)) {
        g.install_fs(to->fs);
        w->fs = to->fs;
    }
}

/* Runs the attention hook (a rank's pending signals) for self. */
static LOOM_NOINLINE void attn_run(struct loom_ult *self)
{
    /* Acquire: pairs with loom_ult_attn's release (what the poster wrote). */
    if (atomic_exchange_explicit(&self->attn, 0, memory_order_acquire) && g.on_attn)
        g.on_attn();
}

/* After self resumes: one relaxed load and a predicted branch. */
static inline void check_attn(struct loom_ult *self)
{
    if (LOOM_UNLIKELY(atomic_load_explicit(&self->attn, memory_order_relaxed)))
        attn_run(self);
}

_Atomic uint64_t loom_cpu_epoch;

/* The tick at which the interval now running on w began. Owner. */
static inline uint64_t run_start(const struct worker *w, uint64_t epoch)
{
    /* 0: no switch on w since accounting started (by another worker). */
    return w->since ? w->since : epoch;
}

/* Charges the interval since w's last switch to `from` (accounting on). */
static LOOM_NOINLINE void charge(struct worker *w, struct loom_ult *from, uint64_t epoch)
{
    uint64_t now = loom_cpu_ticks(), start = run_start(w, epoch);
    if (now > start) /* counters of two cores may differ by a few ticks */
        from->cpu_ticks += now - start;
    w->since = now;
}

/* At every switch: one relaxed load and a predicted branch while off. */
static inline void account(struct worker *w, struct loom_ult *from)
{
    uint64_t epoch = atomic_load_explicit(&loom_cpu_epoch, memory_order_relaxed);
    if (LOOM_UNLIKELY(epoch))
        charge(w, from, epoch);
}

/* Switches from `from` (the running context) to `to`, then, once resumed,
 * finishes whatever the context that resumed us left pending. */
static inline void switch_to(struct worker *w, struct loom_ult *from, struct loom_ult *to)
{
    account(w, from);
    from->saved_errno = errno;
    switch_locale(w, to);
    switch_fs(w, to);
    switch_lib_tls(w, to);
    /* Relaxed atomic: the signal thread samples it (loom_sched_running). */
    __atomic_store_n(&w->current, to, __ATOMIC_RELAXED);
    loom_ult_tls_data = to->data;
    san_before_switch(from, to, false);
    struct loom_ult *prev = loom_ctx_switch(&from->sp, to->sp, from);
    san_after_switch(from, prev);
    errno = from->saved_errno;
    after_switch(w, prev);
    check_attn(from);
}

/* First function of every ULT (called by loom_ctx_trampoline). */
LOOM_NORETURN static void ult_entry(void *prev_v, void *self_v)
{
    struct loom_ult *prev = prev_v, *self = self_v;
    san_after_switch(self, prev);
    errno = 0;
    after_switch(self->w, prev);
    self->fn(self->arg);
    loom_ult_exit();
}

/* ---- workers -------------------------------------------------------------- */

static void pin_self(int w)
{
    cpu_set_t set;
    if (g.sets) {
        set = g.sets[w];
    } else {
        if (!g.cpus || g.cpus[w] < 0)
            return;
        CPU_ZERO(&set);
        CPU_SET(g.cpus[w], &set);
    }
    int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (rc != 0)
        loom_log_warn("cannot pin worker %d: %s", w, strerror(rc));
}

/* A full fence on every running thread of the process. */
static void heavy_fence(void)
{
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

/* The earliest deadline among w's parked ULTs (UINT64_MAX: none). Owner. */
static uint64_t earliest_deadline(const struct worker *w)
{
    uint64_t first = UINT64_MAX;
    for (const struct watch *r = w->watch; r; r = r->next)
        if (r->deadline && r->deadline < first)
            first = r->deadline;
    return first;
}

/* Polls for idle_spin_ns, then sleeps until a wake-up or stop. */
static void idle(struct worker *w)
{
    uint64_t t0 = loom_time_ns();
    for (unsigned i = 1;; i++) {
        if (inbox_nonempty(w) || atomic_load_explicit(&g.stop, memory_order_relaxed))
            return;
        if (w->watch && watch_scan(w))
            return;
        loom_cpu_relax();
        if ((i & 63) == 0 && loom_time_ns() - t0 >= (uint64_t)g.idle_spin_ns)
            break;
    }
    /* Watched ULTs: after the fence, a notifier whose store we do not see
     * looks at its waiter's slot after it, so it wakes that ULT itself. */
    if (w->watch) {
        heavy_fence();
        if (watch_scan(w))
            return;
    }
    /* Seq_cst store then seq_cst loads (Dekker with inbox_push/stop_all):
     * either we see their write, or they see sleeping == 1 and wake us. */
    atomic_store_explicit(&w->sleeping, 1, memory_order_seq_cst);
    if (atomic_load_explicit(&w->inbox, memory_order_seq_cst) ||
        atomic_load_explicit(&g.stop, memory_order_seq_cst)) {
        atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&w->sleeps, 1, memory_order_relaxed);
    /* A parked ULT with a deadline: wake up at the earliest one (a rank's
     * sleep), and at least every tick to look at them. */
    while (atomic_load_explicit(&w->sleeping, memory_order_acquire)) {
        struct timespec tick;
        if (w->ndeadline) {
            uint64_t now = loom_time_ns(), first = earliest_deadline(w);
            uint64_t wait = first > now ? first - now : 0;
            if (wait > IDLE_DEADLINE_TICK_NS)
                wait = IDLE_DEADLINE_TICK_NS;
            tick = (struct timespec){0, (long)wait};
        }
        futex_wait(&w->sleeping, 1, w->ndeadline ? &tick : NULL);
        if (w->ndeadline && watch_scan(w)) {
            atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
            return;
        }
    }
}

/* The scheduler loop of worker w, on its own stack; returns at stop. */
static void worker_loop(struct worker *w)
{
    for (;;) {
        struct loom_ult *u = pick_next(w);
        if (u) {
            switch_to(w, &w->sched, u);
            continue;
        }
        if (atomic_load_explicit(&g.stop, memory_order_acquire))
            return;
        idle(w);
    }
}

/* Readies w's scheduler context on the calling thread. */
static void worker_enter(struct worker *w)
{
    tls_worker = w;
    w->current = &w->sched;
    loom_ult_tls_data = NULL;
#if defined(LOOM_SANITIZE_thread)
    w->sched.tsan_fiber = __tsan_get_current_fiber();
#endif
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    pin_self(w->id);
    if (g.on_worker_start)
        g.on_worker_start(w->id);
    worker_enter(w);
    /* Acquire: pairs with loom_sched_run's release of the gate. */
    while (!atomic_load_explicit(&g.started, memory_order_acquire))
        futex_wait(&g.started, 0, NULL);
    worker_loop(w);
    tls_worker = NULL;
    return NULL;
}

/* Tells every worker to stop once idle and wakes the sleepers. */
static void stop_all(void)
{
    /* Seq_cst: ordered before kick()'s load of each sleeping flag. */
    atomic_store_explicit(&g.stop, 1, memory_order_seq_cst);
    for (int i = 0; i < g.nworkers; i++)
        kick(&g.workers[i]);
}

/* ---- public API ------------------------------------------------------------ */

int loom_sched_init(const struct loom_sched_params *params)
{
    int rc = LOOM_ERR_INVALID;
    if (!params || params->nworkers < 1 || g.workers)
        goto err;
    int n = params->nworkers;
    loom_wait_fast_polls = (unsigned)loom_opt_size(LOOM_OPT_FAST_POLLS);

    rc = LOOM_ERR_NOMEM;
    g.workers = aligned_alloc(LOOM_CACHE_LINE, sizeof(struct worker) * (size_t)n);
    if (!g.workers)
        goto err;
    memset(g.workers, 0, sizeof(struct worker) * (size_t)n);
    g.cpus = NULL;
    g.sets = NULL;
    if (params->cpusets) {
        g.sets = calloc((size_t)n, sizeof(cpu_set_t));
        if (!g.sets)
            goto err_free_workers;
        for (int i = 0; i < n; i++)
            hwloc_cpuset_to_glibc_sched_affinity(NULL, (hwloc_const_cpuset_t)params->cpusets[i],
                                                 &g.sets[i], sizeof(cpu_set_t));
    } else if (params->cpus) {
        g.cpus = malloc(sizeof(int) * (size_t)n);
        if (!g.cpus)
            goto err_free_workers;
        memcpy(g.cpus, params->cpus, sizeof(int) * (size_t)n);
    }

    g.nworkers = n;
    g.page = sysconf(_SC_PAGESIZE);
    yields_before_park = (int)loom_opt_size(LOOM_OPT_WAIT_YIELDS);
    /* Watched parking needs the heavy fence; LOOM_LAZY_NOTIFY=0 turns it off
     * (every notifier then fences). */
    loom_lazy_notify =
        loom_opt_flag(LOOM_OPT_LAZY_NOTIFY) &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    g.spin_ns = params->spin_ns >= 0 ? params->spin_ns : (long)loom_opt_size(LOOM_OPT_SPIN_NS);
    g.idle_spin_ns = params->idle_spin_ns >= 0 ? params->idle_spin_ns
                                               : (long)loom_opt_size(LOOM_OPT_IDLE_SPIN_NS);
    g.on_worker_start = params->on_worker_start;
    if (loom_opt_flag(LOOM_OPT_CPUTIME))
        loom_ult_cputime_start();
    g.ran = false;
    g.joined = false;
    atomic_store(&g.live, 0);
    atomic_store(&g.stop, 0);
    atomic_store(&g.started, 0);
    for (int i = 0; i < n; i++) {
        struct worker *w = &g.workers[i];
        w->id = i;
        w->sched.is_sched = true;
        w->sched.w = w;
    }

    rc = LOOM_ERR_SYSTEM;
    for (int i = 1; i < n; i++) {
        int e = pthread_create(&g.workers[i].thread, NULL, worker_main, &g.workers[i]);
        if (e != 0) {
            loom_log_error("cannot start worker %d: %s", i, strerror(e));
            errno = e;
            goto err_stop_workers;
        }
        g.workers[i].thread_started = true;
    }
    return LOOM_OK;

err_stop_workers:
    stop_all();
    /* Release: the gate opens only with stop already visible. */
    atomic_store_explicit(&g.started, 1, memory_order_release);
    futex_wake(&g.started, INT32_MAX);
    for (int i = 1; i < n; i++)
        if (g.workers[i].thread_started)
            pthread_join(g.workers[i].thread, NULL);
    free(g.cpus);
    free(g.sets);
    g.cpus = NULL;
    g.sets = NULL;
err_free_workers:
    free(g.workers);
    g.workers = NULL;
err:
    return rc;
}

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102 /* Linux >= 6.13 */
#endif

/* Whether madvise(MADV_GUARD_INSTALL) works here (cleared at its first
 * EINVAL: an older kernel, or valgrind). */
static _Atomic bool guard_install_ok = true;

/* Makes [p, p + len) a guard region. MADV_GUARD_INSTALL marks the page
 * tables and leaves the mapping whole, so the stacks, mapped side by side
 * with the same flags, merge into few mappings; mprotect would split each
 * stack's mapping in two, two of the kernel's vm.max_map_count mappings per
 * rank (65530 by default: it stopped jobs at 32,768 ranks). */
static int install_guard(void *p, size_t len)
{
    if (atomic_load_explicit(&guard_install_ok, memory_order_relaxed)) {
        if (madvise(p, len, MADV_GUARD_INSTALL) == 0)
            return 0;
        if (errno != EINVAL)
            return -1;
        atomic_store_explicit(&guard_install_ok, false, memory_order_relaxed);
    }
    return mprotect(p, len, PROT_NONE);
}

bool loom_ult_guard_splits(void)
{
    /* A probe settles guard_install_ok when no stack was made yet. */
    long page = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
        (void)install_guard(p, (size_t)page);
        munmap(p, 2 * (size_t)page);
    }
    return !atomic_load_explicit(&guard_install_ok, memory_order_relaxed);
}

int loom_ult_create(loom_ult_fn fn, void *arg, int worker, size_t stack_size,
                    struct loom_ult **ult_p)
{
    int rc = LOOM_ERR_INVALID;
    if (!g.workers || !fn || worker < 0 || worker >= g.nworkers)
        goto err;
    size_t page = (size_t)g.page;
    if (stack_size == 0)
        stack_size = DEFAULT_STACK;
    size_t size = (stack_size + page - 1) / page * page;

    rc = LOOM_ERR_NOMEM;
    struct loom_ult *u = aligned_alloc(LOOM_CACHE_LINE, sizeof *u);
    if (!u)
        goto err;
    memset(u, 0, sizeof *u);
    char *map = mmap(NULL, size + page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (map == MAP_FAILED) {
        loom_log_error("cannot map a %zu-byte ULT stack: %s", size, strerror(errno));
        goto err_free_ult;
    }
    rc = LOOM_ERR_SYSTEM;
    if (install_guard(map, page) != 0) {
        loom_log_error("cannot protect a ULT stack guard page: %s", strerror(errno));
        goto err_unmap;
    }
    u->guard = map;
    u->lo = map + page;
    u->hi = map + page + size;
    u->fn = fn;
    u->arg = arg;
    u->w = &g.workers[worker];
    u->sp = loom_ctx_init(u->hi, ult_entry, u);
    atomic_init(&u->state, ST_RUN);
#if defined(LOOM_SANITIZE_address)
    u->asan_bottom = u->lo;
    u->asan_size = size;
#endif
#if defined(LOOM_SANITIZE_thread)
    u->tsan_fiber = __tsan_create_fiber(0);
#endif
#if defined(LOOM_HAVE_VALGRIND)
    u->vg_id = VALGRIND_STACK_REGISTER(u->lo, u->hi);
#endif

    atomic_fetch_add_explicit(&g.live, 1, memory_order_relaxed);
    pthread_mutex_lock(&g.all_lock);
    u->all_next = g.all;
    g.all = u;
    pthread_mutex_unlock(&g.all_lock);
    if (ult_p)
        *ult_p = u;
    enqueue(u);
    return LOOM_OK;

err_unmap:
    munmap(map, size + page);
err_free_ult:
    free(u);
err:
    return rc;
}

void loom_sched_run(void)
{
    LOOM_CHECK(g.workers && !g.ran);
    g.ran = true;
    struct worker *w0 = &g.workers[0];
    g.restore_affinity =
        pthread_getaffinity_np(pthread_self(), sizeof g.saved_affinity, &g.saved_affinity) == 0;
    pin_self(0);
    if (g.on_worker_start)
        g.on_worker_start(0);
    worker_enter(w0);
    /* Release: ULTs created before now are visible to the workers. */
    atomic_store_explicit(&g.started, 1, memory_order_release);
    futex_wake(&g.started, INT32_MAX);
    if (atomic_load_explicit(&g.live, memory_order_acquire) == 0)
        stop_all();
    worker_loop(w0);
    for (int i = 1; i < g.nworkers; i++)
        pthread_join(g.workers[i].thread, NULL);
    g.joined = true;
    tls_worker = NULL;
    if (g.restore_affinity)
        pthread_setaffinity_np(pthread_self(), sizeof g.saved_affinity, &g.saved_affinity);
}

void loom_sched_fini(void)
{
    if (!g.workers)
        return;
    if (!g.joined) {
        stop_all();
        atomic_store_explicit(&g.started, 1, memory_order_release);
        futex_wake(&g.started, INT32_MAX);
        for (int i = 1; i < g.nworkers; i++)
            if (g.workers[i].thread_started)
                pthread_join(g.workers[i].thread, NULL);
    }
    struct loom_ult *u = g.all;
    while (u) {
        struct loom_ult *n = u->all_next;
        if (u->guard) {
#if defined(LOOM_HAVE_VALGRIND)
            VALGRIND_STACK_DEREGISTER(u->vg_id);
#endif
#if defined(LOOM_SANITIZE_address)
            ASAN_UNPOISON_MEMORY_REGION(u->lo, (size_t)((char *)u->hi - (char *)u->lo));
#endif
            munmap(u->guard, (size_t)((char *)u->hi - (char *)u->guard));
        }
#if defined(LOOM_SANITIZE_thread)
        if (u->tsan_fiber)
            __tsan_destroy_fiber(u->tsan_fiber);
#endif
        free(u->lib_blocks); /* the pointers only, when lib_foreign */
        free(u);
        u = n;
    }
    g.all = NULL;
    free(g.cpus);
    free(g.sets);
    free(g.workers);
    g.cpus = NULL;
    g.sets = NULL;
    g.workers = NULL;
    g.nworkers = 0;
}

struct loom_ult *loom_ult_self(void)
{
    struct worker *w = tls_worker;
    if (!w || w->current->is_sched)
        return NULL;
    return w->current;
}

int loom_sched_worker_self(void)
{
    struct worker *w = tls_worker;
    return w ? w->id : -1;
}

int loom_sched_nworkers(void)
{
    return g.nworkers;
}

int loom_sched_wait_yields(void)
{
    return yields_before_park;
}

bool loom_ult_parked(const struct loom_ult *u)
{
    return (atomic_load_explicit(&u->state, memory_order_acquire) & ~(uint32_t)ST_NOTIFY) ==
           ST_PARKED;
}

bool loom_sched_all_asleep(void)
{
    for (int i = 0; i < g.nworkers; i++)
        if (!atomic_load_explicit(&g.workers[i].sleeping, memory_order_seq_cst))
            return false;
    return g.nworkers > 0;
}

bool loom_sched_others_ready(void)
{
    struct worker *w = tls_worker;
    return w && (w->rq_head || inbox_nonempty(w));
}

void loom_ult_yield(void)
{
    struct worker *w = tls_worker;
    if (!w)
        return;
    struct loom_ult *self = w->current;
    if (self->is_sched)
        return;
    struct loom_ult *next = pick_next(w);
    if (!next)
        return;
    self->yields++;
    rq_push(w, self);
    switch_to(w, self, next);
}

static void held_lock(void)
{
    while (atomic_exchange_explicit(&g.held_lock, 1, memory_order_acquire))
        loom_cpu_relax();
}

static void held_unlock(void)
{
    atomic_store_explicit(&g.held_lock, 0, memory_order_release);
}

static void park(void);

/* A ULT resumed from its park during a hold: it parks again, still inside
 * the park it was resumed from (its stack unchanged above this frame, its
 * registers saved for loom_ult_borrow_stack), until loom_ult_hold_end wakes
 * it. */
static LOOM_NOINLINE void held_here(void)
{
    struct worker *w = tls_worker;
    if (!w || w->current->is_sched)
        return; /* not a ULT: nothing of it to hold */
    struct loom_ult *self = w->current;
    for (;;) {
        held_lock();
        if (!atomic_load_explicit(&g.hold, memory_order_relaxed)) {
            held_unlock();
            return;
        }
        if (!atomic_load_explicit(&self->in_held, memory_order_relaxed)) {
            atomic_store_explicit(&self->in_held, true, memory_order_relaxed);
            atomic_store_explicit(&self->held_next,
                                  atomic_load_explicit(&g.held, memory_order_relaxed),
                                  memory_order_relaxed);
            atomic_store_explicit(&g.held, self, memory_order_relaxed);
        }
        held_unlock();
        park();
    }
}

void loom_ult_hold_begin(void)
{
    atomic_store_explicit(&g.hold, 1, memory_order_seq_cst);
}

void loom_ult_hold_end(void)
{
    held_lock();
    atomic_store_explicit(&g.hold, 0, memory_order_release);
    struct loom_ult *list = atomic_load_explicit(&g.held, memory_order_relaxed);
    atomic_store_explicit(&g.held, NULL, memory_order_relaxed);
    /* Under the lock: a woken ULT that enters a later hold rewrites its
     * held_next only after taking it. A wake that comes before the ULT
     * parked leaves it a permit; a wake takes no lock. */
    for (struct loom_ult *u = list, *next; u; u = next) {
        next = atomic_load_explicit(&u->held_next, memory_order_relaxed);
        atomic_store_explicit(&u->in_held, false, memory_order_relaxed);
        loom_ult_wake(u);
    }
    held_unlock();
}

bool loom_ult_held(const struct loom_ult *u)
{
    /* Seq_cst, after the seq_cst store of hold (Dekker with the wake's CAS):
     * parked here means any resumption sees the hold. */
    return atomic_load(&g.hold) && (atomic_load_explicit(&u->state, memory_order_seq_cst) &
                                    ~(uint32_t)ST_NOTIFY) == ST_PARKED;
}

bool loom_ult_borrow_stack(struct loom_ult *u, void (*fn)(void *), void *arg)
{
#if defined(__x86_64__)
    if (!atomic_load(&g.hold))
        return false;
    /* PARKED -> LENT: no wake or watch can resume it meanwhile (they move
     * only PARKED, and leave a permit on anything else). A held ULT resumed
     * by a deadline parks again at once (held_here): try for a while. */
    uint32_t s = ST_PARKED;
    for (int i = 0; !atomic_compare_exchange_strong_explicit(
             &u->state, &s, ST_LENT, memory_order_acq_rel, memory_order_relaxed);
         i++) {
        if (i == 100000 || s == ST_DONE)
            return false;
        s = ST_PARKED;
        loom_cpu_relax();
    }
    bool room = u->sp && (char *)u->sp - (char *)u->lo >= 64 * 1024;
    if (room)
        loom_ctx_borrow(u->sp, fn, arg);
    s = ST_LENT;
    if (!atomic_compare_exchange_strong_explicit(&u->state, &s, ST_PARKED, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        /* Woken while lent (LENT | NOTIFY): resume it as the wake would
         * have. Release: the waker's writes, which we acquired, go with it. */
        atomic_store_explicit(&u->state, ST_RUN, memory_order_release);
        enqueue(u);
    }
    return room;
#else
    (void)u, (void)fn, (void)arg;
    return false;
#endif
}

void *loom_ult_saved_sp(const struct loom_ult *u)
{
    return loom_ult_parked(u) ? u->sp : NULL;
}

void loom_ult_park(void)
{
    park();
    /* Acquire is enough: a waker's CAS PARKED -> RUN (a full barrier) came
     * after the holder's seq_cst store of hold and its look at our state
     * (see loom_ult_held), and our resumption comes after that CAS. */
    if (LOOM_UNLIKELY(atomic_load_explicit(&g.hold, memory_order_acquire)))
        held_here();
}

static void park(void)
{
    struct worker *w = tls_worker;
    if (!w || w->current->is_sched)
        return; /* not a ULT: a spurious return is allowed */
    struct loom_ult *self = w->current;
    uint32_t s = ST_RUN;
    /* Acquire on failure: a permit (NOTIFY) carries its waker's writes. */
    if (!atomic_compare_exchange_strong_explicit(&self->state, &s, ST_PARKING, memory_order_acquire,
                                                 memory_order_acquire)) {
        LOOM_ASSERT(s == (ST_RUN | ST_NOTIFY));
        /* Consume the permit. Acquire: we also see the writes of any later
         * waker that re-released NOTIFY (see loom_ult_wake). */
        atomic_exchange_explicit(&self->state, ST_RUN, memory_order_acquire);
        self->wakeups++;
        check_attn(self);
        return;
    }
    self->parks++;
    struct loom_ult *next = pick_next(w);
    switch_to(w, self, next ? next : &w->sched);
    self->wakeups++;
}

void loom_ult_stats(const struct loom_ult *u, uint64_t *parks_p, uint64_t *wakeups_p,
                    uint64_t *yields_p)
{
    *parks_p = u ? u->parks : 0;
    *wakeups_p = u ? u->wakeups : 0;
    *yields_p = u ? u->yields : 0;
}

void loom_ult_wake(struct loom_ult *u)
{
    uint32_t s = atomic_load_explicit(&u->state, memory_order_relaxed);
    for (;;) {
        if (s == ST_DONE)
            return;
        if (s == ST_PARKED) {
            /* Acq_rel: acquire the parker's release (it is off its stack);
             * release our writes to whoever resumes it. */
            if (atomic_compare_exchange_weak_explicit(&u->state, &s, ST_RUN, memory_order_acq_rel,
                                                      memory_order_relaxed)) {
                enqueue(u);
                return;
            }
            continue;
        }
        /* RUN or PARKING, with or without a permit: leave one. Even when the
         * bit is already set we write (s -> s) with release, so the ULT's
         * acquire when it consumes the permit also covers our writes. */
        if (atomic_compare_exchange_weak_explicit(&u->state, &s, s | ST_NOTIFY,
                                                  memory_order_release, memory_order_relaxed))
            return;
    }
}

/* Busy-waits on a thread that is not a ULT (nothing to switch to). */
static void wait_plain(loom_cond_fn done, const void *arg)
{
    for (unsigned i = 1; !done(arg); i++) {
        if (i < 4096)
            loom_cpu_relax();
        else
            sched_yield();
    }
}

/*
 * Waiting and notifying. Rule: a notify may reach a waiter that no longer
 * waits on that slot (it returned, or registered elsewhere since): that only
 * leaves a permit, so its next park returns spuriously and re-checks its own
 * condition. Stale notifies are harmless; what must never happen is a missed
 * one, which the seq_cst slot store / condition load here, and the seq_cst
 * condition store / slot exchange in the notifier, rule out (Dekker).
 */
static void park_watched_until(loom_cond_fn done, const void *arg, uint64_t deadline);

/* loom_ult_wait(), and loom_ult_wait_for() when timeout_ns > 0 (inlined into
 * both, so that the plain wait tests no timeout). */
static inline __attribute__((always_inline)) bool
wait_for(loom_cond_fn done, const void *arg, loom_waiter_slot *slot, uint64_t timeout_ns)
{
    if (done(arg))
        return true;
    struct worker *w = tls_worker;
    if (!w || w->current->is_sched) {
        wait_plain(done, arg);
        return true;
    }
    struct loom_ult *self = w->current;
    if (!loom_sched_others_ready()) {
        if (g.spin_ns > 0) {
            uint64_t t0 = 0;
            for (unsigned i = 1;; i++) {
                /* No pause at first: one costs tens of ns on recent x86,
                 * as much as the transfer being waited for. */
                if (i > LOOM_WAIT_FAST_POLLS)
                    loom_cpu_relax();
                if (done(arg))
                    return true;
                if ((i & 63) == 0 && loom_sched_others_ready())
                    break;
                if ((i & 1023) == 0) {
                    /* The clock is slow to read (tens of ns): rarely, and
                     * not at the start, where the wait is often short. */
                    uint64_t now = loom_time_ns();
                    if (!t0)
                        t0 = now;
                    else if (now - t0 >= (uint64_t)g.spin_ns)
                        break;
                }
            }
        }
    } else {
        /* Others are ready: let them run a few rounds (a switch costs a few
         * ns) before parking, since a park that another worker must undo
         * costs about a microsecond. */
        for (int i = 0; i < yields_before_park && loom_sched_others_ready(); i++) {
            loom_ult_yield();
            if (done(arg))
                return true;
        }
    }
    /* The timeout counts from here: the clock is read only to park. */
    uint64_t deadline = timeout_ns ? loom_time_ns() + timeout_ns : 0;
    bool ok = true;
    for (;;) {
        /* Seq_cst: ordered before done()'s load (Dekker with the notifier's
         * condition store and slot exchange). */
        atomic_store_explicit(slot, self, memory_order_seq_cst);
        /* Full fence: done() may read its flag with a plain acquire load,
         * which must not move above the slot store. */
        atomic_thread_fence(memory_order_seq_cst);
        if (done(arg))
            break;
        park_watched_until(done, arg, deadline);
        if (done(arg))
            break;
        if (deadline && loom_time_ns() >= deadline) {
            ok = false;
            break;
        }
    }
    /* Leave the slot if it still names us, so fewer stale notifies reach us. */
    struct loom_ult *expected = self;
    atomic_compare_exchange_strong_explicit(slot, &expected, NULL, memory_order_relaxed,
                                            memory_order_relaxed);
    return ok;
}

void loom_ult_wait(loom_cond_fn done, const void *arg, loom_waiter_slot *slot)
{
    (void)wait_for(done, arg, slot, 0);
}

bool loom_ult_wait_for(loom_cond_fn done, const void *arg, loom_waiter_slot *slot,
                       uint64_t timeout_ns)
{
    return wait_for(done, arg, slot, timeout_ns);
}

void loom_ult_park_watched(loom_cond_fn done, const void *arg)
{
    park_watched_until(done, arg, 0);
}

/* Parks watched; with a deadline the worker also resumes the ULT once
 * loom_time_ns() passes it (watched then even without lazy notifies). */
static void park_watched_until(loom_cond_fn done, const void *arg, uint64_t deadline)
{
    struct worker *w = tls_worker;
    if ((!loom_lazy_notify && !deadline) || !w || w->current->is_sched) {
        loom_ult_park();
        return;
    }
    struct watch rec = {
        .next = w->watch, .done = done, .arg = arg, .u = w->current, .deadline = deadline};
    if (rec.next)
        rec.next->prev = &rec;
    w->watch = &rec;
    w->nwatch++;
    w->ndeadline += deadline != 0;
    loom_ult_park();
    /* Same worker: ULTs do not migrate. */
    if (rec.prev)
        rec.prev->next = rec.next;
    else
        w->watch = rec.next;
    if (rec.next)
        rec.next->prev = rec.prev;
    w->nwatch--;
    w->ndeadline -= deadline != 0;
}

static bool never(const void *arg)
{
    (void)arg;
    return false;
}

void loom_ult_park_until(uint64_t deadline)
{
    if (deadline)
        park_watched_until(never, NULL, deadline);
    else
        loom_ult_park();
}

bool loom_ult_sleep(uint64_t ns)
{
    return loom_ult_sleep_or(ns, never, NULL);
}

bool loom_ult_sleep_or(uint64_t ns, loom_cond_fn stop, const void *arg)
{
    struct worker *w = tls_worker;
    if (!w || w->current->is_sched)
        return false;
    if (ns == 0) {
        loom_ult_yield();
        return true;
    }
    /* A stale wake-up may resume us early: park again until the time. */
    uint64_t t = loom_time_ns();
    uint64_t deadline = ns < UINT64_MAX - t ? t + ns : UINT64_MAX;
    do
        park_watched_until(stop, arg, deadline);
    while (!stop(arg) && loom_time_ns() < deadline);
    return true;
}

void loom_ult_notify_slow(loom_waiter_slot *slot)
{
    struct loom_ult *u = atomic_exchange_explicit(slot, NULL, memory_order_acq_rel);
    if (u)
        loom_ult_wake(u);
}

void loom_ult_exit(void)
{
    struct worker *w = tls_worker;
    if (!w || w->current->is_sched)
        loom_fatal("loom_ult_exit called outside a ULT");
    struct loom_ult *self = w->current;
    /* An RMW so a racing wake's CAS either lands before (and is overridden)
     * or sees DONE. after_switch reads it on this same thread: no ordering
     * needed beyond program order; release costs nothing more here. */
    atomic_exchange_explicit(&self->state, ST_DONE, memory_order_release);
    struct loom_ult *next = pick_next(w);
    if (!next)
        next = &w->sched;
    account(w, self);
    switch_locale(w, next);
    switch_fs(w, next);
    switch_lib_tls(w, next);
    w->current = next;
    loom_ult_tls_data = next->data;
    san_before_switch(self, next, true);
    loom_ctx_switch(&self->sp, next->sp, self);
    __builtin_unreachable();
}

void loom_ult_set_locale(void *loc)
{
    struct worker *w = tls_worker;
    uselocale(loc ? (locale_t)loc : LC_GLOBAL_LOCALE);
    if (!w || w->current->is_sched)
        return;
    w->current->locale = loc;
    w->locale = loc;
}

void loom_ult_set_attn_hook(void (*hook)(void))
{
    g.on_attn = hook;
}

void loom_ult_attn(struct loom_ult *u)
{
    /* Release: what the caller wrote for u (its pending signals) is visible
     * to attn_run's acquire. */
    atomic_store_explicit(&u->attn, 1, memory_order_release);
}

bool loom_ult_is_running(const struct loom_ult *u)
{
    return __atomic_load_n(&u->w->current, __ATOMIC_RELAXED) == u;
}

struct loom_ult *loom_sched_running(int worker)
{
    if (worker < 0 || worker >= g.nworkers)
        return NULL;
    struct loom_ult *u = __atomic_load_n(&g.workers[worker].current, __ATOMIC_RELAXED);
    return u && !u->is_sched ? u : NULL;
}

void loom_ult_set_fs_hook(void (*install)(void *fs))
{
    g.install_fs = install;
}

void loom_ult_set_fs(void *fs)
{
    struct worker *w = tls_worker;
    if (!w || w->current->is_sched)
        return;
    w->current->fs = fs;
    w->fs = fs;
}

void loom_ult_set_data(struct loom_ult *u, void *data)
{
    u->data = data;
}

void *loom_ult_get_data(const struct loom_ult *u)
{
    return u->data;
}

int loom_ult_worker(const struct loom_ult *u)
{
    return u->w->id;
}

void loom_ult_stack_bounds(const struct loom_ult *u, void **lo_p, void **hi_p, void **guard_p)
{
    if (lo_p)
        *lo_p = u->lo;
    if (hi_p)
        *hi_p = u->hi;
    if (guard_p)
        *guard_p = u->guard;
}

unsigned long loom_sched_sleep_count(int worker)
{
    if (worker < 0 || worker >= g.nworkers)
        return 0;
    return atomic_load_explicit(&g.workers[worker].sleeps, memory_order_relaxed);
}

bool loom_ult_cputime_self(uint64_t *ns_p, uint64_t **split_p)
{
    struct worker *w = tls_worker;
    if (!w || w->current->is_sched)
        return false;
    loom_ult_cputime_start();
    /* Acquire: pairs with loom_ult_cputime_start's release (the rate). */
    uint64_t epoch = atomic_load_explicit(&loom_cpu_epoch, memory_order_acquire);
    struct loom_ult *self = w->current;
    uint64_t now = loom_cpu_ticks(), start = run_start(w, epoch);
    uint64_t ticks = self->cpu_ticks + (now > start ? now - start : 0);
    *ns_p = (uint64_t)((double)ticks * loom_ult_cputime_ns_per_tick());
    *split_p = self->cpu_split;
    return true;
}
