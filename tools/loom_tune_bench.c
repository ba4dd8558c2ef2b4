/*
 * loom_tune_bench: measures every algorithm of the collectives that have
 * several (Barrier, Bcast, Reduce, Allreduce) on MPI_COMM_WORLD, over message
 * sizes, and prints one JSON line per (collective, ranks, size, algorithm)
 * with the measured time and the cost model's prediction. tools/loom-tune
 * runs it at several rank counts and writes the tuning table from the lines.
 *
 *   mpiexec -n N loom_tune_bench [--collectives barrier,bcast,reduce,allreduce]
 *       [--sizes MIN:MAX | --sizes A,B,C] [--step F] [--time SECONDS] [--repeat R]
 *
 * Measurement, the OSU way: the algorithm is forced on every rank with
 * loom_coll_force() between two barriers; warm-up iterations (which also
 * size the run: about --time seconds per point); then each iteration times
 * one call on each rank, followed by an untimed barrier (Barrier itself:
 * back-to-back calls); each rank's mean is averaged over the ranks with an
 * Allreduce of a fixed algorithm. Each point is measured --repeat times,
 * the algorithms of a size interleaved, and the lowest average is kept (the
 * least disturbed by other work on the machine).
 *
 * Output, rank 0, one line per point:
 *   {"collective": "bcast", "ranks": 16, "workers": 2, "bytes": 1024,
 *    "algorithm": "direct", "measured_s": 1.2e-06, "min_s": ..., "max_s": ...,
 *    "predicted_s": 8.1e-07, "iterations": 5000}
 * where min_s/max_s are the fastest and slowest rank's mean, and an
 * algorithm that does not apply to the call is reported with
 * "applicable": false and no times.
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/tune.h"

#define MAX_SIZES 64
#define MAX_ALGS  16
/* The Allreduce that averages the timings, whatever is being measured. */
#define FIXED_ALLREDUCE "tiled"

static const char *const all_collectives[] = {"barrier", "bcast", "reduce", "allreduce"};

static struct {
    int rank, size, workers;
    const char *collectives[4];
    int ncoll;
    size_t sizes[MAX_SIZES];
    int nsizes;
    double time_s; /* per point and repeat */
    int repeat;
    double *sbuf, *rbuf;
} bench = {.time_s = 0.05, .repeat = 2};

static void die(const char *msg)
{
    if (bench.rank == 0)
        fprintf(stderr, "loom_tune_bench: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* 4k -> 4096, 1m -> 1048576. */
static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        die("--sizes: expected numbers like 8, 4k, 1m");
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        v <<= 20, end++;
    if (*end && *end != ':' && *end != ',')
        die("--sizes: expected numbers like 8, 4k, 1m");
    return (size_t)v;
}

static void parse_args(int argc, char **argv)
{
    const char *sizes = "8:1m";
    double step = 4;
    bench.ncoll = 4;
    for (int i = 0; i < 4; i++)
        bench.collectives[i] = all_collectives[i];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--collectives") == 0 && v) {
            static char buf[256];
            snprintf(buf, sizeof buf, "%s", v);
            bench.ncoll = 0;
            for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
                 tok = strtok_r(NULL, ",", &save)) {
                int k = -1;
                for (int j = 0; j < 4; j++)
                    if (strcmp(tok, all_collectives[j]) == 0)
                        k = j;
                if (k < 0)
                    die("--collectives: choose from barrier, bcast, reduce, allreduce");
                bench.collectives[bench.ncoll++] = all_collectives[k];
                if (bench.ncoll == 4)
                    break;
            }
        } else if (strcmp(a, "--sizes") == 0 && v) {
            sizes = v;
        } else if (strcmp(a, "--step") == 0 && v) {
            step = atof(v);
            if (step <= 1)
                die("--step must be > 1");
        } else if (strcmp(a, "--time") == 0 && v) {
            bench.time_s = atof(v);
            if (bench.time_s <= 0)
                die("--time must be > 0");
        } else if (strcmp(a, "--repeat") == 0 && v) {
            bench.repeat = atoi(v);
            if (bench.repeat < 1)
                die("--repeat must be >= 1");
        } else {
            die("usage: loom_tune_bench [--collectives LIST] [--sizes MIN:MAX|A,B,...] "
                "[--step F] [--time SECONDS] [--repeat R]");
        }
        i++;
    }
    const char *colon = strchr(sizes, ':');
    if (colon) {
        size_t lo = parse_size(sizes), hi = parse_size(colon + 1);
        if (lo < 1 || hi < lo)
            die("--sizes MIN:MAX needs 1 <= MIN <= MAX");
        for (double s = (double)lo; s <= (double)hi && bench.nsizes < MAX_SIZES - 1; s *= step)
            bench.sizes[bench.nsizes++] = (size_t)s;
        if (bench.sizes[bench.nsizes - 1] != hi)
            bench.sizes[bench.nsizes++] = hi;
    } else {
        for (const char *p = sizes; *p && bench.nsizes < MAX_SIZES; p = strchr(p, ',')) {
            if (*p == ',')
                p++;
            bench.sizes[bench.nsizes++] = parse_size(p);
            if (!strchr(p, ','))
                break;
        }
    }
}

/* Every rank forces alg (NULL: clears) for coll; barriers on both sides so
 * that no rank is still in a call that selects with the old value. */
static void set_forced(const char *coll, const char *alg)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (loom_coll_force(coll, alg) != 0)
        die("loom_coll_force failed (unknown collective or algorithm)");
    MPI_Barrier(MPI_COMM_WORLD);
}

static bool is_reduction(const char *coll)
{
    return strcmp(coll, "reduce") == 0 || strcmp(coll, "allreduce") == 0;
}

/* One call of coll moving bytes. */
static void call(const char *coll, size_t bytes)
{
    if (strcmp(coll, "barrier") == 0)
        MPI_Barrier(MPI_COMM_WORLD);
    else if (strcmp(coll, "bcast") == 0)
        MPI_Bcast(bench.rbuf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    else if (strcmp(coll, "reduce") == 0)
        MPI_Reduce(bench.sbuf, bench.rbuf, (int)(bytes / 8), MPI_DOUBLE, MPI_SUM, 0,
                   MPI_COMM_WORLD);
    else
        MPI_Allreduce(bench.sbuf, bench.rbuf, (int)(bytes / 8), MPI_DOUBLE, MPI_SUM,
                      MPI_COMM_WORLD);
}

/* iters calls, each followed by a barrier (not for Barrier); returns this
 * rank's mean time of one call, and the wall time per iteration in *wall. */
static double timed_loop(const char *coll, size_t bytes, long iters, double *wall)
{
    bool barrier = strcmp(coll, "barrier") == 0;
    double start = MPI_Wtime(), sum = 0;
    if (barrier) {
        for (long i = 0; i < iters; i++)
            call(coll, bytes);
        sum = MPI_Wtime() - start;
    } else {
        for (long i = 0; i < iters; i++) {
            double t0 = MPI_Wtime();
            call(coll, bytes);
            sum += MPI_Wtime() - t0;
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    *wall = (MPI_Wtime() - start) / (double)iters;
    return sum / (double)iters;
}

/* The slowest rank's wall time per iteration. */
static double max_over_ranks(double v)
{
    double m;
    MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static long clamp_iters(double budget, double per_iter, long lo, long hi)
{
    double n = per_iter > 0 ? budget / per_iter : (double)hi;
    return n < (double)lo ? lo : n > (double)hi ? hi : (long)n;
}

struct result {
    double mean, min, max;
    long iters;
};

/* Measures coll with alg at bytes (alg already forced). */
static struct result measure(const char *coll, size_t bytes)
{
    double wall;
    timed_loop(coll, bytes, 3, &wall);
    double est = max_over_ranks(wall);
    long warm = clamp_iters(0.2 * bench.time_s, est, 2, 1000);
    timed_loop(coll, bytes, warm, &wall);
    est = max_over_ranks(wall);
    long iters = clamp_iters(bench.time_s, est, 5, 200000);
    double mine = timed_loop(coll, bytes, iters, &wall);

    if (strcmp(coll, "allreduce") == 0)
        set_forced("allreduce", FIXED_ALLREDUCE);
    double in[2] = {mine, -mine}, ext[2], sum;
    MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(in, ext, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return (struct result){sum / bench.size, -ext[1], ext[0], iters};
}

static void run_collective(const char *coll)
{
    const char *algs[MAX_ALGS];
    int nalg = loom_coll_algorithms(coll, algs, MAX_ALGS);
    if (nalg < 1 || nalg > MAX_ALGS)
        die("loom_coll_algorithms failed");
    bool barrier = strcmp(coll, "barrier") == 0;
    int nsizes = barrier ? 1 : bench.nsizes;
    for (int s = 0; s < nsizes; s++) {
        size_t bytes = barrier ? 0 : bench.sizes[s];
        if (is_reduction(coll))
            bytes = bytes < 8 ? 8 : bytes / 8 * 8;
        struct result best[MAX_ALGS];
        double predicted[MAX_ALGS];
        for (int a = 0; a < nalg; a++) {
            predicted[a] = loom_coll_predict(MPI_COMM_WORLD, coll, algs[a], bytes);
            best[a].mean = -1;
        }
        for (int r = 0; r < bench.repeat; r++)
            for (int a = 0; a < nalg; a++) {
                if (predicted[a] < 0)
                    continue;
                set_forced(coll, algs[a]);
                struct result res = measure(coll, bytes);
                if (best[a].mean < 0 || res.mean < best[a].mean)
                    best[a] = res;
            }
        set_forced(coll, strcmp(coll, "allreduce") == 0 ? FIXED_ALLREDUCE : NULL);
        if (bench.rank != 0)
            continue;
        for (int a = 0; a < nalg; a++) {
            printf("{\"collective\": \"%s\", \"ranks\": %d, \"workers\": %d, \"bytes\": %zu, "
                   "\"algorithm\": \"%s\", ",
                   coll, bench.size, bench.workers, bytes, algs[a]);
            if (predicted[a] < 0)
                printf("\"applicable\": false}\n");
            else
                printf("\"measured_s\": %.6e, \"min_s\": %.6e, \"max_s\": %.6e, "
                       "\"predicted_s\": %.6e, \"iterations\": %ld}\n",
                       best[a].mean, best[a].min, best[a].max, predicted[a], best[a].iters);
        }
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &bench.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &bench.size);
    parse_args(argc, argv);
    size_t max = 8;
    for (int s = 0; s < bench.nsizes; s++)
        if (bench.sizes[s] > max)
            max = bench.sizes[s];
    if (max > (size_t)1 << 30)
        die("sizes above 1 GiB are not supported");
    bench.sbuf = malloc(max + 8);
    bench.rbuf = malloc(max + 8);
    if (!bench.sbuf || !bench.rbuf)
        die("out of memory");
    for (size_t i = 0; i < max / 8 + 1; i++)
        bench.sbuf[i] = bench.rbuf[i] = (double)(i % 1000) + bench.rank;
    /* The communicator's collective state (groups, workers) exists from its
     * first collective call on. */
    set_forced("allreduce", FIXED_ALLREDUCE);
    bench.workers = loom_coll_workers(MPI_COMM_WORLD);
    for (int c = 0; c < bench.ncoll; c++)
        run_collective(bench.collectives[c]);
    set_forced("allreduce", NULL);
    free(bench.sbuf);
    free(bench.rbuf);
    MPI_Finalize();
    return 0;
}
