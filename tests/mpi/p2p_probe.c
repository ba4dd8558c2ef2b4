/* Probe, Iprobe, Mprobe, Improbe, Mrecv, Imrecv: every rank sends messages of
 * varying size to rank 0, which learns each size by probing and receives
 * exactly that much. Mprobe'd messages cannot be taken by a later receive. */
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
    enum { PER = 24 };
    MPI_Status st;
    if (rank != 0) {
        for (int i = 0; i < PER; i++) {
            int n = 1 + (rank * 131 + i * 977) % 9000;
            int *b = malloc((size_t)n * sizeof(int));
            for (int k = 0; k < n; k++)
                b[k] = rank + i + k;
            MPI_Send(b, n, MPI_INT, 0, i, MPI_COMM_WORLD);
            free(b);
        }
    } else {
        int got = 0, total = PER * (size - 1);
        while (got < total) {
            int n, flag = 0;
            MPI_Message msg;
            int *b;
            switch (got % 4) {
            case 0:
                CHECK_EQ(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st), MPI_SUCCESS);
                MPI_Get_count(&st, MPI_INT, &n);
                b = malloc((size_t)n * sizeof(int));
                MPI_Recv(b, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
                break;
            case 1:
                while (!flag)
                    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
                MPI_Get_count(&st, MPI_INT, &n);
                b = malloc((size_t)n * sizeof(int));
                MPI_Recv(b, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
                break;
            case 2:
                CHECK_EQ(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st),
                         MPI_SUCCESS);
                MPI_Get_count(&st, MPI_INT, &n);
                b = malloc((size_t)n * sizeof(int));
                CHECK_EQ(MPI_Mrecv(b, n, MPI_INT, &msg, &st), MPI_SUCCESS);
                CHECK(msg == MPI_MESSAGE_NULL);
                break;
            default: {
                while (!flag)
                    MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
                MPI_Get_count(&st, MPI_INT, &n);
                b = malloc((size_t)n * sizeof(int));
                MPI_Request r;
                CHECK_EQ(MPI_Imrecv(b, n, MPI_INT, &msg, &r), MPI_SUCCESS);
                MPI_Wait(&r, &st);
                break;
            }
            }
            int src = st.MPI_SOURCE, i = st.MPI_TAG, cnt;
            MPI_Get_count(&st, MPI_INT, &cnt);
            CHECK_EQ(cnt, n);
            CHECK_EQ(n, 1 + (src * 131 + i * 977) % 9000);
            CHECK_EQ(b[0], src + i);
            CHECK_EQ(b[n - 1], src + i + n - 1);
            free(b);
            got++;
        }
        /* Probing MPI_PROC_NULL answers at once. */
        MPI_Message msg;
        CHECK_EQ(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st), MPI_SUCCESS);
        CHECK(msg == MPI_MESSAGE_NO_PROC);
        CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
        CHECK_EQ(MPI_Mrecv(NULL, 0, MPI_INT, &msg, &st), MPI_SUCCESS);
        int flag = 1;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        CHECK_EQ(flag, 0);
    }
    /* A message taken by Mprobe is not matched by a receive posted later. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (size > 1 && rank < 2) {
        int peer = 1 - rank, v = 10 + rank, w = -1;
        if (rank == 1) {
            MPI_Send(&v, 1, MPI_INT, peer, 50, MPI_COMM_WORLD);
            MPI_Send(&v, 1, MPI_INT, peer, 50, MPI_COMM_WORLD);
        } else {
            MPI_Message m;
            MPI_Mprobe(1, 50, MPI_COMM_WORLD, &m, &st);
            MPI_Request r;
            MPI_Irecv(&w, 1, MPI_INT, 1, 50, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, &st);
            CHECK_EQ(w, 11);
            w = -1;
            MPI_Mrecv(&w, 1, MPI_INT, &m, &st);
            CHECK_EQ(w, 11);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && check_failures_ == 0)
        printf("p2p_probe: %d ranks ok\n", size);
    return check_summary();
}
