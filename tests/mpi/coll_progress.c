/*
 * Nonblocking collectives complete while a member computes. Rank 0 starts
 * each MPI_I<coll> and then spins without calling MPI until every other rank
 * has completed its own request (MPI_Wait) and counted itself on a counter
 * in rank 1's memory (the ranks are threads of one process; rank 1
 * broadcasts the counter's address first). If the call needed rank 0 to act
 * after MPI_I<coll> returned, the others would wait forever: rank 0 gives up
 * after a deadline and the test fails.
 *
 * Before counting themselves the others overwrite their send buffers: rank
 * 0's results must still be those of the values passed to the call (a
 * member whose request is complete may reuse its buffers at once, so peers
 * that read them later must read a copy).
 *
 * Run with one rank per worker (--workers = ranks): a rank that computes
 * holds its worker, so ranks sharing it could not run either.
 *
 * usage: coll_progress
 */
#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BIG 65536 /* ints: well above the copy-in size */

static int me, np, failures;
static _Atomic int counter; /* rank 1's is the one used */
static _Atomic int *shared_counter;
static int cases;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (failures++ < 10) {                                                                 \
                fprintf(stderr, "rank %d: %s: ", me, what);                                        \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rank 0: computes, without calling MPI, until the others have counted
 * themselves done with the current case. */
static void compute_until_others_done(const char *what)
{
    int want = cases * (np - 1);
    double deadline = now() + 20;
    while (atomic_load(shared_counter) < want)
        if (now() > deadline) {
            fprintf(stderr, "%s: the other ranks did not complete while rank 0 computed\n", what);
            exit(1); /* the others are stuck: end the job */
        }
}

/* After the call: rank 0 computes until the others are done, the others
 * complete, spoil their buffers (spoil[0..nspoil-1]) and count themselves. */
static void complete(const char *what, MPI_Request *rq, int *spoil, size_t nspoil)
{
    cases++;
    if (me == 0) {
        compute_until_others_done(what);
        MPI_Wait(rq, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(rq, MPI_STATUS_IGNORE);
        for (size_t i = 0; i < nspoil; i++)
            spoil[i] = -7;
        atomic_fetch_add(shared_counter, 1);
    }
}

/* Calls queued on one communicator: rank 0 starts QUEUED of them (as many
 * as a member may have outstanding on one communicator and still publish at
 * once, COLL_RING) and computes until the others have completed them all;
 * every one must be published before its MPI_I<coll> returns, not only the
 * first. */
#define QUEUED 8

static void queued(int n)
{
    char what[64];
    snprintf(what, sizeof what, "%d queued calls n=%d", QUEUED, n);
    size_t all = (size_t)n * (size_t)np;
    int *buf[QUEUED], *res[QUEUED];
    for (int k = 0; k < QUEUED; k++) {
        buf[k] = malloc(sizeof(int) * all);
        res[k] = malloc(sizeof(int) * all);
        if (!buf[k] || !res[k])
            abort();
        for (size_t i = 0; i < all; i++) {
            buf[k][i] = 100 * me + (int)i + k;
            res[k][i] = -1;
        }
    }
    MPI_Request rq[QUEUED];
    int last = np - 1;
    MPI_Ibarrier(MPI_COMM_WORLD, &rq[0]);
    MPI_Ibcast(buf[1], n, MPI_INT, 0, MPI_COMM_WORLD, &rq[1]);
    MPI_Iallreduce(buf[2], res[2], n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[2]);
    MPI_Ibarrier(MPI_COMM_WORLD, &rq[3]);
    MPI_Iallgather(buf[4], n, MPI_INT, res[4], n, MPI_INT, MPI_COMM_WORLD, &rq[4]);
    MPI_Ireduce(buf[5], res[5], n, MPI_INT, MPI_MAX, last, MPI_COMM_WORLD, &rq[5]);
    MPI_Ibcast(buf[6], n, MPI_INT, last, MPI_COMM_WORLD, &rq[6]);
    MPI_Ialltoall(buf[7], n, MPI_INT, res[7], n, MPI_INT, MPI_COMM_WORLD, &rq[7]);
    cases++;
    if (me == 0)
        compute_until_others_done(what);
    /* Complete them in reverse order: they may finish in any order. */
    for (int k = QUEUED - 1; k >= 0; k--)
        MPI_Wait(&rq[k], MPI_STATUS_IGNORE);
    if (me != 0) {
        for (int k = 0; k < QUEUED; k++)
            if (k != 1 && k != 6)
                for (size_t i = 0; i < all; i++)
                    buf[k][i] = -7;
        atomic_fetch_add(shared_counter, 1);
    }
    for (int i = 0; i < n; i++) {
        CHECK(buf[1][i] == i + 1, "Ibcast [%d] = %d", i, buf[1][i]);
        CHECK(res[2][i] == 100 * np * (np - 1) / 2 + np * (i + 2), "Iallreduce [%d] = %d", i,
              res[2][i]);
        CHECK(me != last || res[5][i] == 100 * last + i + 5, "Ireduce [%d] = %d", i, res[5][i]);
        CHECK(buf[6][i] == 100 * last + i + 6, "Ibcast [%d] = %d", i, buf[6][i]);
    }
    for (size_t i = 0; i < all; i++) {
        int from = (int)(i / (size_t)n), j = (int)(i % (size_t)n);
        CHECK(res[4][i] == 100 * from + j + 4, "Iallgather [%zu] = %d", i, res[4][i]);
        CHECK(res[7][i] == 100 * from + me * n + j + 7, "Ialltoall [%zu] = %d", i, res[7][i]);
    }
    for (int k = 0; k < QUEUED; k++) {
        free(buf[k]);
        free(res[k]);
    }
}

static void run(int n)
{
    int *a = malloc(sizeof(int) * (size_t)n * (size_t)np);
    int *b = malloc(sizeof(int) * (size_t)n * (size_t)np);
    int *cnt = malloc(sizeof(int) * (size_t)np), *dsp = malloc(sizeof(int) * (size_t)np);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)np);
    if (!a || !b || !cnt || !dsp || !types)
        abort();
    size_t all = (size_t)n * (size_t)np;
    for (int i = 0; i < np; i++) {
        cnt[i] = n;
        dsp[i] = i * n;
        types[i] = MPI_INT;
    }
    MPI_Request rq;
    char what[64];

    snprintf(what, sizeof what, "Ibarrier");
    MPI_Ibarrier(MPI_COMM_WORLD, &rq);
    complete(what, &rq, NULL, 0);

    for (int root = 0; root < np; root += np - 1) {
        snprintf(what, sizeof what, "Ibcast n=%d root=%d", n, root);
        for (int i = 0; i < n; i++)
            a[i] = me == root ? 3 * i + root : -1;
        MPI_Ibcast(a, n, MPI_INT, root, MPI_COMM_WORLD, &rq);
        complete(what, &rq, me == root ? a : NULL, me == root ? (size_t)n : 0);
        for (int i = 0; me != root && i < n; i++)
            CHECK(a[i] == 3 * i + root, "[%d] = %d", i, a[i]);

        snprintf(what, sizeof what, "Ireduce n=%d root=%d", n, root);
        for (int i = 0; i < n; i++)
            a[i] = me + i;
        MPI_Ireduce(a, b, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &rq);
        complete(what, &rq, a, (size_t)n);
        for (int i = 0; me == root && i < n; i++)
            CHECK(b[i] == np * (np - 1) / 2 + np * i, "[%d] = %d", i, b[i]);

        snprintf(what, sizeof what, "Igather n=%d root=%d", n, root);
        for (int i = 0; i < n; i++)
            a[i] = 100 * me + i;
        MPI_Igather(a, n, MPI_INT, b, n, MPI_INT, root, MPI_COMM_WORLD, &rq);
        complete(what, &rq, a, (size_t)n);
        for (size_t i = 0; me == root && i < all; i++)
            CHECK(b[i] == 100 * (int)(i / (size_t)n) + (int)(i % (size_t)n), "[%zu] = %d", i, b[i]);

        snprintf(what, sizeof what, "Iscatterv n=%d root=%d", n, root);
        for (size_t i = 0; i < all; i++)
            a[i] = me == root ? (int)i * 5 : -1;
        MPI_Iscatterv(a, cnt, dsp, MPI_INT, b, n, MPI_INT, root, MPI_COMM_WORLD, &rq);
        complete(what, &rq, me == root ? a : NULL, me == root ? all : 0);
        for (int i = 0; i < n; i++)
            CHECK(b[i] == (me * n + i) * 5, "[%d] = %d", i, b[i]);
    }

    snprintf(what, sizeof what, "Iallreduce n=%d", n);
    for (int i = 0; i < n; i++)
        a[i] = me * 2 + i;
    MPI_Iallreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq);
    complete(what, &rq, a, (size_t)n);
    for (int i = 0; i < n; i++)
        CHECK(b[i] == np * (np - 1) + np * i, "[%d] = %d", i, b[i]);

    snprintf(what, sizeof what, "Iallreduce in place n=%d", n);
    for (int i = 0; i < n; i++)
        b[i] = me + 1;
    MPI_Iallreduce(MPI_IN_PLACE, b, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq);
    complete(what, &rq, NULL, 0);
    for (int i = 0; i < n; i++)
        CHECK(b[i] == np, "[%d] = %d", i, b[i]);

    snprintf(what, sizeof what, "Iallgatherv n=%d", n);
    for (int i = 0; i < n; i++)
        a[i] = 10 * me + i;
    MPI_Iallgatherv(a, n, MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &rq);
    complete(what, &rq, a, (size_t)n);
    for (size_t i = 0; i < all; i++)
        CHECK(b[i] == 10 * (int)(i / (size_t)n) + (int)(i % (size_t)n), "[%zu] = %d", i, b[i]);

    snprintf(what, sizeof what, "Iallgather in place n=%d", n);
    for (size_t i = 0; i < all; i++)
        b[i] = i / (size_t)n == (size_t)me ? 7 * me + (int)(i % (size_t)n) : -1;
    MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, n, MPI_INT, MPI_COMM_WORLD, &rq);
    complete(what, &rq, b + (size_t)me * (size_t)n, (size_t)n);
    for (size_t i = 0; i < all; i++)
        if (i / (size_t)n != (size_t)me)
            CHECK(b[i] == 7 * (int)(i / (size_t)n) + (int)(i % (size_t)n), "[%zu] = %d", i, b[i]);

    snprintf(what, sizeof what, "Ialltoall n=%d", n);
    for (size_t i = 0; i < all; i++)
        a[i] = 1000 * me + (int)i;
    MPI_Ialltoall(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD, &rq);
    complete(what, &rq, a, all);
    for (size_t i = 0; i < all; i++) {
        int from = (int)(i / (size_t)n);
        CHECK(b[i] == 1000 * from + me * n + (int)(i % (size_t)n), "[%zu] = %d", i, b[i]);
    }

    snprintf(what, sizeof what, "Ialltoallw n=%d", n);
    int *bdsp = malloc(sizeof(int) * (size_t)np);
    if (!bdsp)
        abort();
    for (int i = 0; i < np; i++)
        bdsp[i] = dsp[i] * (int)sizeof(int);
    for (size_t i = 0; i < all; i++)
        a[i] = 1000 * me + (int)i + 1;
    MPI_Ialltoallw(a, cnt, bdsp, types, b, cnt, bdsp, types, MPI_COMM_WORLD, &rq);
    complete(what, &rq, a, all);
    for (size_t i = 0; i < all; i++) {
        int from = (int)(i / (size_t)n);
        CHECK(b[i] == 1000 * from + me * n + (int)(i % (size_t)n) + 1, "[%zu] = %d", i, b[i]);
    }
    free(bdsp);

    snprintf(what, sizeof what, "Ireduce_scatter_block n=%d", n);
    for (size_t i = 0; i < all; i++)
        a[i] = me + (int)i;
    MPI_Ireduce_scatter_block(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq);
    complete(what, &rq, a, all);
    for (int i = 0; i < n; i++)
        CHECK(b[i] == np * (np - 1) / 2 + np * (me * n + i), "[%d] = %d", i, b[i]);

    snprintf(what, sizeof what, "Iscan n=%d", n);
    for (int i = 0; i < n; i++)
        a[i] = me + 1;
    MPI_Iscan(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq);
    complete(what, &rq, a, (size_t)n);
    for (int i = 0; i < n; i++)
        CHECK(b[i] == (me + 1) * (me + 2) / 2, "[%d] = %d", i, b[i]);

    snprintf(what, sizeof what, "Iexscan n=%d", n);
    for (int i = 0; i < n; i++)
        a[i] = me + 1;
    MPI_Iexscan(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq);
    complete(what, &rq, a, (size_t)n);
    for (int i = 0; me > 0 && i < n; i++)
        CHECK(b[i] == me * (me + 1) / 2, "[%d] = %d", i, b[i]);

    free(a);
    free(b);
    free(cnt);
    free(dsp);
    free(types);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    (void)argv;
    if (np < 2) {
        fprintf(stderr, "coll_progress: needs 2 ranks or more\n");
        MPI_Finalize();
        return 77;
    }
    MPI_Aint addr = (MPI_Aint)(uintptr_t)&counter;
    MPI_Bcast(&addr, 1, MPI_AINT, 1, MPI_COMM_WORLD);
    shared_counter = (_Atomic int *)(uintptr_t)addr;
    for (int rep = 0; rep < 3; rep++) {
        run(4);
        run(BIG);
        queued(4);
        queued(BIG);
    }
    int total;
    MPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf(total ? "coll_progress: %d ranks FAILED\n" : "coll_progress: %d ranks ok\n", np);
    MPI_Finalize();
    return 0;
}
