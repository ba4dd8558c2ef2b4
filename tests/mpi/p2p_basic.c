/* Point-to-point basics at any rank count: ring exchanges with blocking,
 * nonblocking and combined calls, every completion call, MPI_PROC_NULL,
 * zero-byte messages, statuses and MPI_Get_count. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

#define N 1000

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int sbuf[N], rbuf[N];
    MPI_Status st;
    int count;

    /* Blocking ring: even ranks send first (works for size 1 too: self). */
    for (int i = 0; i < N; i++)
        sbuf[i] = rank * N + i;
    MPI_Request rq;
    MPI_Irecv(rbuf, N, MPI_INT, left, 7, MPI_COMM_WORLD, &rq);
    CHECK_EQ(MPI_Send(sbuf, N, MPI_INT, right, 7, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&rq, &st), MPI_SUCCESS);
    CHECK(rq == MPI_REQUEST_NULL);
    CHECK_EQ(st.MPI_SOURCE, left);
    CHECK_EQ(st.MPI_TAG, 7);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, N);
    CHECK_EQ(rbuf[0], left * N);
    CHECK_EQ(rbuf[N - 1], left * N + N - 1);

    /* Sendrecv and Sendrecv_replace around the ring, many rounds. */
    for (int round = 0; round < 50; round++) {
        int v = rank * 100 + round, w = -1;
        CHECK_EQ(MPI_Sendrecv(&v, 1, MPI_INT, right, round, &w, 1, MPI_INT, left, round,
                              MPI_COMM_WORLD, &st),
                 MPI_SUCCESS);
        CHECK_EQ(w, left * 100 + round);
        int x = rank;
        CHECK_EQ(MPI_Sendrecv_replace(&x, 1, MPI_INT, right, 1, left, 1, MPI_COMM_WORLD, &st),
                 MPI_SUCCESS);
        CHECK_EQ(x, left);
    }

    /* Many outstanding requests: Waitall, Waitany, Waitsome, Testall... */
    enum { K = 16 };
    int out[K], in[K];
    MPI_Request reqs[2 * K];
    MPI_Status sts[2 * K];
    for (int k = 0; k < K; k++) {
        out[k] = rank * 1000 + k;
        MPI_Irecv(&in[k], 1, MPI_INT, left, k, MPI_COMM_WORLD, &reqs[k]);
    }
    for (int k = K - 1; k >= 0; k--)
        MPI_Isend(&out[k], 1, MPI_INT, right, k, MPI_COMM_WORLD, &reqs[K + k]);
    CHECK_EQ(MPI_Waitall(2 * K, reqs, sts), MPI_SUCCESS);
    for (int k = 0; k < K; k++) {
        CHECK_EQ(in[k], left * 1000 + k);
        CHECK_EQ(sts[k].MPI_TAG, k);
        CHECK(reqs[k] == MPI_REQUEST_NULL);
    }
    for (int k = 0; k < K; k++)
        MPI_Irecv(&in[k], 1, MPI_INT, left, 100 + k, MPI_COMM_WORLD, &reqs[k]);
    for (int k = 0; k < K; k++)
        MPI_Send(&out[k], 1, MPI_INT, right, 100 + k, MPI_COMM_WORLD);
    int seen = 0, idx;
    while (seen < K) {
        CHECK_EQ(MPI_Waitany(K, reqs, &idx, &st), MPI_SUCCESS);
        CHECK(idx >= 0 && idx < K);
        CHECK_EQ(st.MPI_TAG, 100 + idx);
        CHECK_EQ(in[idx], left * 1000 + idx);
        seen++;
    }
    CHECK_EQ(MPI_Waitany(K, reqs, &idx, &st), MPI_SUCCESS);
    CHECK_EQ(idx, MPI_UNDEFINED);
    for (int k = 0; k < K; k++)
        MPI_Irecv(&in[k], 1, MPI_INT, left, 200 + k, MPI_COMM_WORLD, &reqs[k]);
    for (int k = 0; k < K; k++)
        MPI_Send(&out[k], 1, MPI_INT, right, 200 + k, MPI_COMM_WORLD);
    int indices[K], outcount;
    seen = 0;
    while (seen < K) {
        CHECK_EQ(MPI_Waitsome(K, reqs, &outcount, indices, sts), MPI_SUCCESS);
        CHECK(outcount >= 1);
        for (int j = 0; j < outcount; j++)
            CHECK_EQ(in[indices[j]], left * 1000 + indices[j]);
        seen += outcount;
    }
    CHECK_EQ(MPI_Testsome(K, reqs, &outcount, indices, sts), MPI_SUCCESS);
    CHECK_EQ(outcount, MPI_UNDEFINED);
    int flag = 0;
    MPI_Irecv(&in[0], 1, MPI_INT, left, 300, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(&in[1], 1, MPI_INT, left, 301, MPI_COMM_WORLD, &reqs[1]);
    CHECK_EQ(MPI_Testall(2, reqs, &flag, sts), MPI_SUCCESS);
    MPI_Send(&out[0], 1, MPI_INT, right, 301, MPI_COMM_WORLD);
    MPI_Send(&out[1], 1, MPI_INT, right, 300, MPI_COMM_WORLD);
    do {
        MPI_Testall(2, reqs, &flag, sts);
    } while (!flag);
    CHECK_EQ(in[0], left * 1000 + 1);
    CHECK_EQ(in[1], left * 1000);
    MPI_Irecv(&in[2], 1, MPI_INT, left, 302, MPI_COMM_WORLD, &reqs[0]);
    MPI_Send(&out[2], 1, MPI_INT, right, 302, MPI_COMM_WORLD);
    do {
        MPI_Testany(1, reqs, &idx, &flag, &st);
    } while (!flag);
    CHECK_EQ(idx, 0);
    CHECK_EQ(in[2], left * 1000 + 2);
    MPI_Irecv(&in[3], 1, MPI_INT, left, 303, MPI_COMM_WORLD, &reqs[0]);
    MPI_Send(&out[3], 1, MPI_INT, right, 303, MPI_COMM_WORLD);
    do {
        MPI_Request_get_status(reqs[0], &flag, &st);
    } while (!flag);
    CHECK(reqs[0] != MPI_REQUEST_NULL);
    CHECK_EQ(st.MPI_TAG, 303);
    MPI_Test(&reqs[0], &flag, &st);
    CHECK(flag && reqs[0] == MPI_REQUEST_NULL);

    /* MPI_PROC_NULL: completes at once with the standard's status. */
    CHECK_EQ(MPI_Send(sbuf, N, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(MPI_Recv(rbuf, N, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 0);

    /* Zero-byte messages and wildcards. */
    MPI_Irecv(NULL, 0, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq);
    MPI_Send(NULL, 0, MPI_INT, right, 42, MPI_COMM_WORLD);
    MPI_Wait(&rq, &st);
    CHECK_EQ(st.MPI_SOURCE, left);
    CHECK_EQ(st.MPI_TAG, 42);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK_EQ(count, 0);

    /* Statuses may be ignored everywhere. */
    MPI_Irecv(rbuf, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &rq);
    MPI_Send(sbuf, 1, MPI_INT, right, 5, MPI_COMM_WORLD);
    CHECK_EQ(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Irecv(rbuf, 1, MPI_INT, left, 6, MPI_COMM_WORLD, &reqs[0]);
    MPI_Send(sbuf, 1, MPI_INT, right, 6, MPI_COMM_WORLD);
    CHECK_EQ(MPI_Waitall(1, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && check_failures_ == 0)
        printf("p2p_basic: %d ranks ok\n", size);
    return check_summary();
}
