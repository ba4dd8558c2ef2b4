/* MPI-4.1 status accessors: MPI_Status_set_* then MPI_Status_get_* give the
 * values back, and a received message's status reads its source and tag. */
#include <mpi.h>
#include <stdio.h>

#include "../check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Status st;
    int v = -1;
    CHECK_EQ(MPI_Status_set_source(&st, 3 + rank), MPI_SUCCESS);
    CHECK_EQ(MPI_Status_set_tag(&st, 44), MPI_SUCCESS);
    CHECK_EQ(MPI_Status_set_error(&st, MPI_ERR_TAG), MPI_SUCCESS);
    CHECK_EQ(MPI_Status_get_source(&st, &v), MPI_SUCCESS);
    CHECK_EQ(v, 3 + rank);
    CHECK_EQ(MPI_Status_get_tag(&st, &v), MPI_SUCCESS);
    CHECK_EQ(v, 44);
    CHECK_EQ(MPI_Status_get_error(&st, &v), MPI_SUCCESS);
    CHECK_EQ(v, MPI_ERR_TAG);
    int left = (rank + size - 1) % size, right = (rank + 1) % size, x = rank, y = -1;
    MPI_Sendrecv(&x, 1, MPI_INT, right, 5 + rank, &y, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD,
                 &st);
    CHECK_EQ(MPI_Status_get_source(&st, &v), MPI_SUCCESS);
    CHECK_EQ(v, left);
    CHECK_EQ(MPI_Status_get_tag(&st, &v), MPI_SUCCESS);
    CHECK_EQ(v, 5 + left);
    CHECK_EQ(y, left);
    int failed = check_failures_, all = 0;
    MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("mpi4_misc: %d ranks ok\n", size);
    MPI_Finalize();
    return check_summary();
}
