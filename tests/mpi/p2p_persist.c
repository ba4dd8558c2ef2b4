/* Persistent requests restarted many times (Start, Startall), and
 * cancellation: a receive nobody sends to, a synchronous send nobody
 * receives, and a cancel that comes too late. */
#include <mpi.h>
#include <stdio.h>

#include "../check.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = 0, in = -1;
    MPI_Request reqs[2];
    MPI_Status sts[2];
    CHECK_EQ(MPI_Recv_init(&in, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);
    CHECK_EQ(MPI_Send_init(&out, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
    /* Inactive persistent requests complete at once with an empty status. */
    CHECK_EQ(MPI_Wait(&reqs[0], &sts[0]), MPI_SUCCESS);
    CHECK(reqs[0] != MPI_REQUEST_NULL);
    for (int i = 0; i < 2000; i++) {
        out = rank * 10000 + i;
        if (i % 2)
            CHECK_EQ(MPI_Startall(2, reqs), MPI_SUCCESS);
        else {
            CHECK_EQ(MPI_Start(&reqs[0]), MPI_SUCCESS);
            CHECK_EQ(MPI_Start(&reqs[1]), MPI_SUCCESS);
        }
        CHECK_EQ(MPI_Waitall(2, reqs, sts), MPI_SUCCESS);
        CHECK_EQ(in, left * 10000 + i);
        CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Start(&reqs[0]);
    CHECK_EQ(MPI_Start(&reqs[0]), MPI_ERR_REQUEST); /* already active */
    MPI_Start(&reqs[1]);
    MPI_Waitall(2, reqs, sts);
    CHECK_EQ(MPI_Request_free(&reqs[0]), MPI_SUCCESS);
    CHECK_EQ(MPI_Request_free(&reqs[1]), MPI_SUCCESS);
    CHECK(reqs[0] == MPI_REQUEST_NULL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* Cancel a receive that no one sends to. */
    MPI_Request r;
    int flag = 0;
    MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &r);
    CHECK_EQ(MPI_Cancel(&r), MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&r, &sts[0]), MPI_SUCCESS);
    MPI_Test_cancelled(&sts[0], &flag);
    CHECK_EQ(flag, 1);
    /* Cancel a synchronous send that no one receives. */
    MPI_Issend(&out, 1, MPI_INT, right, 23456, MPI_COMM_WORLD, &r);
    CHECK_EQ(MPI_Cancel(&r), MPI_SUCCESS);
    MPI_Wait(&r, &sts[0]);
    MPI_Test_cancelled(&sts[0], &flag);
    CHECK_EQ(flag, 1);
    /* A completed receive cannot be cancelled. */
    MPI_Irecv(&in, 1, MPI_INT, left, 77, MPI_COMM_WORLD, &r);
    MPI_Send(&out, 1, MPI_INT, right, 77, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Cancel(&r);
    MPI_Wait(&r, &sts[0]);
    MPI_Test_cancelled(&sts[0], &flag);
    CHECK_EQ(flag, 0);
    CHECK_EQ(in, out - out + left * 10000 + 1999);

    /* Request_free on an active request: the operation still completes. */
    MPI_Isend(&out, 1, MPI_INT, right, 88, MPI_COMM_WORLD, &r);
    MPI_Request_free(&r);
    MPI_Recv(&in, 1, MPI_INT, left, 88, MPI_COMM_WORLD, &sts[0]);
    CHECK_EQ(in, left * 10000 + 1999);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && check_failures_ == 0)
        printf("p2p_persist: %d ranks ok\n", size);
    return check_summary();
}
