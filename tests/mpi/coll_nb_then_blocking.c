/*
 * A nonblocking collective then a blocking one on the same communicator,
 * with different algorithms: a member that left the nonblocking call early
 * (it detached a copy of its input) must not be released late by its root
 * into the blocking call's flag. MPI_Ireduce (direct) then MPI_Reduce
 * (tree) hung at 16 ranks; MPI_Igather then MPI_Gather likewise.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "../check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const int c = 700; /* above the copy-in size: the members expose their input */
    int *a = malloc(c * sizeof *a), *b = malloc(c * sizeof *b);
    int *g = malloc((size_t)c * (size_t)n * sizeof *g);
    for (int i = 0; i < c; i++)
        a[i] = rank + i;
    int root = n - 1;
    for (int it = 0; it < 30; it++) {
        MPI_Request r;
        MPI_Ireduce(a, b, c, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Reduce(a, b, c, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        if (rank == root)
            CHECK_EQ(b[c - 1], n * (n - 1) / 2 + n * (c - 1));
        MPI_Igather(a, c, MPI_INT, g, c, MPI_INT, root, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Gather(a, c, MPI_INT, g, c, MPI_INT, root, MPI_COMM_WORLD);
        if (rank == root)
            CHECK_EQ(g[(size_t)c * (size_t)(n - 1) + 5], n - 1 + 5);
    }
    int f = check_failures_, tf;
    MPI_Allreduce(&f, &tf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && tf == 0)
        printf("coll_nb_then_blocking: %d ranks ok\n", n);
    free(a);
    free(b);
    free(g);
    MPI_Finalize();
    return check_summary();
}
