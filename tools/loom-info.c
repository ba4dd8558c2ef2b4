/*
 * loom-info: what Loom sees on this machine and how it will run a job: the
 * topology (from hwloc, honouring HWLOC_SYNTHETIC / HWLOC_XMLFILE), where N
 * ranks would go, the point-to-point protocol thresholds, and the collective
 * algorithms with the cost model's parameters (and where they come from:
 * calibrated now, the cache file, built-in, LOOM_COLL_MODEL) and any forced
 * choices. --calibrate measures the model's parameters again and rewrites
 * the cache file (as LOOM_COLL_CALIBRATE=1 does).
 *
 *   loom-info [-n N] [--map-by core|l3|numa|package] [--workers W] [--calibrate]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "runtime/topo.h"
#include "util/options.h"

extern char **environ;

static void usage(FILE *f)
{
    fprintf(f, "usage: loom-info [-n N] [--map-by core|l3|numa|package] [--workers W] "
               "[--calibrate]\n"
               "Prints the topology Loom sees, where N ranks would be placed, and the\n"
               "collective algorithms with the model parameters in use and their source.\n"
               "--calibrate measures the parameters again and rewrites the cache file.\n"
               "--options lists every LOOM_ environment variable, its value here and what it\n"
               "does (mpiexec's options: mpiexec --help).\n");
}

/* Every LOOM_ environment variable (src/util/options.def) with the value it
 * has here and what it does. */
static void print_options(void)
{
    for (int i = 0; i < LOOM_OPT_COUNT; i++) {
        const struct loom_opt_desc *d = loom_opt_desc((enum loom_opt)i);
        char value[64];
        if (d->kind == LOOM_OPT_STRING) {
            const char *v = loom_opt_str((enum loom_opt)i);
            snprintf(value, sizeof value, "%s", v ? v : "(unset)");
        } else {
            snprintf(value, sizeof value, "%lld", loom_opt_size((enum loom_opt)i));
        }
        printf("%-28s %-10s %s\n", d->env, value, d->summary);
    }
}

int main(int argc, char **argv)
{
    int n = 0, workers = 0;
    enum loom_map map = LOOM_MAP_CORE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if ((strcmp(a, "-n") == 0 || strcmp(a, "-np") == 0) && i + 1 < argc) {
            n = atoi(argv[++i]);
        } else if (strcmp(a, "--workers") == 0 && i + 1 < argc) {
            workers = atoi(argv[++i]);
        } else if (strcmp(a, "--map-by") == 0 && i + 1 < argc) {
            const char *m = argv[++i];
            if (strcmp(m, "core") == 0)
                map = LOOM_MAP_CORE;
            else if (strcmp(m, "l3") == 0)
                map = LOOM_MAP_L3;
            else if (strcmp(m, "numa") == 0)
                map = LOOM_MAP_NUMA;
            else if (strcmp(m, "package") == 0)
                map = LOOM_MAP_PACKAGE;
            else {
                fprintf(stderr, "loom-info: unknown --map-by '%s'\n", m);
                return 2;
            }
        } else if (strcmp(a, "--options") == 0) {
            print_options();
            return 0;
        } else if (strcmp(a, "--calibrate") == 0) {
            setenv("LOOM_COLL_CALIBRATE", "1", 1);
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("loom-info (Loom) %s\n", LOOM_VERSION);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    printf("Loom %s\n", LOOM_VERSION);
    if (loom_topo_init() != 0) {
        fprintf(stderr, "loom-info: cannot read the topology (hwloc)\n");
        return 1;
    }
    char desc[256];
    loom_topo_describe(desc, sizeof desc);
    printf("Topology: %s%s\n", desc, loom_topo_is_real() ? " (this machine)" : "");
    printf("Workers by default: %d (one per core of the allowed cpuset)\n", loom_topo_ncores());
    if (n > 0) {
        struct loom_placement pl;
        if (loom_topo_place(n, workers, map, LOOM_BIND_CORE, &pl) != 0) {
            fprintf(stderr, "loom-info: cannot place %d ranks\n", n);
            return 1;
        }
        printf("Placement of %d ranks on %d workers:\n", n, pl.nworkers);
        for (int w = 0; w < pl.nworkers; w++) {
            int first = -1, count = 0;
            for (int r = 0; r < n; r++)
                if (pl.worker_of_rank[r] == w) {
                    if (first < 0)
                        first = r;
                    count++;
                }
            printf("  worker %d: cpu %d, core %d, l3 %d, numa %d, package %d: %d rank(s) from %d\n",
                   w, pl.cpu_of_worker[w], pl.domain[LOOM_LEVEL_CORE][w],
                   pl.domain[LOOM_LEVEL_L3][w], pl.domain[LOOM_LEVEL_NUMA][w],
                   pl.domain[LOOM_LEVEL_PACKAGE][w], count, first);
        }
        loom_topo_placement_free(&pl);
    }
    loom_coll_describe(stdout);
    printf("Environment:");
    int any = 0;
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "LOOM_", 5) == 0 || strncmp(*e, "HWLOC_", 6) == 0) {
            printf("\n  %s", *e);
            any = 1;
        }
    printf("%s\n", any ? "" : " no LOOM_ or HWLOC_ variables set");
    loom_topo_fini();
    return 0;
}
