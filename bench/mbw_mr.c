/* Multi-pair bandwidth and message rate (OSU osu_mbw_mr method).  The
 * ranks form pairs (i, i + n/2); each sender posts a window of W
 * nonblocking sends to its receiver, which answers each window with a
 * 4-byte acknowledgement.  Reported value: aggregate message rate over all
 * pairs (messages/s); the JSON also carries the aggregate bandwidth. */
#include "common.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts o = {.name = "mbw_mr",
                    .unit = "msg/s",
                    .min_size = 1,
                    .max_size = 4 << 20,
                    .iters = 100,
                    .warmup = 10,
                    .window = 64};
    int rc = bench_init(&o, argc, argv);
    if (rc || o.size < 2 || o.size % 2) {
        if (!rc && o.rank == 0)
            fprintf(stderr, "mbw_mr: needs an even number of ranks\n");
        MPI_Finalize();
        return rc < 0 || o.size < 2 || o.size % 2;
    }
    int pairs = o.size / 2, w = o.window;
    int sender = o.rank < pairs;
    int peer = sender ? o.rank + pairs : o.rank - pairs;
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)w);
    MPI_Status *stat = malloc(sizeof(MPI_Status) * (size_t)w);
    bench_buf b;
    bench_buf_alloc(&b, &o, o.max_size);
    char ack[4] = {0};
    bench_header(&o, "aggregate message rate of n/2 pairs");
    bench_columns(&o, "Messages/s", 1);
    for (size_t s = bench_first_size(&o, 1); s <= o.max_size; s = bench_next(&o, s)) {
        int iters = bench_iters(&o, s), warm = bench_warmup(&o, s);
        bench_buf_size(&b, &o, s);
        long k = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = 0;
        for (int i = 0; i < warm + iters; i++) {
            if (i == warm)
                t0 = MPI_Wtime();
            if (sender) {
                for (int j = 0; j < w; j++)
                    MPI_Isend(bench_buf_at(&b, k + j), (int)s, MPI_CHAR, peer, 20, MPI_COMM_WORLD,
                              &req[j]);
                MPI_Waitall(w, req, stat);
                MPI_Recv(ack, 4, MPI_CHAR, peer, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                for (int j = 0; j < w; j++)
                    MPI_Irecv(bench_buf_at(&b, k + j), (int)s, MPI_CHAR, peer, 20, MPI_COMM_WORLD,
                              &req[j]);
                MPI_Waitall(w, req, stat);
                MPI_Send(ack, 4, MPI_CHAR, peer, 21, MPI_COMM_WORLD);
            }
            k += w;
        }
        double t = MPI_Wtime() - t0;
        /* per-pair rate, summed over senders */
        double rate = sender && t > 0 ? (double)w * iters / t : 0, total = 0;
        MPI_Reduce(&rate, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        double st[3];
        bench_rank_stats(t * 1e6 / iters, st);
        char extra[96];
        snprintf(extra, sizeof extra, ",\"window\":%d,\"pairs\":%d,\"mbs\":%.6g", w, pairs,
                 total * (double)s / 1e6);
        bench_report(&o, (long)s, total, st, iters, extra);
    }
    bench_buf_free(&b);
    free(req);
    free(stat);
    MPI_Finalize();
    return 0;
}
