/*
 * MPI_Comm_create with disjoint groups passed by different ranks (allowed
 * since MPI-2.2): each group gets its own communicator. Groups of equal size
 * arrive interleaved, so a rendezvous that told them apart by size alone
 * mixed their members (wrong communicators, or a hang when two members took
 * the same slot). Each round: the world is cut into NG groups of ranks
 * r % NG == g (and, every other round, a permuted order inside a group);
 * every rank checks its new communicator's size, its rank in it and the
 * world ranks of its members, then frees it. Ranks not in any group (the
 * last, every third round) get MPI_COMM_NULL.
 *   comm_create_disjoint ROUNDS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "../check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 100;
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int *members = malloc((size_t)size * sizeof *members);
    int *seen = malloc((size_t)size * sizeof *seen);
    CHECK(members && seen);
    for (int round = 0; round < rounds; round++) {
        int ng = 1 + round % 4;
        if (ng > size)
            ng = size;
        int left_out = (round % 3 == 2 && size > ng) ? size - 1 : -1;
        int g = rank % ng, n = 0;
        for (int r = g; r < size; r += ng)
            if (r != left_out)
                members[n++] = r;
        if (round % 2) /* reversed order inside the group */
            for (int i = 0; i < n / 2; i++) {
                int t = members[i];
                members[i] = members[n - 1 - i];
                members[n - 1 - i] = t;
            }
        MPI_Group mine;
        MPI_Group_incl(world, n, members, &mine);
        MPI_Comm c;
        CHECK(MPI_Comm_create(MPI_COMM_WORLD, mine, &c) == MPI_SUCCESS);
        if (rank == left_out) {
            CHECK(c == MPI_COMM_NULL);
        } else {
            CHECK(c != MPI_COMM_NULL);
            int csize, crank;
            MPI_Comm_size(c, &csize);
            MPI_Comm_rank(c, &crank);
            CHECK(csize == n);
            CHECK(members[crank] == rank);
            MPI_Allgather(&rank, 1, MPI_INT, seen, 1, MPI_INT, c);
            for (int i = 0; i < n; i++)
                CHECK(seen[i] == members[i]);
            MPI_Comm_free(&c);
        }
        MPI_Group_free(&mine);
    }
    MPI_Group_free(&world);
    free(members);
    free(seen);
    int failed = check_failures_ != 0, any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("comm_create_disjoint: %d rounds on %d ranks ok\n", rounds, size);
    MPI_Finalize();
    return check_summary();
}
