/*
 * Shared helpers of the ULT scheduler tests: starting a scheduler with a
 * given number of workers and a watchdog that turns a lost wake-up (a hang)
 * into a failure instead of a stuck test.
 */
#ifndef LOOM_TESTS_ULT_TEST_H
#define LOOM_TESTS_ULT_TEST_H

#include "check.h"
#include "runtime/ult.h"
#include "util/common.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#if defined(LOOM_SANITIZE_thread) || defined(LOOM_SANITIZE_address)
#define ULT_TEST_SANITIZED 1
#else
#define ULT_TEST_SANITIZED 0
#endif

static const char *ult_test_phase_ = "start";

static void ult_test_on_alarm_(int sig)
{
    (void)sig;
    static const char msg[] = "watchdog: test hung (lost wake-up?) in phase: ";
    ssize_t r = write(2, msg, sizeof msg - 1);
    r = write(2, ult_test_phase_, strlen(ult_test_phase_));
    r = write(2, "\n", 1);
    (void)r;
    _exit(1);
}

/* Names the phase the watchdog reports; with ULT_TEST_VERBOSE set, also
 * prints how long the previous phase took. */
static inline void ult_test_phase(const char *name)
{
    static uint64_t t0;
    uint64_t now = loom_time_ns();
    if (getenv("ULT_TEST_VERBOSE") && t0)
        fprintf(stderr, "%-40s %8.3f ms\n", ult_test_phase_, (double)(now - t0) / 1e6);
    t0 = now;
    ult_test_phase_ = name;
}

/* Fails the test if it is still running after `seconds`. */
static inline void ult_test_watchdog(unsigned seconds)
{
    signal(SIGALRM, ult_test_on_alarm_);
    alarm(seconds);
}

/* Starts a scheduler with nworkers workers (not pinned). */
static inline void ult_test_init(int nworkers, long spin_ns, long idle_spin_ns)
{
    struct loom_sched_params p;
    memset(&p, 0, sizeof p);
    p.nworkers = nworkers;
    p.spin_ns = spin_ns;
    p.idle_spin_ns = idle_spin_ns;
    REQUIRE(loom_sched_init(&p) == 0);
}

/* Creates a ULT or stops the test. */
static inline struct loom_ult *ult_test_spawn(loom_ult_fn fn, void *arg, int worker, size_t stack)
{
    struct loom_ult *u = NULL;
    REQUIRE(loom_ult_create(fn, arg, worker, stack, &u) == 0);
    REQUIRE(u != NULL);
    return u;
}

/* Spins about `ns` nanoseconds on the calling thread without switching. */
static inline void ult_test_delay(long ns)
{
    uint64_t t0 = loom_time_ns();
    while (loom_time_ns() - t0 < (uint64_t)ns)
        ;
}

#endif
