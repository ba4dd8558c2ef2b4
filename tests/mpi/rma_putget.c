/*
 * MPI_Put and MPI_Get under fences (every rank to every rank, sizes from 0
 * to 64 Ki ints, to self, to MPI_PROC_NULL, disp_units 1, 4, 8 and 12), and
 * the request-based MPI_Rput and MPI_Rget under lock_all: Rput's request
 * completes locally (the origin buffer may be reused, the target sees the
 * data after a flush), Rget's completes with the data in place; MPI_Test
 * and MPI_Waitall on them.
 */
#include <stdlib.h>

#include "rma_common.h"

enum { BIG = 65536 };

/* The value element i of rank r holds in pattern p. */
static int val(int r, int i, int p)
{
    return r * 100003 + i * 7 + p;
}

/* All-to-all: rank r puts its rank into slot r of every rank's window,
 * then gets slot t of every rank t (its own value) back. */
static void test_all_to_all(void)
{
    int *mem = malloc(rma_size * sizeof(int)), *got = malloc(rma_size * sizeof(int));
    for (int i = 0; i < rma_size; i++)
        mem[i] = -1;
    MPI_Win win;
    MPI_Win_create(mem, rma_size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    int me = val(rma_rank, 0, 1);
    for (int k = 0; k < rma_size; k++) {
        int t = (rma_rank + k) % rma_size;
        CHECK_OK(MPI_Put(&me, 1, MPI_INT, t, rma_rank, 1, MPI_INT, win));
    }
    CHECK_OK(MPI_Win_fence(0, win));
    for (int r = 0; r < rma_size; r++)
        CHECK_EQ(mem[r], val(r, 0, 1));
    /* Get every rank's slot of this rank. */
    for (int t = 0; t < rma_size; t++) {
        got[t] = -2;
        CHECK_OK(MPI_Get(&got[t], 1, MPI_INT, t, rma_rank, 1, MPI_INT, win));
    }
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int t = 0; t < rma_size; t++)
        CHECK_EQ(got[t], me);
    MPI_Win_free(&win);
    free(mem);
    free(got);
}

/* Sizes 0..BIG ints to the right neighbour, then read back from the left
 * neighbour's window; the last slot of the window is never written. */
static void test_sizes(void)
{
    int *mem = malloc((BIG + 1) * sizeof(int)), *src = malloc(BIG * sizeof(int));
    int *dst = malloc(BIG * sizeof(int));
    MPI_Win win;
    MPI_Win_create(mem, (BIG + 1) * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int right = (rma_rank + 1) % rma_size, left = (rma_rank + rma_size - 1) % rma_size;
    int sizes[] = {0, 1, 2, 3, 17, 255, 1000, 4097, BIG};
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int n = sizes[s];
        for (int i = 0; i <= BIG; i++)
            mem[i] = -1;
        for (int i = 0; i < n; i++)
            src[i] = val(rma_rank, i, s);
        CHECK_OK(MPI_Win_fence(0, win));
        CHECK_OK(MPI_Put(src, n, MPI_INT, right, 0, n, MPI_INT, win));
        CHECK_OK(MPI_Win_fence(0, win));
        int bad = 0;
        for (int i = 0; i < n; i++)
            bad += mem[i] != val(left, i, s);
        for (int i = n; i <= BIG; i++)
            bad += mem[i] != -1;
        CHECK_EQ(bad, 0);
        /* Read the right neighbour's copy of this rank's data back. */
        for (int i = 0; i < n; i++)
            dst[i] = -3;
        CHECK_OK(MPI_Get(dst, n, MPI_INT, right, 0, n, MPI_INT, win));
        CHECK_OK(MPI_Win_fence(0, win));
        bad = 0;
        for (int i = 0; i < n; i++)
            bad += dst[i] != src[i];
        CHECK_EQ(bad, 0);
    }
    MPI_Win_free(&win);
    free(mem);
    free(src);
    free(dst);
}

/* Self as target; MPI_PROC_NULL as target does nothing; zero counts. */
static void test_self_and_null(void)
{
    int mem[8], a[8];
    for (int i = 0; i < 8; i++)
        mem[i] = -1, a[i] = val(rma_rank, i, 3);
    MPI_Win win;
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    CHECK_OK(MPI_Win_fence(0, win));
    CHECK_OK(MPI_Put(a, 4, MPI_INT, rma_rank, 2, 4, MPI_INT, win));
    CHECK_OK(MPI_Put(a, 8, MPI_INT, MPI_PROC_NULL, 0, 8, MPI_INT, win));
    CHECK_OK(MPI_Get(a, 8, MPI_INT, MPI_PROC_NULL, 0, 8, MPI_INT, win));
    CHECK_OK(MPI_Put(a, 0, MPI_INT, rma_rank, 0, 0, MPI_INT, win));
    CHECK_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 8; i++)
        CHECK_EQ(mem[i], i >= 2 && i < 6 ? val(rma_rank, i - 2, 3) : -1);
    CHECK_EQ(a[0], val(rma_rank, 0, 3));
    int b[2] = {0, 0};
    CHECK_OK(MPI_Get(b, 2, MPI_INT, rma_rank, 3, 2, MPI_INT, win));
    CHECK_OK(MPI_Win_fence(0, win));
    CHECK_EQ(b[0], val(rma_rank, 1, 3));
    CHECK_EQ(b[1], val(rma_rank, 2, 3));
    /* Under a lock too. */
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rma_rank, 0, win));
    CHECK_OK(MPI_Put(&b[1], 1, MPI_INT, rma_rank, 7, 1, MPI_INT, win));
    CHECK_OK(MPI_Put(&b[1], 1, MPI_INT, MPI_PROC_NULL, 7, 1, MPI_INT, win));
    CHECK_OK(MPI_Win_unlock(rma_rank, win));
    CHECK_EQ(mem[7], val(rma_rank, 2, 3));
    MPI_Win_free(&win);
}

/* Displacement units: the target address is base + disp * disp_unit (12:
 * a unit that is not a power of two). */
static void test_disp_units(void)
{
    int units[] = {1, 4, 8, 12};
    for (unsigned u = 0; u < 4; u++) {
        int du = units[u];
        int mem[48];
        for (int i = 0; i < 48; i++)
            mem[i] = -1;
        MPI_Win win;
        MPI_Win_create(mem, sizeof mem, du, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        int right = (rma_rank + 1) % rma_size, left = (rma_rank + rma_size - 1) % rma_size;
        int v[2] = {val(rma_rank, 1, du), val(rma_rank, 2, du)};
        MPI_Aint disp = 24 / du; /* byte 24 = int 6, for every unit */
        CHECK_OK(MPI_Win_fence(0, win));
        CHECK_OK(MPI_Put(v, 2, MPI_INT, right, disp, 2, MPI_INT, win));
        CHECK_OK(MPI_Win_fence(0, win));
        for (int i = 0; i < 48; i++)
            CHECK_EQ(mem[i], i == 6 ? val(left, 1, du) : i == 7 ? val(left, 2, du) : -1);
        int g = 0;
        CHECK_OK(MPI_Get(&g, 1, MPI_INT, left, disp, 1, MPI_INT, win));
        CHECK_OK(MPI_Win_fence(0, win));
        CHECK_EQ(g, val((left + rma_size - 1) % rma_size, 1, du));
        MPI_Win_free(&win);
    }
}

/* Rput and Rget in a lock_all epoch. */
static void test_requests(void)
{
    enum { M = 1000 };
    int *mem = malloc(2 * M * sizeof(int)), *a = malloc(M * sizeof(int));
    int *b = malloc(M * sizeof(int));
    for (int i = 0; i < 2 * M; i++)
        mem[i] = -1;
    MPI_Win win;
    MPI_Win_create(mem, 2 * M * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int right = (rma_rank + 1) % rma_size, left = (rma_rank + rma_size - 1) % rma_size;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_lock_all(0, win));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < M; i++)
            a[i] = val(rma_rank, i, round);
        MPI_Request req = MPI_REQUEST_NULL;
        CHECK_OK(MPI_Rput(a, M, MPI_INT, right, 0, M, MPI_INT, win, &req));
        CHECK(req != MPI_REQUEST_NULL);
        CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(req == MPI_REQUEST_NULL);
        /* Locally complete: the buffer may change, the target has the old
         * values once flushed. */
        for (int i = 0; i < M; i++)
            a[i] = -5;
        CHECK_OK(MPI_Win_flush(right, win));
        /* Read it back from the target: Rget completes with the data. */
        CHECK_OK(MPI_Rget(b, M, MPI_INT, right, 0, M, MPI_INT, win, &req));
        int flag = 0;
        while (!flag)
            CHECK_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
        int bad = 0;
        for (int i = 0; i < M; i++)
            bad += b[i] != val(rma_rank, i, round);
        CHECK_EQ(bad, 0);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(MPI_Win_sync(win));
        bad = 0;
        for (int i = 0; i < M; i++)
            bad += mem[i] != val(left, i, round);
        CHECK_EQ(bad, 0);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* Many requests at once, completed together, to every rank. */
    MPI_Request *reqs = malloc(2 * rma_size * sizeof(MPI_Request));
    int *vals = malloc(rma_size * sizeof(int)), *gets = malloc(rma_size * sizeof(int));
    int slot = M + rma_rank % M;
    for (int t = 0; t < rma_size; t++) {
        vals[t] = val(rma_rank, t, 9);
        CHECK_OK(MPI_Rput(&vals[t], 1, MPI_INT, t, slot, 1, MPI_INT, win, &reqs[t]));
    }
    CHECK_OK(MPI_Waitall(rma_size, reqs, MPI_STATUSES_IGNORE));
    CHECK_OK(MPI_Win_flush_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    /* (ranks r and r + M share a slot: read only what one writer wrote) */
    for (int t = 0; t < rma_size; t++) {
        gets[t] = -1;
        CHECK_OK(MPI_Rget(&gets[t], 1, MPI_INT, t, slot, 1, MPI_INT, win, &reqs[t]));
    }
    CHECK_OK(MPI_Waitall(rma_size, reqs, MPI_STATUSES_IGNORE));
    if (rma_size <= M)
        for (int t = 0; t < rma_size; t++)
            CHECK_EQ(gets[t], val(rma_rank, t, 9));
    CHECK_OK(MPI_Win_unlock_all(win));
    MPI_Win_free(&win);
    free(reqs);
    free(vals);
    free(gets);
    free(mem);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    test_all_to_all();
    test_sizes();
    test_self_and_null();
    test_disp_units();
    test_requests();
    return rma_finish("rma_putget");
}
