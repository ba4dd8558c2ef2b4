/*
 * Topology: what the node looks like (from hwloc) and where ranks go.
 *
 * Workers are the cores of the allowed cpuset in hwloc's logical order (so
 * neighbouring workers share the nearest caches). Ranks are placed on workers
 * by --map-by: "core" (default) gives blocks of consecutive ranks to
 * consecutive workers; "l3", "numa" and "package" deal ranks round-robin over
 * those domains and then in blocks over each domain's workers, as Open MPI's
 * --map-by does. Synthetic topologies (HWLOC_SYNTHETIC, HWLOC_XMLFILE) are
 * honoured for placement; workers are then left unbound, since the synthetic
 * cores are not this machine's.
 *
 * Depends on: util, hwloc.
 */
#ifndef LOOM_RUNTIME_TOPO_H
#define LOOM_RUNTIME_TOPO_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/job.h"

enum loom_level {
    LOOM_LEVEL_CORE,
    LOOM_LEVEL_L3,
    LOOM_LEVEL_NUMA,
    LOOM_LEVEL_PACKAGE,
    LOOM_LEVEL_MACHINE,
    LOOM_NLEVELS
};

struct loom_placement {
    int nworkers;
    int *worker_of_rank;       /* [nranks] */
    int *cpu_of_worker;        /* [nworkers], OS index of the PU to pin to, or -1 */
    int *domain[LOOM_NLEVELS]; /* domain[level][worker]: index of the worker's
                                  core, L3, NUMA node, package (machine: 0) */
};

int loom_topo_init(void) LOOM_MUST_CHECK;
void loom_topo_fini(void);

/* Number of usable cores (at least 1). */
int loom_topo_ncores(void);
/* True when the topology is this machine's (not synthetic). */
bool loom_topo_is_real(void);
/* One line describing the topology, e.g. "1 package, 1 NUMA node, 2 cores". */
void loom_topo_describe(char *buf, int len);
const char *loom_level_name(enum loom_level level);

/* How near two cores are: the smallest domain both are in. */
enum loom_share {
    LOOM_SHARE_L2,      /* different cores under one L2 cache */
    LOOM_SHARE_L3,      /* one L3 cache */
    LOOM_SHARE_NUMA,    /* one NUMA node, different L3 caches */
    LOOM_SHARE_PACKAGE, /* one package, different NUMA nodes */
    LOOM_SHARE_MACHINE, /* different packages */
    LOOM_NSHARES
};
/* The domain cores a and b (0..loom_topo_ncores()-1, the workers' order)
 * share; a == b: LOOM_SHARE_L2. */
enum loom_share loom_topo_share(int a, int b);
/* "l2", "l3", "numa", "package", "machine". */
const char *loom_share_name(enum loom_share s);
/* OS index of the first PU of core c, to pin a thread to; -1 for a
 * synthetic topology. */
int loom_topo_cpu_of_core(int c);
/* Bytes of core 0's L2 cache and of all the last-level caches together (0:
 * unknown). */
size_t loom_topo_l2_bytes(void);
size_t loom_topo_llc_total_bytes(void);

/* What identifies the machine (the collective model's cache file key). */
struct loom_topo_machine {
    char cpu[128]; /* CPU model name, "unknown" if hwloc does not say */
    int pus, cores, numa_nodes, packages, l3_caches;
};
void loom_topo_machine(struct loom_topo_machine *m);

/* Places nranks ranks on nworkers workers (0: one per core, never more than
 * the ranks). Fills *pl; free with loom_topo_placement_free. */
int loom_topo_place(int nranks, int nworkers, enum loom_map map, enum loom_bind bind,
                    struct loom_placement *pl) LOOM_MUST_CHECK;
void loom_topo_placement_free(struct loom_placement *pl);

#endif
