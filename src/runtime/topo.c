/*
 * Topology from hwloc and the placement of ranks on workers (see topo.h).
 */
#define _GNU_SOURCE
#include "runtime/topo.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

static hwloc_topology_t topo;
static bool topo_real = true;

int loom_topo_init(void)
{
    if (topo)
        return LOOM_OK;
    if (hwloc_topology_init(&topo) != 0)
        return LOOM_ERR_NOMEM;
    const char *syn = getenv("HWLOC_SYNTHETIC");
    if (syn && *syn && hwloc_topology_set_synthetic(topo, syn) != 0) {
        loom_log_error("HWLOC_SYNTHETIC=\"%s\" is not a valid synthetic topology", syn);
        goto err_destroy;
    }
    if (hwloc_topology_load(topo) != 0) {
        loom_log_error("hwloc could not load the topology");
        goto err_destroy;
    }
    topo_real = hwloc_topology_is_thissystem(topo);
    return LOOM_OK;
err_destroy:
    hwloc_topology_destroy(topo);
    topo = NULL;
    return LOOM_ERR_INVALID;
}

void loom_topo_fini(void)
{
    if (topo)
        hwloc_topology_destroy(topo);
    topo = NULL;
}

bool loom_topo_is_real(void)
{
    return topo_real;
}

/* The objects workers run on: cores, or PUs when hwloc finds no cores. */
static hwloc_obj_type_t worker_type(void)
{
    return hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
}

int loom_topo_ncores(void)
{
    int n = hwloc_get_nbobjs_by_type(topo, worker_type());
    return n > 0 ? n : 1;
}

const char *loom_level_name(enum loom_level level)
{
    static const char *const names[] = {"core", "l3", "numa", "package", "machine"};
    return names[level];
}

void loom_topo_describe(char *buf, int len)
{
    int np = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    int nn = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    int nl3 = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_L3CACHE);
    int nc = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    snprintf(buf, (size_t)len,
             "%d package(s), %d NUMA node(s), %d L3 cache(s), %d core(s), %d PU(s)%s", np, nn, nl3,
             nc, npu, topo_real ? "" : " (synthetic)");
}

/* The worker object (core, or PU) c. */
static hwloc_obj_t core_obj(int c)
{
    if (!topo)
        return NULL;
    return hwloc_get_obj_by_type(topo, worker_type(), (unsigned)c);
}

/* The ancestor of obj of type t, or NULL. */
static hwloc_obj_t ancestor(hwloc_obj_t obj, hwloc_obj_type_t t)
{
    return obj ? hwloc_get_ancestor_obj_by_type(topo, t, obj) : NULL;
}

/* The NUMA node whose cpuset holds obj's (NUMA nodes hang off the memory
 * side of their parent), or NULL. */
static hwloc_obj_t numa_of(hwloc_obj_t obj)
{
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    for (int i = 0; obj && i < n; i++) {
        hwloc_obj_t nn = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
        if (nn->cpuset && hwloc_bitmap_isincluded(obj->cpuset, nn->cpuset))
            return nn;
    }
    return NULL;
}

enum loom_share loom_topo_share(int a, int b)
{
    hwloc_obj_t x = core_obj(a), y = core_obj(b);
    hwloc_obj_t l2 = ancestor(x, HWLOC_OBJ_L2CACHE), l3 = ancestor(x, HWLOC_OBJ_L3CACHE);
    hwloc_obj_t pk = ancestor(x, HWLOC_OBJ_PACKAGE);
    if (a == b || (l2 && l2 == ancestor(y, HWLOC_OBJ_L2CACHE)))
        return LOOM_SHARE_L2;
    if (l3 && l3 == ancestor(y, HWLOC_OBJ_L3CACHE))
        return LOOM_SHARE_L3;
    if (numa_of(x) == numa_of(y))
        return LOOM_SHARE_NUMA;
    if (pk && pk == ancestor(y, HWLOC_OBJ_PACKAGE))
        return LOOM_SHARE_PACKAGE;
    return LOOM_SHARE_MACHINE;
}

const char *loom_share_name(enum loom_share s)
{
    static const char *const names[] = {"l2", "l3", "numa", "package", "machine"};
    return names[s];
}

int loom_topo_cpu_of_core(int c)
{
    hwloc_obj_t core = core_obj(c);
    if (!topo_real || !core)
        return -1;
    hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU, 0);
    return pu ? (int)pu->os_index : -1;
}

size_t loom_topo_l2_bytes(void)
{
    hwloc_obj_t l2 = ancestor(core_obj(0), HWLOC_OBJ_L2CACHE);
    return l2 && l2->attr ? (size_t)l2->attr->cache.size : 0;
}

size_t loom_topo_llc_total_bytes(void)
{
    static const hwloc_obj_type_t levels[] = {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE};
    if (!topo)
        return 0; /* not loaded (a singleton) */
    for (size_t l = 0; l < LOOM_ARRAY_SIZE(levels); l++) {
        int n = hwloc_get_nbobjs_by_type(topo, levels[l]);
        size_t sum = 0;
        for (int i = 0; i < n; i++) {
            hwloc_obj_t o = hwloc_get_obj_by_type(topo, levels[l], (unsigned)i);
            sum += o->attr ? (size_t)o->attr->cache.size : 0;
        }
        if (sum)
            return sum;
    }
    return 0;
}

void loom_topo_machine(struct loom_topo_machine *m)
{
    hwloc_obj_t pk = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
    const char *cpu = pk ? hwloc_obj_get_info_by_name(pk, "CPUModel") : NULL;
    snprintf(m->cpu, sizeof m->cpu, "%s", cpu && *cpu ? cpu : "unknown");
    m->pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    m->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    m->numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    m->packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    m->l3_caches = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_L3CACHE);
}

/* Index of the ancestor of obj of the given level (0 when there is none). */
static int domain_of(hwloc_obj_t obj, enum loom_level level)
{
    hwloc_obj_t a = NULL;
    switch (level) {
    case LOOM_LEVEL_CORE:
        return (int)obj->logical_index;
    case LOOM_LEVEL_L3:
        a = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_L3CACHE, obj);
        break;
    case LOOM_LEVEL_NUMA:
        a = numa_of(obj);
        break;
    case LOOM_LEVEL_PACKAGE:
        a = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, obj);
        break;
    default:
        return 0;
    }
    return a ? (int)a->logical_index : 0;
}

static enum loom_level map_level(enum loom_map map)
{
    switch (map) {
    case LOOM_MAP_L3:
        return LOOM_LEVEL_L3;
    case LOOM_MAP_NUMA:
        return LOOM_LEVEL_NUMA;
    case LOOM_MAP_PACKAGE:
        return LOOM_LEVEL_PACKAGE;
    default:
        return LOOM_LEVEL_CORE;
    }
}

void loom_topo_placement_free(struct loom_placement *pl)
{
    free(pl->worker_of_rank);
    free(pl->cpu_of_worker);
    for (int l = 0; l < LOOM_NLEVELS; l++)
        free(pl->domain[l]);
    memset(pl, 0, sizeof *pl);
}

int loom_topo_place(int nranks, int nworkers, enum loom_map map, enum loom_bind bind,
                    struct loom_placement *pl)
{
    memset(pl, 0, sizeof *pl);
    int ncores = loom_topo_ncores();
    if (nworkers <= 0)
        nworkers = ncores;
    if (nworkers > nranks)
        nworkers = nranks;
    hwloc_obj_type_t wt = worker_type();
    pl->nworkers = nworkers;
    pl->worker_of_rank = calloc((size_t)nranks, sizeof(int));
    pl->cpu_of_worker = calloc((size_t)nworkers, sizeof(int));
    for (int l = 0; l < LOOM_NLEVELS; l++)
        pl->domain[l] = calloc((size_t)nworkers, sizeof(int));
    if (!pl->worker_of_rank || !pl->cpu_of_worker || !pl->domain[LOOM_NLEVELS - 1])
        goto err_free;
    enum loom_level lv = map_level(map);
    /* Worker w runs on core w mod ncores (more workers than cores share).
     * Fewer workers than cores, mapped by a domain: the workers' cores are
     * dealt round-robin over the domains (then kept in logical order), so
     * that 4 workers mapped by NUMA node get one core in each of 4 nodes. */
    int *core_of_worker = malloc((size_t)nworkers * sizeof(int));
    if (!core_of_worker)
        goto err_free;
    for (int w = 0; w < nworkers; w++)
        core_of_worker[w] = w % ncores;
    if (lv != LOOM_LEVEL_CORE && nworkers < ncores) {
        int *dom = malloc((size_t)ncores * sizeof(int));
        char *taken = calloc((size_t)ncores, 1);
        if (!dom || !taken) {
            free(dom), free(taken), free(core_of_worker);
            goto err_free;
        }
        int ndom = 0;
        for (int c = 0; c < ncores; c++) {
            dom[c] = domain_of(hwloc_get_obj_by_type(topo, wt, (unsigned)c), lv);
            if (dom[c] + 1 > ndom)
                ndom = dom[c] + 1;
        }
        /* Round r takes the first free core of every domain in turn. */
        for (int got = 0; got < nworkers;)
            for (int d = 0; d < ndom && got < nworkers; d++)
                for (int c = 0; c < ncores; c++)
                    if (dom[c] == d && !taken[c]) {
                        taken[c] = 1;
                        got++;
                        break;
                    }
        for (int c = 0, w = 0; c < ncores; c++)
            if (taken[c])
                core_of_worker[w++] = c;
        free(dom), free(taken);
    }
    for (int w = 0; w < nworkers; w++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo, wt, (unsigned)core_of_worker[w]);
        hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU, 0);
        pl->cpu_of_worker[w] = (bind == LOOM_BIND_CORE && topo_real && pu) ? (int)pu->os_index : -1;
        for (int l = 0; l < LOOM_NLEVELS; l++)
            pl->domain[l][w] = domain_of(core, (enum loom_level)l);
    }
    free(core_of_worker);
    if (lv == LOOM_LEVEL_CORE) {
        /* Blocks of consecutive ranks on consecutive workers. */
        for (int r = 0; r < nranks; r++)
            pl->worker_of_rank[r] = (int)((long long)r * nworkers / nranks);
        return LOOM_OK;
    }
    /* Round-robin over the domains that have workers, then blocks over each
     * domain's workers. */
    int ndom = 0;
    for (int w = 0; w < nworkers; w++)
        if (pl->domain[lv][w] + 1 > ndom)
            ndom = pl->domain[lv][w] + 1;
    int *dom_workers = calloc((size_t)ndom, sizeof(int)); /* workers per domain */
    int *dom_list = calloc((size_t)ndom, sizeof(int));    /* domains in use */
    int *dom_ranks = calloc((size_t)ndom, sizeof(int));   /* ranks per domain */
    int *dom_seen = calloc((size_t)ndom, sizeof(int));
    if (!dom_workers || !dom_list || !dom_ranks || !dom_seen) {
        free(dom_workers), free(dom_list), free(dom_ranks), free(dom_seen);
        goto err_free;
    }
    for (int w = 0; w < nworkers; w++)
        dom_workers[pl->domain[lv][w]]++;
    int nused = 0;
    for (int d = 0; d < ndom; d++)
        if (dom_workers[d])
            dom_list[nused++] = d;
    for (int r = 0; r < nranks; r++)
        dom_ranks[dom_list[r % nused]]++;
    for (int r = 0; r < nranks; r++) {
        int d = dom_list[r % nused];
        int i = dom_seen[d]++; /* i-th rank of domain d */
        int k = (int)((long long)i * dom_workers[d] / dom_ranks[d]);
        for (int w = 0; w < nworkers; w++) /* k-th worker of domain d */
            if (pl->domain[lv][w] == d && k-- == 0) {
                pl->worker_of_rank[r] = w;
                break;
            }
    }
    free(dom_workers), free(dom_list), free(dom_ranks), free(dom_seen);
    return LOOM_OK;
err_free:
    loom_topo_placement_free(pl);
    return LOOM_ERR_NOMEM;
}
