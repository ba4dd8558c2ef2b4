/*
 * Erroneous one-sided calls under MPI_ERRORS_RETURN (on the windows, and on
 * MPI_COMM_WORLD and MPI_COMM_SELF for calls without a valid window):
 * - arguments: target rank out of range (MPI_ERR_RANK), displacement or
 *   count outside the window (MPI_ERR_RMA_RANGE, or MPI_ERR_DISP for a
 *   negative displacement: either is accepted and the class printed),
 *   negative counts (MPI_ERR_COUNT), MPI_DATATYPE_NULL (MPI_ERR_TYPE), ops
 *   not allowed (MPI_OP_NULL, a user op, MPI_BAND on doubles: MPI_ERR_OP),
 *   Compare_and_swap on a floating type (MPI_ERR_TYPE), a bad lock type
 *   (MPI_ERR_LOCKTYPE), bad assertion bits (MPI_ERR_ASSERT), bad window
 *   sizes and disp_units at creation, attach on a window that is not
 *   dynamic (MPI_ERR_RMA_FLAVOR), access to a dynamic window where nothing
 *   is attached (MPI_ERR_RMA_RANGE);
 * - synchronization (MPI_ERR_RMA_SYNC): Put, Get, Accumulate outside any
 *   epoch, unlock without lock, unlock_all without lock_all, flushes
 *   outside a passive epoch, complete without start, wait without post,
 *   access epochs that overlap (a target locked twice, lock_all or start
 *   in a lock epoch, lock, fence or unlock in lock_all), Rput in a fence
 *   epoch;
 * - handles (MPI_ERR_WIN): MPI_WIN_NULL, and a window already freed.
 * After each group the window still works (a ring of Puts under fences).
 * Other MPIs do not detect all of these: the checks they miss are strict
 * only under LOOM_EXPECT, and reported as notes otherwise. Nothing here may
 * crash: a call that another MPI might carry out on freed state is made
 * only under LOOM_EXPECT.
 */
#include <stdlib.h>

#include "rma_common.h"

/* The window: 4 ints at mem, inside a buffer with room around it, so that
 * an out-of-range access another MPI does not detect stays in this rank's
 * memory (GUARD ints before, and after room for a displacement of 10^6). */
enum { GUARD = 16, FAR = 1000000 };
static int *buf, *mem;

/* A call that leaves an epoch open or closes another's if the
 * implementation accepts it (undefined after that): made only under
 * LOOM_EXPECT; elsewhere counted and reported once. */
static int skipped;
#define RISKY(x)                                                                                   \
    do {                                                                                           \
        if (RMA_STRICT) {                                                                          \
            x;                                                                                     \
        } else {                                                                                   \
            skipped++;                                                                             \
        }                                                                                          \
    } while (0)

/* An erroneous synchronization call: MPI_ERR_RMA_SYNC; undo runs if the
 * implementation accepted it anyway. */
#define EXPECT_SYNC(call, undo)                                                                    \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        rma_expect_class(rc_, MPI_ERR_RMA_SYNC, 0, RMA_STRICT, #call, __FILE__, __LINE__);         \
        if (rc_ == MPI_SUCCESS) {                                                                  \
            undo;                                                                                  \
        }                                                                                          \
    } while (0)

/* A ring of Puts under fences: the window works. */
static void still_works(MPI_Win win, int line)
{
    int right = (rma_rank + 1) % rma_size, left = (rma_rank + rma_size - 1) % rma_size;
    int v = 1000 + line * 100 + rma_rank;
    int rc1 = MPI_Win_fence(0, win);
    int rc2 = MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    int rc3 = MPI_Win_fence(0, win);
    if (rc1 || rc2 || rc3 || mem[0] != 1000 + line * 100 + left) {
        fprintf(stderr, "rma_errors: rank %d: line %d: the window no longer works (%d %d %d %d)\n",
                rma_rank, line, rc1, rc2, rc3, mem[0]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Win_fence(0, win);
}

/* A range error: MPI_ERR_RMA_RANGE, or MPI_ERR_DISP where allowed. */
static void expect_range(int rc, int disp_allowed, const char *what, int line)
{
    if (rma_rank == 0)
        fprintf(stderr, "info: line %d: %s: %s\n", line, what, rma_class_name(rc));
    if (disp_allowed)
        rma_expect_class(rc, MPI_ERR_RMA_RANGE, MPI_ERR_DISP, RMA_STRICT, what, __FILE__, line);
    else
        rma_expect_class(rc, MPI_ERR_RMA_RANGE, 0, RMA_STRICT, what, __FILE__, line);
}
#define EXPECT_RANGE(call, d) expect_range((call), (d), #call, __LINE__)

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)in, (void)inout, (void)len, (void)type;
}

/* Bad arguments inside a fence epoch. */
static void test_arguments(MPI_Win win)
{
    int v[4] = {1, 2, 3, 4}, r = 0;
    double d = 1.0, dr;
    MPI_Win_fence(0, win);
    EXPECT_ERR(MPI_Put(v, 1, MPI_INT, rma_size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT_ERR(MPI_Put(v, 1, MPI_INT, -5, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT_ERR(MPI_Get(v, 1, MPI_INT, rma_size + 7, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    EXPECT_ERR(MPI_Accumulate(v, 1, MPI_INT, rma_size, 0, 1, MPI_INT, MPI_SUM, win), MPI_ERR_RANK);
    EXPECT_ERR_LOOM(MPI_Fetch_and_op(v, &r, MPI_INT, -2, 0, MPI_SUM, win), MPI_ERR_RANK);
    EXPECT_ERR_LOOM(MPI_Compare_and_swap(v, v, &r, MPI_INT, rma_size, 0, win), MPI_ERR_RANK);
    still_works(win, __LINE__);

    /* The window has 4 ints (disp_unit 4). */
    MPI_Win_fence(0, win);
    int right = (rma_rank + 1) % rma_size;
    EXPECT_RANGE(MPI_Put(v, 1, MPI_INT, right, 4, 1, MPI_INT, win), 0);
    EXPECT_RANGE(MPI_Put(v, 2, MPI_INT, right, 3, 2, MPI_INT, win), 0);
    EXPECT_RANGE(MPI_Get(v, 4, MPI_INT, right, 1, 4, MPI_INT, win), 0);
    EXPECT_RANGE(MPI_Accumulate(v, 1, MPI_INT, right, FAR, 1, MPI_INT, MPI_SUM, win), 0);
    EXPECT_RANGE(MPI_Put(v, 1, MPI_INT, right, -1, 1, MPI_INT, win), 1);
    EXPECT_RANGE(MPI_Fetch_and_op(v, &r, MPI_INT, right, 4, MPI_SUM, win), 0);
    EXPECT_RANGE(MPI_Compare_and_swap(v, v, &r, MPI_INT, right, 17, win), 0);
    /* (a vector whose extent runs past the end: 2 ints with stride 4) */
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 4, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    EXPECT_RANGE(MPI_Put(v, 2, MPI_INT, right, 0, 1, vec, win), 0);
    MPI_Type_free(&vec);
    still_works(win, __LINE__);

    MPI_Win_fence(0, win);
    EXPECT_ERR(MPI_Put(v, -1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_COUNT);
    EXPECT_ERR(MPI_Get(v, 1, MPI_INT, right, 0, -3, MPI_INT, win), MPI_ERR_COUNT);
    EXPECT_ERR(MPI_Put(v, 1, MPI_DATATYPE_NULL, right, 0, 1, MPI_INT, win), MPI_ERR_TYPE);
    EXPECT_ERR(MPI_Get(v, 1, MPI_INT, right, 0, 1, MPI_DATATYPE_NULL, win), MPI_ERR_TYPE);
    MPI_Datatype uncommitted;
    MPI_Type_contiguous(2, MPI_INT, &uncommitted);
    EXPECT_ERR_LOOM(MPI_Put(v, 1, uncommitted, right, 0, 1, uncommitted, win), MPI_ERR_TYPE);
    MPI_Type_free(&uncommitted);
    EXPECT_ERR_LOOM(MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_OP_NULL, win),
                    MPI_ERR_OP);
    MPI_Op user;
    MPI_Op_create(user_fn, 1, &user);
    EXPECT_ERR_LOOM(MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, user, win), MPI_ERR_OP);
    EXPECT_ERR_LOOM(
        MPI_Get_accumulate(v, 1, MPI_INT, &r, 1, MPI_INT, right, 0, 1, MPI_INT, user, win),
        MPI_ERR_OP);
    MPI_Op_free(&user);
    /* (MPICH 4.0 accepts it, and the next fence never returns) */
    RISKY(EXPECT_ERR_LOOM(MPI_Accumulate(&d, 1, MPI_DOUBLE, right, 0, 1, MPI_DOUBLE, MPI_BAND, win),
                          MPI_ERR_OP));
    /* MPI_NO_OP only with Get_accumulate and Fetch_and_op. */
    EXPECT_ERR_LOOM(MPI_Accumulate(v, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_NO_OP, win),
                    MPI_ERR_OP);
    EXPECT_ERR_LOOM(MPI_Compare_and_swap(&d, &d, &dr, MPI_DOUBLE, right, 0, win), MPI_ERR_TYPE);
    /* Request-based calls belong to passive target epochs. */
    /* (MPICH 4.0 accepts it, and the next fence never returns) */
    MPI_Request req = MPI_REQUEST_NULL;
    RISKY(EXPECT_SYNC(MPI_Rput(v, 1, MPI_INT, right, 3, 1, MPI_INT, win, &req),
                      MPI_Wait(&req, MPI_STATUS_IGNORE)));
    still_works(win, __LINE__);
    (void)dr;
}

/* Synchronization errors, on a window with no epoch open. */
static void test_sync(MPI_Win win)
{
    int v = 1, r = 0;
    int right = (rma_rank + 1) % rma_size;
    /* No epoch: before the first fence, after a NOSUCCEED fence. */
    EXPECT_ERR_LOOM(MPI_Put(&v, 1, MPI_INT, right, 1, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT_ERR_LOOM(MPI_Get(&r, 1, MPI_INT, right, 1, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    EXPECT_ERR_LOOM(MPI_Accumulate(&v, 1, MPI_INT, right, 1, 1, MPI_INT, MPI_SUM, win),
                    MPI_ERR_RMA_SYNC);
    EXPECT_ERR_LOOM(MPI_Fetch_and_op(&v, &r, MPI_INT, right, 1, MPI_SUM, win), MPI_ERR_RMA_SYNC);
    EXPECT_ERR_LOOM(MPI_Win_unlock(right, win), MPI_ERR_RMA_SYNC);
    EXPECT_ERR_LOOM(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC);
    EXPECT_ERR_LOOM(MPI_Win_flush(right, win), MPI_ERR_RMA_SYNC);
    EXPECT_ERR_LOOM(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC);
    EXPECT_ERR_LOOM(MPI_Win_flush_local(right, win), MPI_ERR_RMA_SYNC);
    EXPECT_ERR_LOOM(MPI_Win_flush_local_all(win), MPI_ERR_RMA_SYNC);
    EXPECT_ERR_LOOM(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    EXPECT_ERR_LOOM(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    int flag = 0;
    EXPECT_ERR_LOOM(MPI_Win_test(win, &flag), MPI_ERR_RMA_SYNC);
    MPI_Barrier(MPI_COMM_WORLD);
    still_works(win, __LINE__);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    EXPECT_ERR_LOOM(MPI_Put(&v, 1, MPI_INT, right, 1, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Access epochs overlapping on one window: the same target locked
     * twice, lock_all or start inside a lock epoch, lock, lock_all, fence
     * and unlock inside lock_all. (Post while holding a lock of another
     * rank is allowed: only the local window must not be locked.) Then a
     * bad lock type and a bad rank. */
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    EXPECT_SYNC(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win), MPI_Win_unlock(right, win));
    RISKY(EXPECT_SYNC(MPI_Win_lock_all(0, win), MPI_Win_unlock_all(win)));
    RISKY(EXPECT_SYNC(MPI_Win_start(MPI_GROUP_EMPTY, 0, win), MPI_Win_complete(win)));
    CHECK_OK(MPI_Win_unlock(right, win));
    EXPECT_SYNC(MPI_Win_unlock(right, win), (void)0);
    CHECK_OK(MPI_Win_lock_all(0, win));
    RISKY(EXPECT_SYNC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win), MPI_Win_unlock(right, win)));
    RISKY(EXPECT_SYNC(MPI_Win_lock_all(0, win), MPI_Win_unlock_all(win)));
    RISKY(EXPECT_SYNC(MPI_Win_fence(0, win), (void)0));
    RISKY(EXPECT_SYNC(MPI_Win_unlock(right, win), (void)0));
    CHECK_OK(MPI_Win_unlock_all(win));
    int rc = MPI_Win_lock(99, right, 0, win);
    EXPECT_ERR_LOOM(rc, MPI_ERR_LOCKTYPE);
    if (rc == MPI_SUCCESS)
        MPI_Win_unlock(right, win);
    EXPECT_ERR(MPI_Win_lock(MPI_LOCK_SHARED, rma_size, 0, win), MPI_ERR_RANK);
    EXPECT_ERR_LOOM(MPI_Win_fence(0x7ff00000, win), MPI_ERR_ASSERT);
    MPI_Barrier(MPI_COMM_WORLD);
    still_works(win, __LINE__);
}

/* Creation errors (collective: every rank passes the same bad argument),
 * attach on a window that is not dynamic, a dynamic window with nothing
 * attached at the displacement. */
static void test_creation(MPI_Win win)
{
    MPI_Win bad = MPI_WIN_NULL;
    int rc = MPI_Win_create(mem, -4, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &bad);
    EXPECT_ERR_LOOM(rc, MPI_ERR_SIZE);
    if (rc == MPI_SUCCESS)
        MPI_Win_free(&bad);
    rc = MPI_Win_create(mem, 4 * sizeof(int), 0, MPI_INFO_NULL, MPI_COMM_WORLD, &bad);
    EXPECT_ERR2_LOOM(rc, MPI_ERR_DISP, MPI_ERR_ARG);
    if (rc == MPI_SUCCESS)
        MPI_Win_free(&bad);
    void *base = NULL;
    rc = MPI_Win_allocate(-8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &bad);
    EXPECT_ERR_LOOM(rc, MPI_ERR_SIZE);
    if (rc == MPI_SUCCESS)
        MPI_Win_free(&bad);
    EXPECT_ERR(MPI_Win_create(mem, 4 * sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_NULL, &bad),
               MPI_ERR_COMM);
    int extra[2];
    EXPECT_ERR_LOOM(MPI_Win_attach(win, extra, sizeof extra), MPI_ERR_RMA_FLAVOR);
    still_works(win, __LINE__);

    /* Dynamic: nothing attached at the target's displacement. */
    MPI_Win dyn;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
    MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN);
    /* (4 ints attached, 8 more after them for accesses not detected) */
    int region[12] = {0}, v = 5;
    MPI_Win_attach(dyn, region, 4 * sizeof(int));
    MPI_Aint addr, *addrs = malloc(rma_size * sizeof(MPI_Aint));
    MPI_Get_address(region, &addr);
    MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    int right = (rma_rank + 1) % rma_size;
    MPI_Win_lock_all(0, dyn);
    /* (past the end of the region; far from it; a valid one after) */
    EXPECT_RANGE(MPI_Put(&v, 1, MPI_INT, right, MPI_Aint_add(addrs[right], 4 * sizeof(int)), 1,
                         MPI_INT, dyn),
                 0);
    EXPECT_RANGE(MPI_Put(&v, 2, MPI_INT, right, MPI_Aint_add(addrs[right], 3 * sizeof(int)), 2,
                         MPI_INT, dyn),
                 0);
    CHECK_OK(MPI_Put(&v, 1, MPI_INT, right, MPI_Aint_add(addrs[right], 2 * sizeof(int)), 1, MPI_INT,
                     dyn));
    MPI_Win_unlock_all(dyn);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Detach what is not attached. */
    int other[2];
    rc = MPI_Win_detach(dyn, other);
    if (RMA_STRICT)
        CHECK(rc != MPI_SUCCESS);
    if (rma_rank == 0)
        fprintf(stderr, "info: MPI_Win_detach of memory not attached: %s\n", rma_class_name(rc));
    MPI_Win_detach(dyn, region);
    MPI_Win_fence(0, dyn);
    CHECK_EQ(region[2], 5);
    MPI_Win_free(&dyn);
    free(addrs);
}

/* MPI_WIN_NULL and freed windows (errors raised on MPI_COMM_WORLD or
 * MPI_COMM_SELF, both returning). */
static void test_handles(void)
{
    int v = 1;
    MPI_Win null = MPI_WIN_NULL;
    EXPECT_ERR(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT_ERR(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT_ERR(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, MPI_WIN_NULL), MPI_ERR_WIN);
    EXPECT_ERR(MPI_Win_free(&null), MPI_ERR_WIN);
    MPI_Group g;
    EXPECT_ERR(MPI_Win_get_group(MPI_WIN_NULL, &g), MPI_ERR_WIN);
    EXPECT_ERR(MPI_Win_set_errhandler(MPI_WIN_NULL, MPI_ERRORS_RETURN), MPI_ERR_WIN);
    EXPECT_ERR_LOOM(MPI_Win_set_name(MPI_WIN_NULL, "x"), MPI_ERR_WIN);
#ifdef LOOM_EXPECT
    /* A freed window (a copy of its handle): only where the implementation
     * promises to detect it; elsewhere the call may touch freed memory. */
    int m = 0;
    MPI_Win w, stale;
    MPI_Win_create(&m, sizeof m, sizeof m, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    stale = w;
    MPI_Win_free(&w);
    EXPECT_ERR(MPI_Win_fence(0, stale), MPI_ERR_WIN);
    EXPECT_ERR(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, stale), MPI_ERR_WIN);
    EXPECT_ERR(MPI_Win_lock_all(0, stale), MPI_ERR_WIN);
    EXPECT_ERR(MPI_Win_free(&stale), MPI_ERR_WIN);
    /* A window freed while locked: MPI_ERR_RMA_SYNC, and it stays. */
    MPI_Win_create(&m, sizeof m, sizeof m, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
    MPI_Win keep = w;
    EXPECT_ERR(MPI_Win_free(&w), MPI_ERR_RMA_SYNC);
    CHECK(w == keep);
    MPI_Win_unlock(0, w);
    CHECK_OK(MPI_Win_free(&w));
#endif
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    size_t n = RMA_STRICT ? GUARD + 4 + GUARD : GUARD + FAR + 2 * GUARD;
    buf = calloc(n, sizeof(int));
    mem = buf + GUARD;
    MPI_Win win;
    MPI_Win_create(mem, 4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    test_sync(win);
    test_arguments(win);
    test_creation(win);
    test_handles();
    MPI_Win_free(&win);
    free(buf);
    if (skipped && rma_rank == 0)
        fprintf(stderr, "note: %d checks of calls with undefined effects when accepted: not made\n",
                skipped);
    return rma_finish("rma_errors");
}
