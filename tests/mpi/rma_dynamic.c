/*
 * Dynamic windows (MPI_Win_create_dynamic): each rank attaches several
 * regions (malloc, MPI_Alloc_mem, a static array; of different sizes), the
 * ranks exchange the regions' addresses (MPI_Get_address, the target
 * displacement relative to MPI_BOTTOM, offsets by MPI_Aint_add), and in
 * rounds access them with Put, Get, Accumulate and Fetch_and_op under
 * lock_all and under fences; between rounds every rank detaches some
 * regions, frees them and attaches new ones at new addresses.
 */
#include <stdlib.h>

#include "rma_common.h"

enum { K = 4, ROUNDS = 5 };

static int statics[64];

static int *region[K];
static int gen[K]; /* how many times region k was replaced */

/* Ints in region k now. */
static int len(int k)
{
    return 16 + 8 * k + 4 * (gen[k] % 3);
}

static int from_alloc_mem[K];
static MPI_Aint *addrs; /* addrs[r * K + k]: region k of rank r */

static void make_region(MPI_Win win, int k)
{
    int n = len(k);
    from_alloc_mem[k] = 0;
    if (k == 3 && gen[k] % 2 == 0) {
        region[k] = statics; /* (64 ints: room for every len) */
    } else if (k == 2) {
        MPI_Alloc_mem(n * sizeof(int), MPI_INFO_NULL, &region[k]);
        from_alloc_mem[k] = 1;
    } else {
        region[k] = malloc(n * sizeof(int));
    }
    for (int i = 0; i < n; i++)
        region[k][i] = -1;
    CHECK_OK(MPI_Win_attach(win, region[k], n * sizeof(int)));
}

static void drop_region(MPI_Win win, int k)
{
    CHECK_OK(MPI_Win_detach(win, region[k]));
    if (from_alloc_mem[k])
        MPI_Free_mem(region[k]);
    else if (region[k] != statics)
        free(region[k]);
    region[k] = NULL;
}

static void exchange(void)
{
    MPI_Aint mine[K];
    for (int k = 0; k < K; k++)
        MPI_Get_address(region[k], &mine[k]);
    MPI_Allgather(mine, K, MPI_AINT, addrs, K, MPI_AINT, MPI_COMM_WORLD);
}

static int val(int writer, int k, int i, int round)
{
    return 100000 * round + 1000 * writer + 10 * k + i;
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    int right = (rma_rank + 1) % rma_size, left = (rma_rank + rma_size - 1) % rma_size;
    addrs = malloc(rma_size * K * sizeof(MPI_Aint));
    MPI_Win win;
    CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (int k = 0; k < K; k++)
        make_region(win, k);
    exchange();
    int src[64], got[64];
    for (int round = 0; round < ROUNDS; round++) {
        /* Passive: region k of the right neighbour gets its first half by
         * Put; element 1 of region 0 of rank 0 counts by Fetch_and_op. */
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(MPI_Win_lock_all(0, win));
        for (int k = 0; k < K; k++) {
            int n = len(k) / 2;
            for (int i = 0; i < n; i++)
                src[i] = val(rma_rank, k, i, round);
            CHECK_OK(MPI_Put(src, n, MPI_INT, right, addrs[right * K + k], n, MPI_INT, win));
            CHECK_OK(MPI_Win_flush(right, win));
            /* Read back the last of those, at an offset. */
            MPI_Aint at = MPI_Aint_add(addrs[right * K + k], (n - 1) * sizeof(int));
            got[0] = -5;
            CHECK_OK(MPI_Get(got, 1, MPI_INT, right, at, 1, MPI_INT, win));
            CHECK_OK(MPI_Win_flush(right, win));
            CHECK_EQ(got[0], val(rma_rank, k, n - 1, round));
        }
        int one = 1, old = -1;
        MPI_Aint counter = MPI_Aint_add(addrs[0 * K + 1], sizeof(int) * (len(1) - 1));
        CHECK_OK(MPI_Fetch_and_op(&one, &old, MPI_INT, 0, counter, MPI_SUM, win));
        CHECK_OK(MPI_Win_unlock_all(win));
        CHECK(old >= -1 && old < rma_size - 1);
        MPI_Barrier(MPI_COMM_WORLD);
        /* Active: fences; the second half of each region of the left
         * neighbour by Accumulate (REPLACE), read back by Get. */
        CHECK_OK(MPI_Win_fence(0, win));
        for (int k = 0; k < K; k++) {
            int n = len(k), h = n / 2;
            /* (the last int of region 1 is rank 0's counter) */
            int m = n - h - (k == 1 ? 1 : 0);
            for (int i = 0; i < m; i++)
                src[32 + i] = val(rma_rank, k, h + i, round);
            MPI_Aint at = MPI_Aint_add(addrs[left * K + k], h * sizeof(int));
            CHECK_OK(MPI_Accumulate(&src[32], m, MPI_INT, left, at, m, MPI_INT, MPI_REPLACE, win));
        }
        CHECK_OK(MPI_Win_fence(0, win));
        for (int k = 0; k < K; k++) {
            int n = len(k), h = n / 2, bad = 0;
            for (int i = 0; i < h; i++)
                bad += region[k][i] != val(left, k, i, round);
            for (int i = h; i < n; i++) {
                int want = val(right, k, i, round);
                if (k == 1 && i == n - 1)
                    want = rma_rank == 0 ? rma_size - 1 : -1;
                bad += region[k][i] != want;
            }
            CHECK_EQ(bad, 0);
        }
        /* Get all of region 0 of the right neighbour. */
        int n0 = len(0);
        CHECK_OK(MPI_Get(got, n0, MPI_INT, right, addrs[right * K], n0, MPI_INT, win));
        CHECK_OK(MPI_Win_fence(0, win));
        for (int i = 0; i < n0; i++)
            CHECK_EQ(got[i], i < n0 / 2 ? val(rma_rank, 0, i, round)
                                        : val((right + 1) % rma_size, 0, i, round));
        /* New regions for the next round: detach and replace some (all of
         * them every third round), keep the others. */
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < K; k++) {
            if (round % 3 == 2 || (round + k) % 2 == 0 || k == 3) {
                drop_region(win, k);
                gen[k]++;
                make_region(win, k);
            } else {
                for (int i = 0; i < len(k); i++)
                    region[k][i] = -1;
            }
        }
        exchange();
    }
    for (int k = 0; k < K; k++)
        drop_region(win, k);
    CHECK_OK(MPI_Win_free(&win));
    free(addrs);
    return rma_finish("rma_dynamic");
}
