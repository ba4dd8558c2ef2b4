/*
 * The box of a pair of ranks (tiny messages, one line for both directions)
 * against the inbox and the locked paths:
 *  1. Ping-pong of bursts: ranks 2i and 2i+1 take turns sending each other
 *     1-5 messages whose sizes cycle over box (0-16 bytes in its line,
 *     17-2048 in its data area), inbox (up to 40, when the box is busy),
 *     eager (above 2048) and rendezvous (20000) sizes in standard, ready-free
 *     synchronous and nonblocking modes; the receiver takes them with a
 *     specific source in five ways (Recv, Irecv+Wait, Probe+Recv, Iprobe,
 *     Mprobe+Mrecv) and checks order and contents. A burst fills the box,
 *     so later messages of it go by the inbox or the locked path.
 *  2. A stream into a busy rank: every other rank sends rank 0 as many tiny
 *     messages as there are rounds in part 1 while rank 0 computes; rank 0 then takes them sender
 * by sender in turn (a specific source each time) and checks each sender's order.
 *  3. Both directions at once, no replies: every pair sends each other 300
 *     tiny messages with MPI_Send before either receives (the box is
 *     acknowledged by receives alone).
 *  4. Receives posted before the messages: rank 0 posts wildcard Irecvs,
 *     the others send into their boxes; one more Irecv is cancelled while
 *     a matching message may wait in a box.
 *  5. (first) Empty messages: pairs ping-pong 0-byte messages, the tag
 *     counting, past the wrap of the box's message counts (mod 256).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../check.h"
#include "p2p_msg.h"

static const int sizes[] = {8,  0,    16, 4,     12, 24,   8,    40, 1,   41,
                            16, 3000, 8,  20000, 2,  2048, 1000, 17, 2049};
#define NSIZES   ((int)(sizeof sizes / sizeof sizes[0]))
#define MAXBYTES 20000

/* Sends message seq of the sequence to peer, in a mode picked from seq. */
static void send_one(unsigned char *b, int me, int peer, int seq, MPI_Request *req)
{
    int n = sizes[seq % NSIZES];
    fill(b, n, me, seq);
    int mode = (seq / NSIZES + seq) % 5;
    if (mode == 3)
        MPI_Ssend(b, n, MPI_BYTE, peer, seq % 4, MPI_COMM_WORLD);
    else if (mode == 4)
        MPI_Isend(b, n, MPI_BYTE, peer, seq % 4, MPI_COMM_WORLD, req);
    else
        MPI_Send(b, n, MPI_BYTE, peer, seq % 4, MPI_COMM_WORLD);
}

/* Receives message seq from peer (a specific source) and checks it. */
static void recv_one(unsigned char *b, int peer, int seq)
{
    MPI_Status st;
    int tag = seq % 4, how = seq % 5;
    if (how == 0) {
        MPI_Recv(b, MAXBYTES, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
    } else if (how == 1) {
        MPI_Request r;
        MPI_Irecv(b, MAXBYTES, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, &st);
    } else if (how == 2) {
        MPI_Probe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Recv(b, MAXBYTES, MPI_BYTE, peer, st.MPI_TAG, MPI_COMM_WORLD, &st);
    } else if (how == 3) {
        int flag = 0;
        while (!flag)
            MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, &st);
        MPI_Recv(b, MAXBYTES, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st);
    } else {
        MPI_Message m;
        MPI_Mprobe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &m, &st);
        MPI_Mrecv(b, MAXBYTES, MPI_BYTE, &m, &st);
    }
    int n = -1;
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK_EQ(st.MPI_SOURCE, peer);
    CHECK_EQ(st.MPI_TAG, tag);
    CHECK_EQ(n, sizes[seq % NSIZES]);
    int bad = check_msg(b, n, peer, seq);
    if (bad)
        fprintf(stderr, "message %d from %d (%d bytes): %d bad bytes\n", seq, peer, n, bad);
    CHECK_EQ(bad, 0);
}

/* Part 1. */
static void bursts(int rank, int size, int rounds)
{
    int peer = rank ^ 1;
    if (peer >= size)
        return;
    unsigned char *b = malloc(MAXBYTES), *ib = malloc((size_t)5 * MAXBYTES);
    REQUIRE(b && ib);
    int sent = 0, got = 0;
    for (int r = 0; r < rounds; r++) {
        int k = 1 + (r * 7 + rank) % 5;
        if ((r & 1) == (rank & 1)) {
            MPI_Request reqs[5];
            int nreq = 0;
            for (int i = 0; i < k; i++) {
                reqs[nreq] = MPI_REQUEST_NULL;
                send_one(ib + (size_t)nreq * MAXBYTES, rank, peer, sent++, &reqs[nreq]);
                nreq++;
            }
            MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
        } else {
            int kp = 1 + (r * 7 + peer) % 5;
            for (int i = 0; i < kp; i++)
                recv_one(b, peer, got++);
        }
    }
    free(b);
    free(ib);
}

/* Part 2: m messages from each sender. */
static void stream(int rank, int size, int M)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
        for (int i = 0; i < M; i++) {
            int v[2] = {rank, i};
            MPI_Send(v, 2, MPI_INT, 0, 5 + i % 2, MPI_COMM_WORLD);
        }
    } else {
        burn(0.01);
        for (int i = 0; i < M; i++)
            for (int s = 1; s < size; s++) {
                int v[2] = {-1, -1};
                MPI_Status st;
                MPI_Recv(v, 2, MPI_INT, s, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                CHECK_EQ(v[0], s);
                CHECK_EQ(v[1], i);
                CHECK_EQ(st.MPI_TAG, 5 + i % 2);
            }
    }
}

/* Part 3. */
static void both_ways(int rank, int size)
{
    enum { M = 300 };
    int peer = rank ^ 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (peer >= size)
        return;
    for (int i = 0; i < M; i++) {
        long v = (long)rank * 100000 + i;
        MPI_Send(&v, 1, MPI_LONG, peer, 8, MPI_COMM_WORLD);
    }
    for (int i = 0; i < M; i++) {
        long v = -1;
        MPI_Recv(&v, 1, MPI_LONG, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_EQ(v, (long)peer * 100000 + i);
    }
}

/* Part 4. */
static void posted(int rank, int size)
{
    enum { K = 8 };
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int n = K * (size - 1);
        int *v = malloc(sizeof(int) * 2 * (size_t)n);
        MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t)n);
        REQUIRE(v && r);
        for (int i = 0; i < n; i++)
            MPI_Irecv(&v[2 * i], 2, MPI_INT, MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, &r[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
        int *next = calloc((size_t)size, sizeof(int));
        REQUIRE(next);
        for (int i = 0; i < n; i++) {
            int s = v[2 * i];
            REQUIRE(s > 0 && s < size);
            CHECK_EQ(v[2 * i + 1], next[s]);
            next[s]++;
        }
        /* A receive cancelled while a match may sit in a box: either it is
         * cancelled and the message stays, or it took the message. */
        int w = -1, flag = 0;
        MPI_Request c;
        MPI_Status st;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Irecv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 22, MPI_COMM_WORLD, &c);
        MPI_Cancel(&c);
        MPI_Wait(&c, &st);
        MPI_Test_cancelled(&st, &flag);
        int left = size - 1 - (flag ? 0 : 1);
        if (!flag)
            CHECK(w > 0 && w < size);
        for (int i = 0; i < left; i++) {
            MPI_Recv(&w, 1, MPI_INT, MPI_ANY_SOURCE, 22, MPI_COMM_WORLD, &st);
            CHECK_EQ(w, st.MPI_SOURCE);
        }
        free(v);
        free(r);
        free(next);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < K; i++) {
            int v[2] = {rank, i};
            MPI_Send(v, 2, MPI_INT, 0, 21, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(&rank, 1, MPI_INT, 0, 22, MPI_COMM_WORLD);
    }
}

/* Part 5. */
static void empty(int rank, int size)
{
    enum { M = 700 };
    int peer = rank ^ 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (peer >= size)
        return;
    for (int i = 0; i < M; i++) {
        MPI_Status st;
        if ((i & 1) == (rank & 1)) {
            MPI_Send(NULL, 0, MPI_INT, peer, i, MPI_COMM_WORLD);
        } else {
            MPI_Recv(NULL, 0, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            CHECK_EQ(st.MPI_TAG, i);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 400;
    empty(rank, size); /* first: on fresh boxes, both counts wrap together */
    bursts(rank, size, rounds);
    stream(rank, size, rounds);
    both_ways(rank, size);
    posted(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    int rc = check_summary();
    int all = 0;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !all)
        printf("p2p_box: %d ranks ok\n", size);
    MPI_Finalize();
    return rc;
}
