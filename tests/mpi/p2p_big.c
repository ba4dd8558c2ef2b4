/* Large messages between pairs: sizes up to argv[1] MiB (256 in the test),
 * received into a posted buffer and as unexpected rendezvous messages. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t mib = argc > 1 ? (size_t)atoi(argv[1]) : 16;
    size_t n = mib << 20;
    int peer = rank ^ 1;
    if (peer < size) {
        unsigned char *b = malloc(n);
        REQUIRE(b);
        for (size_t len = 1 << 20; len <= n; len *= 4) {
            if (rank % 2 == 0) {
                for (size_t i = 0; i < len; i += 4096)
                    b[i] = (unsigned char)(i / 4096 + len);
                b[len - 1] = 0xab;
                MPI_Send(b, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD); /* posted */
                MPI_Barrier(MPI_COMM_WORLD);
                MPI_Send(b, (int)len, MPI_BYTE, peer, 2, MPI_COMM_WORLD); /* unexpected */
            } else {
                memset(b, 0, len);
                MPI_Status st;
                MPI_Recv(b, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st);
                int ok = 1;
                for (size_t i = 0; i < len - 1; i += 4096)
                    ok &= b[i] == (unsigned char)(i / 4096 + len);
                CHECK(ok && b[len - 1] == 0xab);
                memset(b, 0, len);
                MPI_Barrier(MPI_COMM_WORLD);
                for (volatile int i = 0; i < 100000; i++)
                    ;
                MPI_Recv(b, (int)len, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &st);
                ok = 1;
                for (size_t i = 0; i < len - 1; i += 4096)
                    ok &= b[i] == (unsigned char)(i / 4096 + len);
                CHECK(ok && b[len - 1] == 0xab);
            }
            if (len * 4 > n && len != n)
                len = n / 4;
        }
        free(b);
    } else {
        for (size_t len = 1 << 20; len <= n; len *= 4) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (len * 4 > n && len != n)
                len = n / 4;
        }
    }
    MPI_Finalize();
    if (rank == 0 && check_failures_ == 0)
        printf("p2p_big: up to %zu MiB ok\n", mib);
    return check_summary();
}
