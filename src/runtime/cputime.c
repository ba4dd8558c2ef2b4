/*
 * A rank's CPU time is its own. In a process, clock(), times(),
 * getrusage(RUSAGE_SELF) and the CPU-time clocks count every thread; under
 * Loom that is every rank of the node, so a rank that spun 1 s read 1.98 s.
 * libloom therefore defines them itself (it precedes libc in the global
 * lookup order, as in sleep.c): on a rank's ULT they report the time that
 * ULT ran on its worker; anywhere else (a program run directly, a thread a
 * rank started, Loom's own threads) they are libc's.
 *
 * What a rank sees:
 *  - clock(), clock_gettime/clock_getres on CLOCK_PROCESS_CPUTIME_ID and
 *    CLOCK_THREAD_CPUTIME_ID (a rank is its own process and that process's
 *    only thread), times()'s tms_utime/tms_stime, and getrusage's
 *    ru_utime/ru_stime for RUSAGE_SELF and RUSAGE_THREAD: the rank's own.
 *    The rest of struct rusage and struct tms, and times()'s return value,
 *    stay the process's. Other CPU clocks (clock_getcpuclockid,
 *    pthread_getcpuclockid) stay the kernel's.
 *  - The count starts at the first such call of any rank (accounting costs
 *    a tick read per switch, so it is off until a program asks): each rank
 *    reads about 0 at first, as a fresh process does, and its own time from
 *    then on; what a rank ran before is not counted. Programs take
 *    differences, which are exact from the first call.
 *  - CPU time is the wall time the rank ran on its worker (ult.c charges
 *    each switch interval to the ULT that ran it), so time the OS took the
 *    worker away, and system calls that block the worker, count as the
 *    rank's. Reading the kernel's thread clock at each switch would avoid
 *    that but costs ~570 ns a switch against ~10 for the tick counter.
 *  - User and system shares: each call that reports both splits what the
 *    rank ran since its last such call in the process's current ratio, so
 *    both only grow and their sum is the rank's CPU time.
 *
 * clock_gettime is on every timing path of every program, so its fast path
 * is one compare before the jump to libc's (measured in the commit:
 * CLOCK_MONOTONIC costs the same within noise). Loom's own loom_time_ns
 * binds to this definition too (-Bsymbolic-functions) and pays that compare.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "runtime/ult.h"
#include "util/common.h"

LOOM_EXPORT clock_t clock(void);
LOOM_EXPORT int clock_gettime(clockid_t clk, struct timespec *tp);
LOOM_EXPORT int clock_getres(clockid_t clk, struct timespec *res);
LOOM_EXPORT clock_t times(struct tms *buf);
LOOM_EXPORT int getrusage(__rusage_who_t who, struct rusage *usage);

/* libc's definitions, found at first use: the pointers start at resolvers,
 * so that a call from a constructor that runs before ours still works and
 * the fast path tests nothing. Ranks on several workers may resolve at once
 * (the same value): relaxed atomics, plain moves on x86. */
#define LIBC(fn) __atomic_load_n(&(fn), __ATOMIC_RELAXED)
static int resolve_clock_gettime(clockid_t clk, struct timespec *tp);
static int resolve_clock_getres(clockid_t clk, struct timespec *res);
static clock_t resolve_clock(void);
static clock_t resolve_times(struct tms *buf);
static int resolve_getrusage(__rusage_who_t who, struct rusage *usage);
static int (*libc_clock_gettime)(clockid_t, struct timespec *) = resolve_clock_gettime;
static int (*libc_clock_getres)(clockid_t, struct timespec *) = resolve_clock_getres;
static clock_t (*libc_clock)(void) = resolve_clock;
static clock_t (*libc_times)(struct tms *) = resolve_times;
static int (*libc_getrusage)(__rusage_who_t, struct rusage *) = resolve_getrusage;

static int resolve_clock_gettime(clockid_t clk, struct timespec *tp)
{
    __atomic_store_n(&libc_clock_gettime,
                     (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime"),
                     __ATOMIC_RELAXED);
    return LIBC(libc_clock_gettime)(clk, tp);
}

static int resolve_clock_getres(clockid_t clk, struct timespec *res)
{
    __atomic_store_n(&libc_clock_getres,
                     (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_getres"),
                     __ATOMIC_RELAXED);
    return LIBC(libc_clock_getres)(clk, res);
}

static clock_t resolve_clock(void)
{
    __atomic_store_n(&libc_clock, (clock_t(*)(void))dlsym(RTLD_NEXT, "clock"), __ATOMIC_RELAXED);
    return LIBC(libc_clock)();
}

static clock_t resolve_times(struct tms *buf)
{
    __atomic_store_n(&libc_times, (clock_t(*)(struct tms *))dlsym(RTLD_NEXT, "times"),
                     __ATOMIC_RELAXED);
    return LIBC(libc_times)(buf);
}

static int resolve_getrusage(__rusage_who_t who, struct rusage *usage)
{
    __atomic_store_n(&libc_getrusage,
                     (int (*)(__rusage_who_t, struct rusage *))dlsym(RTLD_NEXT, "getrusage"),
                     __ATOMIC_RELAXED);
    return LIBC(libc_getrusage)(who, usage);
}

/* ---- the tick rate ---------------------------------------------------------- */

/* The counter and CLOCK_MONOTONIC at load time; the rate is measured over
 * the time from then to the start of accounting (at least 2 ms). */
static uint64_t load_ticks, load_ns;
static double ns_per_tick = 1.0;
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t mono_ns(void)
{
    struct timespec t;
    LIBC(libc_clock_gettime)(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

__attribute__((constructor)) static void note_load_time(void)
{
    load_ns = mono_ns();
    load_ticks = loom_cpu_ticks();
}

void loom_ult_cputime_start(void)
{
    if (LOOM_LIKELY(atomic_load_explicit(&loom_cpu_epoch, memory_order_relaxed)))
        return;
    pthread_mutex_lock(&start_lock);
    if (!atomic_load_explicit(&loom_cpu_epoch, memory_order_relaxed)) {
#if defined(__x86_64__)
        uint64_t ns, ticks;
        do {
            ns = mono_ns();
            ticks = loom_cpu_ticks();
        } while (ns - load_ns < 2000000 || ticks <= load_ticks);
        ns_per_tick = (double)(ns - load_ns) / (double)(ticks - load_ticks);
#elif defined(__aarch64__)
        uint64_t hz;
        __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(hz));
        ns_per_tick = hz ? 1e9 / (double)hz : 1.0;
#endif
        uint64_t epoch = loom_cpu_ticks();
        /* Release: the rate is visible to whoever sees the epoch. */
        atomic_store_explicit(&loom_cpu_epoch, epoch ? epoch : 1, memory_order_release);
    }
    pthread_mutex_unlock(&start_lock);
}

double loom_ult_cputime_ns_per_tick(void)
{
    return ns_per_tick;
}

/* ---- what a rank sees --------------------------------------------------------- */

/* The rank's user and system time in ns: split[0] and split[1] grow by
 * what it ran since its last call, in the ratio proc_user : proc_sys. */
static void split(uint64_t total, uint64_t *split, uint64_t proc_user, uint64_t proc_sys)
{
    uint64_t done = split[0] + split[1];
    if (total <= done)
        return;
    uint64_t more = total - done;
    uint64_t user =
        proc_user + proc_sys
            ? (uint64_t)((double)more * (double)proc_user / (double)(proc_user + proc_sys))
            : more;
    split[0] += user;
    split[1] += more - user;
}

static struct timeval tv_of(uint64_t ns)
{
    return (struct timeval){.tv_sec = (time_t)(ns / 1000000000u),
                            .tv_usec = (suseconds_t)(ns % 1000000000u / 1000u)};
}

static uint64_t ns_of_tv(struct timeval t)
{
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_usec * 1000u;
}

/* clock_gettime on a CPU-time clock (off the fast path). */
static LOOM_NOINLINE int cpu_clock_gettime(clockid_t clk, struct timespec *tp)
{
    uint64_t ns, *unused;
    if (!loom_ult_cputime_self(&ns, &unused))
        return LIBC(libc_clock_gettime)(clk, tp);
    tp->tv_sec = (time_t)(ns / 1000000000u);
    tp->tv_nsec = (long)(ns % 1000000000u);
    return 0;
}

/* Fast path: one compare, then a tail jump to libc's. */
int clock_gettime(clockid_t clk, struct timespec *tp)
{
    if (LOOM_UNLIKELY(clk == CLOCK_PROCESS_CPUTIME_ID || clk == CLOCK_THREAD_CPUTIME_ID))
        return cpu_clock_gettime(clk, tp);
    return LIBC(libc_clock_gettime)(clk, tp);
}

int clock_getres(clockid_t clk, struct timespec *res)
{
    if ((clk == CLOCK_PROCESS_CPUTIME_ID || clk == CLOCK_THREAD_CPUTIME_ID) &&
        loom_ult_self() != NULL) {
        /* Ticks are finer than a nanosecond: report what a timespec holds. */
        if (res)
            *res = (struct timespec){0, 1};
        return 0;
    }
    return LIBC(libc_clock_getres)(clk, res);
}

clock_t clock(void)
{
    uint64_t ns, *unused;
    if (loom_ult_cputime_self(&ns, &unused))
        return (clock_t)(ns / (1000000000u / CLOCKS_PER_SEC));
    return LIBC(libc_clock)();
}

clock_t times(struct tms *buf)
{
    clock_t r = LIBC(libc_times)(buf);
    uint64_t ns, *sp;
    if (r == (clock_t)-1 || !buf || !loom_ult_cputime_self(&ns, &sp))
        return r;
    split(ns, sp, (uint64_t)buf->tms_utime, (uint64_t)buf->tms_stime);
    uint64_t hz = (uint64_t)sysconf(_SC_CLK_TCK);
    buf->tms_utime = (clock_t)(sp[0] / (1000000000u / hz));
    buf->tms_stime = (clock_t)(sp[1] / (1000000000u / hz));
    return r;
}

int getrusage(__rusage_who_t who, struct rusage *usage)
{
    int r = LIBC(libc_getrusage)(who, usage);
    uint64_t ns, *sp;
    if (r != 0 || (who != RUSAGE_SELF && who != RUSAGE_THREAD) || !loom_ult_cputime_self(&ns, &sp))
        return r;
    split(ns, sp, ns_of_tv(usage->ru_utime), ns_of_tv(usage->ru_stime));
    usage->ru_utime = tv_of(sp[0]);
    usage->ru_stime = tv_of(sp[1]);
    return r;
}
