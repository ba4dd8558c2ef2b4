/*
 * A rank's CPU time is its own: while rank 0 spins 0.3 s and every other
 * rank 0.1 s, taking turns on their workers, each rank's clock(),
 * getrusage(RUSAGE_SELF), times() and CLOCK_PROCESS/THREAD_CPUTIME_ID grow
 * by about its own spin, not the process's; a rank that sleeps grows by
 * about nothing. A thread a rank starts, and a program run directly, read
 * libc's values (the kernel's, read here by a raw system call).
 *   cputime               (under mpiexec; --workers 1 to share one worker)
 *   cputime singleton     (run directly)
 * Times are wall slices of a spin, compared as ratios: the machine may be
 * loaded, and a worker the OS takes away counts as its rank's CPU time.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"

static double secs(const struct timespec *t)
{
    return (double)t->tv_sec + (double)t->tv_nsec * 1e-9;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return secs(&t);
}

/* A clock read by the kernel itself, past any interposer. */
static double kernel_clock(clockid_t clk)
{
    struct timespec t;
    syscall(SYS_clock_gettime, clk, &t);
    return secs(&t);
}

enum { CLK, RUSAGE, TIMES, PROC, THREAD, NKIND };
static const char *kind_names[NKIND] = {"clock()", "getrusage", "times", "PROCESS_CPUTIME",
                                        "THREAD_CPUTIME"};

/* Every way a program reads its own CPU time, in seconds. */
static void sample(double v[NKIND])
{
    struct timespec t;
    struct rusage ru;
    struct tms tm;
    v[CLK] = (double)clock() / CLOCKS_PER_SEC;
    CHECK(getrusage(RUSAGE_SELF, &ru) == 0);
    CHECK(ru.ru_utime.tv_usec >= 0 && ru.ru_utime.tv_usec < 1000000);
    CHECK(ru.ru_stime.tv_usec >= 0 && ru.ru_stime.tv_usec < 1000000);
    v[RUSAGE] = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
                (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    CHECK(times(&tm) != (clock_t)-1);
    v[TIMES] = (double)(tm.tms_utime + tm.tms_stime) / (double)sysconf(_SC_CLK_TCK);
    CHECK(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0);
    v[PROC] = secs(&t);
    CHECK(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0);
    v[THREAD] = secs(&t);
}

/* Spins `target` seconds of wall time in 1 ms slices, yielding the worker
 * between slices; returns the time spent in the slices. */
static double spin(double target)
{
    double spun = 0;
    while (spun < target) {
        double t0 = now(), t1;
        do
            t1 = now();
        while (t1 - t0 < 1e-3);
        spun += t1 - t0;
        sched_yield();
    }
    return spun;
}

/* Each CPU-time reading grew by about `own` seconds between a and b. */
static void check_grew(int rank, const double a[NKIND], const double b[NKIND], double own)
{
    for (int k = 0; k < NKIND; k++) {
        double d = b[k] - a[k];
        double slack = k == TIMES ? 0.02 : 0.0; /* times() counts in 10 ms ticks */
        if (!(d >= 0.8 * own - slack && d <= 1.5 * own + 0.02 + slack)) {
            printf("rank %d: %s grew %.3f s for %.3f s of its own\n", rank, kind_names[k], d, own);
            CHECK(0);
        }
    }
}

/* What a thread a rank started read: its clocks and the kernel's. */
struct thread_read {
    int rc_proc, rc_thread;
    double proc, kern_proc, thread, kern_thread;
};

static void *thread_main(void *arg)
{
    /* Not a rank: libc's values, the process's and this thread's. The
     * rank checks them after the join (CHECK's counters are the rank's). */
    struct thread_read *r = arg;
    struct timespec t;
    r->rc_proc = clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    r->proc = secs(&t);
    r->kern_proc = kernel_clock(CLOCK_PROCESS_CPUTIME_ID);
    r->rc_thread = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    r->thread = secs(&t);
    r->kern_thread = kernel_clock(CLOCK_THREAD_CPUTIME_ID);
    return NULL;
}

/* Run directly: every call is libc's. */
static int singleton(void)
{
    spin(0.05);
    struct timespec t;
    double v[NKIND];
    sample(v);
    double kern = kernel_clock(CLOCK_PROCESS_CPUTIME_ID);
    CHECK(clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) == 0);
    CHECK(kern >= v[PROC] && kern - v[PROC] < 0.005);
    CHECK(kern >= v[CLK] && kern - v[CLK] < 0.005);
    CHECK(v[PROC] > 0); /* real CPU time: the machine may be loaded */
    CHECK(clock_getres(CLOCK_PROCESS_CPUTIME_ID, &t) == 0);
    if (!check_failures_)
        printf("cputime: singleton ok\n");
    return check_summary();
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "singleton"))
        return singleton();
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* A rank's CPU clocks start near 0, like a fresh process's. */
    double a[NKIND], b[NKIND];
    sample(a);
    CHECK(a[PROC] < 1.0);
    struct timespec res;
    CHECK(clock_getres(CLOCK_PROCESS_CPUTIME_ID, &res) == 0 && res.tv_sec == 0 && res.tv_nsec > 0);

    /* Spins of different lengths, taking turns on the workers. */
    MPI_Barrier(MPI_COMM_WORLD);
    sample(a);
    double own = spin(rank == 0 ? 0.3 : 0.1);
    sample(b);
    check_grew(rank, a, b, own);
    double mine = b[PROC] - a[PROC], all;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (size >= 4) {
        /* Rank 0 spun 3 / (3 + (size - 1)) of the total, the others 1 / ... */
        double expect = (rank == 0 ? 3.0 : 1.0) / (3.0 + (double)(size - 1));
        if (!(mine / all > 0.6 * expect && mine / all < 1.5 * expect)) {
            printf("rank %d: %.3f s of the ranks' %.3f s, expected a share of %.3f\n", rank, mine,
                   all, expect);
            CHECK(0);
        }
    }

    /* A rank that sleeps accrues about no CPU time. */
    int sleeper = size > 1 ? 1 : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == sleeper) {
        sample(a);
        CHECK(usleep(200000) == 0);
        sample(b);
        for (int k = 0; k < NKIND; k++) {
            double slack = k == TIMES ? 0.02 : 0.0;
            if (!(b[k] - a[k] >= 0 && b[k] - a[k] < 0.02 + slack)) {
                printf("rank %d: %s grew %.3f s in a 0.2 s sleep\n", rank, kind_names[k],
                       b[k] - a[k]);
                CHECK(0);
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* A thread a rank starts reads libc's values. */
    if (rank == 0) {
        pthread_t th;
        struct thread_read r;
        CHECK(pthread_create(&th, NULL, thread_main, &r) == 0);
        CHECK(pthread_join(th, NULL) == 0);
        CHECK(r.rc_proc == 0 && r.kern_proc >= r.proc && r.kern_proc - r.proc < 0.05);
        CHECK(r.rc_thread == 0 && r.kern_thread >= r.thread && r.kern_thread - r.thread < 0.005);
    }

    int failed = check_failures_ != 0, any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("cputime: %d ranks ok\n", size);
    MPI_Finalize();
    return check_summary();
}
