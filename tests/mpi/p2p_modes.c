/* Send modes: MPI_Ssend returns only after the receive matched (the
 * receiver records "about to receive" in a shared library before posting,
 * after a delay); ready sends to posted receives; buffered sends through an
 * attached buffer, also when the receiver is late; MPI_ERR_BUFFER when the
 * buffer is too small. Pairs (0,1), (2,3)... */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../check.h"
#include "shared_counter.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    bool paired = peer < size;
    MPI_Status st;
    if (paired) {
        for (int round = 0; round < 20; round++) {
            int key = 1000 + (rank & ~1) * 64 + round; /* one counter per pair and round */
            int v = round;
            if (rank % 2 == 0) {
                CHECK_EQ(MPI_Ssend(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD), MPI_SUCCESS);
                CHECK_EQ(shared_count(key), 1);
            } else {
                for (volatile int i = 0; i < 20000; i++)
                    ;
                if (round % 4 == 0)
                    usleep(1000);
                shared_arrive(key);
                int w = -1;
                MPI_Recv(&w, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &st);
                CHECK_EQ(w, round);
            }
        }
        /* Issend: not complete before the receive is posted. */
        int v = 5, w = 0, flag = 1;
        MPI_Request r;
        if (rank % 2 == 0) {
            MPI_Issend(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &r);
            MPI_Test(&r, &flag, &st);
            CHECK_EQ(flag, 0);
            MPI_Send(&v, 1, MPI_INT, peer, 3, MPI_COMM_WORLD);
            MPI_Wait(&r, &st);
        } else {
            MPI_Recv(&w, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, &st);
            MPI_Recv(&w, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &st);
            CHECK_EQ(w, 5);
        }
        /* Ready mode: the receive is posted before the go-ahead. */
        if (rank % 2 == 1) {
            MPI_Irecv(&w, 1, MPI_INT, peer, 4, MPI_COMM_WORLD, &r);
            MPI_Send(NULL, 0, MPI_INT, peer, 5, MPI_COMM_WORLD);
            MPI_Wait(&r, &st);
            CHECK_EQ(w, 77);
        } else {
            MPI_Recv(NULL, 0, MPI_INT, peer, 5, MPI_COMM_WORLD, &st);
            v = 77;
            CHECK_EQ(MPI_Rsend(&v, 1, MPI_INT, peer, 4, MPI_COMM_WORLD), MPI_SUCCESS);
        }
        /* Buffered: sends complete before the receiver even starts. */
        enum { M = 10, LEN = 5000 };
        if (rank % 2 == 0) {
            int bsize = M * (LEN * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
            char *bbuf = malloc((size_t)bsize);
            CHECK_EQ(MPI_Buffer_attach(bbuf, bsize), MPI_SUCCESS);
            int *data = malloc(LEN * sizeof(int));
            for (int m = 0; m < M; m++) {
                for (int i = 0; i < LEN; i++)
                    data[i] = m * LEN + i;
                CHECK_EQ(MPI_Bsend(data, LEN, MPI_INT, peer, 10 + m, MPI_COMM_WORLD), MPI_SUCCESS);
            }
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            CHECK_EQ(MPI_Bsend(data, LEN, MPI_INT, peer, 99, MPI_COMM_WORLD), MPI_ERR_BUFFER);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
            MPI_Send(NULL, 0, MPI_INT, peer, 6, MPI_COMM_WORLD);
            void *back;
            int bsz;
            CHECK_EQ(MPI_Buffer_detach(&back, &bsz), MPI_SUCCESS);
            CHECK(back == bbuf && bsz == bsize);
            free(bbuf);
            free(data);
        } else {
            MPI_Recv(NULL, 0, MPI_INT, peer, 6, MPI_COMM_WORLD, &st);
            int *data = malloc(LEN * sizeof(int));
            for (int m = M - 1; m >= 0; m--) {
                MPI_Recv(data, LEN, MPI_INT, peer, 10 + m, MPI_COMM_WORLD, &st);
                CHECK_EQ(data[0], m * LEN);
                CHECK_EQ(data[LEN - 1], m * LEN + LEN - 1);
            }
            free(data);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && check_failures_ == 0)
        printf("p2p_modes: %d ranks ok\n", size);
    return check_summary();
}
