/*
 * Signals, timers and the pid of a rank, as in a process of its own.
 *
 * All ranks share one process, so the kernel knows one table of handlers,
 * one alarm and one pid: with a SIGALRM handler and alarm() in every rank,
 * only the last installed handler ran, once. libloom precedes libc in the
 * global lookup order, so it defines the calls (signal, sigaction,
 * sigprocmask, pthread_sigmask, sigpending, sigsuspend, pause, raise, kill,
 * alarm, setitimer, getitimer, timer_*, getpid, getppid, longjmp) and keeps,
 * per rank: its dispositions, its blocked set, its pending set, its timers,
 * and a virtual pid. On a rank's ULT (or a thread a rank started) they act
 * for that rank; anywhere else (a program run directly, mpiexec, Loom's own
 * threads) they are libc's.
 *
 * Delivery: a signal for a rank is marked pending in its set, and the rank's
 * handler runs on the rank's own ULT:
 *  - synchronously, for raise(), kill() of its own pid, an unblocking
 *    sigprocmask, and faults (SIGSEGV... from the crash handler, job.c);
 *  - at once, if the rank is running on its worker: the poster sends the
 *    worker Loom's kick signal, whose handler runs the rank's handler on the
 *    rank's stack unless the worker is inside libloom (the scheduler's own
 *    code; in sanitizer builds: unless it runs the program's own code);
 *  - else when the rank next resumes from a switch or a park (the ULT's
 *    attention flag, ult.c): a parked rank is woken for it (parks may return
 *    spuriously), and its sleep, nanosleep, pause or sigsuspend returns
 *    interrupted (sleep.c).
 * Timers (alarm, ITIMER_REAL, timer_create on wall clocks) are kept by one
 * thread of Loom ("loom-sig"), which sleeps until the earliest expiry and
 * posts the timer's signal to its rank. Process-directed signals (kill from
 * outside) reach a process-level handler that Loom installs once a rank
 * installs a handler; the thread then posts them to every rank with a
 * handler, unless some live rank would die of it (no handler, a deadly
 * default): then the job ends, as Open MPI ends a job when one of the
 * processes it forwards a signal to dies of it.
 *
 * See docs/architecture.md ("Signals and timers") for what a rank can and
 * cannot do, and docs/adr/0002-rank-pid-and-cwd.md for the pid.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "runtime/job.h"
#include "runtime/ult.h"
#include "util/log.h"

#define NSIGS 65 /* signals 1..64 */

/* Under TSAN the sanitizer's interceptors keep one handler table for the
 * process and crashed at start when they called ours: there these calls stay
 * inside libloom (hidden), and libloom's own calls reach the first global
 * definition, as before (docs/architecture.md). */
#if defined(LOOM_SANITIZE_thread)
#define LOOM_INTERPOSE __attribute__((visibility("hidden")))
#define LOOM_NEXT      RTLD_DEFAULT
#else
#define LOOM_INTERPOSE LOOM_EXPORT
#define LOOM_NEXT      RTLD_NEXT
#endif

LOOM_INTERPOSE int sigaction(int sig, const struct sigaction *act, struct sigaction *old);
LOOM_INTERPOSE sighandler_t signal(int sig, sighandler_t handler);
LOOM_INTERPOSE int sigprocmask(int how, const sigset_t *set, sigset_t *old);
LOOM_INTERPOSE int pthread_sigmask(int how, const sigset_t *set, sigset_t *old);
LOOM_INTERPOSE int sigpending(sigset_t *set);
LOOM_INTERPOSE int sigsuspend(const sigset_t *mask);
LOOM_INTERPOSE int pause(void);
LOOM_INTERPOSE int sigwait(const sigset_t *set, int *sig);
LOOM_INTERPOSE int sigwaitinfo(const sigset_t *set, siginfo_t *info);
LOOM_INTERPOSE int sigtimedwait(const sigset_t *set, siginfo_t *info,
                                const struct timespec *timeout);
LOOM_INTERPOSE int raise(int sig);
LOOM_INTERPOSE int kill(pid_t pid, int sig);
LOOM_INTERPOSE unsigned int alarm(unsigned int seconds);
LOOM_INTERPOSE int setitimer(__itimer_which_t which, const struct itimerval *val,
                             struct itimerval *old);
LOOM_INTERPOSE int getitimer(__itimer_which_t which, struct itimerval *val);
LOOM_INTERPOSE int timer_create(clockid_t clock, struct sigevent *sev, timer_t *id);
LOOM_INTERPOSE int timer_settime(timer_t id, int flags, const struct itimerspec *val,
                                 struct itimerspec *old);
LOOM_INTERPOSE int timer_gettime(timer_t id, struct itimerspec *val);
LOOM_INTERPOSE int timer_getoverrun(timer_t id);
LOOM_INTERPOSE int timer_delete(timer_t id);
LOOM_INTERPOSE pid_t getpid(void);
LOOM_INTERPOSE pid_t getppid(void);
LOOM_INTERPOSE LOOM_NORETURN void longjmp(struct __jmp_buf_tag env[1], int val);
LOOM_INTERPOSE LOOM_NORETURN void siglongjmp(struct __jmp_buf_tag env[1], int val);
LOOM_INTERPOSE LOOM_NORETURN void _longjmp(struct __jmp_buf_tag env[1], int val);
LOOM_INTERPOSE LOOM_NORETURN void __longjmp_chk(struct __jmp_buf_tag env[1], int val);

/* ---- libc's definitions (the next ones after libloom) -------------------- */

typedef void (*jmp_fn)(struct __jmp_buf_tag *, int);
static struct {
    int (*sigaction)(int, const struct sigaction *, struct sigaction *);
    int (*sigprocmask)(int, const sigset_t *, sigset_t *);
    int (*pthread_sigmask)(int, const sigset_t *, sigset_t *);
    int (*sigpending)(sigset_t *);
    int (*sigsuspend)(const sigset_t *);
    int (*pause)(void);
    int (*sigwait)(const sigset_t *, int *);
    int (*sigwaitinfo)(const sigset_t *, siginfo_t *);
    int (*sigtimedwait)(const sigset_t *, siginfo_t *, const struct timespec *);
    int (*raise)(int);
    int (*kill)(pid_t, int);
    unsigned (*alarm)(unsigned);
    int (*setitimer)(__itimer_which_t, const struct itimerval *, struct itimerval *);
    int (*getitimer)(__itimer_which_t, struct itimerval *);
    int (*timer_create)(clockid_t, struct sigevent *, timer_t *);
    int (*timer_settime)(timer_t, int, const struct itimerspec *, struct itimerspec *);
    int (*timer_gettime)(timer_t, struct itimerspec *);
    int (*timer_getoverrun)(timer_t);
    int (*timer_delete)(timer_t);
    pid_t (*getppid)(void);
    jmp_fn longjmp, siglongjmp, _longjmp, longjmp_chk;
} libc;

/* libc's name, found on first use: a sanitizer's runtime calls sigaction
 * (through its interceptor, then ours) before libloom's constructors run. */
#define LIBC(name)                                                                                 \
    ({                                                                                             \
        if (!libc.name)                                                                            \
            libc.name = (__typeof__(libc.name))find(#name);                                        \
        libc.name;                                                                                 \
    })

static void *find(const char *name)
{
    return dlsym(LOOM_NEXT, strcmp(name, "longjmp_chk") == 0 ? "__longjmp_chk" : name);
}

#define FIND(name) (void)LIBC(name)
__attribute__((constructor)) static void find_libc(void)
{
    FIND(sigaction);
    FIND(sigprocmask);
    FIND(pthread_sigmask);
    FIND(sigpending);
    FIND(sigsuspend);
    FIND(pause);
    FIND(sigwait);
    FIND(sigwaitinfo);
    FIND(sigtimedwait);
    FIND(raise);
    FIND(kill);
    FIND(alarm);
    FIND(setitimer);
    FIND(getitimer);
    FIND(timer_create);
    FIND(timer_settime);
    FIND(timer_gettime);
    FIND(timer_getoverrun);
    FIND(timer_delete);
    FIND(getppid);
    FIND(longjmp);
    FIND(siglongjmp);
    FIND(_longjmp);
    FIND(longjmp_chk);
}

/* ---- state ------------------------------------------------------------------ */

/* A rank's disposition of one signal. fn: SIG_DFL, SIG_IGN or the handler. */
struct disp {
    _Atomic(void *) fn;
    int flags;
    uint64_t mask;
};

/* What a pending signal's siginfo carries. */
struct sinfo {
    int code;
    pid_t pid;
    uid_t uid;
    union sigval value;
    int overrun;
    int timerid;
};

struct rank_sig {
    struct disp act[NSIGS];
    struct sinfo info[NSIGS];   /* of the pending ones (written under lock) */
    _Atomic uint64_t pending;   /* bit s-1: signal s */
    uint64_t mask;              /* blocked; written by the rank only, read by posters as a
                                   hint (a blocked signal runs once unblocked) */
    _Atomic unsigned handled;   /* handlers run (interrupts sleeps) */
    _Atomic uint64_t waiting;   /* signals it waits for in sigwait & co (blocked ones too) */
    int depth;                  /* handlers running now */
    uint64_t outer_mask;        /* the mask before the outermost of them */
    void *async_sp;             /* frame of a kick-time delivery in progress */
    uintptr_t text_lo, text_hi; /* the code of the rank's copy of the program */
    pthread_mutex_t lock;       /* posters of info */
    int alarm;                  /* its ITIMER_REAL timer + 1; 0: none yet */
    /* ITIMER_VIRTUAL [0] and ITIMER_PROF [1], in the rank's sampled CPU
     * time (cpu_ns, under S.lock): next expiry (0: disarmed), interval. */
    uint64_t cpu_ns;
    uint64_t cpu_next[2], cpu_interval[2];
} LOOM_ALIGNED_CL;

/* A timer of a rank: alarm/ITIMER_REAL or timer_create's. */
struct timer {
    bool used, armed;
    bool is_alarm;
    int rank;
    clockid_t clock;
    int sig; /* 0: SIGEV_NONE */
    union sigval value;
    uint64_t next;     /* CLOCK_MONOTONIC ns of the next expiry */
    uint64_t interval; /* ns; 0: one-shot */
    int overrun, last_overrun;
};

#define TIMER_TAG ((uintptr_t)0x4c6f6f6d00000000ull) /* "Loom": above user pointers */

static struct {
    int nranks;
    struct rank_sig *ranks;
    pid_t pid; /* the real one */
    long pid_max;
    int kick;    /* Loom's signal that makes a worker look at its rank */
    pid_t *tids; /* of the workers */
    int nworkers;
    _Atomic uint64_t forwarded; /* signals whose process handler is forwarder */
    pthread_mutex_t install_lock;

    pthread_mutex_t lock; /* timers */
    struct timer *timers;
    int ntimers;
    int cpu_armed;     /* ranks with an ITIMER_VIRTUAL or ITIMER_PROF armed */
    uint64_t cpu_last; /* CLOCK_MONOTONIC ns of the last CPU sample */

    _Atomic int seq;          /* futex word: bumped to wake the signal thread */
    _Atomic uint64_t arrived; /* process-directed signals to dispatch */
    struct sinfo arrived_info[NSIGS];
    pthread_once_t thread_once;
} S = {.install_lock = PTHREAD_MUTEX_INITIALIZER,
       .lock = PTHREAD_MUTEX_INITIALIZER,
       .thread_once = PTHREAD_ONCE_INIT};

static inline uint64_t bit(int sig)
{
    return 1ull << (sig - 1);
}

static uint64_t set_bits(const sigset_t *set)
{
    uint64_t b = 0;
    for (int s = 1; s < NSIGS; s++)
        if (sigismember(set, s) == 1)
            b |= bit(s);
    return b;
}

static void bits_set(uint64_t b, sigset_t *set)
{
    sigemptyset(set);
    for (int s = 1; s < NSIGS; s++)
        if (b & bit(s))
            sigaddset(set, s);
}

/* The rank the caller acts for: its ULT's, or the starter of its thread. */
static struct loom_rank *acting(void)
{
    if (!S.ranks)
        return NULL;
    struct loom_ult *u = loom_ult_self();
    if (u)
        return loom_ult_get_data(u);
    int t = loom_thread_rank();
    return t >= 0 && t < S.nranks ? &loom_job.ranks[t] : NULL;
}

/* The calling rank on its own ULT (not a thread it started), or NULL. */
static struct loom_rank *on_ult(void)
{
    if (!S.ranks)
        return NULL;
    struct loom_ult *u = loom_ult_self();
    return u ? loom_ult_get_data(u) : NULL;
}

static struct rank_sig *rs_of(const struct loom_rank *r)
{
    return &S.ranks[r->rank];
}

/* Signals a rank may not catch: those libc refuses, and Loom's kick. */
static bool reserved(int sig)
{
    return sig < 1 || sig >= NSIGS || sig == SIGKILL || sig == SIGSTOP || sig == S.kick ||
           (sig > 31 && sig < SIGRTMIN);
}

static bool is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP ||
           sig == SIGABRT;
}

/* What SIG_DFL does: 0 ignore (also the stop signals: a rank cannot stop
 * alone), 1 end. */
static int default_ends(int sig)
{
    switch (sig) {
    case SIGCHLD:
    case SIGCONT:
    case SIGURG:
    case SIGWINCH:
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
        return 0;
    default:
        return 1;
    }
}

/* ---- the pid ---------------------------------------------------------------- */

/* Rank r's pid: (r + 1) * pid_max + the real pid, above every pid the kernel
 * can hand out (so a rank never signals another process by mistake) and
 * distinct between the jobs of a node. Where that passes INT_MAX (more than
 * 2^31 / pid_max - 1 ranks), pid_max + real pid * nranks + r, still distinct
 * within the job (docs/adr/0002-rank-pid-and-cwd.md). */
static pid_t vpid_of(int r)
{
    long slots = 0x7fffffffL / S.pid_max;
    if (S.nranks < slots)
        return (pid_t)((long)(r + 1) * S.pid_max + S.pid);
    return (pid_t)(S.pid_max + ((long)S.pid * S.nranks + r) % (0x7fffffffL - S.pid_max));
}

/* The rank whose pid is pid, or -1. */
static int rank_of_vpid(pid_t pid)
{
    if (pid < S.pid_max)
        return -1;
    long slots = 0x7fffffffL / S.pid_max;
    if (S.nranks < slots) {
        long r = pid / S.pid_max - 1;
        return pid % S.pid_max == S.pid && r >= 0 && r < S.nranks ? (int)r : -1;
    }
    for (int r = 0; r < S.nranks; r++)
        if (vpid_of(r) == pid)
            return r;
    return -1;
}

pid_t getpid(void)
{
    struct loom_rank *r = acting();
    if (r)
        return vpid_of(r->rank);
    return (pid_t)syscall(SYS_getpid);
}

pid_t getppid(void)
{
    /* A rank's parent is mpiexec's process. */
    if (acting())
        return S.pid;
    return LIBC(getppid)();
}

/* ---- delivery ------------------------------------------------------------ */

static void fill_info(siginfo_t *si, int sig, const struct sinfo *in)
{
    memset(si, 0, sizeof *si);
    si->si_signo = sig;
    si->si_code = in->code;
    si->si_pid = in->pid;
    si->si_uid = in->uid;
    si->si_value = in->value;
    if (in->code == SI_TIMER) {
        si->si_overrun = in->overrun;
        si->_sifields._timer.si_tid = in->timerid;
    }
}

/* Async-signal-safe: "loom: rank R terminated by signal S (name)", then the
 * job ends with 128 + S, as the crash handler reports. */
static LOOM_NORETURN void rank_killed(const struct loom_rank *r, int sig)
{
    char msg[256], *p = msg;
    p = stpcpy(p, "loom: rank ");
    p = loom_fmt_long(p, r->rank);
    p = stpcpy(p, " terminated by signal ");
    p = loom_fmt_long(p, sig);
    const char *d = sigdescr_np(sig);
    if (d) {
        p = stpcpy(p, " (");
        p = stpcpy(p, d);
        p = stpcpy(p, ")");
    }
    stpcpy(p, "; ending the job\n");
    loom_log_raw(msg);
    loom_job_end(128 + sig);
}

/* Runs rank r's disposition of sig on the calling stack (r's ULT). */
static void run_handler(struct loom_rank *r, int sig, siginfo_t *si, void *uc)
{
    struct rank_sig *rs = rs_of(r);
    struct disp *d = &rs->act[sig];
    void *fn = atomic_load_explicit(&d->fn, memory_order_acquire);
    if (fn == (void *)SIG_IGN)
        return;
    if (fn == (void *)SIG_DFL) {
        if (default_ends(sig) || sig == SIGKILL)
            rank_killed(r, sig);
        return;
    }
    int flags = d->flags;
    uint64_t saved = rs->mask;
    if (rs->depth++ == 0)
        rs->outer_mask = saved;
    rs->mask |= d->mask | (flags & SA_NODEFER ? 0 : bit(sig));
    if (flags & SA_RESETHAND) {
        atomic_store_explicit(&d->fn, (void *)SIG_DFL, memory_order_relaxed);
        d->flags = 0;
    }
    int e = errno;
    if (flags & SA_SIGINFO) {
        ucontext_t ctx;
        if (!uc) {
            getcontext(&ctx);
            uc = &ctx;
        }
        ((void (*)(int, siginfo_t *, void *))fn)(sig, si, uc);
    } else {
        ((void (*)(int))fn)(sig);
    }
    errno = e;
    rs->mask = saved;
    rs->depth--;
    /* Release: a sleeper that sees the count sees the handler's writes. */
    atomic_fetch_add_explicit(&rs->handled, 1, memory_order_release);
}

/* Runs every pending signal of r that r does not block, lowest first. */
static void deliver(struct loom_rank *r, void *uc)
{
    struct rank_sig *rs = rs_of(r);
    for (;;) {
        /* Acquire: pairs with post's release (the info is written). */
        uint64_t ready = atomic_load_explicit(&rs->pending, memory_order_acquire) & ~rs->mask;
        if (!ready)
            return;
        int sig = __builtin_ctzll(ready) + 1;
        if (!(atomic_fetch_and_explicit(&rs->pending, ~bit(sig), memory_order_acq_rel) & bit(sig)))
            continue;
        siginfo_t si;
        fill_info(&si, sig, &rs->info[sig]);
        int depth = loom_mpi_wait_suspend(r);
        run_handler(r, sig, &si, uc);
        loom_mpi_wait_resume(r, depth);
    }
}

/* The attention hook: the calling ULT resumed with signals posted to it. */
static void on_attn(void)
{
    struct loom_rank *r = on_ult();
    if (r && r->state == LOOM_RANK_RUNNING)
        deliver(r, NULL);
}

static void futex_wake_all(_Atomic int *word)
{
    syscall(SYS_futex, (int *)word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* Makes worker w look at its running rank's signals. */
static void kick_worker(int w)
{
    if (S.tids && S.tids[w] > 0)
        syscall(SYS_tgkill, S.pid, S.tids[w], S.kick);
}

/* Marks sig pending for rank t with info in; returns whether it was new.
 * Normal context only (a lock, a wake). */
static bool post(int t, int sig, const struct sinfo *in)
{
    struct loom_rank *r = &loom_job.ranks[t];
    if (r->state == LOOM_RANK_DONE || !r->ult)
        return false;
    struct rank_sig *rs = &S.ranks[t];
    pthread_mutex_lock(&rs->lock);
    bool fresh = !(atomic_load_explicit(&rs->pending, memory_order_relaxed) & bit(sig));
    if (fresh) {
        rs->info[sig] = *in;
        /* Release: the info before the bit (deliver's acquire). */
        atomic_fetch_or_explicit(&rs->pending, bit(sig), memory_order_release);
    }
    pthread_mutex_unlock(&rs->lock);
    /* Blocked: sigprocmask delivers it once unblocked, or a sigwait of the
     * rank takes it (then wake it). */
    if ((bit(sig) & rs->mask) && !(bit(sig) & atomic_load(&rs->waiting)))
        return fresh;
    loom_ult_attn(r->ult);
    loom_ult_wake(r->ult);
    if (loom_sched_worker_self() != r->worker && loom_ult_is_running(r->ult))
        kick_worker(r->worker);
    return fresh;
}

/* Where the interrupted code was (ucontext's program counter). */
static uintptr_t pc_of(const void *ucv)
{
    const ucontext_t *uc = ucv;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

static uintptr_t loom_text_lo, loom_text_hi;

/* Whether the rank may run a handler where the kick interrupted it: not in
 * libloom (the scheduler, mid-switch). In a sanitizer build, only in the
 * program's own code (the sanitizer's fiber calls run mid-switch too). */
static bool safe_pc(const struct loom_rank *r, uintptr_t pc)
{
    if (pc >= loom_text_lo && pc < loom_text_hi)
        return false;
#if defined(LOOM_SANITIZE_address) || defined(LOOM_SANITIZE_thread)
    const struct rank_sig *rs = rs_of(r);
    return pc >= rs->text_lo && pc < rs->text_hi;
#else
    (void)r;
    return pc != 0;
#endif
}

/* Loom's kick: the worker's running rank may have signals to run now. */
static void kick_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si;
    int e = errno;
    struct loom_rank *r = on_ult();
    if (r && r->state == LOOM_RANK_RUNNING) {
        struct rank_sig *rs = rs_of(r);
        if ((atomic_load_explicit(&rs->pending, memory_order_acquire) & ~rs->mask) &&
            safe_pc(r, pc_of(uc))) {
            void *outer = rs->async_sp;
            if (!outer)
                rs->async_sp = __builtin_frame_address(0);
            deliver(r, uc);
            rs->async_sp = outer;
        }
    }
    errno = e;
}

bool loom_sig_may_park(void)
{
    struct loom_rank *r = on_ult();
    if (!r)
        return true;
    struct rank_sig *rs = rs_of(r);
    if (!rs->async_sp)
        return true;
    /* Below the frame of a kick-time delivery: inside a handler that
     * interrupted the rank anywhere, so it must not switch. Above it: that
     * handler left by longjmp. */
    if ((char *)__builtin_frame_address(0) < (char *)rs->async_sp)
        return false;
    rs->async_sp = NULL;
    return true;
}

void loom_sig_since_now(struct loom_sig_since *s)
{
    struct loom_rank *r = on_ult();
    static _Atomic unsigned none;
    s->count = r ? &rs_of(r)->handled : &none;
    s->start = atomic_load_explicit(s->count, memory_order_acquire);
}

bool loom_sig_handled_since(const void *arg)
{
    /* Only reads memory: the sleeper's worker calls it too (watched park). */
    const struct loom_sig_since *s = arg;
    return atomic_load_explicit(s->count, memory_order_acquire) != s->start;
}

void loom_sig_poll(void)
{
    struct loom_rank *r = on_ult();
    if (r && (atomic_load_explicit(&rs_of(r)->pending, memory_order_relaxed) & ~rs_of(r)->mask))
        deliver(r, NULL);
}

/* A signal aimed at rank t alone (raise, kill of its pid): runs at once
 * when t is the caller. */
static void to_rank(int t, int sig, int code)
{
    struct loom_rank *self = acting();
    struct sinfo in = {.code = code, .pid = self ? vpid_of(self->rank) : S.pid, .uid = getuid()};
    post(t, sig, &in);
    struct loom_rank *me = on_ult();
    if (me && me->rank == t)
        deliver(me, NULL);
}

/* ---- process-directed signals ---------------------------------------------- */

static LOOM_NORETURN void job_killed(int sig)
{
    char msg[160], *p = msg;
    p = stpcpy(p, "loom: mpiexec received signal ");
    p = loom_fmt_long(p, sig);
    const char *d = sigdescr_np(sig);
    if (d) {
        p = stpcpy(p, " (");
        p = stpcpy(p, d);
        p = stpcpy(p, ")");
    }
    stpcpy(p, "; ending the job\n");
    loom_log_raw(msg);
    loom_job_end(128 + sig);
}

/* A signal to the process: to every live rank with a handler, unless a live
 * rank would die of it (then the job ends). */
static void dispatch_process(int sig, const struct sinfo *in)
{
    bool ends = false;
    for (int t = 0; t < S.nranks && !ends; t++) {
        if (loom_job.ranks[t].state == LOOM_RANK_DONE)
            continue;
        void *fn = atomic_load_explicit(&S.ranks[t].act[sig].fn, memory_order_acquire);
        ends = fn == (void *)SIG_DFL && default_ends(sig);
    }
    if (ends)
        job_killed(sig);
    for (int t = 0; t < S.nranks; t++) {
        void *fn = atomic_load_explicit(&S.ranks[t].act[sig].fn, memory_order_acquire);
        if (fn != (void *)SIG_DFL && fn != (void *)SIG_IGN)
            post(t, sig, in);
    }
}

static void wake_thread(void)
{
    atomic_fetch_add_explicit(&S.seq, 1, memory_order_seq_cst);
    futex_wake_all(&S.seq);
}

/* Sync: a signal the running rank caused (SIGPIPE, a glibc raise): its
 * disposition runs here. Async-signal-safe. */
static void sync_to_running(struct loom_rank *r, int sig, siginfo_t *si, void *uc)
{
    struct rank_sig *rs = rs_of(r);
    void *fn = atomic_load_explicit(&rs->act[sig].fn, memory_order_acquire);
    if (fn == (void *)SIG_IGN)
        return;
    if (rs->mask & bit(sig)) {
        rs->info[sig] = (struct sinfo){.code = si->si_code, .pid = si->si_pid, .uid = si->si_uid};
        atomic_fetch_or_explicit(&rs->pending, bit(sig), memory_order_release);
        return;
    }
    run_handler(r, sig, si, uc);
}

/* The process-level handler of the signals that ranks handle. */
static void forwarder(int sig, siginfo_t *si, void *uc)
{
    int e = errno;
    struct loom_rank *r = on_ult();
    if (r && r->state == LOOM_RANK_RUNNING && (si->si_code == SI_USER || si->si_code == SI_TKILL) &&
        si->si_pid == S.pid) {
        /* Loom sends no process signals to itself (a rank's kill of the
         * real pid is dispatched directly): this one the rank caused. */
        sync_to_running(r, sig, si, uc);
    } else {
        S.arrived_info[sig] = (struct sinfo){
            .code = si->si_code, .pid = si->si_pid, .uid = si->si_uid, .value = si->si_value};
        atomic_fetch_or_explicit(&S.arrived, bit(sig), memory_order_release);
        wake_thread();
    }
    errno = e;
}

bool loom_sig_fault(int sig, void *siv, void *uc)
{
    siginfo_t *si = siv;
    struct loom_rank *r = on_ult();
    if (!r || r->state != LOOM_RANK_RUNNING || !is_fault(sig))
        return false;
    struct rank_sig *rs = rs_of(r);
    void *fn = atomic_load_explicit(&rs->act[sig].fn, memory_order_acquire);
    if (fn == (void *)SIG_DFL || fn == (void *)SIG_IGN || (rs->mask & bit(sig)))
        return false;
    run_handler(r, sig, si, uc);
    /* abort() cannot go on after its handler returns: report it. */
    return sig != SIGABRT;
}

static void start_thread(void);
static void text_of(const void *addr, uintptr_t *lo_p, uintptr_t *hi_p);

/* Makes sig's process-level handler the forwarder (once). */
static void forward(int sig)
{
    if (is_fault(sig) || (atomic_load(&S.forwarded) & bit(sig)))
        return;
    /* SIGQUIT from outside prints the job's state; a rank's handler still
     * runs for the SIGQUIT a rank raises. */
    if (sig == SIGQUIT && loom_state_sigquit_taken())
        return;
    start_thread();
    pthread_mutex_lock(&S.install_lock);
    if (!(atomic_load(&S.forwarded) & bit(sig))) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = forwarder;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        LIBC(sigaction)(sig, &sa, NULL);
        atomic_fetch_or(&S.forwarded, bit(sig));
    }
    pthread_mutex_unlock(&S.install_lock);
}

/* ---- the calls: handlers and masks ------------------------------------------ */

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    struct loom_rank *r = acting();
    if (!r)
        return LIBC(sigaction)(sig, act, old);
    /* SIGKILL and SIGSTOP may be read, not set (as the kernel). */
    bool query_only = sig == SIGKILL || sig == SIGSTOP;
    if ((reserved(sig) && !query_only) || (act && query_only)) {
        errno = EINVAL;
        return -1;
    }
    struct disp *d = &rs_of(r)->act[sig];
    struct sigaction prev;
    memset(&prev, 0, sizeof prev);
    prev.sa_sigaction = (void (*)(int, siginfo_t *, void *))atomic_load(&d->fn);
    prev.sa_flags = d->flags;
    bits_set(d->mask, &prev.sa_mask);
    if (act) {
        void *fn = act->sa_flags & SA_SIGINFO ? (void *)act->sa_sigaction : (void *)act->sa_handler;
        d->flags = act->sa_flags;
        d->mask = set_bits(&act->sa_mask) & ~(bit(SIGKILL) | bit(SIGSTOP));
        /* Release: flags and mask before the handler that uses them. */
        atomic_store_explicit(&d->fn, fn, memory_order_release);
        if (fn != (void *)SIG_DFL)
            forward(sig);
        struct rank_sig *rs = rs_of(r);
        if (!rs->text_hi)
            (void)loom_image_text(r, &rs->text_lo, &rs->text_hi);
    }
    if (old)
        *old = prev;
    return 0;
}

sighandler_t signal(int sig, sighandler_t handler)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART; /* glibc's BSD semantics */
    sigemptyset(&sa.sa_mask);
    if (sig > 0 && sig < NSIGS)
        sigaddset(&sa.sa_mask, sig);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

/* The rank's mask: how/set as sigprocmask; pending signals it unblocks run
 * before the call returns. */
static int rank_mask(struct loom_rank *r, int how, const sigset_t *set, sigset_t *old)
{
    struct rank_sig *rs = rs_of(r);
    uint64_t prev = rs->mask;
    if (set) {
        uint64_t b = set_bits(set) & ~(bit(SIGKILL) | bit(SIGSTOP));
        if (how == SIG_BLOCK)
            rs->mask |= b;
        else if (how == SIG_UNBLOCK)
            rs->mask &= ~b;
        else if (how == SIG_SETMASK)
            rs->mask = b;
        else
            return EINVAL;
    }
    if (old)
        bits_set(prev, old);
    if (set)
        deliver(r, NULL);
    return 0;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    struct loom_rank *r = on_ult();
    if (!r)
        return LIBC(sigprocmask)(how, set, old);
    int rc = rank_mask(r, how, set, old);
    if (rc) {
        errno = rc;
        return -1;
    }
    return 0;
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    struct loom_rank *r = on_ult();
    if (!r)
        return LIBC(pthread_sigmask)(how, set, old);
    return rank_mask(r, how, set, old);
}

int sigpending(sigset_t *set)
{
    struct loom_rank *r = on_ult();
    if (!r)
        return LIBC(sigpending)(set);
    struct rank_sig *rs = rs_of(r);
    bits_set(atomic_load(&rs->pending) & rs->mask, set);
    return 0;
}

/* Parks the rank until one of its handlers ran. */
static void wait_handler(struct loom_rank *r)
{
    struct loom_sig_since since;
    loom_sig_since_now(&since);
    deliver(r, NULL);
    while (!loom_sig_handled_since(&since))
        loom_ult_sleep_or(UINT64_MAX, loom_sig_handled_since, &since);
}

int sigsuspend(const sigset_t *mask)
{
    struct loom_rank *r = on_ult();
    if (!r || !loom_sig_may_park())
        return LIBC(sigsuspend)(mask);
    struct rank_sig *rs = rs_of(r);
    uint64_t saved = rs->mask;
    rs->mask = set_bits(mask) & ~(bit(SIGKILL) | bit(SIGSTOP));
    wait_handler(r);
    rs->mask = saved;
    deliver(r, NULL);
    errno = EINTR;
    return -1;
}

int pause(void)
{
    struct loom_rank *r = on_ult();
    if (!r || !loom_sig_may_park())
        return LIBC(pause)();
    wait_handler(r);
    errno = EINTR;
    return -1;
}

static uint64_t mono_ns(void);
static uint64_t ts_ns(const struct timespec *t);
static bool ts_valid(const struct timespec *t);

/* Takes one of the rank's pending signals in want (lowest first) into info;
 * 0 if none. */
static int take_pending(struct loom_rank *r, uint64_t want, siginfo_t *info)
{
    struct rank_sig *rs = rs_of(r);
    for (;;) {
        uint64_t ready = atomic_load_explicit(&rs->pending, memory_order_acquire) & want;
        if (!ready)
            return 0;
        int sig = __builtin_ctzll(ready) + 1;
        if (!(atomic_fetch_and_explicit(&rs->pending, ~bit(sig), memory_order_acq_rel) & bit(sig)))
            continue;
        if (info)
            fill_info(info, sig, &rs->info[sig]);
        return sig;
    }
}

struct wait_arg {
    struct rank_sig *rs;
    uint64_t want;
    struct loom_sig_since since;
};

static bool wait_done(const void *arg)
{
    const struct wait_arg *a = arg;
    return (atomic_load_explicit(&a->rs->pending, memory_order_acquire) & a->want) ||
           loom_sig_handled_since(&a->since);
}

int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
    struct loom_rank *r = on_ult();
    if (!r || !loom_sig_may_park())
        return LIBC(sigtimedwait)(set, info, timeout);
    if (timeout && !ts_valid(timeout)) {
        errno = EINVAL;
        return -1;
    }
    struct rank_sig *rs = rs_of(r);
    struct wait_arg a = {rs, set_bits(set) & ~(bit(SIGKILL) | bit(SIGSTOP) | bit(S.kick)), {0}};
    uint64_t deadline = timeout ? mono_ns() + ts_ns(timeout) : UINT64_MAX;
    int sig = 0;
    atomic_fetch_or(&rs->waiting, a.want);
    for (;;) {
        loom_sig_since_now(&a.since);
        if ((sig = take_pending(r, a.want, info)) != 0)
            break;
        /* An unblocked signal outside the set runs its handler: EINTR. */
        deliver(r, NULL);
        if (loom_sig_handled_since(&a.since)) {
            errno = EINTR;
            break;
        }
        uint64_t now = mono_ns();
        if (now >= deadline) {
            errno = EAGAIN;
            break;
        }
        loom_ult_sleep_or(deadline == UINT64_MAX ? UINT64_MAX : deadline - now, wait_done, &a);
    }
    atomic_fetch_and(&rs->waiting, ~a.want);
    return sig ? sig : -1;
}

int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    return sigtimedwait(set, info, NULL);
}

int sigwait(const sigset_t *set, int *sig)
{
    struct loom_rank *r = on_ult();
    if (!r || !loom_sig_may_park())
        return LIBC(sigwait)(set, sig);
    /* sigwait does not fail with EINTR: a handler that ran meanwhile does
     * not end it. */
    for (;;) {
        int e = errno, got = sigtimedwait(set, NULL, NULL);
        if (got > 0) {
            errno = e;
            *sig = got;
            return 0;
        }
        if (errno != EINTR)
            return errno;
        errno = e;
    }
}

/* The rank's blocked set when it leaves its handlers by longjmp with a saved
 * mask (siglongjmp after sigsetjmp(env, 1)): the one before them. */
static void left_handlers(struct __jmp_buf_tag *env)
{
    struct loom_rank *r = on_ult();
    if (!r)
        return;
    struct rank_sig *rs = rs_of(r);
    if (rs->depth > 0 && env->__mask_was_saved)
        rs->mask = rs->outer_mask;
    if (rs->depth > 0)
        rs->depth = 0;
}

void longjmp(struct __jmp_buf_tag env[1], int val)
{
    left_handlers(env);
    LIBC(longjmp)(env, val);
    __builtin_unreachable();
}

void siglongjmp(struct __jmp_buf_tag env[1], int val)
{
    left_handlers(env);
    LIBC(siglongjmp)(env, val);
    __builtin_unreachable();
}

void _longjmp(struct __jmp_buf_tag env[1], int val)
{
    left_handlers(env);
    LIBC(_longjmp)(env, val);
    __builtin_unreachable();
}

void __longjmp_chk(struct __jmp_buf_tag env[1], int val)
{
    left_handlers(env);
    LIBC(longjmp_chk)(env, val);
    __builtin_unreachable();
}

/* ---- the calls: sending -------------------------------------------------- */

int raise(int sig)
{
    struct loom_rank *r = on_ult();
    if (!r)
        return LIBC(raise)(sig);
    if (sig < 0 || sig >= NSIGS || sig == S.kick) {
        errno = EINVAL;
        return -1;
    }
    if (sig)
        to_rank(r->rank, sig, SI_TKILL);
    return 0;
}

int kill(pid_t pid, int sig)
{
    struct loom_rank *r = acting();
    if (!r)
        return LIBC(kill)(pid, sig);
    if (sig < 0 || sig >= NSIGS || (sig && sig == S.kick)) {
        errno = EINVAL;
        return -1;
    }
    int t = rank_of_vpid(pid);
    if (t >= 0) {
        if (loom_job.ranks[t].state == LOOM_RANK_DONE) {
            errno = ESRCH;
            return -1;
        }
        if (sig)
            to_rank(t, sig, SI_USER);
        return 0;
    }
    if (pid == S.pid && sig) {
        /* The whole job's process: what a kill from outside does. */
        struct sinfo in = {.code = SI_USER, .pid = vpid_of(r->rank), .uid = getuid()};
        if (sig == SIGKILL || sig == SIGSTOP || sig == SIGCONT)
            return LIBC(kill)(pid, sig);
        dispatch_process(sig, &in);
        loom_sig_poll();
        return 0;
    }
    return LIBC(kill)(pid, sig);
}

/* ---- timers ------------------------------------------------------------------ */

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t ts_ns(const struct timespec *t)
{
    return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

static struct timespec ns_ts(uint64_t ns)
{
    return (struct timespec){(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
}

static struct timeval ns_tv(uint64_t ns)
{
    /* Round up, as the kernel reports a timer that has not expired. */
    uint64_t us = (ns + 999) / 1000;
    return (struct timeval){(time_t)(us / 1000000u), (suseconds_t)(us % 1000000u)};
}

static bool tv_valid(const struct timeval *t)
{
    return t->tv_sec >= 0 && t->tv_usec >= 0 && t->tv_usec < 1000000;
}

static bool ts_valid(const struct timespec *t)
{
    return t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < 1000000000L;
}

/* A free timer slot's index, under S.lock; -1 without memory. */
static int timer_new(void)
{
    for (int i = 0; i < S.ntimers; i++)
        if (!S.timers[i].used)
            return i;
    int n = S.ntimers ? S.ntimers * 2 : 64;
    struct timer *t = realloc(S.timers, (size_t)n * sizeof *t);
    if (!t)
        return -1;
    memset(t + S.ntimers, 0, (size_t)(n - S.ntimers) * sizeof *t);
    S.timers = t;
    int i = S.ntimers;
    S.ntimers = n;
    return i;
}

/* Sets timer i (under S.lock): value ns from now (0 disarms), interval. */
static void timer_arm(struct timer *t, uint64_t value, uint64_t interval)
{
    t->armed = value != 0;
    t->next = value ? mono_ns() + value : 0;
    t->interval = interval;
    t->overrun = 0;
}

static uint64_t timer_left(const struct timer *t)
{
    if (!t->armed)
        return 0;
    uint64_t now = mono_ns();
    return t->next > now ? t->next - now : 1;
}

/* The rank's ITIMER_REAL, created on first use (under S.lock). */
static struct timer *alarm_of(struct loom_rank *r)
{
    struct rank_sig *rs = rs_of(r);
    if (!rs->alarm) {
        int i = timer_new();
        if (i < 0)
            return NULL;
        S.timers[i] = (struct timer){.used = true,
                                     .is_alarm = true,
                                     .rank = r->rank,
                                     .clock = CLOCK_MONOTONIC,
                                     .sig = SIGALRM};
        rs->alarm = i + 1;
    }
    return &S.timers[rs->alarm - 1];
}

/* ---- CPU-time timers: ITIMER_VIRTUAL and ITIMER_PROF ---------------------------
 *
 * A rank's CPU time for these is sampled, as kernels once did with their
 * tick: while any rank has one armed, Loom's signal thread looks every
 * CPU_SAMPLE_NS at which rank each worker runs and charges the time since
 * its last look to that rank (a rank parked, ready but not running, or on an
 * idle worker is not charged). Both timers count the same time (the rank's
 * user and system time are not told apart); SIGVTALRM and SIGPROF go to the
 * rank whose timer expired, as SI_KERNEL signals. */
#define CPU_SAMPLE_NS (1000 * 1000ull)

static int cpu_timer_set(struct loom_rank *r, int k, const struct itimerval *val,
                         struct itimerval *old)
{
    struct rank_sig *rs = rs_of(r);
    start_thread();
    pthread_mutex_lock(&S.lock);
    bool was = rs->cpu_next[0] || rs->cpu_next[1];
    if (old) {
        uint64_t left = rs->cpu_next[k] > rs->cpu_ns ? rs->cpu_next[k] - rs->cpu_ns : 0;
        /* Armed but due: a sample will fire it; say 1 us as the kernel does. */
        if (rs->cpu_next[k] && !left)
            left = 1000;
        *old = (struct itimerval){.it_interval = ns_tv(rs->cpu_interval[k]),
                                  .it_value = ns_tv(rs->cpu_next[k] ? left : 0)};
    }
    if (val) {
        uint64_t v =
            (uint64_t)val->it_value.tv_sec * 1000000000u + (uint64_t)val->it_value.tv_usec * 1000u;
        uint64_t iv = (uint64_t)val->it_interval.tv_sec * 1000000000u +
                      (uint64_t)val->it_interval.tv_usec * 1000u;
        rs->cpu_next[k] = v ? rs->cpu_ns + v : 0;
        rs->cpu_interval[k] = iv;
        bool now = rs->cpu_next[0] || rs->cpu_next[1];
        S.cpu_armed += (int)now - (int)was;
        if (now && !was && S.cpu_armed == 1)
            S.cpu_last = mono_ns();
    }
    pthread_mutex_unlock(&S.lock);
    if (val)
        wake_thread();
    return 0;
}

/* Charges the time since the last sample to the rank each worker runs and
 * fires the CPU timers that expired (under S.lock); returns when to sample
 * next. */
static uint64_t sample_cpu(uint64_t now)
{
    if (!S.cpu_armed)
        return UINT64_MAX;
    uint64_t dt = now > S.cpu_last ? now - S.cpu_last : 0;
    S.cpu_last = now;
    for (int w = 0; w < S.nworkers; w++) {
        struct loom_ult *u = loom_sched_running(w);
        struct loom_rank *r = u ? loom_ult_get_data(u) : NULL;
        if (!r || r->rank < 0 || r->rank >= S.nranks)
            continue;
        struct rank_sig *rs = &S.ranks[r->rank];
        if (!rs->cpu_next[0] && !rs->cpu_next[1])
            continue;
        rs->cpu_ns += dt;
        for (int k = 0; k < 2; k++) {
            if (!rs->cpu_next[k] || rs->cpu_ns < rs->cpu_next[k])
                continue;
            struct sinfo in = {.code = SI_KERNEL};
            post(r->rank, k ? SIGPROF : SIGVTALRM, &in);
            if (rs->cpu_interval[k]) {
                uint64_t missed = (rs->cpu_ns - rs->cpu_next[k]) / rs->cpu_interval[k];
                rs->cpu_next[k] += (missed + 1) * rs->cpu_interval[k];
            } else {
                rs->cpu_next[k] = 0;
                if (!rs->cpu_next[1 - k])
                    S.cpu_armed--;
            }
        }
    }
    return now + CPU_SAMPLE_NS;
}

int setitimer(__itimer_which_t which, const struct itimerval *val, struct itimerval *old)
{
    struct loom_rank *r = acting();
    if (!r)
        return LIBC(setitimer)(which, val, old);
    if ((val && (!tv_valid(&val->it_value) || !tv_valid(&val->it_interval))) ||
        (which != ITIMER_REAL && which != ITIMER_VIRTUAL && which != ITIMER_PROF)) {
        errno = EINVAL;
        return -1;
    }
    if (which != ITIMER_REAL)
        return cpu_timer_set(r, which == ITIMER_PROF, val, old);
    start_thread();
    pthread_mutex_lock(&S.lock);
    struct timer *t = alarm_of(r);
    if (!t) {
        pthread_mutex_unlock(&S.lock);
        errno = ENOMEM;
        return -1;
    }
    if (old)
        *old =
            (struct itimerval){.it_interval = ns_tv(t->interval), .it_value = ns_tv(timer_left(t))};
    if (val) {
        uint64_t v =
            (uint64_t)val->it_value.tv_sec * 1000000000u + (uint64_t)val->it_value.tv_usec * 1000u;
        uint64_t iv = (uint64_t)val->it_interval.tv_sec * 1000000000u +
                      (uint64_t)val->it_interval.tv_usec * 1000u;
        timer_arm(t, v, iv);
    }
    pthread_mutex_unlock(&S.lock);
    if (val)
        wake_thread();
    return 0;
}

int getitimer(__itimer_which_t which, struct itimerval *val)
{
    struct loom_rank *r = acting();
    if (!r)
        return LIBC(getitimer)(which, val);
    if (which != ITIMER_REAL) {
        if (which != ITIMER_VIRTUAL && which != ITIMER_PROF) {
            errno = EINVAL;
            return -1;
        }
        return cpu_timer_set(r, which == ITIMER_PROF, NULL, val);
    }
    return setitimer(ITIMER_REAL, NULL, val);
}

unsigned int alarm(unsigned int seconds)
{
    if (!acting())
        return LIBC(alarm)(seconds);
    struct itimerval v = {.it_value = {(time_t)seconds, 0}}, old;
    if (setitimer(ITIMER_REAL, &v, &old) != 0)
        return 0;
    /* As the kernel: rounded to the nearest second, at least 1 if armed. */
    unsigned left = (unsigned)old.it_value.tv_sec;
    if ((!left && old.it_value.tv_usec) || old.it_value.tv_usec >= 500000)
        left++;
    return left;
}

static bool wall_clock(clockid_t c)
{
    return c == CLOCK_REALTIME || c == CLOCK_MONOTONIC || c == CLOCK_BOOTTIME;
}

static bool ours(timer_t id)
{
    return ((uintptr_t)id & ~(uintptr_t)0xffffffffu) == TIMER_TAG;
}

/* Our timer id's slot (under S.lock), or NULL (EINVAL). */
static struct timer *timer_of(timer_t id)
{
    uintptr_t i = (uintptr_t)id & 0xffffffffu;
    struct loom_rank *r = acting();
    if (i >= (uintptr_t)S.ntimers || !S.timers[i].used || S.timers[i].is_alarm || !r ||
        S.timers[i].rank != r->rank)
        return NULL;
    return &S.timers[i];
}

int timer_create(clockid_t clock, struct sigevent *sev, timer_t *id)
{
    struct loom_rank *r = acting();
    if (!r || !wall_clock(clock) ||
        (sev && sev->sigev_notify != SIGEV_SIGNAL && sev->sigev_notify != SIGEV_NONE))
        return LIBC(timer_create)(clock, sev, id);
    int sig = sev ? (sev->sigev_notify == SIGEV_NONE ? 0 : sev->sigev_signo) : SIGALRM;
    if (sig && reserved(sig)) {
        errno = EINVAL;
        return -1;
    }
    start_thread();
    pthread_mutex_lock(&S.lock);
    int i = timer_new();
    if (i < 0) {
        pthread_mutex_unlock(&S.lock);
        errno = EAGAIN;
        return -1;
    }
    S.timers[i] = (struct timer){.used = true, .rank = r->rank, .clock = clock, .sig = sig};
    *id = (timer_t)(TIMER_TAG | (uintptr_t)i);
    /* Without a sigevent, the value is the timer's id (as the kernel). */
    S.timers[i].value = sev ? sev->sigev_value : (union sigval){.sival_ptr = *id};
    pthread_mutex_unlock(&S.lock);
    return 0;
}

int timer_settime(timer_t id, int flags, const struct itimerspec *val, struct itimerspec *old)
{
    if (!ours(id))
        return LIBC(timer_settime)(id, flags, val, old);
    if (!val || !ts_valid(&val->it_value) || !ts_valid(&val->it_interval)) {
        errno = val ? EINVAL : EFAULT;
        return -1;
    }
    pthread_mutex_lock(&S.lock);
    struct timer *t = timer_of(id);
    if (!t) {
        pthread_mutex_unlock(&S.lock);
        errno = EINVAL;
        return -1;
    }
    if (old)
        *old = (struct itimerspec){ns_ts(t->interval), ns_ts(timer_left(t))};
    uint64_t v = ts_ns(&val->it_value);
    if (v && (flags & TIMER_ABSTIME)) {
        struct timespec now;
        clock_gettime(t->clock, &now);
        uint64_t n = ts_ns(&now);
        v = v > n ? v - n : 1;
    }
    timer_arm(t, v, ts_ns(&val->it_interval));
    pthread_mutex_unlock(&S.lock);
    wake_thread();
    return 0;
}

int timer_gettime(timer_t id, struct itimerspec *val)
{
    if (!ours(id))
        return LIBC(timer_gettime)(id, val);
    pthread_mutex_lock(&S.lock);
    struct timer *t = timer_of(id);
    if (t)
        *val = (struct itimerspec){ns_ts(t->interval), ns_ts(timer_left(t))};
    pthread_mutex_unlock(&S.lock);
    if (!t)
        errno = EINVAL;
    return t ? 0 : -1;
}

int timer_getoverrun(timer_t id)
{
    if (!ours(id))
        return LIBC(timer_getoverrun)(id);
    pthread_mutex_lock(&S.lock);
    struct timer *t = timer_of(id);
    int n = t ? t->last_overrun : -1;
    pthread_mutex_unlock(&S.lock);
    if (!t)
        errno = EINVAL;
    return n;
}

int timer_delete(timer_t id)
{
    if (!ours(id))
        return LIBC(timer_delete)(id);
    pthread_mutex_lock(&S.lock);
    struct timer *t = timer_of(id);
    if (t)
        t->used = t->armed = false;
    pthread_mutex_unlock(&S.lock);
    if (!t)
        errno = EINVAL;
    return t ? 0 : -1;
}

/* Fires every due timer (under S.lock); returns the earliest expiry left. */
static uint64_t fire_timers(uint64_t now)
{
    uint64_t first = UINT64_MAX;
    for (int i = 0; i < S.ntimers; i++) {
        struct timer *t = &S.timers[i];
        if (!t->used || !t->armed)
            continue;
        if (t->next <= now) {
            uint64_t missed = 0;
            if (t->interval) {
                missed = (now - t->next) / t->interval;
                t->next += (missed + 1) * t->interval;
            } else {
                t->armed = false;
            }
            if (t->sig) {
                struct sinfo in = {.code = t->is_alarm ? SI_KERNEL : SI_TIMER,
                                   .value = t->value,
                                   .timerid = i,
                                   .overrun = t->overrun + (int)missed};
                t->last_overrun = in.overrun;
                if (post(t->rank, t->sig, &in))
                    t->overrun = 0;
                else
                    t->overrun += 1 + (int)missed;
            }
        }
        if (t->armed && t->next < first)
            first = t->next;
    }
    return first;
}

/* Loom's signal thread: timers, process-directed signals, re-kicks. */
static void *sig_thread(void *arg)
{
    (void)arg;
    for (;;) {
        int seq = atomic_load_explicit(&S.seq, memory_order_acquire);
        uint64_t arrived = atomic_exchange_explicit(&S.arrived, 0, memory_order_acquire);
        while (arrived) {
            int sig = __builtin_ctzll(arrived) + 1;
            arrived &= ~bit(sig);
            dispatch_process(sig, &S.arrived_info[sig]);
        }
        uint64_t now = mono_ns();
        pthread_mutex_lock(&S.lock);
        uint64_t first = fire_timers(now), cpu = sample_cpu(now);
        pthread_mutex_unlock(&S.lock);
        if (cpu < first)
            first = cpu;
        /* A running rank that its kick found inside libloom: look again. */
        bool waiting = false;
        for (int t = 0; t < S.nranks; t++) {
            struct loom_rank *r = &loom_job.ranks[t];
            struct rank_sig *rs = &S.ranks[t];
            if (r->state == LOOM_RANK_RUNNING &&
                (atomic_load_explicit(&rs->pending, memory_order_relaxed) & ~rs->mask) &&
                loom_ult_is_running(r->ult)) {
                kick_worker(r->worker);
                waiting = true;
            }
        }
        uint64_t wait = first == UINT64_MAX ? UINT64_MAX : (first > now ? first - now : 0);
        if (waiting && wait > 1000000)
            wait = 1000000;
        if (wait == 0)
            continue;
        struct timespec ts = ns_ts(wait);
        syscall(SYS_futex, (int *)&S.seq, FUTEX_WAIT_PRIVATE, seq, wait == UINT64_MAX ? NULL : &ts,
                NULL, 0);
    }
    return NULL;
}

static void thread_start_once(void)
{
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 * 1024);
    /* Every signal blocked: process-directed ones land on the workers. */
    sigset_t all, prev;
    sigfillset(&all);
    LIBC(pthread_sigmask)(SIG_SETMASK, &all, &prev);
    pthread_t t;
    if (pthread_create(&t, &a, sig_thread, NULL) != 0)
        loom_log_error("cannot start the thread of the ranks' timers and signals");
    else
        pthread_setname_np(t, "loom-sig");
    LIBC(pthread_sigmask)(SIG_SETMASK, &prev, NULL);
    pthread_attr_destroy(&a);
}

static void start_thread(void)
{
    pthread_once(&S.thread_once, thread_start_once);
}

/* ---- the job's hooks ---------------------------------------------------------- */

/* The text segment of the object that holds addr. */
static void text_of(const void *addr, uintptr_t *lo_p, uintptr_t *hi_p)
{
    Dl_info info;
    struct link_map *map;
    if (!dladdr1(addr, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return;
    const ElfW(Ehdr) *eh = info.dli_fbase;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
            *lo_p = map->l_addr + ph[i].p_vaddr;
            *hi_p = *lo_p + ph[i].p_memsz;
        }
}

int loom_sig_init(int nranks, int nworkers)
{
    S.ranks = NULL;
    struct rank_sig *ranks = aligned_alloc(LOOM_CACHE_LINE, (size_t)nranks * sizeof *ranks);
    S.tids = calloc((size_t)nworkers, sizeof(pid_t));
    if (!ranks || !S.tids) {
        free(ranks);
        return LOOM_ERR_NOMEM;
    }
    memset(ranks, 0, (size_t)nranks * sizeof *ranks);
    S.pid = (pid_t)syscall(SYS_getpid);
    S.pid_max = 4194304;
    FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
    if (f) {
        long v;
        if (fscanf(f, "%ld", &v) == 1 && v > 0)
            S.pid_max = v;
        fclose(f);
    }
    S.kick = SIGRTMAX;
    S.nworkers = nworkers;
    text_of((const void *)loom_sig_init, &loom_text_lo, &loom_text_hi);
    /* A rank starts with the process's ignored signals ignored (nohup). */
    uint64_t ignored = 0;
    for (int s = 1; s < NSIGS; s++) {
        struct sigaction old;
        if (!reserved(s) && LIBC(sigaction)(s, NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            ignored |= bit(s);
    }
    for (int t = 0; t < nranks; t++) {
        pthread_mutex_init(&ranks[t].lock, NULL);
        for (int s = 1; s < NSIGS; s++)
            if (ignored & bit(s))
                atomic_init(&ranks[t].act[s].fn, (void *)SIG_IGN);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = kick_handler;
    /* Restart: a kick must not fail a system call that a rank blocks in.
     * No defer: a handler the kick ran may leave by longjmp. */
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    LIBC(sigaction)(S.kick, &sa, NULL);
    loom_ult_set_attn_hook(on_attn);
    S.nranks = nranks;
    S.ranks = ranks;
    return LOOM_OK;
}

void loom_sig_worker_start(int w)
{
    if (S.tids && w >= 0 && w < S.nworkers)
        S.tids[w] = (pid_t)syscall(SYS_gettid);
}

void loom_sig_rank_end(struct loom_rank *r)
{
    if (!S.ranks)
        return;
    pthread_mutex_lock(&S.lock);
    for (int i = 0; i < S.ntimers; i++)
        if (S.timers[i].used && S.timers[i].rank == r->rank)
            S.timers[i].used = S.timers[i].armed = false;
    rs_of(r)->alarm = 0;
    pthread_mutex_unlock(&S.lock);
}
