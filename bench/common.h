/* Shared helpers for Loom's MPI benchmarks (OSU micro-benchmark method).
 *
 * Every benchmark program includes this header once.  It provides option
 * parsing, buffer management (reused "hot" buffers or rotating "cold"
 * buffers over a working set larger than the last-level cache), iteration
 * counts that shrink with the message size, and reporting (OSU-style text
 * or one JSON object per line).
 *
 * Averaging over ranks uses MPI_Reduce.  A program that defines
 * BENCH_NO_REDUCE before including this header reports rank 0's own time
 * instead, so that it only needs Init/Finalize/Comm_rank/Comm_size/Barrier/
 * Wtime (the output says "rank0_only").
 *
 * Only MPI-3.1 standard functions are used.
 */
#ifndef LOOM_BENCH_COMMON_H
#define LOOM_BENCH_COMMON_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_LARGE  8192        /* above this, iteration counts shrink */
#define BENCH_MIN_WS (16u << 20) /* minimum cold working set per rank */
#define BENCH_ALIGN  4096

typedef struct bench_opts {
    const char *name; /* benchmark name (JSON "bench") */
    const char *unit; /* "us", "MB/s" or "msg/s" */
    size_t min_size, max_size;
    int iters, warmup; /* for messages up to BENCH_LARGE bytes */
    int cold;          /* rotating buffers */
    size_t ws;         /* cold working set per rank and buffer, bytes */
    size_t mem_limit;  /* bytes the job's buffers may take, all ranks together */
    int json, full;
    int window;     /* bandwidth window (bw, bibw, mbw_mr) */
    int test_calls; /* nonblocking: MPI_Test calls during compute */
    int step;       /* size factor between steps (power of two, default 2) */
    int rank, size;
} bench_opts;

static inline void bench_usage(const bench_opts *o)
{
    fprintf(stderr,
            "usage: %s [-m MIN:MAX] [-s STEP] [-i ITER] [-x WARMUP] [--cold] [--ws BYTES]\n"
            "          [-M BYTES] [-W WINDOW] [-T TESTS] [-f] [--json]\n"
            "  -m MIN:MAX  message sizes in bytes, powers of two (default %zu:%zu)\n"
            "  -s STEP     size factor between steps, a power of two (default 2)\n"
            "  -i ITER     timed iterations for sizes <= %d B (default %d); larger\n"
            "              sizes use ITER*sqrt(%d/size), at least 5\n"
            "  -x WARMUP   warm-up iterations, scaled the same way (default %d)\n"
            "  --cold      rotate over buffers in a working set larger than the LLC\n"
            "  --ws BYTES  cold working set per rank and buffer (default 2*LLC/ranks,\n"
            "              at least 16 MiB)\n"
            "  -M BYTES    the job's buffers, all ranks together, stay below this (default\n"
            "              half the memory): larger sizes are skipped, as OSU's -M does\n"
            "  -W WINDOW   messages in flight for bandwidth tests (default %d)\n"
            "  -T TESTS    nonblocking: MPI_Test calls spread over the compute\n"
            "  -f          full statistics: min and max over ranks\n"
            "  --json      one JSON object per line and size\n",
            o->name, o->min_size, o->max_size, BENCH_LARGE, o->iters, BENCH_LARGE, o->warmup,
            o->window);
}

static inline size_t bench_parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
    case 'k':
    case 'K':
        v *= 1024;
        break;
    case 'm':
    case 'M':
        v *= 1024 * 1024;
        break;
    case 'g':
    case 'G':
        v *= 1024.0 * 1024 * 1024;
        break;
    default:
        break;
    }
    return (size_t)v;
}

static inline size_t bench_llc_bytes(void)
{
    long v = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    v = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    if (v <= 0) {
        FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
        if (f) {
            char buf[64];
            if (fgets(buf, sizeof buf, f))
                v = (long)bench_parse_size(buf);
            fclose(f);
        }
    }
    return v > 0 ? (size_t)v : (size_t)32 << 20;
}

/* Parses the options; all ranks see the same argv.  Returns 0 to go on,
 * 1 when the program should exit (after --help). */
static inline int bench_init(bench_opts *o, int argc, char **argv)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &o->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &o->size);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-m") && v) {
            const char *colon = strchr(v, ':');
            if (colon) {
                if (colon != v)
                    o->min_size = bench_parse_size(v);
                if (colon[1])
                    o->max_size = bench_parse_size(colon + 1);
            } else {
                o->max_size = bench_parse_size(v);
            }
            i++;
        } else if (!strcmp(a, "-s") && v) {
            o->step = atoi(v);
            i++;
        } else if (!strcmp(a, "-i") && v) {
            o->iters = atoi(v);
            i++;
        } else if (!strcmp(a, "-x") && v) {
            o->warmup = atoi(v);
            i++;
        } else if (!strcmp(a, "-W") && v) {
            o->window = atoi(v);
            i++;
        } else if (!strcmp(a, "-T") && v) {
            o->test_calls = atoi(v);
            i++;
        } else if (!strcmp(a, "--ws") && v) {
            o->ws = bench_parse_size(v);
            i++;
        } else if (!strcmp(a, "-M") && v) {
            o->mem_limit = bench_parse_size(v);
            i++;
        } else if (!strcmp(a, "--cold")) {
            o->cold = 1;
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (!strcmp(a, "-f")) {
            o->full = 1;
        } else {
            if (o->rank == 0)
                bench_usage(o);
            return strcmp(a, "-h") && strcmp(a, "--help") ? -1 : 1;
        }
    }
    if (o->iters < 1)
        o->iters = 1;
    if (o->warmup < 0)
        o->warmup = 0;
    if (o->step < 2 || (o->step & (o->step - 1)))
        o->step = 2;
    if (o->window < 1)
        o->window = 1;
    if (o->min_size > o->max_size)
        o->min_size = o->max_size;
    if (o->cold && o->ws == 0) {
        size_t ws = 2 * bench_llc_bytes() / (size_t)o->size;
        o->ws = ws < BENCH_MIN_WS ? BENCH_MIN_WS : ws;
    }
    if (o->mem_limit == 0) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        o->mem_limit = pages > 0 && page > 0 ? (size_t)pages * (size_t)page / 2 : (size_t)1 << 32;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    return 0;
}

/* Timed iterations for a message of `bytes` bytes: OSU uses fewer
 * iterations for large messages; we scale by sqrt(BENCH_LARGE/bytes). */
static inline int bench_scaled(int n, size_t bytes, int floor)
{
    if (bytes > BENCH_LARGE) {
        double f = (double)BENCH_LARGE / (double)bytes;
        double s = 1.0;
        /* sqrt by Newton's method, to avoid needing -lm */
        for (int k = 0; k < 30; k++)
            s = 0.5 * (s + f / s);
        n = (int)(n * s);
    }
    return n < floor ? floor : n;
}
static inline int bench_iters(const bench_opts *o, size_t bytes)
{
    return bench_scaled(o->iters, bytes, o->iters < 5 ? o->iters : 5);
}
static inline int bench_warmup(const bench_opts *o, size_t bytes)
{
    return o->warmup ? bench_scaled(o->warmup, bytes, 1) : 0;
}

/* Sizes: powers of two from min_size (rounded up) to max_size. */
static inline size_t bench_first_size(const bench_opts *o, size_t floor)
{
    size_t s = 1;
    size_t lo = o->min_size > floor ? o->min_size : floor;
    while (s < lo)
        s <<= 1;
    return s;
}

/* The size after s (0 is followed by 1). */
static inline size_t bench_next(const bench_opts *o, size_t s)
{
    return s ? s * (size_t)o->step : 1;
}

/* A buffer: one slot when hot; when cold, as many slots of the current
 * message size as fit in the working set, visited in turn. */
typedef struct bench_buf {
    char *base;
    size_t bytes; /* allocated */
    size_t slot;  /* current slot stride */
    size_t nslots;
} bench_buf;

/* Bytes bench_buf_alloc() takes for messages of up to max_bytes. */
static inline size_t bench_buf_need(const bench_opts *o, size_t max_bytes)
{
    if (max_bytes == 0)
        return BENCH_ALIGN; /* no data (barrier): no working set to rotate over */
    size_t need = max_bytes;
    if (o->cold && need < 2 * o->ws)
        need = o->ws > 2 * need ? o->ws : 2 * need;
    return (need + BENCH_ALIGN - 1) / BENCH_ALIGN * BENCH_ALIGN;
}

/* The largest size up to max whose send and receive buffers (sbytes and
 * rbytes bytes per rank for size s on n ranks), on every rank, fit in the
 * job's memory limit; 0 when none does. Rank 0 says which sizes it skips. */
static inline size_t bench_fit_max(const bench_opts *o, size_t max,
                                   size_t (*sbytes)(size_t, size_t),
                                   size_t (*rbytes)(size_t, size_t))
{
    size_t n = (size_t)o->size, s = max;
    while (s &&
           n * (bench_buf_need(o, sbytes(s, n)) + bench_buf_need(o, rbytes(s, n))) > o->mem_limit)
        s /= 2;
    if (s < max && o->rank == 0)
        fprintf(stderr,
                "%s: sizes above %zu B skipped: %d ranks' buffers would pass %zu MiB (-M)\n",
                o->name, s, o->size, o->mem_limit >> 20);
    return s;
}

static inline void bench_buf_alloc(bench_buf *b, const bench_opts *o, size_t max_bytes)
{
    size_t need = bench_buf_need(o, max_bytes);
    void *p = NULL;
    if (posix_memalign(&p, BENCH_ALIGN, need) != 0) {
        fprintf(stderr, "%s: cannot allocate %zu bytes\n", o->name, need);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(p, 1, need); /* touch every page before timing */
    b->base = p;
    b->bytes = need;
    b->slot = need;
    b->nslots = 1;
}

/* Prepares the buffer for messages of `bytes` bytes. */
static inline void bench_buf_size(bench_buf *b, const bench_opts *o, size_t bytes)
{
    size_t stride = (bytes + 63) / 64 * 64;
    if (stride == 0)
        stride = 64;
    b->slot = stride;
    b->nslots = o->cold ? b->bytes / stride : 1;
    if (b->nslots < 1)
        b->nslots = 1;
}

static inline void *bench_buf_at(const bench_buf *b, long i)
{
    return b->base + (size_t)(i % (long)b->nslots) * b->slot;
}

static inline void bench_buf_free(bench_buf *b)
{
    free(b->base);
    b->base = NULL;
}

static inline void bench_header(const bench_opts *o, const char *what)
{
    if (o->rank != 0 || o->json)
        return;
    printf("# Loom benchmark: %s (%s), %d ranks, %s buffers", o->name, what, o->size,
           o->cold ? "cold (rotating)" : "hot (reused)");
    if (o->cold)
        printf(", working set %zu MiB per rank and buffer", o->ws >> 20);
    printf("\n");
#ifdef BENCH_NO_REDUCE
    printf("# Times are rank 0's own (no reduction over ranks)\n");
#endif
}

static inline void bench_columns(const bench_opts *o, const char *value_col, int sized)
{
    if (o->rank != 0 || o->json)
        return;
    if (sized)
        printf("%-10s", "# Size");
    else
        printf("%-10s", "#");
    printf(" %16s", value_col);
    if (o->full)
        printf(" %12s %12s", "Min(us)", "Max(us)");
    printf(" %10s\n", "Iterations");
}

/* Averages a per-rank time (microseconds) over ranks: OSU reports the
 * average and, with -f, min and max over ranks.  Collective call. */
static inline void bench_rank_stats(double t, double out[3])
{
#ifdef BENCH_NO_REDUCE
    out[0] = out[1] = out[2] = t;
#else
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    double sum = 0, mn = 0, mx = 0;
    MPI_Reduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    out[0] = sum / n;
    out[1] = mn;
    out[2] = mx;
#endif
}

/* Prints one result (rank 0 only).  value is in o->unit; avg/min/max are
 * per-iteration times in microseconds; extra is a JSON fragment (",\"k\":v")
 * or NULL. */
static inline void bench_report(const bench_opts *o, long size, double value, const double st[3],
                                int iters, const char *extra)
{
    if (o->rank != 0)
        return;
    if (o->json) {
        printf("{\"bench\":\"%s\",\"size\":%ld,\"ranks\":%d,\"mode\":\"%s\","
               "\"value\":%.6g,\"unit\":\"%s\",\"avg_us\":%.6g,\"min_us\":%.6g,"
               "\"max_us\":%.6g,\"iters\":%d",
               o->name, size, o->size, o->cold ? "cold" : "hot", value, o->unit, st[0], st[1],
               st[2], iters);
#ifdef BENCH_NO_REDUCE
        printf(",\"rank0_only\":true");
#endif
        printf("%s}\n", extra ? extra : "");
        return;
    }
    if (size >= 0)
        printf("%-10ld", size);
    else
        printf("%-10s", "");
    printf(" %16.2f", value);
    if (o->full)
        printf(" %12.2f %12.2f", st[1], st[2]);
    printf(" %10d\n", iters);
}

#endif
