/*
 * Atomicity and mutual exclusion of one-sided calls from every rank at once:
 * - accumulates (SUM on int, long long and double vectors) to the same
 *   locations, in a lock_all epoch with flushes and in fence epochs: the
 *   totals are exact;
 * - a Fetch_and_op counter incremented ITER times by every rank under
 *   lock_all, one flush each: the total is exact and the fetched values are
 *   every value from 0 to the total, each once;
 * - MPI_Get_accumulate with MPI_REPLACE as an atomic swap: the values
 *   fetched and the final one are the initial one and every value swapped
 *   in, each once;
 * - a mutex built on MPI_Compare_and_swap protecting a non-atomic
 *   read-modify-write (Get, flush, Put) of a counter on another rank: an
 *   exact count, and never two ranks inside;
 * - exclusive locks protecting a Get + Put increment: an exact total.
 * Usage: rma_atomic [ITER] (1000 by default; the slower parts do fewer).
 */
#include <stdlib.h>

#include "rma_common.h"

static int iter = 1000;

/* Overlapping accumulates to rank 0 and to the right neighbour. */
static void test_accumulates(void)
{
    struct {
        int i[4];
        long long ll[2];
        double d[2];
    } m, *mp = &m;
    memset(&m, 0, sizeof m);
    MPI_Win win;
    MPI_Win_create(&m, sizeof m, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Aint di = (char *)mp->i - (char *)mp, dl = (char *)mp->ll - (char *)mp;
    MPI_Aint dd = (char *)mp->d - (char *)mp;
    int right = (rma_rank + 1) % rma_size;
    int ai[4] = {1, 2, 3, -4};
    long long al[2] = {1LL << 32, -1};
    double ad[2] = {0.5, 0.25};
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < iter; k++) {
        int t = k % 2 ? right : 0;
        CHECK_OK(MPI_Accumulate(ai, 4, MPI_INT, t, di, 4, MPI_INT, MPI_SUM, win));
        CHECK_OK(MPI_Accumulate(al, 2, MPI_LONG_LONG, t, dl, 2, MPI_LONG_LONG, MPI_SUM, win));
        CHECK_OK(MPI_Accumulate(ad, 2, MPI_DOUBLE, t, dd, 2, MPI_DOUBLE, MPI_SUM, win));
        if (k % 10 == 9)
            CHECK_OK(MPI_Win_flush_all(win));
    }
    CHECK_OK(MPI_Win_unlock_all(win));
    CHECK_OK(MPI_Win_fence(0, win));
    /* Rank 0 got iter/2 (rounded up) from each rank; every rank iter/2
     * from its left neighbour. */
    long long n = (long long)((iter + 1) / 2) * (rma_rank == 0 ? rma_size : 0) + iter / 2;
    for (int j = 0; j < 4; j++)
        CHECK_EQ(m.i[j], n * ai[j]);
    CHECK_EQ(m.ll[0], n * al[0]);
    CHECK_EQ(m.ll[1], n * al[1]);
    CHECK(m.d[0] == n * 0.5);
    CHECK(m.d[1] == n * 0.25);
    /* Fence epochs: every rank adds to every rank, 10 times per epoch. */
    memset(&m, 0, sizeof m);
    CHECK_OK(MPI_Win_fence(0, win));
    for (int e = 0; e < 3; e++) {
        for (int k = 0; k < 10; k++)
            for (int t = 0; t < rma_size; t++)
                CHECK_OK(MPI_Accumulate(ai, 4, MPI_INT, (rma_rank + t) % rma_size, di, 4, MPI_INT,
                                        MPI_SUM, win));
        CHECK_OK(MPI_Win_fence(0, win));
    }
    for (int j = 0; j < 4; j++)
        CHECK_EQ(m.i[j], 30LL * rma_size * ai[j]);
    MPI_Win_free(&win);
}

/* Fetch_and_op counter at rank 0 (and one at the last rank, by MPI_NO_OP
 * reads in between). */
static void test_counter(void)
{
    long long ctr[2] = {0, 0};
    MPI_Win win;
    MPI_Win_create(ctr, sizeof ctr, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    long long *got = malloc(iter * sizeof(long long)), one = 1, dummy = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_lock_all(0, win));
    long long last_seen = -1;
    for (int k = 0; k < iter; k++) {
        CHECK_OK(MPI_Fetch_and_op(&one, &got[k], MPI_LONG_LONG, 0, 0, MPI_SUM, win));
        CHECK_OK(MPI_Win_flush(0, win));
        if (k % 50 == 0) {
            long long seen = -1;
            CHECK_OK(MPI_Fetch_and_op(&dummy, &seen, MPI_LONG_LONG, 0, 0, MPI_NO_OP, win));
            CHECK_OK(MPI_Win_flush(0, win));
            CHECK(seen > got[k] && seen >= last_seen); /* it only grows */
            last_seen = seen;
        }
        if (k > 0)
            CHECK(got[k] > got[k - 1]);
    }
    CHECK_OK(MPI_Win_unlock_all(win));
    long long total = (long long)iter * rma_size;
    long long *all = NULL;
    if (rma_rank == 0)
        all = malloc(total * sizeof(long long));
    MPI_Gather(got, iter, MPI_LONG_LONG, all, iter, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_fence(0, win));
    if (rma_rank == 0) {
        CHECK_EQ(ctr[0], total);
        char *seen = calloc(total, 1);
        long long bad = 0;
        for (long long j = 0; j < total; j++) {
            if (all[j] < 0 || all[j] >= total || seen[all[j]]++)
                bad++;
        }
        CHECK_EQ(bad, 0);
        free(seen);
        free(all);
    }
    MPI_Win_free(&win);
    free(got);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Get_accumulate(REPLACE) as a swap on one int of the middle rank. */
static void test_swap(void)
{
    int swaps = iter / 20 > 0 ? iter / 20 : 1;
    int slot = -1, target = rma_size / 2;
    MPI_Win win;
    MPI_Win_create(&slot, sizeof slot, sizeof slot, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int *old = malloc(swaps * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < swaps; k++) {
        int mine = rma_rank * swaps + k;
        CHECK_OK(MPI_Get_accumulate(&mine, 1, MPI_INT, &old[k], 1, MPI_INT, target, 0, 1, MPI_INT,
                                    MPI_REPLACE, win));
        CHECK_OK(MPI_Win_flush(target, win));
    }
    CHECK_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    int final = -2;
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
    CHECK_OK(MPI_Get(&final, 1, MPI_INT, target, 0, 1, MPI_INT, win));
    CHECK_OK(MPI_Win_unlock(target, win));
    int n = swaps * rma_size;
    int *all = rma_rank == 0 ? malloc((n + 1) * sizeof(int)) : NULL;
    MPI_Gather(old, swaps, MPI_INT, all, swaps, MPI_INT, 0, MPI_COMM_WORLD);
    if (rma_rank == 0) {
        all[n] = final;
        qsort(all, n + 1, sizeof(int), cmp_int);
        int bad = 0;
        for (int j = 0; j <= n; j++)
            bad += all[j] != j - 1;
        CHECK_EQ(bad, 0);
        free(all);
    }
    MPI_Win_free(&win);
    free(old);
}

/* A spin lock by Compare_and_swap at rank 0; the counter it protects at the
 * last rank; a second word at rank 0 counts the ranks inside. */
static void test_cas_mutex(void)
{
    int rounds = iter / 50 > 0 ? iter / 50 : 1;
    int words[3] = {0, 0, 0}; /* lock, inside, counter */
    MPI_Win win;
    MPI_Win_create(words, sizeof words, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int last = rma_size - 1, me = rma_rank + 1, zero = 0, one = 1, minus = -1;
    int overlaps = 0, spins = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < rounds; k++) {
        /* acquire */
        for (;;) {
            int old = -1;
            CHECK_OK(MPI_Compare_and_swap(&me, &zero, &old, MPI_INT, 0, 0, win));
            CHECK_OK(MPI_Win_flush(0, win));
            if (old == 0)
                break;
            spins++;
        }
        int inside = -1;
        CHECK_OK(MPI_Fetch_and_op(&one, &inside, MPI_INT, 0, 1, MPI_SUM, win));
        CHECK_OK(MPI_Win_flush(0, win));
        overlaps += inside != 0;
        /* the non-atomic read-modify-write */
        int c = -1;
        CHECK_OK(MPI_Get(&c, 1, MPI_INT, last, 2, 1, MPI_INT, win));
        CHECK_OK(MPI_Win_flush(last, win));
        c++;
        CHECK_OK(MPI_Put(&c, 1, MPI_INT, last, 2, 1, MPI_INT, win));
        CHECK_OK(MPI_Win_flush(last, win));
        CHECK_OK(MPI_Fetch_and_op(&minus, &inside, MPI_INT, 0, 1, MPI_SUM, win));
        CHECK_OK(MPI_Win_flush(0, win)); /* (a different location: no ordering) */
        /* release: an atomic store of 0 (ordered after the flushes above) */
        int was = -1;
        CHECK_OK(MPI_Fetch_and_op(&zero, &was, MPI_INT, 0, 0, MPI_REPLACE, win));
        CHECK_OK(MPI_Win_flush(0, win));
        CHECK_EQ(was, me);
    }
    CHECK_OK(MPI_Win_unlock_all(win));
    CHECK_EQ(overlaps, 0);
    CHECK_OK(MPI_Win_fence(0, win));
    if (rma_rank == last)
        CHECK_EQ(words[2], rounds * rma_size);
    if (rma_rank == 0) {
        CHECK_EQ(words[0], 0);
        CHECK_EQ(words[1], 0);
    }
    MPI_Win_free(&win);
    (void)spins;
}

/* Exclusive locks around Get + Put of a counter at rank 0 and one at the
 * right neighbour. */
static void test_exclusive(void)
{
    int rounds = iter / 10 > 0 ? iter / 10 : 1;
    int ctr = 0;
    MPI_Win win;
    MPI_Win_create(&ctr, sizeof ctr, sizeof ctr, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    int right = (rma_rank + 1) % rma_size;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < rounds; k++) {
        int t = k % 2 ? right : 0, c = -1;
        CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        CHECK_OK(MPI_Get(&c, 1, MPI_INT, t, 0, 1, MPI_INT, win));
        CHECK_OK(MPI_Win_flush(t, win));
        c++;
        CHECK_OK(MPI_Put(&c, 1, MPI_INT, t, 0, 1, MPI_INT, win));
        CHECK_OK(MPI_Win_unlock(t, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, rma_rank, 0, win));
    int n = rounds / 2 + (rma_rank == 0 ? rma_size * ((rounds + 1) / 2) : 0);
    CHECK_EQ(ctr, n);
    CHECK_OK(MPI_Win_unlock(rma_rank, win));
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    if (argc > 1)
        iter = atoi(argv[1]);
    REQUIRE(iter > 0);
    test_accumulates();
    test_counter();
    test_swap();
    test_cas_mutex();
    test_exclusive();
    return rma_finish("rma_atomic");
}
