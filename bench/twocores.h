/* What the two-core limit benchmarks (cacheline.c, slotline.c, pairline.c,
 * collfloor.c; no MPI) share: two threads pinned to cores A and B (default
 * the first two CPUs the process may use), the options -i ITER (default
 * 1000000), -r RUNS (default 5), -c A,B and, where the program takes it,
 * --json, and the best of the runs, polling back to back and with a pause.
 * One translation unit each: everything is static. */
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

/* How a waiting thread polls: 0 back to back, 1 with a pause between
 * polls. Which is faster depends on the CPU (on the AMD EPYC VM the pause
 * made a line's one-way trip 58 -> 39 ns: loads that never pause keep
 * taking the line back from its writer), so the floors time both. */
static int twocores_pause;

/* Called once per poll of a spin-wait loop. */
static inline void twocores_poll_hint(void)
{
    if (twocores_pause) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    }
}

/* The lowest result of runs calls of run, each style of polling in turn;
 * *plain_p and *pause_p (if not NULL): the lowest of each style. */
static double best_of_styles(int runs, double (*run)(void), double *plain_p, double *pause_p)
{
    double best[2] = {1e9, 1e9};
    for (int r = 0; r < runs; r++)
        for (int style = 0; style < 2; style++) {
            twocores_pause = style;
            double t = run();
            if (t < best[style])
                best[style] = t;
        }
    twocores_pause = 0;
    if (plain_p)
        *plain_p = best[0];
    if (pause_p)
        *pause_p = best[1];
    return best[0] < best[1] ? best[0] : best[1];
}

/* Prints the one-way time of an 8-byte ping-pong floor (bench name, text
 * label) in seconds: as one JSON result line with --json, else as text. */
static inline void twocores_report(const char *bench, const char *label, int json, double best,
                                   double plain, double paused)
{
    double us = best * 1e6;
    if (json)
        printf("{\"bench\":\"%s\",\"size\":8,\"ranks\":2,\"mode\":\"hot\","
               "\"value\":%.6g,\"unit\":\"us\",\"avg_us\":%.6g,\"min_us\":%.6g,"
               "\"max_us\":%.6g,\"iters\":%ld,\"plain_us\":%.6g,\"pause_us\":%.6g,"
               "\"cpus\":[%d,%d]}\n",
               bench, us, us, us, us, iters, plain * 1e6, paused * 1e6, cpu_a, cpu_b);
    else
        printf("%s ping-pong cpu %d <-> cpu %d: one-way %.1f ns (polling back to back %.1f, "
               "with a pause %.1f)\n",
               label, cpu_a, cpu_b, us * 1e3, plain * 1e9, paused * 1e9);
}

#endif
