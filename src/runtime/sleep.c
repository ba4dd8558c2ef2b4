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
 * A parked sleep is not interrupted by signals (a rank's handlers do not run
 * on its ULT: docs/architecture.md), so it always sleeps the whole time and
 * reports nothing unslept. clock_nanosleep on a CPU-time clock stays libc's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

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

unsigned int sleep(unsigned int seconds)
{
    if (on_ult() && loom_ult_sleep((uint64_t)seconds * 1000000000u))
        return 0;
    return libc_sleep(seconds);
}

int usleep(useconds_t usec)
{
    if (on_ult() && loom_ult_sleep((uint64_t)usec * 1000u))
        return 0;
    return libc_usleep(usec);
}

int nanosleep(const struct timespec *req, struct timespec *rem)
{
    if (on_ult()) {
        if (!req || !valid(req)) {
            errno = req ? EINVAL : EFAULT;
            return -1;
        }
        if (loom_ult_sleep(ns_of(req)))
            return 0;
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
        if (loom_ult_sleep(ns))
            return 0;
    }
    return libc_clock_nanosleep(clock, flags, req, rem);
}

int sched_yield(void)
{
    if (on_ult()) {
        loom_ult_yield();
        return 0;
    }
    return libc_sched_yield();
}
