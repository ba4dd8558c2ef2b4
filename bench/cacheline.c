/* Physical limit: cache-line round trip between two cores.  Two threads
 * pinned to cores A and B (default the first two CPUs the process may use;
 * -c A,B to choose) bounce one 64-byte-aligned cache line: the ping thread
 * writes an odd value and waits for the pong thread to write the next
 * even one.  Reports the round trip and one-way = round trip / 2, the
 * lowest latency any intra-node message can reach.  Best of -r runs of
 * each way of polling (back to back, and with a pause: see twocores.h).
 * Options: -i ITER (default 1000000), -r RUNS (default 5), --json.
 * -n N bounces N lines of one buffer in turn instead (2 MiB apart, each at
 * another offset in its page) and prints each line's one-way time: on a
 * mesh, a line's home in the L3 follows its physical address, and some
 * lines take far longer than others (docs/pt2pt-perf.md, 2026-11-26; try
 * -n 24 -i 200000 -r 1; text only, --json does not apply). */
#include "twocores.h" /* first: it defines _GNU_SOURCE */

#include <stdatomic.h>

static struct {
    _Alignas(64) atomic_long v;
    char pad[64 - sizeof(atomic_long)];
} line;
static atomic_long *lp = &line.v; /* the line bounced */

static void *pong(void *arg)
{
    (void)arg;
    pin(cpu_b);
    for (long i = 0; i < iters; i++) {
        long want = 2 * i + 1;
        while (atomic_load_explicit(lp, memory_order_acquire) != want)
            twocores_poll_hint();
        atomic_store_explicit(lp, want + 1, memory_order_release);
    }
    return NULL;
}

static double run(void)
{
    pthread_t t;
    atomic_store(lp, 0);
    pthread_create(&t, NULL, pong, NULL);
    pin(cpu_a);
    double t0 = now();
    for (long i = 0; i < iters; i++) {
        atomic_store_explicit(lp, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(lp, memory_order_acquire) != 2 * i + 2)
            twocores_poll_hint();
    }
    double dt = now() - t0;
    pthread_join(t, NULL);
    return dt / iters;
}

/* -n: the one-way time of each of n lines of one buffer. */
static int spread(int n, int runs)
{
    const size_t stride = (size_t)2 << 20;
    char *buf = aligned_alloc(4096, stride * (size_t)n);
    if (!buf) {
        fprintf(stderr, "cacheline: out of memory\n");
        return 1;
    }
    memset(buf, 0, stride * (size_t)n);
    printf("one-way ns of %d lines, cpu %d <-> cpu %d:", n, cpu_a, cpu_b);
    for (int k = 0; k < n; k++) {
        lp = (atomic_long *)(buf + stride * (size_t)k + (size_t)k * 64 % 4096);
        printf(" %.0f", best_of_styles(runs, run, NULL, NULL) * 1e9 / 2);
        fflush(stdout);
    }
    printf("\n");
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int runs, json = 0, nlines = 0;
    /* -n N is ours; the rest is twocores_init's. */
    int n = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            nlines = atoi(argv[++i]);
        else
            argv[n++] = argv[i];
    }
    int rc = twocores_init("cacheline", n, argv, &runs, &json,
                           "[-i ITER] [-r RUNS] [-c A,B] [-n LINES] [--json]", 1, 1);
    if (rc)
        return rc;
    if (nlines > 0)
        return spread(nlines, runs);
    double plain, paused;
    double best = best_of_styles(runs, run, &plain, &paused);
    double rt_us = best * 1e6;
    if (json)
        printf("{\"bench\":\"cacheline\",\"size\":64,\"ranks\":2,\"mode\":\"hot\",\"value\":%.6g,"
               "\"unit\":\"us\",\"avg_us\":%.6g,\"min_us\":%.6g,\"max_us\":%.6g,\"iters\":%ld,"
               "\"round_trip_us\":%.6g,\"plain_us\":%.6g,\"pause_us\":%.6g,\"cpus\":[%d,%d]}\n",
               rt_us / 2, rt_us / 2, rt_us / 2, rt_us / 2, iters, rt_us, plain * 1e6 / 2,
               paused * 1e6 / 2, cpu_a, cpu_b);
    else
        printf("cache-line round trip cpu %d <-> cpu %d: %.1f ns, one-way %.1f ns (polling back to "
               "back %.1f, with a pause %.1f)\n",
               cpu_a, cpu_b, rt_us * 1e3, rt_us * 1e3 / 2, plain * 1e9 / 2, paused * 1e9 / 2);
    return 0;
}
