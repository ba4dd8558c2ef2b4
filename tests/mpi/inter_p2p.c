/* Point-to-point on an intercommunicator: ranks name the remote group.
 * Every rank sends to every remote rank (Isend) and receives from
 * MPI_ANY_SOURCE, checking status.MPI_SOURCE (a remote rank) and the
 * payload; Sendrecv, Ssend, Probe/Iprobe, Mprobe/Mrecv, persistent requests,
 * a 1 MiB message (the rendezvous path), MPI_PROC_NULL, and an
 * intercommunicator's messages not matching another one's with the same
 * ranks and tags. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "inter_util.h"

/* Everyone to everyone in the other group, received with MPI_ANY_SOURCE. */
static void all_pairs(MPI_Comm inter, int tag)
{
    int *out = malloc((size_t)RSIZE * sizeof *out);
    MPI_Request *reqs = malloc((size_t)RSIZE * sizeof *reqs);
    char *seen = calloc((size_t)RSIZE, 1);
    for (int j = 0; j < RSIZE; j++) {
        out[j] = wrank * 1000 + j;
        MPI_Isend(&out[j], 1, MPI_INT, j, tag, inter, &reqs[j]);
    }
    for (int k = 0; k < RSIZE; k++) {
        int v = -1;
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, tag, inter, &st);
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < RSIZE);
        CHECK_EQ(st.MPI_TAG, tag);
        if (st.MPI_SOURCE >= 0 && st.MPI_SOURCE < RSIZE) {
            CHECK(!seen[st.MPI_SOURCE]);
            seen[st.MPI_SOURCE] = 1;
            CHECK_EQ(v, REMOTE(st.MPI_SOURCE) * 1000 + lrank);
        }
    }
    MPI_Waitall(RSIZE, reqs, MPI_STATUSES_IGNORE);
    free(out);
    free(reqs);
    free(seen);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    inter_sides();
    if (wsize < 2) {
        if (wrank == 0)
            printf("inter_p2p: %d ranks ok\n", wsize); /* an intercommunicator needs two */
        MPI_Finalize();
        return 0;
    }
    MPI_Comm inter = inter_make(NULL, 11), other = inter_make(NULL, 12);
    all_pairs(inter, 5);

    /* The same ranks and tag on two intercommunicators do not mix: post the
     * receive on `other` first, send on `inter` first. */
    int pairs = LSIZE < RSIZE ? LSIZE : RSIZE;
    if (lrank < pairs) {
        int a = -1, b = -1, sa = wrank, sb = -wrank;
        MPI_Request r[4];
        MPI_Irecv(&b, 1, MPI_INT, lrank, 0, other, &r[0]);
        MPI_Irecv(&a, 1, MPI_INT, lrank, 0, inter, &r[1]);
        MPI_Isend(&sa, 1, MPI_INT, lrank, 0, inter, &r[2]);
        MPI_Isend(&sb, 1, MPI_INT, lrank, 0, other, &r[3]);
        MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
        CHECK_EQ(a, REMOTE(lrank));
        CHECK_EQ(b, -REMOTE(lrank));

        /* Sendrecv with the partner of the same local rank */
        int got = -1;
        MPI_Status st;
        MPI_Sendrecv(&wrank, 1, MPI_INT, lrank, 1, &got, 1, MPI_INT, lrank, 1, inter, &st);
        CHECK_EQ(got, REMOTE(lrank));
        CHECK_EQ(st.MPI_SOURCE, lrank);

        /* persistent requests, started twice */
        int ps = 0, pr = -1;
        MPI_Request q[2];
        MPI_Send_init(&ps, 1, MPI_INT, lrank, 2, inter, &q[0]);
        MPI_Recv_init(&pr, 1, MPI_INT, MPI_ANY_SOURCE, 2, inter, &q[1]);
        for (int it = 0; it < 2; it++) {
            ps = wrank + it;
            MPI_Startall(2, q);
            MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
            CHECK_EQ(pr, REMOTE(lrank) + it);
        }
        MPI_Request_free(&q[0]);
        MPI_Request_free(&q[1]);
    }

    /* Remote rank 0 of each side sends 100 ints to every member of the other
     * side: Probe, then Mprobe, tells the source and the size. */
    int *big = calloc(200, sizeof(int));
    MPI_Request *sreq = malloc(2 * (size_t)RSIZE * sizeof *sreq);
    if (lrank == 0)
        for (int j = 0; j < RSIZE; j++) {
            MPI_Issend(big, 100, MPI_INT, j, 3, inter, &sreq[2 * j]);
            MPI_Isend(big, 150, MPI_INT, j, 4, inter, &sreq[2 * j + 1]);
        }
    {
        MPI_Status st;
        int count = -1, flag = 0;
        MPI_Probe(MPI_ANY_SOURCE, 3, inter, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK_EQ(st.MPI_SOURCE, 0);
        CHECK_EQ(count, 100);
        int buf[200];
        MPI_Recv(buf, 200, MPI_INT, st.MPI_SOURCE, 3, inter, MPI_STATUS_IGNORE);
        while (!flag)
            MPI_Iprobe(0, 4, inter, &flag, &st);
        MPI_Message msg;
        MPI_Mprobe(0, 4, inter, &msg, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK_EQ(count, 150);
        MPI_Mrecv(buf, 200, MPI_INT, &msg, &st);
        CHECK_EQ(st.MPI_SOURCE, 0);
    }
    if (lrank == 0)
        MPI_Waitall(2 * RSIZE, sreq, MPI_STATUSES_IGNORE);
    free(sreq);
    free(big);

    /* 1 MiB between the two local ranks 0, both ways. */
    if (lrank == 0) {
        size_t n = 1 << 18;
        int *s = malloc(n * sizeof *s), *r = malloc(n * sizeof *r);
        for (size_t i = 0; i < n; i++)
            s[i] = (int)i ^ wrank;
        MPI_Sendrecv(s, (int)n, MPI_INT, 0, 9, r, (int)n, MPI_INT, 0, 9, inter, MPI_STATUS_IGNORE);
        int bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += r[i] != ((int)i ^ REMOTE(0));
        CHECK_EQ(bad, 0);
        free(s);
        free(r);
    }

    /* MPI_PROC_NULL */
    {
        int v = 7;
        MPI_Status st;
        MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, inter);
        MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, inter, &st);
        CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
        CHECK_EQ(v, 7);
    }

    all_pairs(other, 6);
    MPI_Comm_free(&other);
    MPI_Comm_free(&inter);
    return inter_finish("inter_p2p");
}
