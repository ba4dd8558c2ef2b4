/* Point-to-point bandwidth (OSU osu_bw / osu_bibw method).  Rank 0 posts a
 * window of W nonblocking sends to rank 1, which posts W receives; rank 1
 * answers each window with a 4-byte acknowledgement.  Bandwidth = W * size
 * / time per window, in MB/s (10^6 bytes/s), measured on rank 0.
 * Compiled with -DBIBW, both ranks send and receive a window at the same
 * time (bidirectional bandwidth: 2 * W * size / time per window). */
#define BENCH_NO_REDUCE 1 /* rank 0 measures, as OSU */
#include "common.h"

#ifdef BIBW
#define NAME "bibw"
#else
#define NAME "bw"
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts o = {.name = NAME,
                    .unit = "MB/s",
                    .min_size = 1,
                    .max_size = 4 << 20,
                    .iters = 100,
                    .warmup = 10,
                    .window = 64};
    int rc = bench_init(&o, argc, argv);
    if (rc || o.size < 2) {
        if (!rc && o.rank == 0)
            fprintf(stderr, NAME ": needs at least 2 ranks\n");
        MPI_Finalize();
        return rc < 0 || o.size < 2;
    }
    int w = o.window;
    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)w);
    MPI_Status *stat = malloc(sizeof(MPI_Status) * 2 * (size_t)w);
    bench_buf sb, rb;
    bench_buf_alloc(&sb, &o, o.max_size);
    bench_buf_alloc(&rb, &o, o.max_size);
    char ack[4] = {0};
#ifdef BIBW
    bench_header(&o, "bidirectional bandwidth between ranks 0 and 1");
#else
    bench_header(&o, "bandwidth from rank 0 to rank 1");
#endif
    bench_columns(&o, "Bandwidth(MB/s)", 1);
    for (size_t s = bench_first_size(&o, 1); s <= o.max_size; s = bench_next(&o, s)) {
        int iters = bench_iters(&o, s), warm = bench_warmup(&o, s);
        bench_buf_size(&sb, &o, s);
        bench_buf_size(&rb, &o, s);
        long k = 0; /* message counter for rotating buffers */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = 0;
        if (o.rank <= 1) {
            int peer = 1 - o.rank;
            (void)peer;
            for (int i = 0; i < warm + iters; i++) {
                if (i == warm)
                    t0 = MPI_Wtime();
#ifdef BIBW
                for (int j = 0; j < w; j++)
                    MPI_Irecv(bench_buf_at(&rb, k + j), (int)s, MPI_CHAR, peer, 10, MPI_COMM_WORLD,
                              &req[j]);
                for (int j = 0; j < w; j++)
                    MPI_Isend(bench_buf_at(&sb, k + j), (int)s, MPI_CHAR, peer, 10, MPI_COMM_WORLD,
                              &req[w + j]);
                MPI_Waitall(2 * w, req, stat);
                (void)ack;
#else
                if (o.rank == 0) {
                    for (int j = 0; j < w; j++)
                        MPI_Isend(bench_buf_at(&sb, k + j), (int)s, MPI_CHAR, 1, 10, MPI_COMM_WORLD,
                                  &req[j]);
                    MPI_Waitall(w, req, stat);
                    MPI_Recv(ack, 4, MPI_CHAR, 1, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    for (int j = 0; j < w; j++)
                        MPI_Irecv(bench_buf_at(&rb, k + j), (int)s, MPI_CHAR, 0, 10, MPI_COMM_WORLD,
                                  &req[j]);
                    MPI_Waitall(w, req, stat);
                    MPI_Send(ack, 4, MPI_CHAR, 0, 11, MPI_COMM_WORLD);
                }
#endif
                k += w;
            }
        }
        double t = o.rank == 0 ? (MPI_Wtime() - t0) : 0;
#ifdef BIBW
        double bytes = 2.0 * (double)s * w * iters;
#else
        double bytes = (double)s * w * iters;
#endif
        double mbs = t > 0 ? bytes / t / 1e6 : 0;
        double per = t * 1e6 / iters;
        double st[3] = {per, per, per};
        char extra[64];
        snprintf(extra, sizeof extra, ",\"window\":%d", w);
        bench_report(&o, (long)s, mbs, st, iters, extra);
    }
    bench_buf_free(&sb);
    bench_buf_free(&rb);
    free(req);
    free(stat);
    MPI_Finalize();
    return 0;
}
