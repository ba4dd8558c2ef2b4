/*
 * atexit and on_exit handlers per rank (src/rankc/on_exit.c): each rank
 * registers atexit, on_exit and at_quick_exit handlers interleaved, then
 * ends by returning from main, exit() or quick_exit() (one on_exit handler
 * is registered by a thread of the rank); the handlers print in
 * the order they run, the status on_exit passes and their argument. Built twice like libc_state.c:
 * with mpicc, and with cc -DREFERENCE as a plain program that runs the same
 * code for ranks 0..N-1, each in a process of its own; libc_compare.sh
 * compares the two.
 *
 * Usage: libc_exit return|exit|quick_exit STATUS          (MPI, or run directly)
 *        libc_exit_ref N return|exit|quick_exit STATUS    (reference)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef REFERENCE
#include <sys/wait.h>
#include <unistd.h>
#else
#include <mpi.h>
#endif

static int rank;
static int args[4];

static void a1(void)
{
    printf("%d: atexit 1\n", rank);
}

static void a2(void)
{
    printf("%d: atexit 2\n", rank);
}

static void a3(void)
{
    printf("%d: atexit 3\n", rank);
}

static void q1(void)
{
    printf("%d: at_quick_exit 1\n", rank);
    fflush(stdout);
}

static void q2(void)
{
    printf("%d: at_quick_exit 2\n", rank);
    fflush(stdout);
}

static void o(int status, void *arg)
{
    printf("%d: on_exit status %d arg %d\n", rank, status, *(int *)arg);
}

static void *thread_main(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)on_exit(o, &args[3]);
}

static int body(const char *how, int status)
{
    for (int i = 0; i < 4; i++)
        args[i] = rank * 10 + i;
    if (atexit(a1) != 0 || on_exit(o, &args[0]) != 0 || atexit(a2) != 0 ||
        on_exit(o, &args[1]) != 0 || on_exit(o, &args[2]) != 0 || atexit(a3) != 0) {
        printf("%d: registering failed\n", rank);
        return 1;
    }
    /* A thread of the rank registers one too (hybrid codes' threads). */
    pthread_t t;
    void *rc = (void *)1;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, &rc) != 0 || rc) {
        printf("%d: registering from a thread failed\n", rank);
        return 1;
    }
    if (at_quick_exit(q1) != 0 || atexit(a1) != 0 || at_quick_exit(q2) != 0) {
        printf("%d: registering failed\n", rank);
        return 1;
    }
    printf("%d: ending by %s %d\n", rank, how, status);
    if (strcmp(how, "exit") == 0)
        exit(status);
    if (strcmp(how, "quick_exit") == 0) {
        fflush(stdout); /* quick_exit flushes no stream */
        quick_exit(status);
    }
    return status;
}

#ifdef REFERENCE
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    for (rank = 0; rank < n; rank++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            return body(argc > 2 ? argv[2] : "return", argc > 3 ? atoi(argv[3]) : 0);
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
            return 1;
    }
    return 0;
}
#else
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return body(argc > 1 ? argv[1] : "return", argc > 2 ? atoi(argv[2]) : 0);
}
#endif
