/*
 * Park and wake: a parked ULT stays parked until woken (from its own worker
 * and from another), ping-pong between two ULTs on one worker and on two
 * (park/wake and wait/notify), and wake-before-park races where the waker
 * hits the target exactly while it parks, including when the target's park
 * switches straight to another ready ULT.
 */
#include "ult_test.h"

static long rounds(long n)
{
    return ULT_TEST_SANITIZED ? n / 4 : n;
}

/* ---- a parked ULT stays parked until woken ---- */

static _Atomic int flag;
static atomic_int resumed;
static atomic_int early; /* the parker ran before it was woken */
static struct loom_ult *parker;

static void park_body(void *arg)
{
    (void)arg;
    while (!atomic_load(&flag)) {
        loom_ult_park();
        if (!atomic_load(&flag))
            atomic_fetch_add(&early, 1); /* spurious: allowed, but counted */
    }
    atomic_fetch_add(&resumed, 1);
}

static void waker_same_worker(void *arg)
{
    (void)arg;
    /* The parker is parked now (it ran first); while we yield it must not
     * run: yield returns at once because nothing else is ready. */
    for (int i = 0; i < 100; i++) {
        CHECK(!loom_sched_others_ready());
        loom_ult_yield();
    }
    CHECK_EQ(atomic_load(&resumed), 0);
    atomic_store(&flag, 1);
    loom_ult_wake(parker);
    CHECK(loom_sched_others_ready()); /* it is back on our run queue */
    loom_ult_yield();
    CHECK_EQ(atomic_load(&resumed), 1);
}

static void waker_other_worker(void *arg)
{
    (void)arg;
    ult_test_delay(20 * 1000 * 1000);
    CHECK_EQ(atomic_load(&resumed), 0);
    atomic_store(&flag, 1);
    loom_ult_wake(parker);
    while (!atomic_load(&resumed))
        loom_cpu_relax();
}

static void test_park_wake(int cross)
{
    ult_test_phase(cross ? "park/wake other worker" : "park/wake same worker");
    atomic_store(&flag, 0);
    atomic_store(&resumed, 0);
    atomic_store(&early, 0);
    ult_test_init(2, 0, -1);
    parker = ult_test_spawn(park_body, NULL, 0, 64 * 1024);
    ult_test_spawn(cross ? waker_other_worker : waker_same_worker, NULL, cross ? 1 : 0, 64 * 1024);
    loom_sched_run();
    CHECK_EQ(atomic_load(&resumed), 1);
    CHECK_EQ(atomic_load(&early), 0); /* nobody woke it early, so no spurious run */
    loom_sched_fini();
}

/* ---- ping-pong ---- */

struct pingpong {
    _Atomic long turn; /* even: side 0 plays, odd: side 1 */
    long n;
    int use_wait;
    struct loom_ult *u[2];
    loom_waiter_slot slot[2];
    long count[2];
    _Atomic long wrong; /* played out of turn */
};

static struct pingpong pp;
static long want_turn[2];

static bool turn_is(const void *arg)
{
    long side = (long)(intptr_t)arg;
    return atomic_load(&pp.turn) == want_turn[side];
}

static void pp_body(void *arg)
{
    long side = (long)arg;
    for (long i = 0; i < pp.n; i++) {
        long want = 2 * i + side;
        if (pp.use_wait) {
            want_turn[side] = want;
            loom_ult_wait(turn_is, (void *)(intptr_t)side, &pp.slot[side]);
        } else {
            while (atomic_load(&pp.turn) != want)
                loom_ult_park();
        }
        if (atomic_load(&pp.turn) != want)
            atomic_fetch_add(&pp.wrong, 1);
        pp.count[side]++;
        atomic_store(&pp.turn, want + 1);
        if (pp.use_wait)
            loom_ult_notify(&pp.slot[1 - side]);
        else
            loom_ult_wake(pp.u[1 - side]);
    }
}

static void test_pingpong(int cross, int use_wait, long n)
{
    ult_test_phase("ping-pong");
    memset(&pp, 0, sizeof pp);
    pp.n = n;
    pp.use_wait = use_wait;
    ult_test_init(2, use_wait ? 2000 : 0, 20000);
    pp.u[0] = ult_test_spawn(pp_body, (void *)0L, 0, 64 * 1024);
    pp.u[1] = ult_test_spawn(pp_body, (void *)1L, cross ? 1 : 0, 64 * 1024);
    loom_sched_run();
    CHECK_EQ(pp.count[0], n);
    CHECK_EQ(pp.count[1], n);
    CHECK_EQ(atomic_load(&pp.turn), 2 * n);
    CHECK_EQ(atomic_load(&pp.wrong), 0);
    loom_sched_fini();
}

/* ---- wake-before-park races ---- */

static _Atomic long go, ack;
static long race_n;
static struct loom_ult *target;
static atomic_int busy_stop;

static void race_target(void *arg)
{
    (void)arg;
    for (long i = 1; i <= race_n; i++) {
        while (atomic_load(&go) < i)
            loom_ult_park();
        atomic_store(&ack, i);
    }
}

static void race_waker(void *arg)
{
    long jitter = (long)arg;
    for (long i = 1; i <= race_n; i++) {
        atomic_store(&go, i);
        loom_ult_wake(target);
        while (atomic_load(&ack) < i)
            loom_cpu_relax();
        /* Vary where in its park the next wake hits the target. */
        for (long k = 0; k < (i * 7) % (jitter + 1); k++)
            loom_cpu_relax();
    }
    atomic_store(&busy_stop, 1);
}

/* Keeps the target's worker busy so that parks switch straight to us. */
static void race_busy(void *arg)
{
    (void)arg;
    while (!atomic_load(&busy_stop))
        loom_ult_yield();
}

static void test_race(int with_busy, long n)
{
    ult_test_phase(with_busy ? "wake-before-park race, busy worker" : "wake-before-park race");
    atomic_store(&go, 0);
    atomic_store(&ack, 0);
    atomic_store(&busy_stop, 0);
    race_n = n;
    ult_test_init(2, 0, 5000);
    target = ult_test_spawn(race_target, NULL, 0, 64 * 1024);
    if (with_busy)
        ult_test_spawn(race_busy, NULL, 0, 64 * 1024);
    ult_test_spawn(race_waker, (void *)200L, 1, 64 * 1024);
    loom_sched_run();
    CHECK_EQ(atomic_load(&ack), n);
    loom_sched_fini();
}

int main(void)
{
    ult_test_watchdog(45);
    test_park_wake(0);
    test_park_wake(1);
    test_pingpong(0, 0, rounds(100000));
    test_pingpong(1, 0, rounds(100000));
    test_pingpong(0, 1, rounds(100000));
    test_pingpong(1, 1, rounds(100000));
    test_race(0, rounds(20000));
    test_race(1, rounds(20000));
    ult_test_phase("end");
    return check_summary();
}
