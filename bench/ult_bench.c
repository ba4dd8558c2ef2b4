/*
 * ULT scheduler microbenchmarks: (a) context switch, two ULTs yielding to
 * each other on one worker (ns per switch); (b) park/wake round trip between
 * two ULTs on one worker; (c) the same across two workers pinned to two
 * different CPUs; (d) wait/notify round trip across two workers (the spin
 * path MPI waits take). Each figure is the median of several repetitions,
 * each on a fresh scheduler, after a warm-up.
 *
 * Usage: ult_bench [--json] [--iters N] [--reps R]
 */
#define _GNU_SOURCE
#include "runtime/ult.h"
#include "util/common.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long iters = 1000000;
static int reps = 7;
static int cpus[2] = {-1, -1};

/* ---- shared ping-pong state ---- */

static _Atomic long turn;
static struct loom_ult *u[2];
static loom_waiter_slot slot[2];
static long want[2];
static uint64_t t_start, t_end;
static long n_timed, n_warm;

static void yielder(void *arg)
{
    long me = (long)arg;
    for (long i = 0; i < n_warm; i++)
        loom_ult_yield();
    if (me == 0)
        t_start = loom_time_ns();
    for (long i = 0; i < n_timed; i++)
        loom_ult_yield();
    if (me == 1)
        t_end = loom_time_ns();
}

static bool turn_is(const void *arg)
{
    long me = (long)(intptr_t)arg;
    return atomic_load(&turn) == want[me];
}

/* One side of a ping-pong: mode 0 park/wake, 1 wait/notify. */
static void pingpong(long me, int mode)
{
    long total = n_warm + n_timed;
    for (long i = 0; i < total; i++) {
        if (me == 0 && i == n_warm)
            t_start = loom_time_ns();
        long w = 2 * i + me;
        if (mode == 0) {
            while (atomic_load(&turn) != w)
                loom_ult_park();
        } else {
            want[me] = w;
            loom_ult_wait(turn_is, (void *)(intptr_t)me, &slot[me]);
        }
        atomic_store(&turn, w + 1);
        if (mode == 0)
            loom_ult_wake(u[1 - me]);
        else
            loom_ult_notify(&slot[1 - me]);
    }
    if (me == 0)
        t_end = loom_time_ns();
}

static void pp_park(void *arg)
{
    pingpong((long)arg, 0);
}

static void pp_wait(void *arg)
{
    pingpong((long)arg, 1);
}

/* Runs one repetition: two ULTs running fn on workers w0 and w1; returns
 * elapsed ns per unit (divisor units per timed iteration). */
static double run_once(loom_ult_fn fn, int nworkers, int w1, long n, double per_iter)
{
    struct loom_sched_params p;
    memset(&p, 0, sizeof p);
    p.nworkers = nworkers;
    p.cpus = cpus[0] >= 0 && (nworkers == 1 || cpus[1] >= 0) ? cpus : NULL;
    p.spin_ns = -1;
    p.idle_spin_ns = -1;
    if (loom_sched_init(&p) != 0) {
        fprintf(stderr, "ult_bench: cannot start the scheduler\n");
        exit(1);
    }
    atomic_store(&turn, 0);
    atomic_store(&slot[0], NULL);
    atomic_store(&slot[1], NULL);
    n_timed = n;
    n_warm = n / 10 + 100;
    if (loom_ult_create(fn, (void *)0L, 0, 64 * 1024, &u[0]) != 0 ||
        loom_ult_create(fn, (void *)1L, w1, 64 * 1024, &u[1]) != 0) {
        fprintf(stderr, "ult_bench: cannot create ULTs\n");
        exit(1);
    }
    loom_sched_run();
    loom_sched_fini();
    return (double)(t_end - t_start) / ((double)n * per_iter);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(loom_ult_fn fn, int nworkers, int w1, long n, double per_iter)
{
    double v[64];
    int r = reps < 64 ? reps : 64;
    for (int i = 0; i < r; i++)
        v[i] = run_once(fn, nworkers, w1, n, per_iter);
    qsort(v, (size_t)r, sizeof v[0], cmp_double);
    return v[r / 2];
}

/* Picks the first two CPUs this process may run on. */
static void pick_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return;
    int k = 0;
    for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
        if (CPU_ISSET(c, &set))
            cpus[k++] = c;
}

int main(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--json] [--iters N] [--reps R]\n", argv[0]);
            return 2;
        }
    }
    if (iters < 1000)
        iters = 1000;
    if (reps < 1)
        reps = 1;
    pick_cpus();
    int two = cpus[1] >= 0;

    struct {
        const char *name, *what;
        double ns;
        int skipped;
    } r[4] = {
        {"ult_switch", "context switch (yield, 1 worker), ns/switch", 0, 0},
        {"ult_parkwake_local", "park/wake round trip, 1 worker, ns", 0, 0},
        {"ult_parkwake_cross", "park/wake round trip, 2 workers, ns", 0, 0},
        {"ult_wait_cross", "wait/notify round trip, 2 workers, ns", 0, 0},
    };
    /* Each yield loop iteration is one switch per ULT: 2 per iteration. */
    r[0].ns = median_of(yielder, 1, 0, iters, 2.0);
    r[1].ns = median_of(pp_park, 1, 0, iters, 1.0);
    if (two) {
        r[2].ns = median_of(pp_park, 2, 1, iters / 10, 1.0);
        r[3].ns = median_of(pp_wait, 2, 1, iters / 10, 1.0);
    } else {
        r[2].skipped = r[3].skipped = 1;
    }
    if (json) {
        for (int i = 0; i < 4; i++)
            if (!r[i].skipped)
                printf("{\"bench\":\"%s\",\"ns\":%.2f,\"iters\":%ld,\"reps\":%d}\n", r[i].name,
                       r[i].ns, i < 2 ? iters : iters / 10, reps);
    } else {
        printf("%-22s %-46s %10s\n", "bench", "what", "median");
        for (int i = 0; i < 4; i++) {
            if (r[i].skipped)
                printf("%-22s %-46s %10s\n", r[i].name, r[i].what, "skipped");
            else
                printf("%-22s %-46s %10.1f\n", r[i].name, r[i].what, r[i].ns);
        }
        if (two)
            printf("workers pinned to CPUs %d and %d\n", cpus[0], cpus[1]);
    }
    return 0;
}
