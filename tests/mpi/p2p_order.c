/* Message storms: every rank but 0 sends its share of M messages to rank 0
 * with a per-sender sequence number, mixing blocking, nonblocking, eager and
 * rendezvous sizes and tags; rank 0 receives them all with MPI_ANY_SOURCE
 * (and, every other message, MPI_ANY_TAG) and checks that each sender's
 * messages arrive in the order sent (MPI's non-overtaking rule). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

#define BIG 40000 /* ints: above the eager threshold */

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int total = argc > 1 ? atoi(argv[1]) : 10000;
    if (size == 1) {
        MPI_Finalize();
        printf("p2p_order: nothing to do on 1 rank\n");
        return 0;
    }
    int per = total / (size - 1);
    int *buf = calloc(BIG, sizeof(int));
    if (rank == 0) {
        int *next = calloc((size_t)size, sizeof(int));
        MPI_Status st;
        for (int i = 0; i < per * (size - 1); i++) {
            int tag = (i % 2) ? MPI_ANY_TAG : 0;
            /* tag 0 matches only the small messages; any tag matches both */
            MPI_Recv(buf, BIG, MPI_INT, MPI_ANY_SOURCE, tag == 0 ? MPI_ANY_TAG : tag,
                     MPI_COMM_WORLD, &st);
            int src = st.MPI_SOURCE;
            CHECK(src > 0 && src < size);
            CHECK_EQ(buf[0], next[src]);
            int n;
            MPI_Get_count(&st, MPI_INT, &n);
            CHECK_EQ(n, (buf[0] % 97 == 0) ? BIG : 2);
            CHECK_EQ(buf[n - 1], src);
            next[src] = buf[0] + 1;
        }
        for (int s = 1; s < size; s++)
            CHECK_EQ(next[s], per);
        free(next);
    } else {
        MPI_Request reqs[8];
        int *bufs = calloc((size_t)8 * BIG, sizeof(int));
        for (int i = 0; i < per; i++) {
            int n = (i % 97 == 0) ? BIG : 2;
            int *b = &bufs[(size_t)(i % 8) * BIG];
            if (i >= 8 && (i % 8) == 0)
                MPI_Waitall(8, reqs, MPI_STATUSES_IGNORE);
            b[0] = i;
            b[n - 1] = rank;
            if (i % 3 == 0) {
                MPI_Send(b, n, MPI_INT, 0, i % 5, MPI_COMM_WORLD);
                reqs[i % 8] = MPI_REQUEST_NULL;
            } else {
                MPI_Isend(b, n, MPI_INT, 0, i % 5, MPI_COMM_WORLD, &reqs[i % 8]);
            }
        }
        MPI_Waitall(per < 8 ? per : 8, reqs, MPI_STATUSES_IGNORE);
        free(bufs);
    }
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && check_failures_ == 0)
        printf("p2p_order: %d messages from %d senders in order\n", per * (size - 1), size - 1);
    return check_summary();
}
