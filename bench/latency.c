/* Point-to-point latency (OSU osu_latency method): ranks 0 and 1 exchange
 * a message back and forth with blocking MPI_Send/MPI_Recv; the one-way
 * latency is the round-trip time / 2, measured on rank 0.  Other ranks, if
 * any, stay idle.  Loom benchmark suite, written for Loom. */
#define BENCH_NO_REDUCE 1 /* rank 0 measures, as OSU */
#include "common.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts o = {.name = "latency",
                    .unit = "us",
                    .min_size = 0,
                    .max_size = 4 << 20,
                    .iters = 10000,
                    .warmup = 1000,
                    .window = 64};
    int rc = bench_init(&o, argc, argv);
    if (rc || o.size < 2) {
        if (!rc && o.rank == 0)
            fprintf(stderr, "latency: needs at least 2 ranks\n");
        MPI_Finalize();
        return rc < 0 || o.size < 2;
    }
    bench_buf sb, rb;
    bench_buf_alloc(&sb, &o, o.max_size);
    bench_buf_alloc(&rb, &o, o.max_size);
    bench_header(&o, "one-way latency, ping-pong between ranks 0 and 1");
    bench_columns(&o, "Latency(us)", 1);
    for (size_t s = o.min_size ? bench_first_size(&o, 1) : 0; s <= o.max_size;
         s = bench_next(&o, s)) {
        int iters = bench_iters(&o, s), warm = bench_warmup(&o, s);
        bench_buf_size(&sb, &o, s);
        bench_buf_size(&rb, &o, s);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = 0;
        if (o.rank == 0) {
            for (int i = 0; i < warm + iters; i++) {
                if (i == warm)
                    t0 = MPI_Wtime();
                MPI_Send(bench_buf_at(&sb, i), (int)s, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(bench_buf_at(&rb, i), (int)s, MPI_CHAR, 1, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            }
        } else if (o.rank == 1) {
            for (int i = 0; i < warm + iters; i++) {
                MPI_Recv(bench_buf_at(&rb, i), (int)s, MPI_CHAR, 0, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(bench_buf_at(&sb, i), (int)s, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        }
        double t = o.rank == 0 ? (MPI_Wtime() - t0) * 1e6 / (2.0 * iters) : 0;
        double st[3] = {t, t, t};
        bench_report(&o, (long)s, t, st, iters, NULL);
    }
    bench_buf_free(&sb);
    bench_buf_free(&rb);
    MPI_Finalize();
    return 0;
}
