/*
 * MPI_Type_get_envelope / MPI_Type_get_contents round trips for every
 * combiner: the envelope's counts, the contents equal the constructor's
 * arguments, and the type rebuilt from its contents has the same size,
 * bounds and layout. Derived old types come back as new handles (freed by
 * the caller) that work even after the original handle was freed.
 */
#include <stdio.h>

#include "dt_common.h"

static int rank, nranks;
static char *pat;

#define MAXC 64
static int ints[MAXC];
static MPI_Aint aints[MAXC];
static MPI_Datatype types[MAXC];

/* Reads t's envelope and contents, checks the counts and combiner. */
static void get(MPI_Datatype t, int comb, int ni, int na, int nd, int line)
{
    int gi, ga, gd, gc;
    CHECK_EQ(MPI_Type_get_envelope(t, &gi, &ga, &gd, &gc), MPI_SUCCESS);
    if (gc != comb || gi != ni || ga != na || gd != nd) {
        fprintf(stderr, "line %d: envelope (%d, %d, %d, %d), expected (%d, %d, %d, %d)\n", line, gi,
                ga, gd, gc, ni, na, nd, comb);
        CHECK(0);
    }
    CHECK_EQ(MPI_Type_get_contents(t, MAXC, MAXC, MAXC, ints, aints, types), MPI_SUCCESS);
}

/* Frees the derived types get_contents returned. */
static void free_types(int nd)
{
    for (int i = 0; i < nd; i++) {
        int ni, na, ndd, comb;
        MPI_Type_get_envelope(types[i], &ni, &na, &ndd, &comb);
        if (comb != MPI_COMBINER_NAMED)
            MPI_Type_free(&types[i]);
    }
}

/* Commits the rebuilt type r and compares it with t; frees r. */
static void same(MPI_Datatype t, MPI_Datatype r, int line)
{
    MPI_Type_commit(&r);
    dt_check_same(pat, t, r, line);
    MPI_Type_free(&r);
}

static void test_all(void)
{
    MPI_Datatype t, r, v;
    int n = 2 + rank % 4;

    MPI_Type_vector(n, 2, 3, MPI_INT, &v); /* a derived old type */
    MPI_Type_commit(&v);

    /* DUP */
    MPI_Type_dup(v, &t);
    get(t, MPI_COMBINER_DUP, 0, 0, 1, __LINE__);
    MPI_Type_dup(types[0], &r);
    same(t, r, __LINE__);
    free_types(1);
    MPI_Type_free(&t);

    /* CONTIGUOUS */
    MPI_Type_contiguous(n, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    get(t, MPI_COMBINER_CONTIGUOUS, 1, 0, 1, __LINE__);
    CHECK_EQ(ints[0], n);
    CHECK_EQ(types[0], MPI_DOUBLE);
    MPI_Type_contiguous(ints[0], types[0], &r);
    same(t, r, __LINE__);
    MPI_Type_free(&t);

    /* VECTOR, of a derived type */
    MPI_Type_vector(3, 2, -5, v, &t);
    MPI_Type_commit(&t);
    get(t, MPI_COMBINER_VECTOR, 3, 0, 1, __LINE__);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == -5);
    CHECK(types[0] != MPI_DATATYPE_NULL && types[0] != v);
    MPI_Type_vector(ints[0], ints[1], ints[2], types[0], &r);
    same(t, r, __LINE__);
    /* The returned old type is v's equal. */
    MPI_Type_commit(&types[0]);
    CHECK_SAME(pat, types[0], v);
    free_types(1);
    MPI_Type_free(&t);

    /* HVECTOR */
    MPI_Type_create_hvector(n, 3, 40, MPI_SHORT, &t);
    MPI_Type_commit(&t);
    get(t, MPI_COMBINER_HVECTOR, 2, 1, 1, __LINE__);
    CHECK(ints[0] == n && ints[1] == 3 && aints[0] == 40 && types[0] == MPI_SHORT);
    MPI_Type_create_hvector(ints[0], ints[1], aints[0], types[0], &r);
    same(t, r, __LINE__);
    MPI_Type_free(&t);

    /* INDEXED */
    int bl[4] = {1, 3, 0, 2}, disp[4] = {9, 0, 4, 5};
    MPI_Type_indexed(4, bl, disp, MPI_INT, &t);
    MPI_Type_commit(&t);
    get(t, MPI_COMBINER_INDEXED, 9, 0, 1, __LINE__);
    CHECK(ints[0] == 4 && memcmp(ints + 1, bl, sizeof bl) == 0 &&
          memcmp(ints + 5, disp, sizeof disp) == 0);
    MPI_Type_indexed(ints[0], ints + 1, ints + 1 + ints[0], types[0], &r);
    same(t, r, __LINE__);
    MPI_Type_free(&t);

    /* HINDEXED, of a derived type */
    MPI_Aint hd[4] = {400, 0, 16, -200};
    MPI_Type_create_hindexed(4, bl, hd, v, &t);
    MPI_Type_commit(&t);
    get(t, MPI_COMBINER_HINDEXED, 5, 4, 1, __LINE__);
    CHECK(ints[0] == 4 && memcmp(ints + 1, bl, sizeof bl) == 0 &&
          memcmp(aints, hd, sizeof hd) == 0);
    MPI_Type_create_hindexed(ints[0], ints + 1, aints, types[0], &r);
    same(t, r, __LINE__);
    free_types(1);
    MPI_Type_free(&t);

    /* INDEXED_BLOCK */
    MPI_Type_create_indexed_block(4, 2, disp, MPI_FLOAT, &t);
    MPI_Type_commit(&t);
    get(t, MPI_COMBINER_INDEXED_BLOCK, 6, 0, 1, __LINE__);
    CHECK(ints[0] == 4 && ints[1] == 2 && memcmp(ints + 2, disp, sizeof disp) == 0);
    MPI_Type_create_indexed_block(ints[0], ints[1], ints + 2, types[0], &r);
    same(t, r, __LINE__);
    MPI_Type_free(&t);

    /* HINDEXED_BLOCK */
    MPI_Type_create_hindexed_block(4, 3, hd, MPI_CHAR, &t);
    MPI_Type_commit(&t);
    get(t, MPI_COMBINER_HINDEXED_BLOCK, 2, 4, 1, __LINE__);
    CHECK(ints[0] == 4 && ints[1] == 3 && memcmp(aints, hd, sizeof hd) == 0);
    MPI_Type_create_hindexed_block(ints[0], ints[1], aints, types[0], &r);
    same(t, r, __LINE__);
    MPI_Type_free(&t);

    /* STRUCT, with predefined and derived members; v freed before the
     * contents are read. */
    MPI_Datatype w;
    MPI_Type_dup(v, &w);
    int sbl[3] = {2, 1, 1};
    MPI_Aint sd[3] = {0, 16, 64};
    MPI_Datatype st[3] = {MPI_INT, w, MPI_DOUBLE_INT};
    MPI_Type_create_struct(3, sbl, sd, st, &t);
    MPI_Type_commit(&t);
    MPI_Type_free(&w);
    get(t, MPI_COMBINER_STRUCT, 4, 3, 3, __LINE__);
    CHECK(ints[0] == 3 && memcmp(ints + 1, sbl, sizeof sbl) == 0 &&
          memcmp(aints, sd, sizeof sd) == 0);
    CHECK(types[0] == MPI_INT && types[2] == MPI_DOUBLE_INT && types[1] != MPI_DATATYPE_NULL);
    int ni, na, nd, comb;
    MPI_Type_get_envelope(types[1], &ni, &na, &nd, &comb);
    CHECK_EQ(comb, MPI_COMBINER_DUP);
    MPI_Type_create_struct(ints[0], ints + 1, aints, types, &r);
    same(t, r, __LINE__);
    free_types(3);
    MPI_Type_free(&t);

    /* SUBARRAY */
    int sz[3] = {4, 5, 6}, sub[3] = {2, 3, 1 + rank % 4}, start[3] = {1, 0, 2};
    for (int o = 0; o < 2; o++) {
        int order = o ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
        MPI_Type_create_subarray(3, sz, sub, start, order, MPI_INT, &t);
        MPI_Type_commit(&t);
        get(t, MPI_COMBINER_SUBARRAY, 11, 0, 1, __LINE__);
        CHECK(ints[0] == 3 && memcmp(ints + 1, sz, sizeof sz) == 0 &&
              memcmp(ints + 4, sub, sizeof sub) == 0 &&
              memcmp(ints + 7, start, sizeof start) == 0 && ints[10] == order);
        MPI_Type_create_subarray(ints[0], ints + 1, ints + 4, ints + 7, ints[10], types[0], &r);
        same(t, r, __LINE__);
        MPI_Type_free(&t);
    }

    /* DARRAY, this rank's piece of a 1-D cyclic distribution over all ranks */
    int gs[1] = {100}, dist[1] = {MPI_DISTRIBUTE_CYCLIC}, darg[1] = {3}, ps[1] = {nranks};
    MPI_Type_create_darray(nranks, rank, 1, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    get(t, MPI_COMBINER_DARRAY, 8, 0, 1, __LINE__);
    CHECK(ints[0] == nranks && ints[1] == rank && ints[2] == 1 && ints[3] == 100 &&
          ints[4] == MPI_DISTRIBUTE_CYCLIC && ints[5] == 3 && ints[6] == nranks &&
          ints[7] == MPI_ORDER_C);
    MPI_Type_create_darray(ints[0], ints[1], ints[2], ints + 3, ints + 4, ints + 5, ints + 6,
                           ints[7], types[0], &r);
    same(t, r, __LINE__);
    MPI_Type_free(&t);

    /* RESIZED */
    MPI_Type_create_resized(v, -8, 100, &t);
    MPI_Type_commit(&t);
    get(t, MPI_COMBINER_RESIZED, 0, 2, 1, __LINE__);
    CHECK(aints[0] == -8 && aints[1] == 100);
    MPI_Type_create_resized(types[0], aints[0], aints[1], &r);
    same(t, r, __LINE__);
    free_types(1);
    MPI_Type_free(&t);

    MPI_Type_free(&v);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    pat = dt_pattern();
    test_all();
    free(pat);
    int rc = check_summary();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && rc == 0)
        printf("dt_contents: %d ranks ok\n", nranks);
    MPI_Finalize();
    return rc;
}
