/*
 * Idle sleep: a worker with nothing to run polls briefly, then sleeps on its
 * futex; a wake from a plain pthread (not a worker) must bring the parked
 * ULT back, also when it races with the worker going to sleep. Cross-worker
 * ping-pong with no idle polling forces a futex sleep and wake-up on every
 * hop. Workers that sleep to the end are woken to stop.
 */
#include "ult_test.h"

#include <pthread.h>
#include <time.h>

static long rounds(long n)
{
    return ULT_TEST_SANITIZED ? n / 4 : n;
}

static _Atomic long go, ack;
static long n_rounds;
static struct loom_ult *target;
static _Atomic int wait_for_sleep;
static atomic_long sleeps_seen;

static void target_body(void *arg)
{
    (void)arg;
    for (long i = 1; i <= n_rounds; i++) {
        while (atomic_load(&go) < i)
            loom_ult_park();
        atomic_store(&ack, i);
    }
}

static void *plain_waker(void *arg)
{
    (void)arg;
    /* Worker 1 never gets work: it sleeps once its idle poll ends. Waiting
     * for that here makes the check below independent of how soon the OS
     * runs its thread (on 2 busy cores a short phase could end first); a
     * worker that never sleeps hangs the test into its watchdog. */
    while (loom_sched_sleep_count(1) < 1)
        sched_yield();
    for (long i = 1; i <= n_rounds; i++) {
        if (atomic_load(&wait_for_sleep)) {
            /* Wait until worker 0 sleeps on its futex (once per round: after
             * the target parked), then a bit more. */
            while (loom_sched_sleep_count(0) < (unsigned long)i)
                sched_yield();
            struct timespec ts = {0, 2 * 1000 * 1000};
            nanosleep(&ts, NULL);
            if (atomic_load(&ack) != i - 1) /* the target must still be parked */
                atomic_fetch_add(&sleeps_seen, 1000000);
            atomic_fetch_add(&sleeps_seen, 1);
        }
        atomic_store(&go, i);
        loom_ult_wake(target);
        while (atomic_load(&ack) < i)
            loom_cpu_relax();
    }
    return NULL;
}

static void test_plain_waker(int sleep_first, long n)
{
    ult_test_phase(sleep_first ? "wake a sleeping worker" : "wake racing with sleep");
    atomic_store(&go, 0);
    atomic_store(&ack, 0);
    atomic_store(&sleeps_seen, 0);
    atomic_store(&wait_for_sleep, sleep_first);
    n_rounds = n;
    ult_test_init(2, 0, sleep_first ? 1000 : 0);
    target = ult_test_spawn(target_body, NULL, 0, 64 * 1024);
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, plain_waker, NULL) == 0);
    loom_sched_run();
    pthread_join(t, NULL);
    CHECK_EQ(atomic_load(&ack), n);
    if (sleep_first) {
        CHECK_EQ(atomic_load(&sleeps_seen), n);
        CHECK(loom_sched_sleep_count(0) >= (unsigned long)n);
    }
    /* Worker 1 had nothing to do all along: it slept and was woken to stop. */
    CHECK(loom_sched_sleep_count(1) >= 1);
    loom_sched_fini();
}

/* Cross-worker ping-pong with idle_spin_ns = 0: each hop goes through a
 * futex sleep or the Dekker re-check. */
static _Atomic long turn;
static struct loom_ult *u0, *u1;

static void pp_body(void *arg)
{
    long me = (long)arg;
    struct loom_ult *peer = me ? u0 : u1;
    for (long i = 0; i < n_rounds; i++) {
        while (atomic_load(&turn) != 2 * i + me)
            loom_ult_park();
        atomic_store(&turn, 2 * i + me + 1);
        loom_ult_wake(peer);
    }
}

static void test_sleepy_pingpong(long n)
{
    ult_test_phase("sleepy ping-pong");
    atomic_store(&turn, 0);
    n_rounds = n;
    ult_test_init(2, 0, 0);
    u0 = ult_test_spawn(pp_body, (void *)0L, 0, 64 * 1024);
    u1 = ult_test_spawn(pp_body, (void *)1L, 1, 64 * 1024);
    loom_sched_run();
    CHECK_EQ(atomic_load(&turn), 2 * n);
    CHECK(loom_sched_sleep_count(0) + loom_sched_sleep_count(1) > 0);
    loom_sched_fini();
}

/* A scheduler whose only ULT finishes at once: every worker stops. */
static void nothing(void *arg)
{
    (void)arg;
}

static void test_empty(void)
{
    ult_test_phase("empty");
    ult_test_init(2, -1, 0);
    loom_sched_run(); /* no ULTs at all */
    loom_sched_fini();
    ult_test_init(2, -1, 0);
    ult_test_spawn(nothing, NULL, 1, 0);
    loom_sched_run();
    loom_sched_fini();
    ult_test_init(2, -1, 0);
    loom_sched_fini(); /* never ran */
}

int main(void)
{
    ult_test_watchdog(45);
    test_plain_waker(1, 20);
    test_plain_waker(0, rounds(20000));
    test_sleepy_pingpong(rounds(5000));
    test_empty();
    ult_test_phase("end");
    return check_summary();
}
