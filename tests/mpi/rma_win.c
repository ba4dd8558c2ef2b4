/*
 * Window creation and its queries: MPI_Win_create (with memory of
 * MPI_Alloc_mem, and of size 0 with a NULL base on some ranks, on a split
 * communicator), MPI_Win_allocate, MPI_Win_allocate_shared, and
 * MPI_Win_create_dynamic; the predefined attributes MPI_WIN_BASE, SIZE,
 * DISP_UNIT, CREATE_FLAVOR and MODEL; MPI_Win_get_group, MPI_Win_set_name and
 * get_name, MPI_Win_set_info and get_info; MPI_Win_free (the handle becomes
 * MPI_WIN_NULL); and, from MPI-4 on, MPI_Win_shared_query on windows that
 * are not shared (size 0, or the target's memory readable by loads). Loom's
 * mpi.h says MPI 3.1 but has that query: LOOM_EXPECT checks it too, and
 * strictly (every window of Loom is in one process's memory).
 * Every window carries one Put under fences, so that each is known to work.
 */
#include <stdint.h>
#include <stdlib.h>

#include "rma_common.h"

enum { N = 16 };

/* Checks the model attribute: MPI_WIN_UNIFIED or MPI_WIN_SEPARATE, unified
 * for shared windows and always under Loom. */
static void check_model(MPI_Win win, int shared)
{
    int model = rma_attr_int(win, MPI_WIN_MODEL, -1);
    if (shared || RMA_STRICT)
        CHECK_EQ(model, MPI_WIN_UNIFIED);
    else
        CHECK(model == MPI_WIN_UNIFIED || model == MPI_WIN_SEPARATE);
}

/* Checks the predefined attributes of a window. */
static void check_attrs(MPI_Win win, void *base, MPI_Aint bytes, int disp_unit, int flavor)
{
    void *got = NULL;
    int flag = 0;
    CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &got, &flag));
    CHECK(flag);
    CHECK(got == base);
    CHECK_EQ(rma_attr_aint(win, MPI_WIN_SIZE, -1), bytes);
    CHECK_EQ(rma_attr_int(win, MPI_WIN_DISP_UNIT, -1), disp_unit);
    CHECK_EQ(rma_attr_int(win, MPI_WIN_CREATE_FLAVOR, -1), flavor);
    check_model(win, flavor == MPI_WIN_FLAVOR_SHARED);
}

/* Checks that the window's group is the communicator's. */
static void check_group(MPI_Win win, MPI_Comm comm)
{
    MPI_Group wg, cg;
    int cmp = -1, gsize = -1, grank = -1, crank;
    CHECK_OK(MPI_Win_get_group(win, &wg));
    MPI_Comm_group(comm, &cg);
    MPI_Group_compare(wg, cg, &cmp);
    CHECK_EQ(cmp, MPI_IDENT);
    MPI_Group_size(wg, &gsize);
    MPI_Group_rank(wg, &grank);
    MPI_Comm_rank(comm, &crank);
    CHECK_EQ(grank, crank);
    int csize;
    MPI_Comm_size(comm, &csize);
    CHECK_EQ(gsize, csize);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);
}

/* One fence epoch: every rank of comm puts its rank plus tag into slot 0 of
 * its right neighbour's memory mem (of ints, disp_unit du); checks it. */
static void ring_put(MPI_Win win, MPI_Comm comm, int *mem, int du, int tag)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int v = me + tag, right = (me + 1) % n, left = (me + n - 1) % n;
    CHECK_OK(MPI_Win_fence(0, win));
    CHECK_OK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CHECK_OK(MPI_Win_fence(0, win));
    (void)du;
    CHECK_EQ(mem[0], left + tag);
}

/* Names: empty by default, set and read back, the longest one. */
static void check_name(MPI_Win win)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    name[0] = 'x';
    CHECK_OK(MPI_Win_get_name(win, name, &len));
    CHECK_EQ((int)strlen(name), len);
    /* (Open MPI 4.1 names windows itself) */
    if (RMA_STRICT || len == 0)
        CHECK_EQ(len, 0);
    else if (rma_rank == 0)
        fprintf(stderr, "note: a new window's name is \"%s\", not empty\n", name);
    CHECK_OK(MPI_Win_set_name(win, "rma window"));
    CHECK_OK(MPI_Win_get_name(win, name, &len));
    CHECK_EQ(len, 10);
    CHECK(strcmp(name, "rma window") == 0);
    char longest[MPI_MAX_OBJECT_NAME];
    memset(longest, 'w', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    CHECK_OK(MPI_Win_set_name(win, longest));
    CHECK_OK(MPI_Win_get_name(win, name, &len));
    CHECK_EQ(len, MPI_MAX_OBJECT_NAME - 1);
    CHECK(strcmp(name, longest) == 0);
}

/* Info: get_info gives a new object the caller frees, whatever hints the
 * implementation reports; set_info accepts known and unknown keys. */
static void check_info(MPI_Win win)
{
    MPI_Info info = MPI_INFO_NULL, set;
    int nkeys = -1;
    CHECK_OK(MPI_Win_get_info(win, &info));
    CHECK(info != MPI_INFO_NULL);
    CHECK_OK(MPI_Info_get_nkeys(info, &nkeys));
    CHECK(nkeys >= 0);
    for (int k = 0; k < nkeys; k++) {
        char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
        int vlen = 0, flag = 0;
        MPI_Info_get_nthkey(info, k, key);
        MPI_Info_get_valuelen(info, key, &vlen, &flag);
        CHECK(flag);
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag);
        CHECK(flag);
    }
    MPI_Info_free(&info);
    CHECK(info == MPI_INFO_NULL);
    MPI_Info_create(&set);
    MPI_Info_set(set, "no_locks", "false");
    MPI_Info_set(set, "accumulate_ordering", "rar,raw,war,waw");
    MPI_Info_set(set, "loom_unknown_key", "1");
    CHECK_OK(MPI_Win_set_info(win, set));
    MPI_Info_free(&set);
    CHECK_OK(MPI_Win_get_info(win, &info));
    CHECK(info != MPI_INFO_NULL);
    /* A hint it reports has a value that reads back. */
    char val[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_Info_get(info, "accumulate_ordering", MPI_MAX_INFO_VAL, val, &flag);
    if (flag)
        CHECK(strlen(val) > 0);
    MPI_Info_free(&info);
}

#if MPI_VERSION >= 4 || defined(LOOM_EXPECT)
/* MPI_Win_shared_query on a window that may not be shared: an error is a
 * failure under Loom, a note elsewhere (MPICH 4.0 refuses with
 * MPI_ERR_RMA_FLAVOR). */
static int shared_query(MPI_Win win, int target, MPI_Aint *size_p, int *du_p, void *base_p)
{
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int rc = MPI_Win_shared_query(win, target, size_p, du_p, base_p);
    MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
    if (RMA_STRICT)
        CHECK_OK(rc);
    else if (rc != MPI_SUCCESS && rma_rank == 0)
        fprintf(stderr, "note: MPI_Win_shared_query on a window that is not shared: %s\n",
                rma_class_name(rc));
    return rc;
}

/* MPI-4: MPI_Win_shared_query on a window that is not shared gives size 0,
 * or memory of the target that loads read. Each rank's memory mem holds
 * 1000 * rank + i at i (written before the window was made); Loom (all
 * ranks in one process) must share it. */
static void check_query_any(MPI_Win win, MPI_Aint bytes, int du)
{
    int target = (rma_rank + 1) % rma_size;
    MPI_Aint qsize = -1;
    int qdu = -1;
    int *qbase = NULL;
    CHECK_OK(MPI_Win_lock_all(0, win));
    CHECK_OK(MPI_Win_sync(win));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_sync(win));
    int rc = shared_query(win, target, &qsize, &qdu, &qbase);
    if (rc != MPI_SUCCESS) {
        CHECK_OK(MPI_Win_unlock_all(win));
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    if (RMA_STRICT)
        CHECK_EQ(qsize, bytes);
    if (qsize != 0) {
        CHECK_EQ(qsize, bytes);
        CHECK_EQ(qdu, du);
        CHECK(qbase != NULL);
        if (qbase)
            for (int i = 0; i < N; i++)
                CHECK_EQ(qbase[i], 1000 * target + i);
    } else if (rma_rank == 0) {
        fprintf(stderr, "note: MPI_Win_shared_query on a window that is not shared: size 0\n");
    }
    CHECK_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
}
#endif

/* MPI_Win_create over memory of malloc and of MPI_Alloc_mem. */
static void test_create(void)
{
    int *mem = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        mem[i] = 1000 * rma_rank + i;
    MPI_Win win = MPI_WIN_NULL;
    CHECK_OK(
        MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    CHECK(win != MPI_WIN_NULL);
    check_attrs(win, mem, N * sizeof(int), sizeof(int), MPI_WIN_FLAVOR_CREATE);
    check_group(win, MPI_COMM_WORLD);
    check_name(win);
    check_info(win);
#if MPI_VERSION >= 4 || defined(LOOM_EXPECT)
    check_query_any(win, N * sizeof(int), sizeof(int));
#endif
    ring_put(win, MPI_COMM_WORLD, mem, sizeof(int), 1);
    CHECK_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL);
    free(mem);

    /* Memory of MPI_Alloc_mem, with an info; disp_unit 1. */
    int *am = NULL;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_mem_hint", "none");
    CHECK_OK(MPI_Alloc_mem(N * sizeof(int), info, &am));
    MPI_Info_free(&info);
    REQUIRE(am != NULL);
    CHECK_OK(MPI_Win_create(am, N * sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, am, N * sizeof(int), 1, MPI_WIN_FLAVOR_CREATE);
    ring_put(win, MPI_COMM_WORLD, am, 1, 2);
    CHECK_OK(MPI_Win_free(&win));
    CHECK_OK(MPI_Free_mem(am));
    /* MPI_Alloc_mem of 0 bytes, freed. */
    void *zero = NULL;
    CHECK_OK(MPI_Alloc_mem(0, MPI_INFO_NULL, &zero));
    CHECK_OK(MPI_Free_mem(zero));

    /* Size 0 and a NULL base on odd ranks; a window on each half of a split
     * communicator, with an info. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rma_rank % 2, rma_size - rma_rank, &half);
    int hrank, hsize;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    int slot[2] = {-1, -1};
    int odd = hrank % 2 == 1;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "true");
    CHECK_OK(
        MPI_Win_create(odd ? NULL : slot, odd ? 0 : sizeof slot, sizeof(int), info, half, &win));
    MPI_Info_free(&info);
    check_attrs(win, odd ? NULL : slot, odd ? 0 : sizeof slot, sizeof(int), MPI_WIN_FLAVOR_CREATE);
    check_group(win, half);
    /* Even ranks of the half receive one Put from their right neighbour. */
    int v = 7 + hrank, src = (hrank + 1) % hsize;
    int dst = (hrank + hsize - 1) % hsize;
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    if (dst % 2 == 0)
        CHECK_OK(MPI_Put(&v, 1, MPI_INT, dst, 1, 1, MPI_INT, win));
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    if (!odd) {
        CHECK_EQ(slot[0], -1);
        CHECK_EQ(slot[1], src == hrank ? 7 + hrank : 7 + src);
    }
    CHECK_OK(MPI_Win_free(&win));
    MPI_Comm_free(&half);
}

/* MPI_Win_allocate: memory of the implementation, sizes differing by rank,
 * including 0 bytes on rank 0. */
static void test_allocate(void)
{
    MPI_Aint bytes = rma_rank == 0 ? 0 : (MPI_Aint)(N + rma_rank) * sizeof(double);
    double *base = NULL;
    MPI_Win win;
    CHECK_OK(MPI_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    if (bytes > 0) {
        CHECK(base != NULL);
        CHECK_EQ((uintptr_t)base % sizeof(double), 0);
    }
    check_attrs(win, base, bytes, sizeof(double), MPI_WIN_FLAVOR_ALLOCATE);
    check_group(win, MPI_COMM_WORLD);
    check_name(win);
    check_info(win);
    for (MPI_Aint i = 0; i < bytes / (MPI_Aint)sizeof(double); i++)
        base[i] = 0.5;
    /* Every rank but 0 receives from its left neighbour at its last slot. */
    double v = rma_rank + 0.25;
    int right = (rma_rank + 1) % rma_size;
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    if (right != 0)
        CHECK_OK(MPI_Put(&v, 1, MPI_DOUBLE, right, N + right - 1, 1, MPI_DOUBLE, win));
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    if (rma_rank != 0) {
        CHECK(base[N + rma_rank - 1] == rma_rank - 1 + 0.25);
        CHECK(base[0] == 0.5);
    }
#if MPI_VERSION >= 4 || defined(LOOM_EXPECT)
    MPI_Aint qsize = -1;
    int qdu = -1;
    double *qbase = NULL;
    int rc = shared_query(win, rma_rank, &qsize, &qdu, &qbase);
    if (rc == MPI_SUCCESS && (RMA_STRICT || qsize != 0)) {
        CHECK_EQ(qsize, bytes);
        if (bytes > 0)
            CHECK(qbase == base);
    }
#endif
    CHECK_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL);
}

/* Segments of a shared window: sizes differ by rank (0 on odd ranks); by
 * default contiguous, each beginning where the one before ends. */
static void test_allocate_shared(void)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    MPI_Aint bytes = nrank % 2 ? 0 : (MPI_Aint)(nrank + 1) * 8 * sizeof(int);
    int *base = NULL;
    MPI_Win win;
    CHECK_OK(MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, node, &base, &win));
    check_attrs(win, base, bytes, sizeof(int), MPI_WIN_FLAVOR_SHARED);
    check_group(win, node);
    check_name(win);
    check_info(win);
    /* Contiguous: compare each segment with rank 0's base. */
    MPI_Aint qsize;
    int qdu;
    char *first = NULL, *q = NULL;
    CHECK_OK(MPI_Win_shared_query(win, 0, &qsize, &qdu, &first));
    CHECK_EQ(qsize, 8 * sizeof(int));
    CHECK_EQ(qdu, sizeof(int));
    MPI_Aint offset = 0;
    for (int r = 0; r < nsize; r++) {
        CHECK_OK(MPI_Win_shared_query(win, r, &qsize, &qdu, &q));
        CHECK_EQ(qsize, r % 2 ? 0 : (r + 1) * 8 * sizeof(int));
        CHECK_EQ(qdu, sizeof(int));
        if (qsize > 0)
            CHECK(q == first + offset);
        offset += qsize;
    }
    CHECK_OK(MPI_Win_shared_query(win, nrank, &qsize, &qdu, &q));
    if (bytes > 0)
        CHECK(q == (char *)base);
    /* MPI_PROC_NULL: the segment of the lowest rank with memory. */
    CHECK_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &qsize, &qdu, &q));
    CHECK(q == first);
    CHECK_EQ(qsize, 8 * sizeof(int));
    /* A Put to the right neighbour's first int (ranks with memory). */
    for (MPI_Aint i = 0; i < bytes / (MPI_Aint)sizeof(int); i++)
        base[i] = -1;
    int v = 100 + nrank, right = (nrank + 1) % nsize;
    CHECK_OK(MPI_Win_fence(0, win));
    if (right % 2 == 0)
        CHECK_OK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    CHECK_OK(MPI_Win_fence(0, win));
    if (bytes > 0) {
        CHECK_EQ(base[0], 100 + (nrank + nsize - 1) % nsize);
        CHECK_EQ(base[1], -1);
    }
    CHECK_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL);
    MPI_Comm_free(&node);
}

/* MPI_Win_create_dynamic: no memory until attached; base MPI_BOTTOM. */
static void test_dynamic(void)
{
    MPI_Win win;
    CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC);
    check_group(win, MPI_COMM_WORLD);
    check_name(win);
    check_info(win);
    int mem[2] = {-1, -1};
    CHECK_OK(MPI_Win_attach(win, mem, sizeof mem));
    MPI_Aint mine, *addrs = malloc(rma_size * sizeof(MPI_Aint));
    MPI_Get_address(&mem[1], &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    int right = (rma_rank + 1) % rma_size, v = 40 + rma_rank;
    CHECK_OK(MPI_Win_fence(0, win));
    CHECK_OK(MPI_Put(&v, 1, MPI_INT, right, addrs[right], 1, MPI_INT, win));
    CHECK_OK(MPI_Win_fence(0, win));
    CHECK_EQ(mem[0], -1);
    CHECK_EQ(mem[1], 40 + (rma_rank + rma_size - 1) % rma_size);
    CHECK_OK(MPI_Win_detach(win, mem));
    CHECK_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL);
    free(addrs);
}

/* Several windows alive at once over the same memory, freed out of order. */
static void test_many(void)
{
    enum { W = 5 };
    int mem[W];
    MPI_Win wins[W];
    for (int k = 0; k < W; k++) {
        mem[k] = -1;
        CHECK_OK(MPI_Win_create(&mem[k], sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &wins[k]));
    }
    for (int k = 0; k < W; k++)
        for (int j = 0; j < k; j++)
            CHECK(wins[j] != wins[k]);
    for (int k = W - 1; k >= 0; k -= 2)
        ring_put(wins[k], MPI_COMM_WORLD, &mem[k], sizeof(int), 10 * k);
    for (int k = 0; k < W; k += 2)
        CHECK_OK(MPI_Win_free(&wins[k]));
    for (int k = 1; k < W; k += 2)
        ring_put(wins[k], MPI_COMM_WORLD, &mem[k], sizeof(int), 10 * k);
    for (int k = 1; k < W; k += 2)
        CHECK_OK(MPI_Win_free(&wins[k]));
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    test_create();
    test_allocate();
    test_allocate_shared();
    test_dynamic();
    test_many();
    return rma_finish("rma_win");
}
