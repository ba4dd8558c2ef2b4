/* Cost of pthread mutexes and POSIX semaphores used by ranks (docs/adr/0004).
 *
 *   uncontended: each rank locks and unlocks its own mutex (and posts and
 *                waits on its own semaphore) ITER times: ns per pair.
 *   contended:   every rank of the node increments a counter under one
 *                process-shared mutex in an MPI_Win_allocate_shared window,
 *                ITER/16 times each: ns per acquisition, job-wide.
 *
 * OSU method: warm-up, then timed loops between barriers; the uncontended
 * times are averaged over ranks. Runs unchanged under any MPI.
 *
 *   locks [ITER] [--json]
 */
#include <mpi.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void report(int rank, int json, const char *what, int ranks, double ns)
{
    if (rank != 0)
        return;
    if (json)
        printf("{\"bench\": \"locks\", \"case\": \"%s\", \"ranks\": %d, \"ns\": %.2f}\n", what,
               ranks, ns);
    else
        printf("%-28s %6d ranks %12.2f ns\n", what, ranks, ns);
}

static double avg(double t)
{
    int size;
    double sum = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    return sum / size;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, json = 0;
    long iters = 1000000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else
            iters = atol(argv[i]);
    }

    pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
    sem_t sem;
    sem_init(&sem, 0, 0);
    for (long i = 0; i < iters / 10; i++) {
        pthread_mutex_lock(&own);
        pthread_mutex_unlock(&own);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        pthread_mutex_lock(&own);
        pthread_mutex_unlock(&own);
    }
    double t = avg((MPI_Wtime() - t0) / (double)iters * 1e9);
    report(rank, json, "mutex_uncontended", size, t);

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        sem_post(&sem);
        sem_wait(&sem);
    }
    t = avg((MPI_Wtime() - t0) / (double)iters * 1e9);
    report(rank, json, "semaphore_uncontended", size, t);

    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    struct {
        pthread_mutex_t m;
        volatile long counter;
    } * s;
    MPI_Win win;
    MPI_Win_allocate_shared(rank == 0 ? (MPI_Aint)sizeof *s : 0, 1, MPI_INFO_NULL, node, &s, &win);
    MPI_Aint bytes;
    int unit;
    MPI_Win_shared_query(win, 0, &bytes, &unit, &s);
    if (rank == 0) {
        pthread_mutexattr_t a;
        pthread_mutexattr_init(&a);
        pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
        pthread_mutex_init(&s->m, &a);
        s->counter = 0;
    }
    long rounds = iters / 16;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (long i = 0; i < rounds; i++) {
        pthread_mutex_lock(&s->m);
        s->counter++;
        pthread_mutex_unlock(&s->m);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t = (MPI_Wtime() - t0) / ((double)rounds * size) * 1e9;
    if (rank == 0 && s->counter != rounds * size)
        fprintf(stderr, "locks: counter %ld, expected %ld\n", s->counter, rounds * size);
    report(rank, json, "mutex_contended", size, t);

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    sem_destroy(&sem);
    MPI_Finalize();
    return 0;
}
