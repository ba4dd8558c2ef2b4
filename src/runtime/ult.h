/*
 * User-level threads (ULTs) on pinned worker threads.
 *
 * Every MPI rank of a Loom job is a ULT bound to one worker (a kernel thread,
 * usually pinned to one core). A ULT runs until it yields, parks or exits;
 * nothing preempts it. A parked ULT costs nothing: it sits in no queue, and
 * whoever makes its condition true wakes it in O(1) (the MPC paper's
 * freeze/wakeup). A worker with nothing ready spins briefly, then sleeps on a
 * futex until a wake-up arrives.
 *
 * Waking is tolerant by design: a wake that finds the ULT running leaves a
 * permit, so the next park returns at once. Every park therefore sits in a
 * loop that re-checks its condition (see loom_ult_wait).
 *
 * Depends on: util.
 */
#ifndef LOOM_RUNTIME_ULT_H
#define LOOM_RUNTIME_ULT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/common.h"

struct loom_ult;
typedef void (*loom_ult_fn)(void *arg);
typedef bool (*loom_cond_fn)(const void *arg);

/* A waiter slot: where a ULT leaves itself before it parks, and where the
 * party that makes its condition true finds it. One waiter at a time. */
typedef _Atomic(struct loom_ult *) loom_waiter_slot;

struct loom_sched_params {
    int nworkers;                        /* >= 1 */
    const int *cpus;                     /* cpus[w] = OS index of the PU or core's first PU to
                                            pin worker w to; NULL: do not pin */
    const void *const *cpusets;          /* optional: hwloc_const_cpuset_t per worker
                                            (overrides cpus when non-NULL) */
    long spin_ns;                        /* how long a lone waiting ULT spins before it parks;
                                            < 0: default (LOOM_SPIN_NS or 50 us) */
    long idle_spin_ns;                   /* how long an idle worker polls before it sleeps;
                                            < 0: default (LOOM_IDLE_SPIN_NS or 100 us) */
    void (*on_worker_start)(int worker); /* optional: runs first on each
                            worker's kernel thread (signal stacks, naming) */
};

/* Starts the scheduler: workers 1..W-1 as kernel threads; the calling thread
 * becomes worker 0 inside loom_sched_run(). */
int loom_sched_init(const struct loom_sched_params *params) __attribute__((warn_unused_result));

/* Creates a ULT that will run fn(arg) on the given worker, with a stack of
 * stack_size bytes (rounded up to pages) below a guard page. The ULT starts
 * when loom_sched_run() runs, or at once if the scheduler already runs. */
int loom_ult_create(loom_ult_fn fn, void *arg, int worker, size_t stack_size,
                    struct loom_ult **ult_p) __attribute__((warn_unused_result));

/* Runs worker 0 on the calling thread until every ULT has finished, then
 * stops the other workers and returns. */
void loom_sched_run(void);

/* Frees every ULT and stack; after loom_sched_run() returned. */
void loom_sched_fini(void);

/* The calling ULT, or NULL on a thread that is not running a ULT. */
struct loom_ult *loom_ult_self(void);

/* Index of the worker the calling thread is, or -1. */
int loom_sched_worker_self(void);
int loom_sched_nworkers(void);

/* Whether u is parked (off every queue) now: a snapshot, for the deadlock
 * detector. */
bool loom_ult_parked(const struct loom_ult *u);

/* Holding parked ULTs where they are, to read what they left on their
 * stacks (the job's state view, src/runtime/state.c). Between
 * loom_ult_hold_begin() and loom_ult_hold_end(), a ULT that loom_ult_held()
 * found parked does not return from its park: a wake makes it ready, and
 * when it resumes it waits (spinning, on its worker) until the hold ends.
 * Holds do not nest (callers serialize). ULTs that are running or ready are
 * not held. */
void loom_ult_hold_begin(void);
void loom_ult_hold_end(void);
/* During a hold: whether u is parked, and so stays in its park until the
 * hold ends. */
bool loom_ult_held(const struct loom_ult *u);

/* During a hold, for a ULT that loom_ult_held() reported: runs fn(arg) on
 * the calling thread but on u's stack, below the frame u left there, with
 * call-frame information that makes u's frames the callers of fn, so that
 * an unwinder started in fn (backtrace(3)) walks u's stack. u cannot be
 * resumed meanwhile (a wake is kept and carried out after). False, without
 * calling fn, where that is not possible (an architecture without it, u not
 * parked, less than 64 KiB of u's stack left). */
bool loom_ult_borrow_stack(struct loom_ult *u, void (*fn)(void *), void *arg);

/* The stack pointer u was switched out at, while it is parked (NULL
 * otherwise): its callee-saved registers and return address lie above it
 * (ult_ctx.h). For a debugger, with the process stopped. */
void *loom_ult_saved_sp(const struct loom_ult *u);

/* Whether every worker sleeps on its futex now (none runs a ULT or polls):
 * a snapshot. */
bool loom_sched_all_asleep(void);

/* Lets other ready ULTs on this worker run; returns at once if none. */
void loom_ult_yield(void);

/* Blocks the calling ULT until loom_ult_wake() is called on it (or returns
 * at once if a wake is already pending). May return spuriously. */
void loom_ult_park(void);

/* Makes u ready if it is parked, else leaves it a permit. Safe from any
 * worker and from plain threads; O(1). */
void loom_ult_wake(struct loom_ult *u);

/* Waits until done(arg) is true: spins while this ULT is alone on its worker
 * (for at most spin_ns), then registers in *slot and parks (watched). The
 * waker makes done() true and then calls loom_ult_notify(slot). Objects
 * holding slots must stay mapped while a stale notify may still reach them
 * (pools). done() must only read memory (its worker may call it). */
void loom_ult_wait(loom_cond_fn done, const void *arg, loom_waiter_slot *slot);

/* loom_ult_wait(), giving up after about timeout_ns parked (more when the
 * worker is busy): returns whether done(arg) held. A ULT that spins first
 * spins as long as loom_ult_wait() would. Plain threads wait without a
 * timeout. */
bool loom_ult_wait_for(loom_cond_fn done, const void *arg, loom_waiter_slot *slot,
                       uint64_t timeout_ns);

/* Parks the calling ULT for at least ns nanoseconds, letting its worker run
 * the others (a rank's sleep); ns == 0 yields. False, doing nothing, when the
 * caller is not a ULT. */
bool loom_ult_sleep(uint64_t ns);

/* Parks the calling ULT until loom_ult_wake(), or also until loom_time_ns()
 * passes deadline when it is not 0 (a rank's blocking call, block.c). May
 * return spuriously. */
void loom_ult_park_until(uint64_t deadline);

/* loom_ult_sleep() that also ends once stop(arg) holds (the worker re-checks
 * it while the ULT is parked; a loom_ult_wake() makes it look at once). */
bool loom_ult_sleep_or(uint64_t ns, loom_cond_fn stop, const void *arg);

/* Polls a lone waiter makes before it adds a pause to each poll
 * (LOOM_FAST_POLLS, default 0). A pause costs ~25 ns on the AMD EPYC
 * machines measured, yet a waiter that pauses sees a line its peer writes
 * sooner: loads that never pause keep pulling the line back while the
 * writer waits to own it (one-way line bounce 58 -> 39 ns, Loom's 8-byte
 * latency 99 -> 85 ns; docs/pt2pt-perf.md). */
extern unsigned loom_wait_fast_polls;
#define LOOM_WAIT_FAST_POLLS loom_wait_fast_polls

/* loom_ult_notify() once *slot was seen holding a waiter. */
void loom_ult_notify_slow(loom_waiter_slot *slot);

/* True when notifiers need no full fence between their condition store and
 * their look at a waiter slot, because waiters park watched (ult.c explains
 * the protocol). Set by loom_sched_init(). */
extern bool loom_lazy_notify;

/* What a notifier runs between its condition store and its look at the
 * waiter's slot: a compiler barrier with watched parking, else a full
 * fence (Dekker with the waiter's seq_cst registration). */
static inline void loom_notify_fence(void)
{
    if (loom_lazy_notify)
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
}

/* Wakes whoever is registered in *slot, if anyone. Call after making the
 * condition true (a release store suffices: see loom_notify_fence). Inline:
 * most notifies find nobody waiting, after one look at the slot. */
static inline void loom_ult_notify(loom_waiter_slot *slot)
{
    /* The fence orders the caller's condition store before this look
     * (Dekker with the waiter; with watched parking only for the compiler). */
    loom_notify_fence();
    if (LOOM_LIKELY(!atomic_load_explicit(slot, memory_order_relaxed)))
        return;
    loom_ult_notify_slow(slot);
}

/* Parks like loom_ult_park() after the caller registered in a waiter slot
 * and saw done(arg) false; meanwhile the worker re-checks done(arg) and
 * resumes the ULT when it holds, so that a notifier's unfenced look at the
 * slot can never lose the wake-up. done() must only read memory. */
void loom_ult_park_watched(loom_cond_fn done, const void *arg);

/* Ends the calling ULT; never returns. Returning from fn does the same. */
__attribute__((noreturn)) void loom_ult_exit(void);

/* A pointer the owner of the ULT may attach (Loom attaches the rank). */
void loom_ult_set_data(struct loom_ult *u, void *data);
/* Installs a locale_t (NULL: the global locale) on the calling thread and, in
 * a ULT, whenever that ULT runs (setlocale per rank, src/rankc/setlocale.c). */
void loom_ult_set_locale(void *loc);

/* A shared library's TLS module: its id, block size, initial image
 * ([image, image + filesz), the rest zero), alignment, and whether it is
 * built for static TLS (DF_STATIC_TLS). */
struct loom_lib_tls {
    size_t modid, size, filesz, align;
    const void *image;
    bool static_tls;
};

/* Makes the thread-locals of these modules per ULT rather than per worker
 * thread (those in static TLS excepted): returns how many, or a LOOM_ERR_.
 * Called once, by the running ULT whose current values the thread's blocks
 * hold, before any other ULT uses the modules. */
int loom_ult_keep_lib_tls(const struct loom_lib_tls *mods, int n)
    __attribute__((warn_unused_result));
void *loom_ult_get_data(const struct loom_ult *u);

/* Signals of a ULT (src/runtime/signal.c). loom_ult_attn(u) asks u to run the
 * attention hook when it next resumes from a switch or a park (call it from
 * any thread, not from a signal handler, then loom_ult_wake(u) to resume a
 * parked u). Costs one relaxed load and a predicted branch per switch. */
void loom_ult_set_attn_hook(void (*hook)(void));
void loom_ult_attn(struct loom_ult *u);
/* Whether u is what its worker runs now (a racy look, for hints). */
bool loom_ult_is_running(const struct loom_ult *u);
/* The ULT worker runs now, NULL when it runs its scheduler (idle): a
 * snapshot from any thread, for sampling CPU time (signal.c's CPU timers). */
struct loom_ult *loom_sched_running(int worker);

/* A working directory per ULT (src/runtime/rankfs.c): a switch to a ULT whose
 * fs differs from the one installed on the worker calls install(fs) (NULL:
 * the job's own). loom_ult_set_fs sets the calling ULT's and marks it as
 * installed on its worker. Ranks that never set one cost one compare. */
void loom_ult_set_fs_hook(void (*install)(void *fs));
void loom_ult_set_fs(void *fs);

/* The data of the ULT running on the calling worker as of its last switch
 * in (NULL in a scheduler context, on threads that are not workers, and
 * for a ULT whose data was attached after it started): one thread-local
 * load, for the hot paths; loom_ult_self() and loom_ult_get_data() are
 * exact. */
extern __thread void *loom_ult_tls_data __attribute__((tls_model("initial-exec")));
int loom_ult_worker(const struct loom_ult *u);

/* The ULT's usable stack [lo, hi) and its guard page [guard, lo); used to
 * report a stack overflow by rank. */
void loom_ult_stack_bounds(const struct loom_ult *u, void **lo_p, void **hi_p, void **guard_p);

/* True when a stack's guard page costs a mapping of its own (mprotect, on
 * kernels before 6.13), false when stacks cost ~0 mappings each. */
bool loom_ult_guard_splits(void);

/* True when another ULT is ready on the calling worker (waiters use it to
 * decide between spinning and parking). */
bool loom_sched_others_ready(void);

/* What ULT u did (NULL: zeros): its parks, its wake-ups (resumptions after a
 * park, and wakes that came before it parked, so that its park returned at
 * once), and its yields to another ready ULT. Each is counted by u itself. */
void loom_ult_stats(const struct loom_ult *u, uint64_t *parks_p, uint64_t *wakeups_p,
                    uint64_t *yields_p);

/* How many times a waiter yields to the worker's other ready ULTs before it
 * parks (LOOM_WAIT_YIELDS, default 16). */
int loom_sched_wait_yields(void);

/* How many times the worker has gone to sleep on its futex (tests, stats). */
unsigned long loom_sched_sleep_count(int worker);

/*
 * CPU time per ULT (a rank's clock(), getrusage, times: src/runtime/cputime.c).
 * Off until loom_ult_cputime_start(): a switch then costs one relaxed load
 * and a predicted branch. Once on, every switch reads the tick counter and
 * charges the interval since the worker's previous switch to the ULT that
 * ran it: wall time on the worker, so time the OS took the worker away (or
 * a blocking system call) counts as the ULT's.
 */

/* 0 while accounting is off, else the tick count at which it started. */
extern _Atomic uint64_t loom_cpu_epoch __attribute__((visibility("hidden")));

/* The tick counter accounting reads: the TSC on x86-64, the virtual counter
 * on aarch64, else loom_time_ns(). loom_ult_cputime_ns_per_tick() converts. */
static inline uint64_t loom_cpu_ticks(void)
{
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t t;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(t)::"memory");
    return t;
#else
    return loom_time_ns();
#endif
}

/* Starts accounting (once; later calls return at once). LOOM_CPUTIME=1
 * starts it in loom_sched_init (measurements). */
void loom_ult_cputime_start(void);
double loom_ult_cputime_ns_per_tick(void);

/* The calling ULT's CPU time in ns since accounting started (starting it
 * if needed) and, in *split_p, two words the caller may keep with it (the
 * user and system shares it reported last); false, doing nothing, when the
 * caller is not a ULT. */
bool loom_ult_cputime_self(uint64_t *ns_p, uint64_t **split_p);

#endif
