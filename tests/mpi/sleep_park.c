/*
 * A rank that sleeps parks only itself: while one rank is in sleep, usleep,
 * nanosleep or clock_nanosleep (relative and TIMER_ABSTIME), the others,
 * even on the same worker, finish a round of barriers among themselves, and
 * the sleeper still sleeps at least what it asked for. sched_yield lets a
 * rank that spins on a flag give its worker to the rank that will set it.
 * Bad arguments fail as libc's do.
 *   sleep_park            (run with --workers 1 to share one worker)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Sleeps about 0.2 s (1 s for sleep) with the given call; returns what it asked for. */
static double do_sleep(int how)
{
    struct timespec req = {0, 200000000};
    switch (how) {
    case 0:
        CHECK(sleep(1) == 0);
        return 1.0;
    case 1:
        CHECK(usleep(200000) == 0);
        return 0.2;
    case 2:
        CHECK(nanosleep(&req, NULL) == 0);
        return 0.2;
    case 3:
        CHECK(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL) == 0);
        return 0.2;
    default: {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 200000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        CHECK(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &until, NULL) == 0);
        return 0.2;
    }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const char *names[] = {"sleep", "usleep", "nanosleep", "clock_nanosleep",
                                  "clock_nanosleep(TIMER_ABSTIME)"};
    for (int how = 0; how < 5; how++) {
        int sleeper = how % size;
        MPI_Comm others;
        MPI_Comm_split(MPI_COMM_WORLD, rank == sleeper, rank, &others);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now(), t1;
        if (rank == sleeper) {
            double asked = do_sleep(how);
            t1 = now();
            CHECK(t1 - t0 >= asked);
        } else {
            for (int i = 0; i < 10; i++)
                MPI_Barrier(others);
            t1 = now();
        }
        /* Every other rank finished its barriers before the sleeper woke. */
        double woke = t1;
        MPI_Bcast(&woke, 1, MPI_DOUBLE, sleeper, MPI_COMM_WORLD);
        if (rank != sleeper && !(t1 < woke)) {
            printf("rank %d: %s in rank %d held it up (done %.3f s, woke %.3f s)\n", rank,
                   names[how], sleeper, t1 - t0, woke - t0);
            CHECK(t1 < woke);
        }
        MPI_Comm_free(&others);
    }

    /* Bad arguments, as libc reports them. */
    struct timespec bad = {0, 1000000000};
    errno = 0;
    CHECK(nanosleep(&bad, NULL) == -1 && errno == EINVAL);
    CHECK(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL) == EINVAL);
    struct timespec zero = {0, 0};
    CHECK(nanosleep(&zero, NULL) == 0);
    CHECK(usleep(0) == 0);

    /* sched_yield: rank 1 spins on rank 0's flag (one address space: the
     * address travels in a message); on a shared worker only a yield lets
     * rank 0 run to set it. */
    if (size >= 2 && rank < 2) {
        static volatile int flag;
        if (rank == 0) {
            volatile int *p = &flag;
            MPI_Send(&p, sizeof p, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            int spinning;
            MPI_Recv(&spinning, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            flag = 1;
        } else {
            volatile int *p;
            MPI_Recv(&p, sizeof p, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int spinning = 1;
            MPI_Request r;
            MPI_Isend(&spinning, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &r);
            while (!*p)
                CHECK(sched_yield() == 0);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
    }
    int failed = check_failures_ != 0, any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("sleep_park: %d ranks ok\n", size);
    MPI_Finalize();
    return check_summary();
}
