/* Group operations and their errors (under MPI_ERRORS_RETURN). */
#include <mpi.h>
#include <stdio.h>

#include "../check.h"

int main(int argc, char **argv)
{
    int rank, size, n, r, res;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    MPI_Group wg, sg, g, g2, u;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(MPI_COMM_SELF, &sg);
    MPI_Group_size(wg, &n);
    CHECK_EQ(n, size);
    MPI_Group_rank(wg, &r);
    CHECK_EQ(r, rank);
    MPI_Group_rank(sg, &r);
    CHECK_EQ(r, 0);
    MPI_Group_size(MPI_GROUP_EMPTY, &n);
    CHECK_EQ(n, 0);
    MPI_Group_rank(MPI_GROUP_EMPTY, &r);
    CHECK_EQ(r, MPI_UNDEFINED);

    /* incl in reverse order; translate back */
    int ranks[1024], out[1024];
    for (int i = 0; i < size; i++)
        ranks[i] = size - 1 - i;
    MPI_Group_incl(wg, size, ranks, &g);
    MPI_Group_rank(g, &r);
    CHECK_EQ(r, size - 1 - rank);
    MPI_Group_compare(g, wg, &res);
    CHECK_EQ(res, size == 1 ? MPI_IDENT : MPI_SIMILAR);
    for (int i = 0; i < size; i++)
        ranks[i] = i;
    MPI_Group_translate_ranks(g, size, ranks, wg, out);
    for (int i = 0; i < size; i++)
        CHECK_EQ(out[i], size - 1 - i);
    int pn = MPI_PROC_NULL;
    MPI_Group_translate_ranks(g, 1, &pn, wg, out);
    CHECK_EQ(out[0], MPI_PROC_NULL);

    /* excl even ranks -> odd ranks; union/intersection/difference */
    int nev = (size + 1) / 2;
    for (int i = 0; i < nev; i++)
        ranks[i] = 2 * i;
    MPI_Group_excl(wg, nev, ranks, &g2); /* odds */
    MPI_Group_size(g2, &n);
    CHECK_EQ(n, size / 2);
    MPI_Group_rank(g2, &r);
    CHECK_EQ(r, rank % 2 ? rank / 2 : MPI_UNDEFINED);
    MPI_Group_translate_ranks(wg, 1, &rank, g2, out);
    CHECK_EQ(out[0], rank % 2 ? rank / 2 : MPI_UNDEFINED);
    MPI_Group evens;
    MPI_Group_difference(wg, g2, &evens);
    MPI_Group_size(evens, &n);
    CHECK_EQ(n, nev);
    MPI_Group_union(evens, g2, &u); /* evens then odds */
    MPI_Group_size(u, &n);
    CHECK_EQ(n, size);
    MPI_Group_rank(u, &r);
    CHECK_EQ(r, rank % 2 ? nev + rank / 2 : rank / 2);
    MPI_Group_compare(u, wg, &res);
    CHECK_EQ(res, size <= 2 ? MPI_IDENT : MPI_SIMILAR);
    MPI_Group_free(&u);
    MPI_Group_intersection(evens, g2, &u);
    CHECK(u == MPI_GROUP_EMPTY);
    MPI_Group_free(&u);
    MPI_Group_intersection(wg, evens, &u);
    MPI_Group_compare(u, evens, &res);
    CHECK_EQ(res, MPI_IDENT);
    MPI_Group_free(&u);

    /* ranges: every third rank, and its complement */
    int rg[1][3] = {{0, size - 1, 3}};
    MPI_Group_range_incl(wg, 1, rg, &u);
    MPI_Group_size(u, &n);
    CHECK_EQ(n, (size + 2) / 3);
    MPI_Group_rank(u, &r);
    CHECK_EQ(r, rank % 3 ? MPI_UNDEFINED : rank / 3);
    MPI_Group_free(&u);
    MPI_Group_range_excl(wg, 1, rg, &u);
    MPI_Group_size(u, &n);
    CHECK_EQ(n, size - (size + 2) / 3);
    MPI_Group_free(&u);

    /* errors */
    MPI_Group bad = MPI_GROUP_NULL;
    CHECK_EQ(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP);
    CHECK_EQ(MPI_Group_free(&bad), MPI_ERR_GROUP);
    int five = size + 4;
    CHECK_EQ(MPI_Group_incl(wg, 1, &five, &u), MPI_ERR_RANK);
    int dupr[2] = {0, 0};
    if (size >= 2)
        CHECK_EQ(MPI_Group_incl(wg, 2, dupr, &u), MPI_ERR_RANK);
    CHECK_EQ(MPI_Group_incl(wg, -1, dupr, &u), MPI_ERR_ARG);
    CHECK_EQ(MPI_Group_excl(wg, 1, &five, &u), MPI_ERR_RANK);
    int zs[1][3] = {{0, 0, 0}};
    CHECK_EQ(MPI_Group_range_incl(wg, 1, zs, &u), MPI_ERR_ARG);
    int os[1][3] = {{0, size, 1}};
    CHECK_EQ(MPI_Group_range_incl(wg, 1, os, &u), MPI_ERR_RANK);
    CHECK_EQ(MPI_Group_translate_ranks(wg, 1, &five, sg, out), MPI_ERR_RANK);
    CHECK_EQ(MPI_Group_compare(wg, MPI_GROUP_NULL, &res), MPI_ERR_GROUP);
    MPI_Group freed = g;
    MPI_Group_free(&g);
    CHECK(g == MPI_GROUP_NULL);
    CHECK_EQ(MPI_Group_size(freed, &n), MPI_ERR_GROUP);
    MPI_Comm c;
    CHECK_EQ(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c), MPI_ERR_GROUP);
    if (size >= 2) /* a group with ranks outside MPI_COMM_SELF */
        CHECK_EQ(MPI_Comm_create_group(MPI_COMM_SELF, wg, 0, &c), MPI_ERR_GROUP);
    CHECK_EQ(MPI_Comm_create_group(MPI_COMM_WORLD, wg, -1, &c), MPI_ERR_TAG);

    MPI_Group_free(&evens);
    MPI_Group_free(&g2);
    MPI_Group_free(&sg);
    MPI_Group_free(&wg);
    MPI_Finalize();
    if (check_failures_ == 0 && rank == 0)
        printf("comm_group: %d ranks ok\n", size);
    return check_summary();
}
