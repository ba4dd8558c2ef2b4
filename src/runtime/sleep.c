/*
 * Sleeping and yielding park only the calling rank. In a process, sleep()
 * blocks the process's thread; under Loom a rank's thread is its worker, so
 * a rank in sleep(2) stalled every rank of its worker for 2 s. libloom
 * therefore defines the sleep family and sched_yield itself (it precedes
 * libc in the global lookup order, so this catches the program's calls and
 * those of the libraries it uses, std::this_thread::sleep_for included):
 * on a rank's ULT, a sleep parks the ULT with a deadline and the worker runs
 * the other ranks until it passes (loom_ult_sleep), and sched_yield lets
 * the worker's other ranks run; anywhere else (a program run directly, a
 * thread a rank started, Loom's own threads) they are libc's.
 *
 * A handler of the rank that runs while it sleeps (signal.c) interrupts the
 * sleep as in a process: sleep returns the seconds left, usleep and
 * nanosleep fail with EINTR (nanosleep's rem: the time left),
 * clock_nanosleep returns EINTR. Inside a handler that interrupted the rank
 * at an arbitrary point, the sleep is libc's (it must not switch there).
 * clock_nanosleep on a CPU-time clock stays libc's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "runtime/job.h"
#include "runtime/ult.h"
#include "util/common.h"

LOOM_EXPORT unsigned int sleep(unsigned int seconds);
LOOM_EXPORT int usleep(useconds_t usec);
LOOM_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem);
LOOM_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req,
                                struct timespec *rem);
LOOM_EXPORT int sched_yield(void);

/* libc's definitions (the next ones after libloom), found at load time. */
static unsigned int (*libc_sleep)(unsigned int);
static int (*libc_usleep)(useconds_t);
static int (*libc_nanosleep)(const struct timespec *, struct timespec *);
static int (*libc_clock_nanosleep)(clockid_t, int, const struct timespec *, struct timespec *);
static int (*libc_sched_yield)(void);

__attribute__((constructor)) static void find_libc(void)
{
    libc_sleep = (unsigned int (*)(unsigned int))dlsym(RTLD_NEXT, "sleep");
    libc_usleep = (int (*)(useconds_t))dlsym(RTLD_NEXT, "usleep");
    libc_nanosleep =
        (int (*)(const struct timespec *, struct timespec *))dlsym(RTLD_NEXT, "nanosleep");
    libc_clock_nanosleep = (int (*)(clockid_t, int, const struct timespec *,
                                    struct timespec *))dlsym(RTLD_NEXT, "clock_nanosleep");
    libc_sched_yield = (int (*)(void))dlsym(RTLD_NEXT, "sched_yield");
}

static bool on_ult(void)
{
    return loom_ult_self() != NULL;
}

static bool valid(const struct timespec *t)
{
    return t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < 1000000000L;
}

static uint64_t ns_of(const struct timespec *t)
{
    uint64_t s = (uint64_t)t->tv_sec;
    if (s > UINT64_MAX / 1000000000u - 1)
        return UINT64_MAX;
    return s * 1000000000u + (uint64_t)t->tv_nsec;
}

/* Parks the rank for ns unless one of its handlers runs meanwhile; false
 * where it cannot park (not a ULT, inside an interrupting handler). Sets
 * *left_p to the time left when a handler interrupted it, else 0. */
static bool park_ns(uint64_t ns, uint64_t *left_p)
{
    if (!on_ult() || !loom_sig_may_park())
        return false;
    struct loom_sig_since since;
    loom_sig_since_now(&since);
    uint64_t t0 = loom_time_ns();
    loom_sig_poll();
    if (!loom_sig_handled_since(&since))
        loom_ult_sleep_or(ns, loom_sig_handled_since, &since);
    *left_p = 0;
    if (loom_sig_handled_since(&since)) {
        uint64_t spent = loom_time_ns() - t0;
        *left_p = spent < ns ? ns - spent : 0;
    }
    return true;
}

static struct timespec ts_of(uint64_t ns)
{
    return (struct timespec){(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
}

unsigned int sleep(unsigned int seconds)
{
    uint64_t left;
    if (park_ns((uint64_t)seconds * 1000000000u, &left))
        /* Whole seconds left, as glibc's sleep (1.003 s into sleep(10): 8). */
        return (unsigned)(left / 1000000000u);
    return libc_sleep(seconds);
}

int usleep(useconds_t usec)
{
    uint64_t left;
    if (park_ns((uint64_t)usec * 1000u, &left)) {
        if (!left)
            return 0;
        errno = EINTR;
        return -1;
    }
    return libc_usleep(usec);
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (on_ult()) {
        if (!req || !valid(req)) {
            errno = req ? EINVAL : EFAULT;
            return -1;
        }
        uint64_t left;
        if (park_ns(ns_of(req), &left)) {
            if (!left)
                return 0;
            if (rem)
                *rem = ts_of(left);
            errno = EINTR;
            return -1;
        }
    }
    return libc_nanosleep(req, rem);
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem)
{
    bool wall = clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC || clock == CLOCK_BOOTTIME ||
                clock == CLOCK_TAI;
    if (on_ult() && wall) {
        if (!req)
            return EFAULT;
        if (!valid(req))
            return EINVAL;
        uint64_t ns = ns_of(req);
        if (flags & TIMER_ABSTIME) {
            struct timespec now;
            if (clock_gettime(clock, &now) != 0)
                return errno;
            uint64_t t = ns_of(&now);
            ns = ns > t ? ns - t : 0;
            if (ns == 0)
                return 0;
        }
        uint64_t left;
        if (park_ns(ns, &left)) {
            if (!left)
                return 0;
            if (rem && !(flags & TIMER_ABSTIME))
                *rem = ts_of(left);
            return EINTR;
        }
    }
    return libc_clock_nanosleep(clock, flags, req, rem);
}

int sched_yield(void)
{
    if (on_ult()) {
        loom_ult_yield();
        loom_sig_poll();
        return 0;
    }
    return libc_sched_yield();
}
