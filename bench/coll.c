/* Blocking collective latency (OSU osu_<coll> method).  Compiled once per
 * collective with -DCOLL_<NAME> (see coll_defs.h).  For every size:
 * warm-up calls, then timed calls, each timed alone and followed by an
 * untimed barrier (MPI_Barrier itself: back-to-back calls); each rank's
 * time per call is averaged over ranks (min/max with -f).  The barrier
 * benchmark reports rank 0's own time (no reduction), so that it runs on an
 * MPI that has only Init/Finalize/Comm_rank/Comm_size/Barrier/Wtime. */
#include "coll_defs.h"
#ifdef COLL_BARRIER
#define BENCH_NO_REDUCE 1
#endif
#include "common.h"

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
    size_t maxs = SIZED ? bench_fit_max(&o, o.max_size, sbytes, rbytes) : 0;
    int *cnt = malloc(sizeof(int) * (size_t)n), *dsp = malloc(sizeof(int) * (size_t)n);
    int *fcnt = malloc(sizeof(int) * (size_t)n);
    MPI_Datatype *typ = malloc(sizeof(MPI_Datatype) * (size_t)n);
    (void)cnt, (void)dsp, (void)fcnt, (void)typ;
    bench_buf sb, rb;
    bench_buf_alloc(&sb, &o, SBYTES(maxs, (size_t)n));
    bench_buf_alloc(&rb, &o, RBYTES(maxs, (size_t)n));
    bench_header(&o, SIZED ? "latency per call" : "latency per call, no message");
    bench_columns(&o, "Avg Latency(us)", SIZED);
    for (size_t s = SIZED ? bench_first_size(&o, MINSZ) : 0; s <= maxs; s = bench_next(&o, s)) {
        for (int i = 0; i < n; i++) {
            cnt[i] = (int)s;
            dsp[i] = (int)s * i;
            fcnt[i] = FCNT(s);
            typ[i] = MPI_CHAR;
        }
        int iters = bench_iters(&o, s), warm = bench_warmup(&o, s);
        bench_buf_size(&sb, &o, SBYTES(s, (size_t)n));
        bench_buf_size(&rb, &o, RBYTES(s, (size_t)n));
        MPI_Barrier(MPI_COMM_WORLD);
        double t = 0;
        for (int i = 0; i < warm + iters; i++) {
            void *sp = bench_buf_at(&sb, i), *rp = bench_buf_at(&rb, i);
            (void)sp, (void)rp;
            double t0 = MPI_Wtime();
            CALL(sp, rp, s);
            if (i >= warm)
                t += MPI_Wtime() - t0;
#ifndef COLL_BARRIER
            MPI_Barrier(MPI_COMM_WORLD); /* as OSU: calls do not overlap */
#endif
        }
        t = t * 1e6 / iters;
        double st[3];
        bench_rank_stats(t, st);
        bench_report(&o, SIZED ? (long)s : 0, st[0], st, iters, NULL);
        if (!SIZED)
            break;
    }
    bench_buf_free(&sb);
    bench_buf_free(&rb);
    free(cnt), free(dsp), free(fcnt), free(typ);
    MPI_Finalize();
    return 0;
}
