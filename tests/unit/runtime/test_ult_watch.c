/*
 * Watched parking: a notifier's look at the waiter slot may run before its
 * condition store is visible (notifiers do not fence), so a waiter can park
 * with no wake-up coming. Its worker must find it by re-checking the
 * condition: here the setter never notifies at all, which is the worst case
 * of that race, and the waiter must still return, both when its worker is
 * idle (the idle loop re-checks) and when the worker keeps running another
 * ULT that only yields (scheduling decisions re-check). With watched parking
 * off (no membarrier, or LOOM_LAZY_NOTIFY=0) every notifier fences and the
 * race cannot happen: the setter then notifies.
 *
 * loom_ult_wait_for: a waiter whose condition never comes true returns
 * false once its timeout has passed, on a worker asleep on its futex and on
 * a busy one; one whose condition comes true in time returns true.
 */
#include "ult_test.h"

static _Atomic long cond_val;
static loom_waiter_slot slot;
static _Atomic long want;
static _Atomic long seen;
static _Atomic int done_all;
static long n_rounds;

static bool reached(const void *arg)
{
    (void)arg;
    return atomic_load(&cond_val) >= atomic_load(&want);
}

static void waiter(void *arg)
{
    (void)arg;
    for (long i = 1; i <= n_rounds; i++) {
        atomic_store(&want, i);
        loom_ult_wait(reached, NULL, &slot);
        atomic_store(&seen, atomic_load(&cond_val) >= i ? i : -1000000);
    }
    atomic_store(&done_all, 1);
}

/* Sets the condition once the waiter has registered, and never notifies. */
static void silent_setter(void *arg)
{
    (void)arg;
    for (long i = 1; i <= n_rounds; i++) {
        while (atomic_load(&want) != i || !atomic_load(&slot))
            loom_cpu_relax();
        ult_test_delay(20 * 1000); /* the waiter is parked by now */
        atomic_store(&cond_val, i);
        if (!loom_lazy_notify)
            loom_ult_notify(&slot); /* notifiers fence: the race cannot happen */
        while (atomic_load(&seen) != i && atomic_load(&seen) >= 0)
            loom_cpu_relax();
    }
}

/* Keeps the waiter's worker busy: yields until the waiter is done. */
static void yielder(void *arg)
{
    (void)arg;
    while (!atomic_load(&done_all))
        loom_ult_yield();
}

static void run(bool busy)
{
    atomic_store(&cond_val, 0);
    atomic_store(&want, 0);
    atomic_store(&seen, 0);
    atomic_store(&done_all, 0);
    atomic_store(&slot, NULL);
    n_rounds = ULT_TEST_SANITIZED ? 50 : 500;
    /* No spinning: the waiter parks at once. A long idle spin: the worker
     * stays in its idle loop, where nothing but its re-check can find the
     * waiter. */
    ult_test_init(2, 0, 2 * 1000 * 1000 * 1000L);
    if (!loom_lazy_notify)
        fprintf(stderr, "watched parking is off here: the setter notifies\n");
    ult_test_spawn(waiter, NULL, 0, 64 * 1024);
    if (busy)
        ult_test_spawn(yielder, NULL, 0, 64 * 1024);
    ult_test_spawn(silent_setter, NULL, 1, 64 * 1024);
    loom_sched_run();
    CHECK_EQ(atomic_load(&seen), n_rounds);
    loom_sched_fini();
}

/* ---- loom_ult_wait_for: a deadline resumes a parked waiter ------------- */

static _Atomic int never;
static _Atomic long timed_out_ms, met_result;
static _Atomic int timed_done;

static bool is_set(const void *arg)
{
    return atomic_load((_Atomic int *)arg) != 0;
}

static void timed_waiter(void *arg)
{
    (void)arg;
    loom_waiter_slot s = NULL;
    uint64_t t0 = loom_time_ns();
    bool met = loom_ult_wait_for(is_set, &never, &s, 50 * 1000 * 1000);
    atomic_store(&timed_out_ms, met ? -1 : (long)((loom_time_ns() - t0) / 1000000));
    /* A condition that comes true before the deadline: true. */
    atomic_store(&met_result, loom_ult_wait_for(is_set, &cond_val, &slot, 5000000000ull) ? 1 : 0);
    atomic_store(&timed_done, 1);
}

static void late_setter(void *arg)
{
    (void)arg;
    while (!atomic_load(&timed_out_ms))
        loom_cpu_relax();
    ult_test_delay(10 * 1000 * 1000);
    atomic_store(&cond_val, 1);
    loom_ult_notify(&slot);
}

static void busy_until_timed_done(void *arg)
{
    (void)arg;
    while (!atomic_load(&timed_done))
        loom_ult_yield();
}

static void run_timed(bool busy)
{
    atomic_store(&cond_val, 0);
    atomic_store(&timed_out_ms, 0);
    atomic_store(&met_result, -1);
    atomic_store(&timed_done, 0);
    atomic_store(&slot, NULL);
    /* No spinning, a short idle spin: the idle worker sleeps on its futex,
     * where only its deadline tick can find the waiter. */
    ult_test_init(2, 0, 100 * 1000);
    ult_test_spawn(timed_waiter, NULL, 0, 64 * 1024);
    if (busy)
        ult_test_spawn(busy_until_timed_done, NULL, 0, 64 * 1024);
    ult_test_spawn(late_setter, NULL, 1, 64 * 1024);
    loom_sched_run();
    long ms = atomic_load(&timed_out_ms);
    CHECK(ms >= 50 && ms < 5000);
    CHECK_EQ(atomic_load(&met_result), 1);
    loom_sched_fini();
}

int main(void)
{
    ult_test_watchdog(60);
    ult_test_phase("unnotified condition, idle worker");
    run(false);
    ult_test_phase("unnotified condition, busy worker");
    run(true);
    ult_test_phase("timed wait, sleeping worker");
    run_timed(false);
    ult_test_phase("timed wait, busy worker");
    run_timed(true);
    ult_test_phase("end");
    return check_summary();
}
