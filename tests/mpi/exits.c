/*
 * Ways out of the process from outside the program's own code
 * (src/runtime/exit.c):
 *   lib RANK CODE        rank RANK calls exit(CODE) inside a shared library
 *   lib_ RANK CODE       the same with _exit
 *   thread RANK CODE     a thread that rank RANK started calls exit(CODE)
 *   threadsegv RANK      a thread that rank RANK started crashes
 *   threadlate RANK      every rank finalizes, then a thread of rank RANK
 *                        calls exit(0) (the job ends with 0)
 * Every other rank waits in MPI_Barrier (or has finished) meanwhile. A rank
 * that ends by exit from the library prints nothing after the call.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void exit_lib_exit(int status);
void exit_lib__exit(int status);

static int code;

static void *thread_exit(void *arg)
{
    (void)arg;
    exit(code);
}

static void *thread_segv(void *arg)
{
    (void)arg;
    volatile uintptr_t where = 64;
    *(volatile int *)where = 1;
    return NULL;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *what = argc > 1 ? argv[1] : "";
    int who = argc > 2 ? atoi(argv[2]) : 0;
    code = argc > 3 ? atoi(argv[3]) : 0;
    if (rank == who) {
        pthread_t t;
        if (strcmp(what, "lib") == 0)
            exit_lib_exit(code);
        else if (strcmp(what, "lib_") == 0)
            exit_lib__exit(code);
        else if (strcmp(what, "thread") == 0 && pthread_create(&t, NULL, thread_exit, NULL) == 0)
            pthread_join(t, NULL);
        else if (strcmp(what, "threadsegv") == 0 &&
                 pthread_create(&t, NULL, thread_segv, NULL) == 0)
            pthread_join(t, NULL);
        if (strcmp(what, "threadlate") != 0)
            printf("rank %d went on after %s\n", rank, what);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (strcmp(what, "threadlate") == 0 && rank == who) {
        pthread_t t;
        if (pthread_create(&t, NULL, thread_exit, NULL) == 0)
            pthread_join(t, NULL);
    }
    return 0;
}
