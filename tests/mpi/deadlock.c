/* Classic deadlocks, which Loom must report (exit status 85, each rank's
 * wait and the wait-for cycle), and near misses, which it must never report
 * (they finish: "deadlock: MODE ok").
 *
 *   deadlock MODE
 *
 * Deadlocks:
 *   recv_cycle     every rank receives from the next one first (a ring)
 *   send_cycle     ranks 0 and 1 both send 1 MiB (rendezvous) to each other first
 *   missing_coll   every rank but the last calls MPI_Allreduce; the last
 *                  receives from rank 0
 *   missing_bcast  every rank but the root (0) calls MPI_Bcast; the root goes
 *                  to MPI_Finalize
 *   wrong_tag      rank 0 sends tag 1 and ends; rank 1 receives tag 2
 *   waitall        rank 0 waits for an Irecv from rank 1, which is in MPI_Barrier
 *   ssend_barrier  rank 0 Ssends to rank 1, which is in MPI_Barrier
 *   finalize       rank 0 receives from rank 1, which calls MPI_Finalize
 * Near misses (rank 1 or every other rank waits in MPI meanwhile):
 *   sleep          rank 0 sleeps 1.5 s, then sends
 *   compute        rank 0 computes for 1.5 s, then sends
 *   test_loop      rank 1 polls MPI_Test; rank 0 sends after 1.5 s
 *   nb_coll        rank 0 enters an MPI_Iallreduce's wait 1.5 s after the others
 *   pipe           rank 0 reads a pipe that its thread fills after 1.5 s, then sends
 *   mutex          rank 0 waits for a mutex a thread holds for 1.5 s, then sends
 *   stdin          rank 0 reads a line of stdin (the test writes it after 1.5 s)
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void send_to(int dest)
{
    int x = 1;
    MPI_Send(&x, 1, MPI_INT, dest, 0, MPI_COMM_WORLD);
}

static void recv_from(int src)
{
    int x;
    MPI_Recv(&x, 1, MPI_INT, src, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static int holding;

static void *holder(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&held);
    __atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
    usleep(1500000);
    pthread_mutex_unlock(&held);
    return NULL;
}

static void *late_writer(void *arg)
{
    usleep(1500000);
    if (write(*(int *)arg, "x", 1) != 1)
        abort();
    return NULL;
}

/* Rank 0 does `wait` for 1.5 s and then sends to every other rank, which
 * receives from it meanwhile. */
static void late_sender(const char *mode)
{
    if (rank != 0) {
        if (strcmp(mode, "test_loop") == 0) {
            int x, flag = 0;
            MPI_Request r;
            MPI_Irecv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r);
            while (!flag) {
                MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
                usleep(1000);
            }
        } else {
            recv_from(0);
        }
        return;
    }
    if (strcmp(mode, "sleep") == 0) {
        usleep(1500000);
    } else if (strcmp(mode, "compute") == 0 || strcmp(mode, "test_loop") == 0) {
        volatile double x = 0;
        for (double t0 = now(); now() - t0 < 1.5;)
            x += 1;
    } else if (strcmp(mode, "pipe") == 0) {
        int fds[2];
        char c;
        pthread_t t;
        if (pipe(fds) != 0)
            abort();
        pthread_create(&t, NULL, late_writer, &fds[1]);
        if (read(fds[0], &c, 1) != 1)
            abort();
        pthread_join(t, NULL);
    } else if (strcmp(mode, "stdin") == 0) {
        /* Rank 0 gets mpiexec's stdin; the line comes late (the test's
         * writer sleeps first). */
        char line[64];
        if (!fgets(line, sizeof line, stdin))
            abort();
    } else if (strcmp(mode, "mutex") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, holder, NULL);
        while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
            usleep(1000);
        pthread_mutex_lock(&held);
        pthread_mutex_unlock(&held);
        pthread_join(t, NULL);
    }
    for (int r = 1; r < size; r++)
        send_to(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "recv_cycle";
    int x = 0, y = 0;
    if (strcmp(mode, "recv_cycle") == 0) {
        recv_from((rank + 1) % size);
        send_to((rank + size - 1) % size);
    } else if (strcmp(mode, "send_cycle") == 0) {
        size_t n = 1 << 20;
        char *buf = calloc(n, 1);
        if (rank < 2) {
            MPI_Send(buf, (int)n, MPI_CHAR, 1 - rank, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)n, MPI_CHAR, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        free(buf);
    } else if (strcmp(mode, "missing_coll") == 0) {
        if (rank < size - 1)
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else
            recv_from(0);
    } else if (strcmp(mode, "missing_bcast") == 0) {
        /* The root never calls the broadcast: it goes to MPI_Finalize. (A
         * rank other than the root that skips a small broadcast need not
         * block anyone, here as under a process MPI.) */
        if (rank > 0)
            MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    } else if (strcmp(mode, "wrong_tag") == 0) {
        if (rank == 0)
            MPI_Send(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Finalize();
        return 0;
    } else if (strcmp(mode, "waitall") == 0) {
        MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        if (rank == 0) {
            MPI_Irecv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r[0]);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "ssend_barrier") == 0) {
        if (rank == 0)
            MPI_Ssend(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (strcmp(mode, "finalize") == 0) {
        if (rank == 0)
            recv_from(1);
        MPI_Finalize();
        return 0;
    } else if (strcmp(mode, "nb_coll") == 0) {
        MPI_Request r;
        MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
        if (rank == 0)
            usleep(1500000);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        late_sender(mode);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("deadlock: %s ok\n", mode);
    MPI_Finalize();
    return 0;
}
