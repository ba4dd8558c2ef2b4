/*
 * The inbox of tiny messages against the other protocols:
 *  1. Order across protocols: every rank sends to rank 0 a sequence whose
 *     sizes cycle over inbox (0, 8, 40 bytes), inbox with an eager cell (41,
 *     200, 256), eager (257, 4000) and rendezvous (20000) sizes, in standard,
 *     synchronous, buffered and nonblocking modes; rank 0 takes them with
 *     wildcards, probes (Probe, Iprobe, Mprobe/Mrecv) and checks each
 *     sender's order and contents.
 *  2. A full inbox: rank 0 does not call MPI while the others send it 300
 *     messages each (more than the inbox holds), tiny and in cells in turn,
 *     then receives them in order.
 *  3. Progress through MPI_Test: a receive posted with MPI_Irecv completes
 *     while its owner only calls MPI_Test.
 *  4. Cancel with a match waiting in the inbox: the receive is either
 *     cancelled, and the message stays for the next receive, or completed.
 *  5. Truncation of a message in a cell, by MPI_Recv and by MPI_Irecv: the
 *     error class, the count of what fitted, and the next message intact.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../check.h"
#include "p2p_msg.h"

static const int sizes[] = {0, 8, 40, 41, 200, 4000, 20000, 8, 4, 40, 256, 257};
#define NSIZES   ((int)(sizeof sizes / sizeof sizes[0]))
#define MAXBYTES 20000

/* Part 1: each sender's sequence over all sizes and modes. */
static void mixed(int rank, int size, int rounds)
{
    unsigned char *b = malloc(MAXBYTES);
    REQUIRE(b);
    int total = rounds * NSIZES;
    if (rank != 0) {
        int bsize = 4 * (MAXBYTES + MPI_BSEND_OVERHEAD);
        void *battach = malloc((size_t)bsize);
        MPI_Buffer_attach(battach, bsize);
        unsigned char *ib = malloc((size_t)total * MAXBYTES / 4 + MAXBYTES);
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)total);
        REQUIRE(ib && reqs);
        size_t at = 0;
        int nreq = 0;
        for (int seq = 0; seq < total; seq++) {
            int n = sizes[seq % NSIZES], mode = (seq / NSIZES + seq) % 4;
            if (mode == 3 && at + (size_t)n > (size_t)total * MAXBYTES / 4)
                mode = 0;
            int tag = seq % 3;
            if (mode == 3) {
                /* nonblocking: the buffer stays untouched until Waitall */
                fill(ib + at, n, rank, seq);
                MPI_Isend(ib + at, n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &reqs[nreq++]);
                at += (size_t)n;
                continue;
            }
            fill(b, n, rank, seq);
            if (mode == 0)
                MPI_Send(b, n, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
            else if (mode == 1)
                MPI_Ssend(b, n, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
            else
                MPI_Bsend(b, n, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
        }
        MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
        int dsize;
        MPI_Buffer_detach(&battach, &dsize);
        free(battach);
        free(ib);
        free(reqs);
    } else {
        int *next = calloc((size_t)size, sizeof(int));
        REQUIRE(next);
        for (int k = 0; k < total * (size - 1); k++) {
            MPI_Status st;
            int how = k % 5;
            if (how == 0) {
                MPI_Recv(b, MAXBYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            } else if (how == 1) {
                MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                MPI_Recv(b, MAXBYTES, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
            } else if (how == 2) {
                int flag = 0;
                while (!flag)
                    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
                int cnt = -1;
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                MPI_Status st2;
                MPI_Recv(b, MAXBYTES, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st2);
                int cnt2 = -1;
                MPI_Get_count(&st2, MPI_BYTE, &cnt2);
                CHECK_EQ(cnt2, cnt);
                st = st2;
            } else if (how == 3) {
                MPI_Message msg;
                MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st);
                MPI_Mrecv(b, MAXBYTES, MPI_BYTE, &msg, &st);
            } else {
                MPI_Request r;
                MPI_Irecv(b, MAXBYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, &st);
            }
            int src = st.MPI_SOURCE, n = -1;
            REQUIRE(src > 0 && src < size);
            MPI_Get_count(&st, MPI_BYTE, &n);
            int seq = next[src]++;
            CHECK_EQ(n, sizes[seq % NSIZES]);
            CHECK_EQ(st.MPI_TAG, seq % 3);
            int bad = check_msg(b, n, src, seq);
            if (bad)
                fprintf(stderr, "message %d from %d (%d bytes): %d bad bytes\n", seq, src, n, bad);
            CHECK_EQ(bad, 0);
        }
        for (int s = 1; s < size; s++)
            CHECK_EQ(next[s], total);
        free(next);
    }
    free(b);
}

/* Part 2: more messages than the inbox holds, to a rank that is busy:
 * 2 ints (in the slot) and 50 ints (in a cell) in turn. */
static void overflow(int rank, int size)
{
    enum { M = 300, BIG = 50 };
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
        for (int i = 0; i < M; i++) {
            int v[BIG];
            for (int j = 0; j < BIG; j++)
                v[j] = rank * 1000 + i + j;
            v[0] = rank;
            v[1] = i;
            MPI_Send(v, i % 2 ? BIG : 2, MPI_INT, 0, 9, MPI_COMM_WORLD);
        }
    } else {
        burn(0.02); /* no MPI call: the inbox fills up */
        int *next = calloc((size_t)size, sizeof(int));
        REQUIRE(next);
        for (int k = 0; k < M * (size - 1); k++) {
            int v[BIG] = {-1, -1};
            MPI_Status st;
            MPI_Recv(v, BIG, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st);
            REQUIRE(v[0] > 0 && v[0] < size);
            CHECK_EQ(st.MPI_SOURCE, v[0]);
            CHECK_EQ(v[1], next[v[0]]);
            int n = -1;
            MPI_Get_count(&st, MPI_INT, &n);
            CHECK_EQ(n, v[1] % 2 ? BIG : 2);
            int bad = 0;
            for (int j = 2; j < n; j++)
                bad += v[j] != v[0] * 1000 + v[1] + j;
            CHECK_EQ(bad, 0);
            next[v[0]] = v[1] + 1;
        }
        free(next);
    }
}

/* Part 5: a message in a cell received into too small a buffer. */
static void truncate_cell(int rank)
{
    enum { N = 200, CAP = 120 };
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        unsigned char b[N];
        for (int k = 0; k < 3; k++) {
            fill(b, N, rank, k);
            MPI_Send(b, N, MPI_BYTE, 0, 12, MPI_COMM_WORLD);
        }
    } else if (rank == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        unsigned char b[N];
        MPI_Status st;
        for (int k = 0; k < 2; k++) {
            int rc;
            if (k == 0) {
                rc = MPI_Recv(b, CAP, MPI_BYTE, 1, 12, MPI_COMM_WORLD, &st);
            } else {
                MPI_Request r;
                MPI_Irecv(b, CAP, MPI_BYTE, 1, 12, MPI_COMM_WORLD, &r);
                rc = MPI_Wait(&r, &st);
                if (rc == MPI_ERR_IN_STATUS)
                    rc = st.MPI_ERROR;
            }
            int cls = -1, n = -1;
            MPI_Error_class(rc, &cls);
            CHECK_EQ(cls, MPI_ERR_TRUNCATE);
            MPI_Get_count(&st, MPI_BYTE, &n);
            CHECK_EQ(n, CAP);
            CHECK_EQ(check_msg(b, CAP, 1, k), 0);
        }
        CHECK_EQ(MPI_Recv(b, N, MPI_BYTE, 1, 12, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        CHECK_EQ(check_msg(b, N, 1, 2), 0);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
}

/* Part 3: MPI_Test alone makes progress. */
static void test_progress(int rank, int size)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int v = -1, w = rank;
    MPI_Request r;
    MPI_Irecv(&v, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(&w, 1, MPI_INT, right, 11, MPI_COMM_WORLD);
    int flag = 0;
    long spins = 0;
    while (!flag) {
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        spins++;
    }
    CHECK_EQ(v, left);
    CHECK(spins > 0);
}

/* Part 4: cancel a receive whose message waits in the inbox. */
static void cancel_with_match(int rank)
{
    int v = rank + 100, got = -1;
    MPI_Send(&v, 1, MPI_INT, 0, 13, MPI_COMM_SELF);
    MPI_Request r;
    MPI_Irecv(&got, 1, MPI_INT, 0, 13, MPI_COMM_SELF, &r);
    MPI_Cancel(&r);
    MPI_Status st;
    MPI_Wait(&r, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    if (cancelled) {
        CHECK_EQ(got, -1);
        MPI_Recv(&got, 1, MPI_INT, 0, 13, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    }
    CHECK_EQ(got, rank + 100);
    int flag = 1;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
    CHECK_EQ(flag, 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    if (size > 1) {
        mixed(rank, size, rounds);
        overflow(rank, size);
    }
    test_progress(rank, size);
    cancel_with_match(rank);
    if (size > 1)
        truncate_cell(rank);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && check_failures_ == 0)
        printf("p2p_inbox: %d ranks ok\n", size);
    return check_summary();
}
