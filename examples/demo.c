/*
 * Loom's demo: an unmodified MPI program whose ranks are user-level threads
 * of one process. It shows
 *  - every rank has its own copy of the program's globals (no source change);
 *  - all ranks live in one process, on a few worker threads;
 *  - waiting ranks park instead of burning cores, so many ranks on few cores
 *    still pass messages quickly: a token goes round a ring and the time per
 *    hop is printed, with the barrier time.
 * Run: mpiexec -n 16 ./demo   (try -n 256, and compare with another MPI)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int my_rank_copy = -1; /* a plain global: each rank has its own */

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    my_rank_copy = rank;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    if (rank == 0)
        printf("%s\n%d ranks in process %d\n", lib, size, (int)getpid());

    /* Token ring: each hop is one message to the next rank. */
    int laps = argc > 1 ? atoi(argv[1]) : 2000, token = 0;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int lap = 0; lap < laps; lap++) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
        }
    }
    double ring = MPI_Wtime() - t0;
    t0 = MPI_Wtime();
    for (int i = 0; i < 1000; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    double bar = MPI_Wtime() - t0;

    /* A small allreduce: the ranks of a core combine first, then one per core. */
    long sum = 0, mine = rank + 1;
    t0 = MPI_Wtime();
    for (int i = 0; i < 1000; i++)
        MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    double ared = MPI_Wtime() - t0;
    int sum_ok = sum == (long)size * (size + 1) / 2;

    /* Every rank still sees its own global, after all that switching. */
    int ok = my_rank_copy == rank && sum_ok, all_ok = 1;
    if (rank != 0) {
        MPI_Send(&ok, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    } else {
        for (int r = 1; r < size; r++) {
            MPI_Recv(&ok, 1, MPI_INT, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            all_ok &= ok;
        }
        printf("token ring: %d laps x %d hops, %.2f us per hop (token = %d, expected %d)\n", laps,
               size, ring * 1e6 / ((double)laps * size), token, laps * (size - 1));
        printf("barrier: %.2f us per MPI_Barrier on %d ranks\n", bar * 1e6 / 1000, size);
        printf("allreduce: %.2f us per 8-byte MPI_Allreduce on %d ranks (sum %ld, %s)\n",
               ared * 1e6 / 1000, size, sum, sum_ok ? "right" : "WRONG");
        printf("per-rank globals: %s\n", all_ok ? "every rank kept its own copy" : "BROKEN");
    }
    MPI_Finalize();
    return all_ok && (rank != 0 || token == laps * (size - 1)) ? 0 : 1;
}
