/* Communicator creation checked through what each rank sees itself: dup,
 * split (colors and keys), split_type, create, create_group, compare, names,
 * groups of communicators, info hints, and 1000 dup/free rounds (context ids
 * and handle reuse). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

static int world_rank_of(MPI_Comm c, int r)
{
    MPI_Group g, wg;
    int w;
    MPI_Comm_group(c, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_translate_ranks(g, 1, &r, wg, &w);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    return w;
}

int main(int argc, char **argv)
{
    int rank, size, r, n, res;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* dup */
    MPI_Comm dup;
    CHECK_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &dup), MPI_SUCCESS);
    MPI_Comm_rank(dup, &r);
    MPI_Comm_size(dup, &n);
    CHECK_EQ(r, rank);
    CHECK_EQ(n, size);
    CHECK(dup != MPI_COMM_WORLD);
    MPI_Comm_compare(dup, MPI_COMM_WORLD, &res);
    CHECK_EQ(res, MPI_CONGRUENT);
    MPI_Comm_compare(dup, dup, &res);
    CHECK_EQ(res, MPI_IDENT);
    MPI_Comm_compare(MPI_COMM_SELF, MPI_COMM_WORLD, &res);
    CHECK_EQ(res, size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL);

    /* split by rank % 3, key = -rank: reversed order within each color */
    MPI_Comm split;
    int color = rank % 3;
    CHECK_EQ(MPI_Comm_split(MPI_COMM_WORLD, color, -rank, &split), MPI_SUCCESS);
    MPI_Comm_rank(split, &r);
    MPI_Comm_size(split, &n);
    CHECK_EQ(n, (size - color + 2) / 3);
    CHECK_EQ(r, (size - 1 - rank) / 3);
    CHECK_EQ(world_rank_of(split, r), rank);
    for (int i = 0; i < n; i++)
        CHECK_EQ(world_rank_of(split, i), color + 3 * ((size - 1 - color) / 3 - i));
    MPI_Comm_compare(split, MPI_COMM_WORLD, &res);
    CHECK_EQ(res, size <= 1 ? MPI_CONGRUENT : MPI_UNEQUAL);

    /* split with equal keys keeps the parent's order; UNDEFINED gets NULL */
    MPI_Comm half;
    CHECK_EQ(MPI_Comm_split(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : 7, 0, &half), MPI_SUCCESS);
    if (rank % 2) {
        CHECK(half == MPI_COMM_NULL);
    } else {
        MPI_Comm_rank(half, &r);
        MPI_Comm_size(half, &n);
        CHECK_EQ(r, rank / 2);
        CHECK_EQ(n, (size + 1) / 2);
        MPI_Comm_free(&half);
        CHECK(half == MPI_COMM_NULL);
    }

    /* split reversing the whole world: similar */
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
    MPI_Comm_rank(rev, &r);
    CHECK_EQ(r, size - 1 - rank);
    MPI_Comm_compare(rev, MPI_COMM_WORLD, &res);
    CHECK_EQ(res, size == 1 ? MPI_CONGRUENT : MPI_SIMILAR);
    MPI_Comm_free(&rev);

    /* split_type: the whole job is one node */
    MPI_Comm node;
    CHECK_EQ(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
             MPI_SUCCESS);
    MPI_Comm_compare(node, MPI_COMM_WORLD, &res);
    CHECK_EQ(res, MPI_CONGRUENT);
    MPI_Comm_free(&node);
    CHECK_EQ(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &node),
             MPI_SUCCESS);
    CHECK(node == MPI_COMM_NULL);

    /* create from the even ranks of the world group, in reverse order */
    MPI_Group wg, evens;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int nev = (size + 1) / 2;
    int ranges[1][3] = {{2 * (nev - 1), 0, -2}};
    MPI_Group_range_incl(wg, 1, ranges, &evens);
    MPI_Comm ev;
    CHECK_EQ(MPI_Comm_create(MPI_COMM_WORLD, evens, &ev), MPI_SUCCESS);
    if (rank % 2) {
        CHECK(ev == MPI_COMM_NULL);
    } else {
        MPI_Comm_rank(ev, &r);
        MPI_Comm_size(ev, &n);
        CHECK_EQ(n, nev);
        CHECK_EQ(r, nev - 1 - rank / 2);
        MPI_Group eg;
        MPI_Comm_group(ev, &eg);
        MPI_Group_compare(eg, evens, &res);
        CHECK_EQ(res, MPI_IDENT);
        MPI_Group_free(&eg);
        MPI_Comm_free(&ev);
    }
    /* create_group: only the members call, twice with the same tag */
    if (rank % 2 == 0) {
        for (int k = 0; k < 2; k++) {
            CHECK_EQ(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 5, &ev), MPI_SUCCESS);
            MPI_Comm_rank(ev, &r);
            CHECK_EQ(r, nev - 1 - rank / 2);
            MPI_Comm_free(&ev);
        }
    }
    MPI_Group_free(&evens);
    MPI_Group_free(&wg);

    /* names */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0);
    CHECK_EQ(len, 14);
    MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
    CHECK(strcmp(name, "MPI_COMM_SELF") == 0);
    MPI_Comm_get_name(dup, name, &len);
    CHECK_EQ(len, 0);
    MPI_Comm_set_name(dup, "my dup");
    MPI_Comm_get_name(dup, name, &len);
    CHECK(strcmp(name, "my dup") == 0);

    int flag = 1;
    MPI_Comm_test_inter(dup, &flag);
    CHECK_EQ(flag, 0);

    /* info hints: set, get back, inherited by dup, given by dup_with_info */
    MPI_Info info, got;
    char val[64];
    MPI_Info_create(&info);
    MPI_Info_set(info, "hint", "yes");
    MPI_Comm_set_info(dup, info);
    MPI_Comm_get_info(dup, &got);
    MPI_Info_get(got, "hint", 63, val, &flag);
    CHECK(flag && strcmp(val, "yes") == 0);
    MPI_Info_free(&got);
    MPI_Comm d2;
    MPI_Comm_dup(dup, &d2);
    MPI_Comm_get_info(d2, &got);
    MPI_Info_get(got, "hint", 63, val, &flag);
    CHECK(flag);
    MPI_Info_free(&got);
    MPI_Comm_free(&d2);
    MPI_Info_set(info, "other", "1");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &d2);
    MPI_Comm_get_info(d2, &got);
    MPI_Info_get_nkeys(got, &n);
    CHECK_EQ(n, 2);
    MPI_Info_free(&got);
    MPI_Comm_free(&d2);
    MPI_Info_free(&info);

    /* 1000 dup/free rounds on a derived communicator */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 0; i < 1000; i++) {
        MPI_Comm c;
        CHECK_EQ(MPI_Comm_dup(i % 2 ? split : dup, &c), MPI_SUCCESS);
        MPI_Comm_rank(c, &r);
        CHECK_EQ(r, i % 2 ? (size - 1 - rank) / 3 : rank);
        MPI_Comm old = c;
        MPI_Comm_free(&c);
        CHECK(c == MPI_COMM_NULL);
        CHECK_EQ(MPI_Comm_rank(old, &r), MPI_ERR_COMM); /* stale handle */
    }

    /* nested: split of a split */
    MPI_Comm sub;
    MPI_Comm_rank(split, &r);
    MPI_Comm_split(split, r % 2, r, &sub);
    int sr;
    MPI_Comm_rank(sub, &sr);
    CHECK_EQ(sr, r / 2);
    MPI_Comm_free(&sub);

    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    /* left alive on purpose: freed by MPI_Finalize */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Finalize();
    if (check_failures_ == 0 && rank == 0)
        printf("comm_basic: %d ranks ok\n", size);
    return check_summary();
}
