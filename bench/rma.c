/* One-sided communication (RMA) benchmarks, OSU method (osu_put_latency,
 * osu_get_latency, osu_put_bw, osu_get_bw, osu_put_bibw, osu_acc_latency,
 * osu_get_acc_latency, osu_fop_latency, osu_cas_latency), written for Loom.
 *
 * Compiled once per benchmark with three choices, so that each binary
 * calls only the MPI functions it measures (an MPI that lacks, say,
 * MPI_Win_post fails to build the PSCW variants only):
 *
 *   operation       -DRMA_PUT, RMA_GET, RMA_ACC (MPI_Accumulate, MPI_SUM on
 *                   MPI_DOUBLE), RMA_GACC (MPI_Get_accumulate, the same),
 *                   RMA_FOP (MPI_Fetch_and_op, MPI_SUM on one MPI_INT64_T),
 *                   RMA_CAS (MPI_Compare_and_swap, one MPI_INT64_T)
 *   measurement     -DRMA_LAT   origin 0 issues one operation to target 1
 *                               and completes it; time per operation (us)
 *                   -DRMA_BW    origin 0 issues a window of W (-W) operations,
 *                               then completes them; MB/s (10^6 B/s)
 *                   -DRMA_BIBW  ranks 0 and 1 both do RMA_BW at each other;
 *                               both directions summed, MB/s
 *                   -DRMA_RATE  every rank hammers rank 0 (one operation and
 *                               MPI_Win_flush each); all ranks' operations
 *                               / rank 0's time from a barrier before the
 *                               timed operations to one after them, ops/s:
 *                               the job's throughput, also where
 *                               oversubscribed ranks take turns (a sum of
 *                               per-rank rates would count each turn alone)
 *   synchronization -DRMA_SYNC_LOCK   MPI_Win_lock(SHARED) ... MPI_Win_unlock
 *                                     around every operation (window of them)
 *                   -DRMA_SYNC_FLUSH  MPI_Win_lock_all once, then each
 *                                     operation (window) + MPI_Win_flush
 *                   -DRMA_SYNC_FENCE  every rank: operation(s), MPI_Win_fence
 *                   -DRMA_SYNC_PSCW   origin MPI_Win_start ... MPI_Win_complete,
 *                                     target MPI_Win_post ... MPI_Win_wait
 *
 * and two programs without an operation, at any number of ranks:
 *   -DRMA_FENCE     time per MPI_Win_fence, every rank back to back, averaged
 *                   over ranks (as osu_barrier times a barrier)
 *   -DRMA_LOCK_ALL  time per MPI_Win_lock_all + MPI_Win_unlock_all, the same
 *
 * The window comes from MPI_Win_allocate (disp_unit 1), as OSU's default.
 * For every size: a barrier, warm-up iterations, timed iterations.  LAT,
 * BW and BIBW are timed on rank 0 alone, as OSU does (other ranks take
 * part only in fences); RATE, FENCE and LOCK_ALL average each rank's time
 * over ranks.  Hot buffers use displacement 0 every time; cold buffers
 * (--cold) rotate the origin buffer and the target displacement over a
 * working set larger than the last-level cache.
 *
 * Build one by hand:
 *   mpicc -O2 -DRMA_PUT -DRMA_LAT -DRMA_SYNC_FLUSH -o put_lat_flush bench/rma.c
 *   mpiexec -n 2 ./put_lat_flush -m 1:1M
 */

/* ---- the variant ---- */

#if defined(RMA_FENCE) || defined(RMA_LOCK_ALL)
#define RMA_NOOP 1
#endif
#if defined(RMA_LAT) || defined(RMA_BW) || defined(RMA_BIBW)
#define BENCH_NO_REDUCE 1 /* rank 0 measures, as OSU */
#endif
#include "common.h"

#if defined(RMA_PUT)
#define OPNAME "put"
#elif defined(RMA_GET)
#define OPNAME "get"
#elif defined(RMA_ACC)
#define OPNAME "acc"
#elif defined(RMA_GACC)
#define OPNAME "gacc"
#elif defined(RMA_FOP)
#define OPNAME "fop"
#elif defined(RMA_CAS)
#define OPNAME "cas"
#elif !defined(RMA_NOOP)
#error "define RMA_PUT, RMA_GET, RMA_ACC, RMA_GACC, RMA_FOP, RMA_CAS, RMA_FENCE or RMA_LOCK_ALL"
#endif

#if defined(RMA_ACC) || defined(RMA_GACC)
#define MINSZ 8 /* one MPI_DOUBLE */
#define MAXSZ ((size_t)4 << 20)
#elif defined(RMA_FOP) || defined(RMA_CAS)
#define MINSZ 8 /* one MPI_INT64_T, the only size */
#define MAXSZ ((size_t)8)
#else
#define MINSZ 1
#define MAXSZ ((size_t)4 << 20)
#endif

#if defined(RMA_SYNC_LOCK)
#define SYNCNAME "lock"
#elif defined(RMA_SYNC_FLUSH)
#define SYNCNAME "flush"
#elif defined(RMA_SYNC_FENCE)
#define SYNCNAME "fence"
#elif defined(RMA_SYNC_PSCW)
#define SYNCNAME "pscw"
#elif defined(RMA_RATE)
#define SYNCNAME       "flush"
#define RMA_SYNC_FLUSH 1
#elif !defined(RMA_NOOP)
#error "define one of RMA_SYNC_LOCK, RMA_SYNC_FLUSH, RMA_SYNC_FENCE, RMA_SYNC_PSCW"
#endif

#if defined(RMA_FENCE)
#define NAME "fence"
#elif defined(RMA_LOCK_ALL)
#define NAME "lock_all"
#elif defined(RMA_LAT)
#define NAME   OPNAME "_lat_" SYNCNAME
#define WHAT   "time per operation and its completion, rank 0 to rank 1"
#define UNIT   "us"
#define COLUMN "Latency(us)"
#define ORIGIN (o.rank == 0)
#define TARGET (o.rank == 1)
#define PEER   (1 - o.rank)
#define NPAIR  2
#elif defined(RMA_BW)
#define NAME   OPNAME "_bw_" SYNCNAME
#define WHAT   "bandwidth, windows of operations from rank 0 to rank 1"
#define UNIT   "MB/s"
#define COLUMN "Bandwidth(MB/s)"
#define ORIGIN (o.rank == 0)
#define TARGET (o.rank == 1)
#define PEER   (1 - o.rank)
#define NPAIR  2
#elif defined(RMA_BIBW)
#define NAME   OPNAME "_bibw_" SYNCNAME
#define WHAT   "bidirectional bandwidth, ranks 0 and 1 at each other"
#define UNIT   "MB/s"
#define COLUMN "Bandwidth(MB/s)"
#define ORIGIN (o.rank <= 1)
#define TARGET (o.rank <= 1)
#define PEER   (1 - o.rank)
#define NPAIR  2
#elif defined(RMA_RATE)
#define NAME   OPNAME "_rate"
#define WHAT   "operation rate, every rank to rank 0 under lock_all + flush"
#define UNIT   "ops/s"
#define COLUMN "Ops/s"
#define ORIGIN 1
#define TARGET (o.rank == 0)
#define PEER   0
#define NPAIR  1
#else
#error "define one of RMA_LAT, RMA_BW, RMA_BIBW, RMA_RATE, RMA_FENCE, RMA_LOCK_ALL"
#endif

#ifndef RMA_NOOP

/* The operation: `s` bytes from origin buffer ob (results into rb) to the
 * target's window at displacement disp. */
static void rma_op(void *ob, void *cb, void *rb, size_t s, int target, MPI_Aint disp, MPI_Win win)
{
    (void)ob, (void)cb, (void)rb, (void)s;
#if defined(RMA_PUT)
    MPI_Put(ob, (int)s, MPI_CHAR, target, disp, (int)s, MPI_CHAR, win);
#elif defined(RMA_GET)
    MPI_Get(rb, (int)s, MPI_CHAR, target, disp, (int)s, MPI_CHAR, win);
#elif defined(RMA_ACC)
    int n = (int)(s / sizeof(double));
    MPI_Accumulate(ob, n, MPI_DOUBLE, target, disp, n, MPI_DOUBLE, MPI_SUM, win);
#elif defined(RMA_GACC)
    int n = (int)(s / sizeof(double));
    MPI_Get_accumulate(ob, n, MPI_DOUBLE, rb, n, MPI_DOUBLE, target, disp, n, MPI_DOUBLE, MPI_SUM,
                       win);
#elif defined(RMA_FOP)
    MPI_Fetch_and_op(ob, rb, MPI_INT64_T, target, disp, MPI_SUM, win);
#elif defined(RMA_CAS)
    MPI_Compare_and_swap(ob, cb, rb, MPI_INT64_T, target, disp, win);
#endif
}

/* Opens the access (and exposure) epoch of one iteration. */
static void epoch_begin(int origin, int target, int peer, MPI_Group peer_grp, MPI_Win win)
{
    (void)origin, (void)target, (void)peer, (void)peer_grp, (void)win;
#if defined(RMA_SYNC_LOCK)
    if (origin)
        MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
#elif defined(RMA_SYNC_PSCW)
    if (target)
        MPI_Win_post(peer_grp, 0, win);
    if (origin)
        MPI_Win_start(peer_grp, 0, win);
#endif
}

/* Completes the iteration's operations at the origin and the target. */
static void epoch_end(int origin, int target, int peer, MPI_Win win)
{
    (void)origin, (void)target, (void)peer, (void)win;
#if defined(RMA_SYNC_LOCK)
    if (origin)
        MPI_Win_unlock(peer, win);
#elif defined(RMA_SYNC_FLUSH)
    if (origin)
        MPI_Win_flush(peer, win);
#elif defined(RMA_SYNC_FENCE)
    MPI_Win_fence(0, win); /* every rank: fence is collective */
#elif defined(RMA_SYNC_PSCW)
    if (origin)
        MPI_Win_complete(win);
    if (target)
        MPI_Win_wait(win);
#endif
}

static size_t buf_bytes(size_t s, size_t n)
{
    (void)n;
    return s;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
#if defined(RMA_LAT) || defined(RMA_RATE)
    int iters = 10000, warmup = 1000;
#else
    int iters = 100, warmup = 10;
#endif
    bench_opts o = {.name = NAME,
                    .unit = UNIT,
                    .min_size = MINSZ,
                    .max_size = MAXSZ,
                    .iters = iters,
                    .warmup = warmup,
                    .window = 64};
    int rc = bench_init(&o, argc, argv);
    if (rc || o.size < NPAIR) {
        if (!rc && o.rank == 0)
            fprintf(stderr, NAME ": needs at least %d ranks\n", NPAIR);
        MPI_Finalize();
        return rc < 0 || o.size < NPAIR;
    }
#if defined(RMA_LAT) || defined(RMA_RATE)
    int w = 1;
#else
    int w = o.window;
#endif
    if (o.max_size > MAXSZ)
        o.max_size = MAXSZ;
    if (o.min_size < MINSZ)
        o.min_size = MINSZ;
    size_t maxs = bench_fit_max(&o, o.max_size, buf_bytes, buf_bytes);
    int origin = ORIGIN, target = TARGET, peer = PEER;
    (void)target;

    /* the window: a working set of slots when cold, as the origin buffers */
    bench_buf ob, rb, cb;
    bench_buf_alloc(&ob, &o, maxs);
    bench_buf_alloc(&rb, &o, maxs);
    bench_buf_alloc(&cb, &o, MINSZ);
    memset(ob.base, 0, ob.bytes); /* 0.0 and int64 0: the sums stay finite */
    memset(cb.base, 0, cb.bytes);
    MPI_Aint win_bytes = (MPI_Aint)bench_buf_need(&o, maxs);
    void *win_base = NULL;
    MPI_Win win;
    MPI_Win_allocate(win_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_base, &win);
    /* A local store before any epoch; the barrier below orders it before
     * every remote access (the unified memory model, as OSU assumes). */
    memset(win_base, 0, (size_t)win_bytes);

    MPI_Group peer_grp = MPI_GROUP_NULL;
#if defined(RMA_SYNC_PSCW)
    MPI_Group world_grp;
    MPI_Comm_group(MPI_COMM_WORLD, &world_grp);
    if (o.rank < 2)
        MPI_Group_incl(world_grp, 1, &peer, &peer_grp);
    MPI_Group_free(&world_grp);
#endif
    MPI_Barrier(MPI_COMM_WORLD); /* windows zeroed before anyone writes */
#if defined(RMA_SYNC_FLUSH)
    if (origin)
        MPI_Win_lock_all(0, win);
#endif

    bench_header(&o, WHAT ", MPI_Win_" SYNCNAME);
    bench_columns(&o, COLUMN, 1);
    for (size_t s = bench_first_size(&o, MINSZ); s <= maxs; s = bench_next(&o, s)) {
        int it = bench_iters(&o, s), warm = bench_warmup(&o, s);
        bench_buf_size(&ob, &o, s);
        bench_buf_size(&rb, &o, s);
        size_t nslots = o.cold ? (size_t)win_bytes / ob.slot : 1;
        long k = 0; /* operation counter for rotating buffers */
        MPI_Barrier(MPI_COMM_WORLD);
#if defined(RMA_SYNC_FENCE)
        MPI_Win_fence(0, win); /* opens the first epoch */
#endif
        double t0 = 0, span = 0;
        for (int i = 0; i < warm + it; i++) {
            if (i == warm) {
#if defined(RMA_RATE)
                MPI_Barrier(MPI_COMM_WORLD); /* everyone starts the timed part together */
#endif
                t0 = MPI_Wtime();
            }
            epoch_begin(origin, target, peer, peer_grp, win);
            if (origin)
                for (int j = 0; j < w; j++, k++)
                    rma_op(bench_buf_at(&ob, k), cb.base, bench_buf_at(&rb, k), s, peer,
                           (MPI_Aint)((size_t)k % nslots * ob.slot), win);
            epoch_end(origin, target, peer, win);
        }
        double t = MPI_Wtime() - t0; /* seconds, this rank */
        double per = t * 1e6 / it;   /* us per iteration */
#if defined(RMA_RATE)
        MPI_Barrier(MPI_COMM_WORLD); /* the job's span ends with the last rank */
        span = MPI_Wtime() - t0;
#endif
        (void)span;
#if defined(RMA_LAT)
        double st[3] = {per, per, per};
        bench_report(&o, (long)s, per, st, it, ",\"sync\":\"" SYNCNAME "\"");
#elif defined(RMA_BW) || defined(RMA_BIBW)
#if defined(RMA_BIBW)
        double bytes = 2.0 * (double)s * w * it; /* both directions */
#else
        double bytes = (double)s * w * it;
#endif
        double mbs = t > 0 ? bytes / t / 1e6 : 0;
        double st[3] = {per, per, per};
        char extra[96];
        snprintf(extra, sizeof extra, ",\"sync\":\"" SYNCNAME "\",\"window\":%d", w);
        bench_report(&o, (long)s, mbs, st, it, extra);
#else /* RMA_RATE */
        double st[3];
        bench_rank_stats(per, st);
        /* every rank's operations over rank 0's span, barrier to barrier */
        double rate = span > 0 ? (double)o.size * it / span : 0;
        char extra[96];
        snprintf(extra, sizeof extra, ",\"sync\":\"flush\",\"per_op_us\":%.6g", st[0]);
        bench_report(&o, (long)s, rate, st, it, extra);
#endif
    }

#if defined(RMA_SYNC_FLUSH)
    if (origin)
        MPI_Win_unlock_all(win);
#elif defined(RMA_SYNC_FENCE)
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
#endif
#if defined(RMA_SYNC_PSCW)
    if (peer_grp != MPI_GROUP_NULL)
        MPI_Group_free(&peer_grp);
#endif
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    bench_buf_free(&ob);
    bench_buf_free(&rb);
    bench_buf_free(&cb);
    MPI_Finalize();
    return 0;
}

#else /* RMA_FENCE, RMA_LOCK_ALL: synchronization alone, every rank */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts o = {.name = NAME,
                    .unit = "us",
                    .min_size = 0,
                    .max_size = 0,
                    .iters = 1000,
                    .warmup = 100,
                    .window = 64};
    int rc = bench_init(&o, argc, argv);
    if (rc) {
        MPI_Finalize();
        return rc < 0;
    }
    void *win_base = NULL;
    MPI_Win win;
    MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_base, &win);
#if defined(RMA_FENCE)
    bench_header(&o, "time per MPI_Win_fence, no operations, back to back");
#else
    bench_header(&o, "time per MPI_Win_lock_all + MPI_Win_unlock_all, no operations");
#endif
    bench_columns(&o, "Avg Latency(us)", 0);
    int it = bench_iters(&o, 0), warm = bench_warmup(&o, 0);
    MPI_Barrier(MPI_COMM_WORLD);
#if defined(RMA_FENCE)
    MPI_Win_fence(0, win); /* the first fence, untimed */
#endif
    double t0 = 0;
    for (int i = 0; i < warm + it; i++) {
        if (i == warm)
            t0 = MPI_Wtime();
#if defined(RMA_FENCE)
        MPI_Win_fence(0, win);
#else
        MPI_Win_lock_all(0, win);
        MPI_Win_unlock_all(win);
#endif
    }
    double t = (MPI_Wtime() - t0) * 1e6 / it;
#if defined(RMA_FENCE)
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
#endif
    double st[3];
    bench_rank_stats(t, st);
    bench_report(&o, 0, st[0], st, it, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}

#endif
