/* MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.1 3.10): around a ring
 * (small, and large enough for the rendezvous path), with oneself, with
 * MPI_PROC_NULL; completed by MPI_Wait, MPI_Test polling, MPI_Waitany and
 * MPI_Waitsome over several; the status is the receive's; a replace whose
 * request is freed while active still delivers. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "../check.h"

static int rank, size, left, right;

static void complete(MPI_Request *req, MPI_Status *st, int how)
{
    if (how == 0) {
        CHECK_EQ(MPI_Wait(req, st), MPI_SUCCESS);
    } else {
        int flag = 0;
        while (!flag)
            CHECK_EQ(MPI_Test(req, &flag, st), MPI_SUCCESS);
    }
    CHECK(*req == MPI_REQUEST_NULL);
}

/* Ring: send to the right, receive from the left, n ints. */
static void ring(int n, int how)
{
    int *s = malloc(sizeof(int) * (size_t)n), *r = malloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++)
        s[i] = rank * 100000 + i;
    for (int i = 0; i <= n; i++)
        r[i] = -1;
    MPI_Request req;
    MPI_Status st;
    CHECK_EQ(
        MPI_Isendrecv(s, n, MPI_INT, right, 7, r, n + 1, MPI_INT, left, 7, MPI_COMM_WORLD, &req),
        MPI_SUCCESS);
    complete(&req, &st, how);
    CHECK_EQ(st.MPI_SOURCE, left);
    CHECK_EQ(st.MPI_TAG, 7);
    int got = -1;
    MPI_Get_count(&st, MPI_INT, &got);
    CHECK_EQ(got, n);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += r[i] != left * 100000 + i;
    CHECK_EQ(bad, 0);
    CHECK_EQ(r[n], -1);
    free(s);
    free(r);
}

/* Ring in place: each rank ends with its left neighbour's data. */
static void ring_replace(int n, int how)
{
    int *b = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        b[i] = rank * 100000 + i;
    MPI_Request req;
    MPI_Status st;
    CHECK_EQ(
        MPI_Isendrecv_replace(b, n, MPI_INT, right, 3, left, MPI_ANY_TAG, MPI_COMM_WORLD, &req),
        MPI_SUCCESS);
    complete(&req, &st, how);
    CHECK_EQ(st.MPI_SOURCE, left);
    CHECK_EQ(st.MPI_TAG, 3);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += b[i] != left * 100000 + i;
    CHECK_EQ(bad, 0);
    free(b);
}

static void self_and_null(void)
{
    int a = rank + 1, b = -1;
    MPI_Request req;
    MPI_Status st;
    CHECK_EQ(MPI_Isendrecv(&a, 1, MPI_INT, rank, 1, &b, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, &req),
             MPI_SUCCESS);
    complete(&req, &st, 0);
    CHECK_EQ(b, rank + 1);
    CHECK_EQ(st.MPI_SOURCE, rank);
    b = 5;
    CHECK_EQ(MPI_Isendrecv(&a, 1, MPI_INT, MPI_PROC_NULL, 1, &b, 1, MPI_INT, MPI_PROC_NULL, 1,
                           MPI_COMM_WORLD, &req),
             MPI_SUCCESS);
    complete(&req, &st, 1);
    CHECK_EQ(b, 5);
    CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
    int got = -1;
    MPI_Get_count(&st, MPI_INT, &got);
    CHECK_EQ(got, 0);
    /* Send to oneself, receive from nobody (and the other way round). */
    b = -1;
    int c = -1;
    MPI_Request two[2];
    CHECK_EQ(MPI_Isendrecv(&a, 1, MPI_INT, rank, 2, &b, 1, MPI_INT, MPI_PROC_NULL, 2,
                           MPI_COMM_WORLD, &two[0]),
             MPI_SUCCESS);
    CHECK_EQ(MPI_Isendrecv(&a, 1, MPI_INT, MPI_PROC_NULL, 2, &c, 1, MPI_INT, rank, 2,
                           MPI_COMM_WORLD, &two[1]),
             MPI_SUCCESS);
    CHECK_EQ(MPI_Waitall(2, two, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK_EQ(b, -1);
    CHECK_EQ(c, rank + 1);
    int x = rank * 2;
    CHECK_EQ(MPI_Isendrecv_replace(&x, 1, MPI_INT, rank, 4, rank, 4, MPI_COMM_WORLD, &req),
             MPI_SUCCESS);
    complete(&req, &st, 0);
    CHECK_EQ(x, rank * 2);
}

/* Several pairs at once, completed in any order by Waitany and Waitsome. */
static void many(int n)
{
    enum { K = 4 };
    int *s = malloc(sizeof(int) * (size_t)n * K), *r = malloc(sizeof(int) * (size_t)n * K);
    MPI_Request reqs[K];
    for (int k = 0; k < K; k++) {
        for (int i = 0; i < n; i++) {
            s[k * n + i] = rank * 1000 + k * 10 + i;
            r[k * n + i] = -1;
        }
        /* Even k: to the right; odd k: to the left. */
        int to = k % 2 ? left : right, from = k % 2 ? right : left;
        CHECK_EQ(MPI_Isendrecv(s + k * n, n, MPI_INT, to, 20 + k, r + k * n, n, MPI_INT, from,
                               20 + k, MPI_COMM_WORLD, &reqs[k]),
                 MPI_SUCCESS);
    }
    int done = 0, idx, out, indices[K];
    MPI_Status st, sts[K];
    CHECK_EQ(MPI_Waitany(K, reqs, &idx, &st), MPI_SUCCESS);
    CHECK(idx >= 0 && idx < K);
    CHECK_EQ(st.MPI_TAG, 20 + idx);
    done++;
    while (done < K) {
        CHECK_EQ(MPI_Waitsome(K, reqs, &out, indices, sts), MPI_SUCCESS);
        CHECK(out > 0);
        for (int j = 0; j < out; j++)
            CHECK_EQ(sts[j].MPI_TAG, 20 + indices[j]);
        done += out;
    }
    for (int k = 0; k < K; k++) {
        int from = k % 2 ? right : left, bad = 0;
        for (int i = 0; i < n; i++)
            bad += r[k * n + i] != from * 1000 + k * 10 + i;
        CHECK_EQ(bad, 0);
    }
    free(s);
    free(r);
}

/* A replace freed while active still delivers: the receive lands in the
 * buffer, the send's copy is kept until it is done. */
static void freed_active(int n)
{
    int *b = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        b[i] = rank + i;
    MPI_Request req;
    CHECK_EQ(MPI_Isendrecv_replace(b, n, MPI_INT, right, 9, left, 9, MPI_COMM_WORLD, &req),
             MPI_SUCCESS);
    CHECK_EQ(MPI_Request_free(&req), MPI_SUCCESS);
    CHECK(req == MPI_REQUEST_NULL);
    /* Ordered after the exchange: a message on the same pair of ranks. */
    int token = 0;
    MPI_Sendrecv(&token, 1, MPI_INT, right, 9, &token, 1, MPI_INT, left, 9, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += b[i] != left + i;
    CHECK_EQ(bad, 0);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    const int sizes[] = {0, 1, 10, 300, 20000};
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            ring(sizes[i], round % 2);
            ring_replace(sizes[i], (round + 1) % 2);
        }
    self_and_null();
    many(5);
    many(10000);
    freed_active(8);
    freed_active(30000);
    int failed = check_failures_, all = 0;
    MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("mpi4_isendrecv: %d ranks ok\n", size);
    MPI_Finalize();
    return check_summary();
}
