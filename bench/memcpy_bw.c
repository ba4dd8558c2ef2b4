/* Physical limit: single-core memcpy bandwidth over the benchmark sizes
 * (no MPI).  Hot: the same source and destination every time; --cold:
 * rotate over a working set of 2 x LLC (or --ws BYTES).  Prints JSON lines
 * like the MPI benchmarks: value in MB/s (10^6 bytes/s), avg_us = time
 * per copy.  Options: -m MIN:MAX, -i ITER, --cold, --ws BYTES, --json. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'k' || *end == 'K')
        v *= 1024;
    else if (*end == 'm' || *end == 'M')
        v *= 1024 * 1024;
    else if (*end == 'g' || *end == 'G')
        v *= 1024.0 * 1024 * 1024;
    return (size_t)v;
}

static size_t llc_bytes(void)
{
    long v = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    v = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    if (v <= 0) {
        FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
        char buf[64];
        if (f && fgets(buf, sizeof buf, f))
            v = (long)parse_size(buf);
        if (f)
            fclose(f);
    }
    return v > 0 ? (size_t)v : (size_t)32 << 20;
}

int main(int argc, char **argv)
{
    size_t lo = 1, hi = 4 << 20, ws = 0;
    int iters = 1000, cold = 0, json = 0, step = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) {
            char *c = strchr(argv[++i], ':');
            if (c) {
                if (c != argv[i])
                    lo = parse_size(argv[i]);
                if (c[1])
                    hi = parse_size(c + 1);
            } else {
                hi = parse_size(argv[i]);
            }
        } else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
            step = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-i") && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-x") && i + 1 < argc) {
            i++; /* accepted for symmetry; warm-up is one pass */
        } else if (!strcmp(argv[i], "--ws") && i + 1 < argc) {
            ws = parse_size(argv[++i]);
        } else if (!strcmp(argv[i], "--cold")) {
            cold = 1;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "-f")) {
        } else {
            fprintf(stderr, "usage: memcpy_bw [-m MIN:MAX] [-s STEP] [-i ITER] [--cold] [--ws "
                            "BYTES] [--json]\n");
            return strcmp(argv[i], "-h") && strcmp(argv[i], "--help") ? 1 : 0;
        }
    }
    if (iters < 1)
        iters = 1;
    if (step < 2 || (step & (step - 1)))
        step = 2;
    if (!ws)
        ws = 2 * llc_bytes();
    size_t need = cold ? (ws > 2 * hi ? ws : 2 * hi) : hi;
    char *src = NULL, *dst = NULL;
    if (posix_memalign((void **)&src, 4096, need) || posix_memalign((void **)&dst, 4096, need)) {
        fprintf(stderr, "memcpy_bw: cannot allocate %zu bytes\n", need);
        return 1;
    }
    memset(src, 1, need);
    memset(dst, 2, need);
    if (!json)
        printf("# memcpy bandwidth, one core, %s buffers\n# %-8s %14s %12s %10s\n",
               cold ? "cold (rotating)" : "hot (reused)", "Size", "MB/s", "us/copy", "Iterations");
    size_t s = 1;
    while (s < lo)
        s <<= 1;
    for (; s <= hi; s *= (size_t)step) {
        size_t stride = (s + 63) / 64 * 64, nslots = cold ? need / stride : 1;
        /* at least ~20 ms of copying per size, at most `iters` x 100 */
        long n = iters;
        double t = 0;
        for (;;) {
            double t0 = now();
            for (long i = 0; i < n; i++) {
                size_t off = (size_t)(i % (long)nslots) * stride;
                memcpy(dst + off, src + off, s);
                __asm__ __volatile__("" ::: "memory");
            }
            t = now() - t0;
            if (t > 0.02 || n >= (long)iters * 100)
                break;
            n *= 4;
        }
        double us = t * 1e6 / n, mbs = (double)s * n / t / 1e6;
        if (json)
            printf("{\"bench\":\"memcpy\",\"size\":%zu,\"ranks\":1,\"mode\":\"%s\",\"value\":%.6g,"
                   "\"unit\":\"MB/"
                   "s\",\"avg_us\":%.6g,\"min_us\":%.6g,\"max_us\":%.6g,\"iters\":%ld}\n",
                   s, cold ? "cold" : "hot", mbs, us, us, us, n);
        else
            printf("  %-8zu %14.1f %12.4f %10ld\n", s, mbs, us, n);
        fflush(stdout);
    }
    free(src);
    free(dst);
    return 0;
}
