/*
 * loom_ult_wait/notify and yield: a condition set from another worker (after
 * the spin phase, so the waiter really parks), a waiter on a plain thread,
 * strict round-robin yield among ULTs of one worker, a lone ULT's yield and
 * wait returning without a switch, and loom_sched_others_ready.
 */
#include "ult_test.h"

#include <pthread.h>

static _Atomic long cond_val;
static loom_waiter_slot slot;
static long want;
static _Atomic long seen;
static long n_rounds;

static bool reached(const void *arg)
{
    (void)arg;
    return atomic_load(&cond_val) >= want;
}

static void waiter(void *arg)
{
    (void)arg;
    for (long i = 1; i <= n_rounds; i++) {
        want = i;
        loom_ult_wait(reached, NULL, &slot);
        if (atomic_load(&cond_val) < i)
            atomic_store(&seen, -1000000);
        else
            atomic_store(&seen, i);
    }
}

static void setter(void *arg)
{
    long delay = (long)arg;
    for (long i = 1; i <= n_rounds; i++) {
        ult_test_delay(i == 1 ? 20 * 1000 * 1000 : (i % 3) * delay);
        atomic_store(&cond_val, i);
        loom_ult_notify(&slot);
        while (atomic_load(&seen) != i && atomic_load(&seen) >= 0)
            loom_cpu_relax();
    }
}

static void test_wait_cross(void)
{
    ult_test_phase("wait across workers");
    atomic_store(&cond_val, 0);
    atomic_store(&seen, 0);
    atomic_store(&slot, NULL);
    n_rounds = ULT_TEST_SANITIZED ? 300 : 3000;
    ult_test_init(2, 5000, 1000);
    ult_test_spawn(waiter, NULL, 0, 64 * 1024);
    ult_test_spawn(setter, (void *)4000L, 1, 64 * 1024);
    loom_sched_run();
    CHECK_EQ(atomic_load(&seen), n_rounds);
    /* The first round lasted 20 ms, far past spin and idle spin: the waiter
     * parked and its worker slept. */
    CHECK(loom_sched_sleep_count(0) >= 1);
    loom_sched_fini();
}

/* A plain thread waiting on a condition a ULT sets. */
static void late_setter(void *arg)
{
    (void)arg;
    ult_test_delay(5 * 1000 * 1000);
    atomic_store(&cond_val, 1);
    loom_ult_notify(&slot);
}

static void *plain_waiter(void *arg)
{
    (void)arg;
    CHECK(loom_ult_self() == NULL);
    loom_ult_wait(reached, NULL, &slot);
    atomic_store(&seen, 1);
    return NULL;
}

static void test_wait_plain_thread(void)
{
    ult_test_phase("wait on a plain thread");
    atomic_store(&cond_val, 0);
    atomic_store(&seen, 0);
    atomic_store(&slot, NULL);
    want = 1;
    ult_test_init(1, -1, -1);
    ult_test_spawn(late_setter, NULL, 0, 64 * 1024);
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, plain_waiter, NULL) == 0);
    loom_sched_run();
    pthread_join(t, NULL);
    CHECK_EQ(atomic_load(&seen), 1);
    CHECK(atomic_load(&slot) == NULL); /* a plain thread never registers */
    loom_sched_fini();
}

/* Yield is strict round robin among the ready ULTs of a worker. */
#define NYIELD 8
static long seq;
static long out_of_turn;

static void yielder(void *arg)
{
    long me = (long)arg;
    for (long k = 0; k < 1000; k++) {
        if (seq != k * NYIELD + me)
            out_of_turn++;
        seq++;
        loom_ult_yield();
    }
}

static void test_yield_fairness(void)
{
    ult_test_phase("yield fairness");
    seq = 0;
    out_of_turn = 0;
    ult_test_init(1, -1, -1);
    for (long i = 0; i < NYIELD; i++)
        ult_test_spawn(yielder, (void *)i, 0, 64 * 1024);
    loom_sched_run();
    CHECK_EQ(seq, NYIELD * 1000);
    CHECK_EQ(out_of_turn, 0);
    loom_sched_fini();
}

/* A lone ULT: yield returns, others_ready is false, and a wait whose
 * condition turns true during the spin never parks (no sleep, no switch). */
static _Atomic int lone_ok;
static _Atomic int spin_flag;
static loom_waiter_slot lone_slot;

static bool spin_flag_set(const void *arg)
{
    (void)arg;
    return atomic_load(&spin_flag) != 0;
}

static void lone_waiter(void *arg)
{
    (void)arg;
    int ok = !loom_sched_others_ready();
    for (int i = 0; i < 1000; i++)
        loom_ult_yield();
    loom_ult_wait(spin_flag_set, NULL, &lone_slot);
    /* Never registered in the slot: it did not park. */
    ok = ok && atomic_load(&lone_slot) == NULL;
    atomic_store(&lone_ok, ok ? 1 : 2);
}

static void quick_setter(void *arg)
{
    (void)arg;
    ult_test_delay(200 * 1000);
    atomic_store(&spin_flag, 1);
    loom_ult_notify(&lone_slot);
}

static void helper(void *arg)
{
    (void)arg;
}

static void others_ready_probe(void *arg)
{
    (void)arg;
    /* helper was created on this worker after us and has not run yet. */
    atomic_store(&lone_ok, loom_sched_others_ready() ? 1 : 2);
}

static void test_lone(void)
{
    ult_test_phase("lone ULT");
    atomic_store(&lone_ok, 0);
    atomic_store(&spin_flag, 0);
    atomic_store(&lone_slot, NULL);
    /* Spin for up to 2 s (the setter needs 0.2 ms); the worker must not sleep. */
    ult_test_init(2, 2L * 1000 * 1000 * 1000, 10L * 1000 * 1000 * 1000);
    ult_test_spawn(lone_waiter, NULL, 0, 64 * 1024);
    ult_test_spawn(quick_setter, NULL, 1, 64 * 1024);
    loom_sched_run();
    CHECK_EQ(atomic_load(&lone_ok), 1);
    CHECK_EQ(loom_sched_sleep_count(0), 0);
    loom_sched_fini();

    atomic_store(&lone_ok, 0);
    ult_test_init(1, -1, -1);
    ult_test_spawn(others_ready_probe, NULL, 0, 64 * 1024);
    ult_test_spawn(helper, NULL, 0, 64 * 1024);
    loom_sched_run();
    CHECK_EQ(atomic_load(&lone_ok), 1);
    loom_sched_fini();
}

int main(void)
{
    ult_test_watchdog(45);
    test_wait_cross();
    test_wait_plain_thread();
    test_yield_fairness();
    test_lone();
    ult_test_phase("end");
    return check_summary();
}
