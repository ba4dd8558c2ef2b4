/* Physical limit: cache-line round trip between two cores.  Two threads
 * pinned to cores A and B (default the first two CPUs the process may use;
 * -c A,B to choose) bounce one 64-byte-aligned cache line: the ping thread
 * writes an odd value and waits for the pong thread to write the next
 * even one.  Reports the round trip and one-way = round trip / 2, the
 * lowest latency any intra-node message can reach.  Best of -r runs.
 * Options: -i ITER (default 1000000), -r RUNS (default 5), --json. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct {
    _Alignas(64) atomic_long v;
    char pad[64 - sizeof(atomic_long)];
} line;
static long iters = 1000000;
static int cpu_a = -1, cpu_b = -1;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *pong(void *arg)
{
    (void)arg;
    if (pin(cpu_b))
        fprintf(stderr, "cacheline: cannot pin to cpu %d\n", cpu_b);
    for (long i = 0; i < iters; i++) {
        long want = 2 * i + 1;
        while (atomic_load_explicit(&line.v, memory_order_acquire) != want)
            ;
        atomic_store_explicit(&line.v, want + 1, memory_order_release);
    }
    return NULL;
}

static double run(void)
{
    pthread_t t;
    atomic_store(&line.v, 0);
    pthread_create(&t, NULL, pong, NULL);
    if (pin(cpu_a))
        fprintf(stderr, "cacheline: cannot pin to cpu %d\n", cpu_a);
    double t0 = now();
    for (long i = 0; i < iters; i++) {
        atomic_store_explicit(&line.v, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&line.v, memory_order_acquire) != 2 * i + 2)
            ;
    }
    double dt = now() - t0;
    pthread_join(t, NULL);
    return dt / iters;
}

int main(int argc, char **argv)
{
    int runs = 5, json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-i") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-c") && i + 1 < argc &&
                 sscanf(argv[i + 1], "%d,%d", &cpu_a, &cpu_b) == 2)
            i++;
        else if (!strcmp(argv[i], "--json"))
            json = 1;
        else {
            fprintf(stderr, "usage: cacheline [-i ITER] [-r RUNS] [-c A,B] [--json]\n");
            return 1;
        }
    }
    if (cpu_a < 0) {
        cpu_set_t set;
        sched_getaffinity(0, sizeof set, &set);
        for (int c = 0; c < CPU_SETSIZE; c++) {
            if (!CPU_ISSET(c, &set))
                continue;
            if (cpu_a < 0)
                cpu_a = c;
            else if (cpu_b < 0)
                cpu_b = c;
        }
        if (cpu_b < 0) {
            fprintf(stderr, "cacheline: needs two CPUs\n");
            return 1;
        }
    }
    double best = 1e9;
    for (int r = 0; r < runs; r++) {
        double rt = run();
        if (rt < best)
            best = rt;
    }
    double rt_us = best * 1e6;
    if (json)
        printf("{\"bench\":\"cacheline\",\"size\":64,\"ranks\":2,\"mode\":\"hot\",\"value\":%.6g,"
               "\"unit\":\"us\",\"avg_us\":%.6g,\"min_us\":%.6g,\"max_us\":%.6g,\"iters\":%ld,"
               "\"round_trip_us\":%.6g,\"cpus\":[%d,%d]}\n",
               rt_us / 2, rt_us / 2, rt_us / 2, rt_us / 2, iters, rt_us, cpu_a, cpu_b);
    else
        printf("cache-line round trip cpu %d <-> cpu %d: %.1f ns, one-way %.1f ns\n", cpu_a, cpu_b,
               rt_us * 1e3, rt_us * 1e3 / 2);
    return 0;
}
