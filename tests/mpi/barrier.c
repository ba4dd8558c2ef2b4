/* MPI_Barrier: no rank leaves round k before every rank has arrived in it.
 * Arrivals are counted in a shared library (one copy for all ranks). Ranks
 * arrive in a skewed order (rank-dependent busy work) to catch early exits. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "../check.h"
#include "shared_counter.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    volatile unsigned sink = 0;
    for (int k = 0; k < rounds; k++) {
        for (int i = 0; i < ((rank * 7 + k) % 5) * 1000; i++)
            sink += (unsigned)i;
        shared_arrive(k);
        CHECK_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK_EQ(shared_count(k), size);
        if (shared_count(k) != size)
            break;
    }
    CHECK_EQ(MPI_Barrier(MPI_COMM_SELF), MPI_SUCCESS);
    MPI_Finalize();
    if (rank == 0 && check_failures_ == 0)
        printf("barrier: %d rounds on %d ranks ok\n", rounds, size);
    return check_summary();
}
