/* Cartesian topologies: MPI_Dims_create against a brute-force search, grids
 * of 1, 2 and 3 dimensions (periodic and not) checked against row-major
 * coordinates the test computes itself, Cart_get/rank/coords/shift/sub/map,
 * Topo_test, Comm_dup keeping the topology, and the error classes under
 * MPI_ERRORS_RETURN. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

/* The test programs are validated under Open MPI 4.1 too. STRICT marks the
 * checks that it fails: erroneous calls that the standard lets an
 * implementation leave undetected (Loom detects them) and its known
 * deviations, named where they are checked. */
#ifdef LOOM_MPI_H
#define STRICT 1
#else
#define STRICT 0
#endif

static int rank, size;

/* ---- MPI_Dims_create ---- */

/* The smallest spread (largest - smallest) of k non-increasing factors of
 * m, each at most max, after a first factor `first` (0: none yet); -1 when
 * there is no such split. */
static int best_spread(int m, int k, int max, int first)
{
    if (k == 0)
        return m == 1 ? first - max : -1;
    int best = -1;
    for (int f = max < m ? max : m; f >= 1; f--) {
        long long p = 1;
        for (int i = 0; i < k; i++)
            p *= f;
        if (p < m)
            break; /* k factors of at most f cannot reach m */
        if (m % f)
            continue;
        int s = best_spread(m / f, k - 1, f, first ? first : f);
        if (s >= 0 && (best < 0 || s < best))
            best = s;
    }
    return best;
}

static void check_dims(int n, int nd, const int *preset)
{
    int dims[8];
    memcpy(dims, preset, (size_t)nd * sizeof *dims);
    CHECK_EQ(MPI_Dims_create(n, nd, dims), MPI_SUCCESS);
    int fixed = 1, nfree = 0, prod = 1, prev = -1, lo = 1 << 30, hi = 0;
    for (int d = 0; d < nd; d++) {
        prod *= dims[d];
        if (preset[d]) {
            CHECK_EQ(dims[d], preset[d]);
            fixed *= preset[d];
            continue;
        }
        nfree++;
        CHECK(dims[d] >= 1);
        if (prev >= 0)
            CHECK(dims[d] <= prev); /* non-increasing */
        prev = dims[d];
        lo = dims[d] < lo ? dims[d] : lo;
        hi = dims[d] > hi ? dims[d] : hi;
    }
    CHECK_EQ(prod, n);
    /* Open MPI's factorization is greedy, not the closest (72 -> 12 x 6). */
    if (nfree && STRICT) {
        int want = best_spread(n / fixed, nfree, n / fixed, 0);
        if (hi - lo != want)
            fprintf(stderr, "Dims_create(%d, %d): spread %d, best is %d\n", n, nd, hi - lo, want);
        CHECK_EQ(hi - lo, want);
    }
}

static void test_dims_create(void)
{
    static const int zero[8];
    for (int n = 1; n <= 72; n++)
        for (int nd = 1; nd <= 4; nd++)
            check_dims(n, nd, zero);
    int big[] = {120, 210, 360, 1000, 1024, 4096, 30030};
    for (unsigned i = 0; i < sizeof big / sizeof *big; i++)
        for (int nd = 1; nd <= 4; nd++)
            check_dims(big[i], nd, zero);
    int p1[] = {0, 3, 0};
    check_dims(36, 3, p1);
    int p2[] = {2, 0, 0, 0};
    check_dims(64, 4, p2);
    int p3[] = {5, 2};
    check_dims(10, 2, p3);
    int p4[] = {0, 7};
    check_dims(7, 2, p4);
    int known[] = {0, 0};
    MPI_Dims_create(12, 2, known);
    CHECK(known[0] == 4 && known[1] == 3);
    int known3[] = {0, 0, 0};
    MPI_Dims_create(24, 3, known3);
    CHECK(known3[0] == 4 && known3[1] == 3 && known3[2] == 2);
    int one[] = {0};
    MPI_Dims_create(7, 1, one);
    CHECK_EQ(one[0], 7);
    CHECK_EQ(MPI_Dims_create(1, 0, NULL), MPI_SUCCESS);
    int cls;
    /* errors (raised on MPI_COMM_WORLD's handler) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad[] = {3, 0};
    int rc = MPI_Dims_create(10, 2, bad);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_DIMS);
    int bad2[] = {3, 4};
    rc = MPI_Dims_create(10, 2, bad2);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS);
    int neg[] = {-1, 0};
    rc = MPI_Dims_create(10, 2, neg);
    CHECK(rc != MPI_SUCCESS);
    rc = MPI_Dims_create(10, -1, neg);
    CHECK(rc != MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* ---- grids ---- */

static void coords_of(int r, int nd, const int *dims, int *c)
{
    for (int d = nd - 1; d >= 0; d--) {
        c[d] = r % dims[d];
        r /= dims[d];
    }
}

static int rank_of(int nd, const int *dims, const int *c)
{
    int r = 0;
    for (int d = 0; d < nd; d++)
        r = r * dims[d] + c[d];
    return r;
}

/* The rank disp away along d (MPI_PROC_NULL past a non-periodic edge). */
static int moved(int r, int nd, const int *dims, const int *periods, int d, int disp)
{
    int c[8];
    coords_of(r, nd, dims, c);
    int x = c[d] + disp;
    if (periods[d])
        x = ((x % dims[d]) + dims[d]) % dims[d];
    else if (x < 0 || x >= dims[d])
        return MPI_PROC_NULL;
    c[d] = x;
    return rank_of(nd, dims, c);
}

static void check_grid(MPI_Comm cart, int nd, const int *dims, const int *periods)
{
    int st, n, r, sz;
    MPI_Topo_test(cart, &st);
    CHECK_EQ(st, MPI_CART);
    MPI_Cartdim_get(cart, &n);
    CHECK_EQ(n, nd);
    MPI_Comm_rank(cart, &r);
    MPI_Comm_size(cart, &sz);
    int gd[8], gp[8], gc[8], want[8];
    CHECK_EQ(MPI_Cart_get(cart, 8, gd, gp, gc), MPI_SUCCESS);
    coords_of(r, nd, dims, want);
    for (int d = 0; d < nd; d++) {
        CHECK_EQ(gd[d], dims[d]);
        CHECK_EQ(!!gp[d], !!periods[d]);
        CHECK_EQ(gc[d], want[d]);
    }
    /* every rank: coords and back */
    for (int q = 0; q < sz; q++) {
        int c[8], back = -1;
        CHECK_EQ(MPI_Cart_coords(cart, q, nd, c), MPI_SUCCESS);
        coords_of(q, nd, dims, want);
        for (int d = 0; d < nd; d++)
            CHECK_EQ(c[d], want[d]);
        MPI_Cart_rank(cart, c, &back);
        CHECK_EQ(back, q);
    }
    /* shifts */
    for (int d = 0; d < nd; d++)
        for (int disp = -3; disp <= 3; disp++) {
            int src, dst;
            CHECK_EQ(MPI_Cart_shift(cart, d, disp, &src, &dst), MPI_SUCCESS);
            CHECK_EQ(dst, moved(r, nd, dims, periods, d, disp));
            CHECK_EQ(src, moved(r, nd, dims, periods, d, -disp));
        }
    /* periodic dimensions wrap coordinates in Cart_rank */
    for (int d = 0; d < nd; d++) {
        if (!periods[d])
            continue;
        int c[8], q;
        coords_of(r, nd, dims, c);
        c[d] += 2 * dims[d];
        MPI_Cart_rank(cart, c, &q);
        CHECK_EQ(q, r);
        coords_of(r, nd, dims, c);
        c[d] -= 3 * dims[d];
        MPI_Cart_rank(cart, c, &q);
        CHECK_EQ(q, r);
    }
    /* a duplicate keeps the topology */
    MPI_Comm dup;
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &st);
    CHECK_EQ(st, MPI_CART);
    int dd[8], dp[8], dc[8];
    MPI_Cart_get(dup, 8, dd, dp, dc);
    for (int d = 0; d < nd; d++)
        CHECK(dd[d] == gd[d] && dp[d] == gp[d] && dc[d] == gc[d]);
    MPI_Comm_free(&dup);
}

static void test_grid(int nd, const int *periods)
{
    int dims[8] = {0};
    MPI_Dims_create(size, nd, dims);
    MPI_Comm cart;
    CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 0, &cart), MPI_SUCCESS);
    REQUIRE(cart != MPI_COMM_NULL);
    check_grid(cart, nd, dims, periods);
    MPI_Comm_free(&cart);
    /* reorder = true keeps the order too (a valid choice) */
    CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 1, &cart), MPI_SUCCESS);
    check_grid(cart, nd, dims, periods);
    MPI_Comm_free(&cart);
}

static void test_smaller_grid(void)
{
    /* a grid of size - 1 ranks (1 when size is 1): the last rank is left out */
    int n = size > 1 ? size - 1 : 1, periods[] = {1}, dims[] = {n}, newrank;
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &newrank);
    if (rank < n) {
        REQUIRE(cart != MPI_COMM_NULL);
        int r;
        MPI_Comm_rank(cart, &r);
        CHECK_EQ(r, rank);
        CHECK_EQ(newrank, rank);
        check_grid(cart, 1, dims, periods);
        MPI_Comm_free(&cart);
    } else {
        CHECK(cart == MPI_COMM_NULL);
        CHECK(!STRICT || newrank == MPI_UNDEFINED); /* Open MPI returns the rank */
    }
}

static void test_sub(void)
{
    int dims[3] = {0, 0, 0}, periods[3] = {1, 0, 1};
    MPI_Dims_create(size, 3, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
    int c[3];
    coords_of(rank, 3, dims, c);
    for (int mask = 0; mask < 8; mask++) {
        int remain[3] = {mask & 1, (mask >> 1) & 1, (mask >> 2) & 1};
        MPI_Comm sub;
        CHECK_EQ(MPI_Cart_sub(cart, remain, &sub), MPI_SUCCESS);
        int kd[3], kp[3], kc[3], k = 0, sz, r;
        for (int d = 0; d < 3; d++)
            if (remain[d]) {
                kd[k] = dims[d];
                kp[k] = periods[d];
                kc[k++] = c[d];
            }
        MPI_Comm_size(sub, &sz);
        MPI_Comm_rank(sub, &r);
        int want_size = 1;
        for (int d = 0; d < k; d++)
            want_size *= kd[d];
        CHECK_EQ(sz, want_size);
        CHECK_EQ(r, rank_of(k, kd, kc));
        check_grid(sub, k, kd, kp);
        /* members share the dropped coordinates: their sum is sz times ours */
        int dropped = 0, sum;
        for (int d = 0; d < 3; d++)
            if (!remain[d])
                dropped = dropped * dims[d] + c[d];
        MPI_Allreduce(&dropped, &sum, 1, MPI_INT, MPI_SUM, sub);
        CHECK_EQ(sum, dropped * sz);
        MPI_Comm_free(&sub);
    }
    MPI_Comm_free(&cart);
}

static void test_errors(void)
{
    int cls, rc, x, y;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int dims[] = {size + 1}, periods[] = {0};
    MPI_Comm cart = MPI_COMM_NULL;
    rc = MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    CHECK(rc != MPI_SUCCESS);
    CHECK(cart == MPI_COMM_NULL);
    int zero[] = {0};
    rc = MPI_Cart_create(MPI_COMM_WORLD, 1, zero, periods, 0, &cart);
    CHECK(rc != MPI_SUCCESS);
    rc = MPI_Cartdim_get(MPI_COMM_WORLD, &x);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_TOPOLOGY);
    rc = MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &x, &y);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_TOPOLOGY);
    int st;
    MPI_Topo_test(MPI_COMM_WORLD, &st);
    CHECK_EQ(st, MPI_UNDEFINED);

    int d2[] = {size, 1}, p2[] = {0, 0};
    MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &cart);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    int c[2];
    rc = MPI_Cart_coords(cart, size, 2, c);
    MPI_Error_class(rc, &cls);
    CHECK(!STRICT || cls == MPI_ERR_RANK);
    rc = MPI_Cart_coords(cart, -1, 2, c);
    MPI_Error_class(rc, &cls);
    CHECK(!STRICT || cls == MPI_ERR_RANK);
    rc = MPI_Cart_shift(cart, 2, 1, &x, &y);
    CHECK(!STRICT || rc != MPI_SUCCESS);
    int out[] = {size, 0};
    rc = MPI_Cart_rank(cart, out, &x);
    CHECK(!STRICT || rc != MPI_SUCCESS);
    rc = MPI_Graphdims_get(cart, &x, &y);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_TOPOLOGY);
    rc = MPI_Dist_graph_neighbors_count(cart, &x, &y, &st);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_TOPOLOGY);
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    test_dims_create();
    int per[4][3] = {{0, 0, 0}, {1, 1, 1}, {1, 0, 1}, {0, 1, 0}};
    for (int nd = 1; nd <= 3; nd++)
        for (int p = 0; p < 4; p++)
            test_grid(nd, per[p]);
    test_smaller_grid();
    test_sub();
    test_errors();

    int fails = check_failures_, total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf("topo_cart: %d ranks ok\n", size);
    MPI_Finalize();
    return check_summary();
}
