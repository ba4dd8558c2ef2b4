/* Multi-pair latency (OSU osu_multi_lat method): the ranks form n/2 pairs
 * (i, i + n/2) that all ping-pong at once with blocking MPI_Send/MPI_Recv;
 * one-way latency = round trip / 2, averaged over the pairs (each pair's
 * first rank times its own loop; the average over ranks is reported).  With
 * more ranks than cores this measures how well an MPI shares the cores
 * between waiting ranks.  Loom benchmark suite, written for Loom; not run by
 * bench/compare (build it by hand: mpicc -O2 -o multi_lat bench/multi_lat.c). */
#include "common.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts o = {.name = "multi_lat",
                    .unit = "us",
                    .min_size = 0,
                    .max_size = 4 << 20,
                    .iters = 10000,
                    .warmup = 1000,
                    .window = 64};
    int rc = bench_init(&o, argc, argv);
    if (rc || o.size < 2 || o.size % 2) {
        if (!rc && o.rank == 0)
            fprintf(stderr, "multi_lat: needs an even number of ranks\n");
        MPI_Finalize();
        return rc < 0 || o.size < 2 || o.size % 2;
    }
    int pairs = o.size / 2;
    int first = o.rank < pairs;
    int peer = first ? o.rank + pairs : o.rank - pairs;
    bench_buf sb, rb;
    bench_buf_alloc(&sb, &o, o.max_size);
    bench_buf_alloc(&rb, &o, o.max_size);
    bench_header(&o, "one-way latency, n/2 pairs ping-pong at once");
    bench_columns(&o, "Latency(us)", 1);
    for (size_t s = o.min_size ? bench_first_size(&o, 1) : 0; s <= o.max_size;
         s = bench_next(&o, s)) {
        int iters = bench_iters(&o, s), warm = bench_warmup(&o, s);
        bench_buf_size(&sb, &o, s);
        bench_buf_size(&rb, &o, s);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = 0;
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm)
                t0 = MPI_Wtime();
            if (first) {
                MPI_Send(bench_buf_at(&sb, i), (int)s, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(bench_buf_at(&rb, i), (int)s, MPI_CHAR, peer, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(bench_buf_at(&rb, i), (int)s, MPI_CHAR, peer, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(bench_buf_at(&sb, i), (int)s, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
            }
        }
        double t = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
        double st[3];
        bench_rank_stats(t, st);
        bench_report(&o, (long)s, st[0], st, iters, NULL);
    }
    bench_buf_free(&sb);
    bench_buf_free(&rb);
    MPI_Finalize();
    return 0;
}
