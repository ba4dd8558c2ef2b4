/* What the two-core limit benchmarks (cacheline.c, slotline.c; no MPI)
 * share: two threads pinned to cores A and B (default the first two CPUs
 * the process may use), the options -i ITER (default 1000000), -r RUNS
 * (default 5), -c A,B and, where the program takes it, --json, and the
 * best of the runs.  One translation unit each: everything is static. */
#ifndef LOOM_BENCH_TWOCORES_H
#define LOOM_BENCH_TWOCORES_H

#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long iters = 1000000;
static int cpu_a = -1, cpu_b = -1;
static const char *twocores_prog;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Pins the calling thread to cpu (a warning when it cannot). */
static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set))
        fprintf(stderr, "%s: cannot pin to cpu %d\n", twocores_prog, cpu);
}

/* Parses the options (--json only when json is not NULL) and picks the two
 * CPUs. Returns 0, or the status to exit with: usage_rc after printing
 * usage, nocpu_rc when the process may use fewer than two CPUs. */
static int twocores_init(const char *prog, int argc, char **argv, int *runs, int *json,
                         const char *usage, int usage_rc, int nocpu_rc)
{
    twocores_prog = prog;
    *runs = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-i") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            *runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-c") && i + 1 < argc &&
                 sscanf(argv[i + 1], "%d,%d", &cpu_a, &cpu_b) == 2)
            i++;
        else if (json && !strcmp(argv[i], "--json"))
            *json = 1;
        else {
            fprintf(stderr, "usage: %s %s\n", prog, usage);
            return usage_rc;
        }
    }
    if (cpu_a < 0) {
        cpu_set_t set;
        sched_getaffinity(0, sizeof set, &set);
        for (int c = 0; c < CPU_SETSIZE && (cpu_a < 0 || cpu_b < 0); c++)
            if (CPU_ISSET(c, &set)) {
                if (cpu_a < 0)
                    cpu_a = c;
                else
                    cpu_b = c;
            }
        if (cpu_b < 0) {
            fprintf(stderr, "%s: needs two CPUs\n", prog);
            return nocpu_rc;
        }
    }
    return 0;
}

/* The lowest result of runs calls of run. */
static double best_of(int runs, double (*run)(void))
{
    double best = 1e9;
    for (int r = 0; r < runs; r++) {
        double t = run();
        if (t < best)
            best = t;
    }
    return best;
}

#endif
