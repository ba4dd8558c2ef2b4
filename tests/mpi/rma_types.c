/*
 * Derived datatypes on the origin and the target side of one-sided calls:
 * vector, hvector, indexed, a struct with gaps (the padding of the target is
 * left untouched), resized types (extent larger than the data, and a
 * negative lower bound), a subarray; with Put, Get, Accumulate and
 * Get_accumulate (types built from one predefined type). A type freed right
 * after the call, before the epoch ends, still applies. Every rank works on
 * its right neighbour's window.
 */
#include <stddef.h>
#include <stdlib.h>

#include "rma_common.h"

enum { W = 256 }; /* ints in each window */

static int *mem;
static MPI_Win win;
static int right, left;

/* The value rank r puts at element i. */
static int val(int r, int i)
{
    return 10000 * (r + 1) + i;
}

static void reset(void)
{
    MPI_Win_fence(0, win);
    for (int i = 0; i < W; i++)
        mem[i] = -1;
    MPI_Win_fence(0, win);
}

/* Checks mem against want (W ints) and counts the differences. */
static void expect_mem(const int *want, int line)
{
    int bad = 0;
    for (int i = 0; i < W; i++)
        if (mem[i] != want[i]) {
            if (bad++ < 4)
                fprintf(stderr, "line %d: rank %d: mem[%d] = %d, expected %d\n", line, rma_rank, i,
                        mem[i], want[i]);
        }
    CHECK_EQ(bad, 0);
}

static void fresh(int *want)
{
    for (int i = 0; i < W; i++)
        want[i] = -1;
}

/* Contiguous origin, vector target (every third int); read back with a
 * vector origin and a contiguous target. */
static void test_vector(void)
{
    int src[10], want[W], back[30];
    MPI_Datatype vec;
    MPI_Type_vector(10, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    reset();
    for (int i = 0; i < 10; i++)
        src[i] = val(rma_rank, i);
    CHECK_OK(MPI_Put(src, 10, MPI_INT, right, 4, 1, vec, win));
    MPI_Win_fence(0, win);
    fresh(want);
    for (int i = 0; i < 10; i++)
        want[4 + 3 * i] = val(left, i);
    expect_mem(want, __LINE__);
    /* Get: the right neighbour's elements 0..9 into back[0], back[3], .. */
    for (int i = 0; i < 30; i++)
        back[i] = -2;
    CHECK_OK(MPI_Get(back, 1, vec, right, 0, 10, MPI_INT, win));
    MPI_Win_fence(0, win);
    for (int k = 0; k < 10; k++) {
        int j = 3 * k; /* back[j] = remote element k */
        int e = k >= 4 && (k - 4) % 3 == 0 ? val(rma_rank, (k - 4) / 3) : -1;
        CHECK_EQ(back[j], e);
        if (k < 9) {
            CHECK_EQ(back[j + 1], -2);
            CHECK_EQ(back[j + 2], -2);
        }
    }
    MPI_Type_free(&vec);
}

/* Indexed origin, contiguous target; hvector target. */
static void test_indexed(void)
{
    int src[16], want[W];
    int lens[3] = {2, 1, 3}, displs[3] = {0, 5, 9};
    MPI_Datatype idx, hvec;
    MPI_Type_indexed(3, lens, displs, MPI_INT, &idx);
    MPI_Type_commit(&idx);
    MPI_Type_create_hvector(3, 2, 5 * sizeof(int), MPI_INT, &hvec);
    MPI_Type_commit(&hvec);
    reset();
    for (int i = 0; i < 16; i++)
        src[i] = val(rma_rank, i);
    /* 2 indexed items (extent 12 ints) = 12 ints at target 0.. */
    CHECK_OK(MPI_Put(src, 1, idx, right, 0, 6, MPI_INT, win));
    /* 6 ints into an hvector of 3 blocks of 2 at int 100 + 5k */
    CHECK_OK(MPI_Put(src, 6, MPI_INT, right, 100, 1, hvec, win));
    MPI_Win_fence(0, win);
    fresh(want);
    int order[6] = {0, 1, 5, 9, 10, 11};
    for (int k = 0; k < 6; k++)
        want[k] = val(left, order[k]);
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < 2; j++)
            want[100 + 5 * b + j] = val(left, 2 * b + j);
    expect_mem(want, __LINE__);
    MPI_Type_free(&idx);
    MPI_Type_free(&hvec);
}

struct gap {
    int a;
    double b; /* 4 bytes of padding before b on most ABIs */
    char c;   /* and 7 after c */
};

/* A struct with gaps on both sides: the target's padding keeps its bytes. */
static void test_struct(void)
{
    enum { K = 3 };
    struct gap src[K], back[K];
    int lens[3] = {1, 1, 1};
    MPI_Aint displs[3] = {offsetof(struct gap, a), offsetof(struct gap, b),
                          offsetof(struct gap, c)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, st, gt;
    MPI_Type_create_struct(3, lens, displs, types, &st);
    MPI_Type_create_resized(st, 0, sizeof(struct gap), &gt);
    MPI_Type_commit(&gt);
    MPI_Type_free(&st);
    /* A window of bytes, all 0xab. */
    unsigned char *bytes = (unsigned char *)mem;
    MPI_Win_fence(0, win);
    memset(bytes, 0xab, W * sizeof(int));
    MPI_Win_fence(0, win);
    memset(src, 0, sizeof src);
    for (int k = 0; k < K; k++) {
        src[k].a = val(rma_rank, k);
        src[k].b = rma_rank + k * 0.5;
        src[k].c = (char)('a' + k);
    }
    /* At a struct-aligned displacement: 1 (disp unit sizeof(int)) * 4. */
    MPI_Aint at = 2 * sizeof(double) / sizeof(int);
    CHECK_OK(MPI_Put(src, K, gt, right, at, K, gt, win));
    MPI_Win_fence(0, win);
    struct gap *got = (struct gap *)(bytes + at * sizeof(int));
    for (int k = 0; k < K; k++) {
        CHECK_EQ(got[k].a, val(left, k));
        CHECK(got[k].b == left + k * 0.5);
        CHECK_EQ(got[k].c, 'a' + k);
    }
    /* Padding: every byte not covered by a field. */
    int bad = 0;
    for (size_t off = 0; off < W * sizeof(int); off++) {
        size_t rel = off - at * sizeof(int);
        int field = 0;
        if (off >= at * sizeof(int) && rel < K * sizeof(struct gap)) {
            size_t in = rel % sizeof(struct gap);
            field = in < sizeof(int) ||
                    (in >= offsetof(struct gap, b) && in < offsetof(struct gap, b) + 8) ||
                    in == offsetof(struct gap, c);
        }
        if (!field && bytes[off] != 0xab)
            bad++;
    }
    CHECK_EQ(bad, 0);
    /* Get back into a buffer whose padding is zero: only fields arrive. */
    memset(back, 0, sizeof back);
    CHECK_OK(MPI_Get(back, K, gt, right, at, K, gt, win));
    MPI_Win_fence(0, win);
    for (int k = 0; k < K; k++) {
        CHECK_EQ(back[k].a, val(rma_rank, k));
        CHECK(back[k].b == rma_rank + k * 0.5);
        CHECK_EQ(back[k].c, 'a' + k);
    }
    MPI_Type_free(&gt);
}

/* Resized types: extent 3 ints on the origin, extent 2 ints on the target,
 * and a negative lower bound (which does not move the data). */
static void test_resized(void)
{
    int src[30], want[W];
    MPI_Datatype o3, t2, neg;
    MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &o3);
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &t2);
    MPI_Type_create_resized(MPI_INT, -(MPI_Aint)sizeof(int), 4 * sizeof(int), &neg);
    MPI_Type_commit(&o3);
    MPI_Type_commit(&t2);
    MPI_Type_commit(&neg);
    reset();
    for (int i = 0; i < 30; i++)
        src[i] = val(rma_rank, i);
    CHECK_OK(MPI_Put(src, 10, o3, right, 1, 10, t2, win));
    CHECK_OK(MPI_Put(src, 5, MPI_INT, right, 50, 5, neg, win));
    /* Freed before the epoch ends: the pending Puts keep it. */
    MPI_Type_free(&o3);
    MPI_Type_free(&t2);
    MPI_Type_free(&neg);
    MPI_Win_fence(0, win);
    fresh(want);
    for (int k = 0; k < 10; k++)
        want[1 + 2 * k] = val(left, 3 * k);
    for (int k = 0; k < 5; k++)
        want[50 + 4 * k] = val(left, k);
    expect_mem(want, __LINE__);
}

/* A 4x5 block of a 12x16 row-major array of ints at int 0 of the target,
 * from a contiguous origin. */
static void test_subarray(void)
{
    int src[20], want[W];
    int sizes[2] = {12, 16}, sub[2] = {4, 5}, starts[2] = {3, 7};
    MPI_Datatype sa;
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &sa);
    MPI_Type_commit(&sa);
    reset();
    for (int i = 0; i < 20; i++)
        src[i] = val(rma_rank, i);
    CHECK_OK(MPI_Put(src, 20, MPI_INT, right, 0, 1, sa, win));
    MPI_Win_fence(0, win);
    fresh(want);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 5; c++)
            want[(3 + r) * 16 + 7 + c] = val(left, r * 5 + c);
    expect_mem(want, __LINE__);
    MPI_Type_free(&sa);
}

/* Accumulate (SUM) from every rank into a vector of the right neighbour and
 * an indexed block of rank 0; Get_accumulate with derived types on all
 * three buffers. */
static void test_accumulate(void)
{
    int src[8], want[W];
    MPI_Datatype vec, idx, ovec;
    MPI_Type_vector(4, 2, 5, MPI_INT, &vec); /* 8 ints at 0,1,5,6,10,11,15,16 */
    int lens[2] = {3, 5}, displs[2] = {7, 0};
    MPI_Type_indexed(2, lens, displs, MPI_INT, &idx); /* 7,8,9,0,1,2,3,4 */
    MPI_Type_vector(8, 1, 2, MPI_INT, &ovec);
    MPI_Type_commit(&vec);
    MPI_Type_commit(&idx);
    MPI_Type_commit(&ovec);
    MPI_Win_fence(0, win);
    for (int i = 0; i < W; i++)
        mem[i] = 0;
    MPI_Win_fence(0, win);
    for (int i = 0; i < 8; i++)
        src[i] = rma_rank + i;
    CHECK_OK(MPI_Accumulate(src, 8, MPI_INT, right, 20, 1, vec, MPI_SUM, win));
    CHECK_OK(MPI_Accumulate(src, 8, MPI_INT, 0, 100, 1, idx, MPI_SUM, win));
    MPI_Win_fence(0, win);
    for (int i = 0; i < W; i++)
        want[i] = 0;
    int vpos[8] = {0, 1, 5, 6, 10, 11, 15, 16}, ipos[8] = {7, 8, 9, 0, 1, 2, 3, 4};
    for (int i = 0; i < 8; i++)
        want[20 + vpos[i]] += left + i;
    if (rma_rank == 0)
        for (int i = 0; i < 8; i++)
            want[100 + ipos[i]] += rma_size * (rma_size - 1) / 2 + rma_size * i;
    expect_mem(want, __LINE__);
    MPI_Win_fence(0, win); /* (every rank checked before the next updates) */

    /* Get_accumulate: origin strided by 2 (ovec), result contiguous, target
     * the vector at 20: adds 1000 + i and fetches the sums above. */
    int o16[16], res[8];
    for (int i = 0; i < 16; i++)
        o16[i] = i % 2 ? -99 : 1000 + i / 2;
    for (int i = 0; i < 8; i++)
        res[i] = -1;
    CHECK_OK(MPI_Get_accumulate(o16, 1, ovec, res, 8, MPI_INT, right, 20, 1, vec, MPI_SUM, win));
    MPI_Win_fence(0, win);
    for (int i = 0; i < 8; i++) {
        CHECK_EQ(res[i], rma_rank + i);
        CHECK_EQ(mem[20 + vpos[i]], left + i + 1000 + i);
    }
    /* Accumulate of doubles through a vector with MPI_MAX, and
     * Get_accumulate with a result vector and MPI_NO_OP. */
    double *dm = (double *)mem;
    MPI_Win_fence(0, win);
    for (int i = 0; i < W / 2; i++)
        dm[i] = -1.0;
    MPI_Win_fence(0, win);
    MPI_Datatype dvec;
    MPI_Type_vector(3, 1, 4, MPI_DOUBLE, &dvec);
    MPI_Type_commit(&dvec);
    double dsrc[3] = {rma_rank * 0.5, rma_rank * 1.5, -rma_rank * 1.0};
    for (int k = 0; k < rma_size; k++)
        CHECK_OK(MPI_Accumulate(dsrc, 3, MPI_DOUBLE, k, 2 * sizeof(double) / sizeof(int), 1, dvec,
                                MPI_MAX, win));
    MPI_Win_fence(0, win);
    CHECK(dm[2] == (rma_size - 1) * 0.5);
    CHECK(dm[6] == (rma_size - 1) * 1.5);
    CHECK(dm[10] == 0.0);
    CHECK(dm[3] == -1.0);
    double dres[12];
    for (int i = 0; i < 12; i++)
        dres[i] = 7.0;
    CHECK_OK(MPI_Get_accumulate(NULL, 0, MPI_DOUBLE, dres, 1, dvec, right,
                                2 * sizeof(double) / sizeof(int), 3, MPI_DOUBLE, MPI_NO_OP, win));
    MPI_Win_fence(0, win);
    CHECK(dres[0] == (rma_size - 1) * 0.5);
    CHECK(dres[4] == -1.0); /* dm[3] of the right neighbour */
    CHECK(dres[8] == -1.0);
    CHECK(dres[1] == 7.0);
    MPI_Type_free(&dvec);
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);
    MPI_Type_free(&ovec);
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    right = (rma_rank + 1) % rma_size;
    left = (rma_rank + rma_size - 1) % rma_size;
    mem = malloc(W * sizeof(int));
    MPI_Win_create(mem, W * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    test_vector();
    test_indexed();
    test_struct();
    test_resized();
    test_subarray();
    test_accumulate();
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Win_free(&win);
    free(mem);
    return rma_finish("rma_types");
}
