/* Nonblocking collective latency and overlap (OSU osu_i<coll> method).
 * Compiled once per collective with -DCOLL_<NAME> (see coll_defs.h).
 * For every size:
 *   pure    = time per (start; MPI_Wait), as the blocking benchmark;
 *   compute = time of a busy compute loop calibrated to last `pure`;
 *   overall = time per (start; compute; MPI_Wait);
 *   overlap = 100 * (1 - (overall - compute) / pure), clamped to 0..100:
 *             the share of the collective that the compute hid.
 * With -T N the compute is cut in N pieces separated by MPI_Test calls
 * (OSU's optional progress calls).  All times are averaged over ranks. */
#include "coll_defs.h"
#include "common.h"

static double bench_now(void)
{
    return MPI_Wtime();
}

/* Busy loop for `us` microseconds, calling MPI_Test `tests` times. */
static void compute(double us, int tests, MPI_Request *req)
{
    double end = bench_now() + us * 1e-6;
    int pieces = tests > 0 ? tests + 1 : 1, flag = 0;
    double step = us * 1e-6 / pieces;
    for (int p = 0; p < pieces; p++) {
        double stop = end - step * (pieces - 1 - p);
        volatile double x = 1.0;
        while (bench_now() < stop)
            x = x * 1.0000001 + 1e-9;
        if (p + 1 < pieces && !flag)
            MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts o = {.name = NAME,
                    .unit = "us",
                    .min_size = MINSZ,
                    .max_size = 1 << 20,
                    .iters = 1000,
                    .warmup = 100,
                    .window = 64};
    int rc = bench_init(&o, argc, argv);
    if (rc) {
        MPI_Finalize();
        return rc < 0;
    }
    int n = o.size;
    (void)n;
    size_t maxs = SIZED ? bench_fit_max(&o, o.max_size, sbytes, rbytes) : 0;
    bench_buf sb, rb;
    bench_buf_alloc(&sb, &o, SBYTES(maxs, (size_t)n));
    bench_buf_alloc(&rb, &o, RBYTES(maxs, (size_t)n));
    bench_header(&o, "pure latency and compute overlap");
    if (o.rank == 0 && !o.json)
        printf("%-10s %16s %12s %12s %12s %10s\n", SIZED ? "# Size" : "#", "Pure(us)",
               "Overall(us)", "Compute(us)", "Overlap(%)", "Iterations");
    for (size_t s = SIZED ? bench_first_size(&o, MINSZ) : 0; s <= maxs; s = bench_next(&o, s)) {
        int iters = bench_iters(&o, s), warm = bench_warmup(&o, s);
        bench_buf_size(&sb, &o, SBYTES(s, (size_t)n));
        bench_buf_size(&rb, &o, RBYTES(s, (size_t)n));
        MPI_Request req;
        /* 1. pure communication */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = 0;
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm)
                t0 = MPI_Wtime();
            void *sp = bench_buf_at(&sb, i), *rp = bench_buf_at(&rb, i);
            (void)sp, (void)rp;
            ICALL(sp, rp, s, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        double pure = (MPI_Wtime() - t0) * 1e6 / iters;
        /* 2. compute alone, and 3. communication with compute */
        MPI_Barrier(MPI_COMM_WORLD);
        double tc = 0;
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm) {
                t0 = MPI_Wtime();
                tc = 0;
            }
            void *sp = bench_buf_at(&sb, i), *rp = bench_buf_at(&rb, i);
            (void)sp, (void)rp;
            ICALL(sp, rp, s, &req);
            double c0 = MPI_Wtime();
            compute(pure, o.test_calls, &req);
            tc += MPI_Wtime() - c0;
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        double overall = (MPI_Wtime() - t0) * 1e6 / iters;
        double comp = tc * 1e6 / iters;
        double ov = pure > 0 ? 100.0 * (1.0 - (overall - comp) / pure) : 0;
        ov = ov < 0 ? 0 : ov > 100 ? 100 : ov;
        double st[3], sto[3], stc[3], stv[3];
        bench_rank_stats(pure, st);
        bench_rank_stats(overall, sto);
        bench_rank_stats(comp, stc);
        bench_rank_stats(ov, stv);
        if (o.rank == 0 && !o.json) {
            printf("%-10ld %16.2f %12.2f %12.2f %12.2f %10d\n", SIZED ? (long)s : 0L, st[0], sto[0],
                   stc[0], stv[0], iters);
        } else {
            char extra[160];
            snprintf(
                extra, sizeof extra,
                ",\"overall_us\":%.6g,\"compute_us\":%.6g,\"overlap_pct\":%.4g,\"test_calls\":%d",
                sto[0], stc[0], stv[0], o.test_calls);
            bench_report(&o, SIZED ? (long)s : 0, st[0], st, iters, extra);
        }
        if (!SIZED)
            break;
    }
    bench_buf_free(&sb);
    bench_buf_free(&rb);
    MPI_Finalize();
    return 0;
}
