/* ITIMER_VIRTUAL and ITIMER_PROF are each rank's own, as in a process of its
 * own: a rank's timer counts that rank's CPU time and its signal (SIGVTALRM,
 * SIGPROF) goes to that rank.
 *
 *   cputimer virtual|prof
 *
 * Every rank arms the timer with a 10 ms interval and a handler that counts.
 * Even ranks compute until their own clock() has advanced 0.3 s; odd ranks
 * first sleep 0.3 s (no CPU) and then compute 0.1 s. A rank's count must be
 * its CPU time over the interval, as a process's would be, within a factor
 * of 1.5 (sampling): an odd rank counting its sleep, or a timer that never
 * fires, fails. The timer reads back while armed and disarms. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"

static volatile sig_atomic_t ticks;

static void on_tick(int sig)
{
    (void)sig;
    ticks++;
}

static double cpu_s(void)
{
    return (double)clock() / CLOCKS_PER_SEC;
}

static void compute(double seconds)
{
    volatile double x = 0;
    for (double c0 = cpu_s(); cpu_s() - c0 < seconds;)
        for (int i = 0; i < 1000; i++)
            x += i;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "prof";
    int which = strcmp(mode, "virtual") == 0 ? ITIMER_VIRTUAL : ITIMER_PROF;
    int sig = which == ITIMER_VIRTUAL ? SIGVTALRM : SIGPROF;
    CHECK(signal(sig, on_tick) != SIG_ERR);
    struct itimerval tv = {.it_interval = {0, 10000}, .it_value = {0, 10000}}, back;
    double c0 = cpu_s();
    CHECK_EQ(setitimer(which, &tv, NULL), 0);
    CHECK_EQ(getitimer(which, &back), 0);
    /* The kernel rounds up to its tick: up to twice the value here. */
    CHECK(back.it_interval.tv_sec == 0 && back.it_interval.tv_usec >= 10000 &&
          back.it_interval.tv_usec <= 20000 && back.it_value.tv_sec == 0 &&
          back.it_value.tv_usec > 0 && back.it_value.tv_usec <= 20000);
    if (rank % 2 == 0) {
        compute(0.3);
    } else {
        usleep(300000);
        compute(0.1);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    CHECK_EQ(setitimer(which, &off, NULL), 0);
    double cpu = cpu_s() - c0;
    int got = ticks;
    CHECK_EQ(getitimer(which, &back), 0);
    CHECK(back.it_value.tv_sec == 0 && back.it_value.tv_usec == 0);
    double expected = cpu / 0.010;
    if (got < expected / 1.5 - 1 || got > expected * 1.5 + 2) {
        fprintf(stderr, "rank %d: %d ticks for %.3f s of CPU (%.0f expected)\n", rank, got, cpu,
                expected);
        CHECK(0);
    }
    int ok = check_failures_ == 0, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0 && all)
        printf("cputimer: %s ok\n", mode);
    MPI_Finalize();
    return check_summary();
}
