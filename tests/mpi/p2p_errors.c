/* Every bad argument of point-to-point returns the right error class under
 * MPI_ERRORS_RETURN, and truncation is reported with the sizes. */
#include <mpi.h>
#include <stdio.h>

#include "../check.h"

int main(int argc, char **argv)
{
    int rank, size, v = 1, w[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Status st;
    MPI_Request r;
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_EQ(MPI_Recv(&v, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    CHECK_EQ(MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_EQ(MPI_Irecv(&v, -2, MPI_INT, 0, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, -3, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_EQ(MPI_Recv(&v, 1, MPI_INT, 0, -7, MPI_COMM_WORLD, &st), MPI_ERR_TAG);
    CHECK_EQ(MPI_Send(&v, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    CHECK_EQ(MPI_Send(&v, 1, (MPI_Datatype)0x12345, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MPI_Datatype t;
    MPI_Type_contiguous(2, MPI_INT, &t);
    CHECK_EQ(MPI_Send(&v, 1, t, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE); /* not committed */
    MPI_Type_commit(&t);
    MPI_Datatype stale = t;
    MPI_Type_free(&t);
    CHECK_EQ(MPI_Send(&v, 1, stale, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE); /* freed */
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, 0, (MPI_Comm)0x7777), MPI_ERR_COMM);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm freed = dup;
    MPI_Comm_free(&dup);
    CHECK_EQ(MPI_Send(&v, 1, MPI_INT, 0, 0, freed), MPI_ERR_COMM);
    CHECK_EQ(MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_EQ(MPI_Isend(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    MPI_Request bogus = MPI_REQUEST_NULL;
    CHECK_EQ(MPI_Request_free(&bogus), MPI_ERR_REQUEST);
    CHECK_EQ(MPI_Start(&bogus), MPI_ERR_REQUEST);

    /* Truncation: 4 ints into room for 2. */
    int four[4] = {1, 2, 3, 4};
    MPI_Irecv(w, 2, MPI_INT, rank, 3, MPI_COMM_WORLD, &r);
    MPI_Send(four, 4, MPI_INT, rank, 3, MPI_COMM_WORLD);
    CHECK_EQ(MPI_Wait(&r, &st), MPI_ERR_TRUNCATE);
    CHECK_EQ(st.MPI_ERROR, MPI_ERR_TRUNCATE);
    CHECK_EQ(w[0], 1);
    CHECK_EQ(w[1], 2);
    MPI_Send(four, 4, MPI_INT, rank, 4, MPI_COMM_WORLD);
    CHECK_EQ(MPI_Recv(w, 3, MPI_INT, rank, 4, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
    MPI_Request rs[2];
    MPI_Status sts[2];
    MPI_Irecv(w, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &rs[0]);
    MPI_Irecv(w + 2, 2, MPI_INT, rank, 6, MPI_COMM_WORLD, &rs[1]);
    MPI_Send(four, 2, MPI_INT, rank, 5, MPI_COMM_WORLD);
    MPI_Send(four, 2, MPI_INT, rank, 6, MPI_COMM_WORLD);
    CHECK_EQ(MPI_Waitall(2, rs, sts), MPI_ERR_IN_STATUS);
    CHECK_EQ(sts[0].MPI_ERROR, MPI_ERR_TRUNCATE);
    CHECK_EQ(sts[1].MPI_ERROR, MPI_SUCCESS);

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && check_failures_ == 0)
        printf("p2p_errors: %d ranks ok\n", size);
    return check_summary();
}
