/* Communicators created concurrently by disjoint sets of ranks: the world
 * splits into 4 colors, and each color repeatedly dups, splits and
 * create_groups (same parent, same tag, different groups) at its own pace.
 * Ranks arrive skewed (busy work) so that rendezvous entries overlap. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "../check.h"

int main(int argc, char **argv)
{
    int rank, size, r, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 100;

    int color = rank % 4;
    MPI_Comm quarter;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &quarter);
    int qr, qn;
    MPI_Comm_rank(quarter, &qr);
    MPI_Comm_size(quarter, &qn);
    CHECK_EQ(qr, rank / 4);
    CHECK_EQ(qn, (size - color + 3) / 4);
    MPI_Group qg;
    MPI_Comm_group(quarter, &qg);

    volatile unsigned sink = 0;
    for (int k = 0; k < rounds; k++) {
        for (int i = 0; i < ((rank * 7 + k) % 5) * 500; i++)
            sink += (unsigned)i;
        MPI_Comm d, s, g;
        CHECK_EQ(MPI_Comm_dup(quarter, &d), MPI_SUCCESS);
        MPI_Comm_rank(d, &r);
        CHECK_EQ(r, qr);
        CHECK_EQ(MPI_Comm_split(d, qr % 2, -qr, &s), MPI_SUCCESS);
        MPI_Comm_rank(s, &r);
        MPI_Comm_size(s, &n);
        CHECK_EQ(n, (qn - qr % 2 + 1) / 2);
        CHECK_EQ(r, (qn - 1 - qr) / 2);
        CHECK_EQ(MPI_Comm_create_group(MPI_COMM_WORLD, qg, 3, &g), MPI_SUCCESS);
        MPI_Comm_rank(g, &r);
        CHECK_EQ(r, qr);
        int res;
        MPI_Comm_compare(g, quarter, &res);
        CHECK_EQ(res, MPI_CONGRUENT);
        MPI_Comm_free(&g);
        MPI_Comm_free(&s);
        MPI_Comm_free(&d);
        if (k % 10 == 0) {
            /* the whole world now and then, amid the quarters' traffic */
            MPI_Comm w;
            CHECK_EQ(MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &w), MPI_SUCCESS);
            MPI_Comm_rank(w, &r);
            CHECK_EQ(r, size - 1 - rank);
            MPI_Comm_free(&w);
        }
    }
    MPI_Group_free(&qg);
    MPI_Comm_free(&quarter);
    MPI_Finalize();
    if (check_failures_ == 0 && rank == 0)
        printf("comm_concurrent: %d ranks ok\n", size);
    return check_summary();
}
