/* Calls whose algorithm a tuning table may choose (tests/tune.cmake): a
 * small and a large Bcast, a Barrier and an Allreduce, with their results
 * checked, so a table's choice is seen in LOOM_COLL_VERBOSE output and is
 * shown to compute the right thing. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "../check.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int counts[] = {1000, 200000};
    char *buf = malloc(200000);
    REQUIRE(buf);
    for (int c = 0; c < 2; c++) {
        for (int i = 0; i < counts[c]; i++)
            buf[i] = rank == 0 ? (char)(i * 7 + c) : 0;
        CHECK_EQ(MPI_Bcast(buf, counts[c], MPI_CHAR, 0, MPI_COMM_WORLD), MPI_SUCCESS);
        int bad = 0;
        for (int i = 0; i < counts[c]; i++)
            bad += buf[i] != (char)(i * 7 + c);
        CHECK_EQ(bad, 0);
    }
    CHECK_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
    double in[4] = {rank, 1, 2 * rank, -rank}, out[4];
    CHECK_EQ(MPI_Allreduce(in, out, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    double tri = (double)size * (size - 1) / 2;
    CHECK(out[0] == tri && out[1] == size && out[2] == 2 * tri && out[3] == -tri);
    free(buf);
    MPI_Finalize();
    if (rank == 0 && check_failures_ == 0)
        printf("tune_select: %d ranks ok\n", size);
    return check_summary();
}
