/*
 * Calibration: measures the cost model's machine parameters on this machine
 * in a few tens of milliseconds (model.c decides when, and caches them).
 *
 * It runs on Loom's own scheduler, started for it and stopped after it (so
 * before a job starts its own): one worker per core (at most
 * CALIB_MAX_WORKERS), pinned, and a controller ULT on worker 0 that measures
 * one thing after the other, so that only the ULTs of the measurement run:
 *
 *  - line: one-way cache-line transfer. Two ULTs on two workers ping-pong on
 *    one padded counter, spinning; each hop moves the line once. From core 0
 *    to the first core that shares each domain with it (l2, l3, numa,
 *    package, machine: loom_topo_share), as many as the machine has.
 *  - wake: the same ping-pong, but each side parks until the other wakes it
 *    (loom_ult_park, loom_ult_wake), on the nearest pair of cores: a hop is
 *    a park, a wake through the other worker's inbox and a switch, what a
 *    collective pays when it wakes a rank on another worker.
 *  - local_wake: the same with both ULTs on worker 0 (run queue and switch).
 *  - copy: memcpy of a block of a quarter of core 0's L2 that a ULT on the
 *    nearest other core has just written, what a rank pays to copy a peer's
 *    data (the cost functions' copies are such). Also recorded, not used:
 *    copy_l2, memcpy of such a block inside core 0's L2 (source and
 *    destination fit), repeated to 8 MiB a batch. With one core, copy is
 *    copy_l2.
 *  - mem: every worker copies its share of the total last-level cache size
 *    at once (16 to 512 MiB of source, as much destination: twice what the
 *    caches hold): the memory system's streaming copy bandwidth, all cores.
 *
 * Each value is the best (lowest time) of several batches after a warm-up
 * one, so that a batch in which the VM or another process took a core does
 * not count; a batch (hundreds of hops, megabytes) averages the spread of
 * single hops. Without a second core, line and wake are not measured.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "coll/model.h"
#include "runtime/ult.h"
#include "util/log.h"

/* Most workers the calibration starts (the mem measurement uses them all). */
#define CALIB_MAX_WORKERS 64
/* Timed batches per measurement (after one warm-up batch). */
#define CALIB_BATCHES 7
/* Round trips per batch: spinning, parking. */
#define CALIB_LINE_ROUNDS 500
#define CALIB_WAKE_ROUNDS 100
/* Bytes copied per copy batch; mem passes timed. */
#define CALIB_COPY_BYTES (8u << 20)
#define CALIB_MEM_PASSES 3
/* Peer copies timed (one block each). */
#define CALIB_PEER_ROUNDS 16

/* Keeps the compiler from dropping a copy nobody reads. */
static inline void opaque(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

static double now_s(void)
{
    return (double)loom_time_ns() * 1e-9;
}

/* ---- ping-pong ----------------------------------------------------------- */

struct pingpong {
    _Atomic uint64_t turn LOOM_ALIGNED_CL; /* the line that travels */
    struct loom_ult *ult[2];               /* side 0: the controller */
    bool park;                             /* wait by parking, else spin */
    uint64_t rounds;                       /* round trips in all */
    _Atomic int exited LOOM_ALIGNED_CL;    /* side 1 is done with this */
};

/* Waits until pp->turn == t. */
static void pp_wait(struct pingpong *pp, uint64_t t, bool park)
{
    /* Acquire: pairs with the other side's release of turn. */
    while (atomic_load_explicit(&pp->turn, memory_order_acquire) != t) {
        if (park)
            loom_ult_park(); /* may return spuriously: the loop re-checks */
        else
            loom_cpu_relax();
    }
}

/* Side s's hop of round k: wait for its turn, pass the turn on. */
static inline void pp_hop(struct pingpong *pp, int s, uint64_t k, bool park, struct loom_ult *other)
{
    pp_wait(pp, 2 * k + (uint64_t)s, park);
    /* Release: the other side sees this hop's turn and nothing else. */
    atomic_store_explicit(&pp->turn, 2 * k + (uint64_t)s + 1, memory_order_release);
    if (park)
        loom_ult_wake(other);
}

/* Side 1: answers every round, then says it is done with pp. */
static void pp_partner(void *arg)
{
    struct pingpong *pp = arg;
    bool park = pp->park;
    struct loom_ult *other = pp->ult[0];
    for (uint64_t k = 0; k < pp->rounds; k++)
        pp_hop(pp, 1, k, park, other);
    /* Release: the controller may reuse pp once it sees this. */
    atomic_store_explicit(&pp->exited, 1, memory_order_release);
    loom_ult_wake(other);
}

/* One-way hop time (s) between the controller and a partner ULT on worker
 * w: the best of CALIB_BATCHES batches of `rounds` round trips; 0 when the
 * partner cannot be created. */
static double pingpong(int w, bool park, uint64_t rounds)
{
    struct pingpong pp = {.park = park, .rounds = rounds * (CALIB_BATCHES + 1)};
    pp.ult[0] = loom_ult_self();
    if (loom_ult_create(pp_partner, &pp, w, 0, &pp.ult[1]) != LOOM_OK)
        return 0;
    double best = INFINITY;
    uint64_t k = 0;
    for (int b = 0; b <= CALIB_BATCHES; b++) {
        double t0 = now_s();
        for (uint64_t i = 0; i < rounds; i++, k++)
            pp_hop(&pp, 0, k, park, pp.ult[1]);
        pp_wait(&pp, 2 * k, park); /* the last answer */
        double t = now_s() - t0;
        if (b > 0 && t < best) /* batch 0 warms up */
            best = t;
    }

    /* Acquire: pairs with the partner's release; it no longer reads pp. */
    while (!atomic_load_explicit(&pp.exited, memory_order_acquire))
        loom_ult_park();
    return best / (2.0 * (double)rounds);
}

/* ---- bandwidth ----------------------------------------------------------- */

/* Bytes/s of memcpy of len-byte blocks by the calling ULT: best batch. */
static double copy_bandwidth(size_t len)
{
    char *src = aligned_alloc(LOOM_CACHE_LINE, len), *dst = aligned_alloc(LOOM_CACHE_LINE, len);
    double best = INFINITY;
    size_t reps = CALIB_COPY_BYTES / len ? CALIB_COPY_BYTES / len : 1;
    if (src && dst) {
        memset(src, 1, len);
        memset(dst, 0, len);
        for (int b = 0; b <= CALIB_BATCHES; b++) {
            double t0 = now_s();
            for (size_t r = 0; r < reps; r++) {
                memcpy(dst, src, len);
                opaque(dst);
            }
            double t = now_s() - t0;
            if (b > 0 && t < best)
                best = t;
        }
    }
    free(src);
    free(dst);
    return isfinite(best) && best > 0 ? (double)(reps * len) / best : 0;
}

/* The peer copy: a partner writes the block, the controller copies it. */
struct peer_copy {
    char *src;
    size_t len;
    _Atomic int round LOOM_ALIGNED_CL; /* the partner wrote src for this round */
    _Atomic int want LOOM_ALIGNED_CL;  /* the controller asks for this round */
};

static void peer_writer(void *arg)
{
    struct peer_copy *pc = arg;
    for (int b = 0; b <= CALIB_PEER_ROUNDS; b++) {
        /* Acquire: the controller is done reading src of round b - 1. */
        while (atomic_load_explicit(&pc->want, memory_order_acquire) != b)
            loom_cpu_relax(); /* alone on its worker */
        memset(pc->src, b + 1, pc->len);
        /* Release: publishes the block before its round number. */
        atomic_store_explicit(&pc->round, b, memory_order_release);
    }
}

/* Bytes/s of memcpy of a len-byte block that a ULT on worker w has just
 * written (its lines are in that core's cache): what a rank pays to copy a
 * peer's data. Best of CALIB_PEER_ROUNDS copies; 0 on failure. */
static double peer_copy_bandwidth(int w, size_t len)
{
    struct peer_copy pc = {.src = aligned_alloc(LOOM_CACHE_LINE, len), .len = len};
    char *dst = aligned_alloc(LOOM_CACHE_LINE, len);
    double best = INFINITY;
    atomic_store(&pc.round, -1);
    atomic_store(&pc.want, -1);
    if (pc.src && dst && loom_ult_create(peer_writer, &pc, w, 0, NULL) == LOOM_OK) {
        memset(dst, 0, len);
        for (int b = 0; b <= CALIB_PEER_ROUNDS; b++) {
            atomic_store_explicit(&pc.want, b, memory_order_release);
            while (atomic_load_explicit(&pc.round, memory_order_acquire) != b)
                loom_cpu_relax();
            double t0 = now_s();
            memcpy(dst, pc.src, len);
            opaque(dst);
            double t = now_s() - t0;
            if (b > 0 && t < best)
                best = t;
        }
        /* The writer's last round is done: it no longer reads pc. */
    }
    free(pc.src);
    free(dst);
    return isfinite(best) && best > 0 ? (double)len / best : 0;
}

/* The mem measurement: every worker copies `part` bytes per pass. */
enum { STREAM_IDLE = -2, STREAM_STOP = -1 };
struct stream {
    size_t part;
    _Atomic int go LOOM_ALIGNED_CL;    /* pass to run, STREAM_IDLE or STREAM_STOP */
    _Atomic int ready LOOM_ALIGNED_CL; /* copies of the current pass done */
    _Atomic int failed;
};

/* Maps len bytes of zeroed memory of the calling thread's NUMA node (its
 * own pages, not the shared zero page: MAP_POPULATE faults them in at once,
 * cheaper than page by page), with huge pages where the kernel gives them. */
static char *map_buffer(size_t len)
{
    void *p =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, len, MADV_HUGEPAGE);
#endif
    return p;
}

/* Copies a pass's part (pass 0 warms up, untimed). */
static void stream_copy(const struct stream *st, char *src, char *dst)
{
    if (src && dst) {
        memcpy(dst, src, st->part);
        opaque(dst);
    }
}

static void stream_worker(void *arg)
{
    struct stream *st = arg;
    char *src = map_buffer(st->part), *dst = map_buffer(st->part);
    if (!src || !dst)
        atomic_store_explicit(&st->failed, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->ready, 1, memory_order_release);
    for (int pass = 0;; pass++) {
        int g;
        /* Acquire: pairs with the controller's release of the pass. */
        while ((g = atomic_load_explicit(&st->go, memory_order_acquire)) != pass &&
               g != STREAM_STOP)
            loom_cpu_relax(); /* alone on its worker */
        if (g == STREAM_STOP)
            break;
        stream_copy(st, src, dst);
        /* Release: orders the copy before the controller's reading of the
         * count. */
        atomic_fetch_add_explicit(&st->ready, 1, memory_order_release);
    }
    if (src)
        munmap(src, st->part);
    if (dst)
        munmap(dst, st->part);
    /* Release: the controller frees st once every worker has left. */
    atomic_fetch_add_explicit(&st->ready, 1, memory_order_release);
}

/* Waits (spinning: the others run on other workers) until st->ready == n. */
static void stream_wait(struct stream *st, int n)
{
    while (atomic_load_explicit(&st->ready, memory_order_acquire) != n)
        loom_cpu_relax();
}

/* Bytes/s copied by nworkers workers at once, each its share of total bytes
 * of source; 0 when the buffers cannot be had. */
static double mem_bandwidth(int nworkers, size_t total)
{
    struct stream st = {.part = total / (size_t)nworkers / 4096 * 4096};
    atomic_store(&st.go, STREAM_IDLE);
    int others = 0;
    for (int w = 1; w < nworkers; w++)
        if (loom_ult_create(stream_worker, &st, w, 0, NULL) == LOOM_OK)
            others++;
    char *src = map_buffer(st.part), *dst = map_buffer(st.part);
    stream_wait(&st, others);
    bool ok = src && dst && !atomic_load_explicit(&st.failed, memory_order_relaxed);
    double best = INFINITY;
    for (int pass = 0; pass <= CALIB_MEM_PASSES; pass++) {
        atomic_store_explicit(&st.ready, 0, memory_order_relaxed);
        double t0 = now_s();
        /* Release: the reset count is visible before the pass starts. */
        atomic_store_explicit(&st.go, pass, memory_order_release);
        stream_copy(&st, src, dst);
        stream_wait(&st, others);
        double t = now_s() - t0;
        if (pass > 0 && t < best)
            best = t;
    }
    atomic_store_explicit(&st.ready, 0, memory_order_relaxed);
    atomic_store_explicit(&st.go, STREAM_STOP, memory_order_release);
    stream_wait(&st, others);
    if (src)
        munmap(src, st.part);
    if (dst)
        munmap(dst, st.part);
    double bytes = (double)st.part * (others + 1);
    return ok && isfinite(best) && best > 0 ? bytes / best : 0;
}

/* ---- the run ------------------------------------------------------------- */

struct calib_run {
    struct coll_calib *out;
    int nworkers;
};

static void controller(void *arg)
{
    struct calib_run *run = arg;
    struct coll_calib *out = run->out;
    int n = run->nworkers;
    /* The first core of each sharing level with core 0. */
    int pair[LOOM_NSHARES] = {0};
    for (int c = 1; c < n; c++) {
        enum loom_share s = loom_topo_share(0, c);
        if (!pair[s])
            pair[s] = c;
    }
    int nearest = 0;

    for (int s = LOOM_NSHARES - 1; s >= 0; s--)
        if (pair[s]) {
            out->line_share_s[s] = pingpong(pair[s], false, CALIB_LINE_ROUNDS);
            if (!out->line_s)
                out->line_s = out->line_share_s[s];
            nearest = pair[s];
        }
    if (nearest)
        out->wake_s = pingpong(nearest, true, CALIB_WAKE_ROUNDS);
    out->local_wake_s = pingpong(0, true, CALIB_WAKE_ROUNDS);

    size_t l2 = loom_topo_l2_bytes(), block = l2 ? l2 / 4 : 128 << 10;
    block = block < (32 << 10) ? 32 << 10 : block > (512 << 10) ? 512 << 10 : block;
    out->copy_l2_bps = copy_bandwidth(block);
    out->copy_bps = nearest ? peer_copy_bandwidth(nearest, block) : out->copy_l2_bps;

    size_t llc = loom_topo_llc_total_bytes(), total = llc ? llc : 32u << 20;
    total = total < (16u << 20) ? 16u << 20 : total > (512u << 20) ? 512u << 20 : total;
    out->mem_bps = mem_bandwidth(n, total);
}

int coll_calibrate(struct coll_calib *out, char *why, size_t len)
{
    memset(out, 0, sizeof *out);
    if (loom_topo_init() != LOOM_OK) {
        snprintf(why, len, "hwloc cannot read the topology");
        return LOOM_ERR_INVALID;
    }
    if (!loom_topo_is_real()) {
        snprintf(why, len, "the topology is synthetic, not this machine's");
        return LOOM_ERR_INVALID;
    }
    if (loom_sched_nworkers() > 0) {
        snprintf(why, len, "Loom's scheduler is already running");
        return LOOM_ERR_INVALID;
    }
    int n = loom_topo_ncores();
    if (n > CALIB_MAX_WORKERS)
        n = CALIB_MAX_WORKERS;
    int cpus[CALIB_MAX_WORKERS];
    for (int c = 0; c < n; c++)
        cpus[c] = loom_topo_cpu_of_core(c);
    double t0 = now_s();
    struct loom_sched_params sp = {.nworkers = n, .cpus = cpus, .spin_ns = -1, .idle_spin_ns = -1};
    if (loom_sched_init(&sp) != LOOM_OK) {
        snprintf(why, len, "cannot start %d worker threads", n);
        return LOOM_ERR_SYSTEM;
    }
    struct calib_run run = {.out = out, .nworkers = n};
    if (loom_ult_create(controller, &run, 0, 0, NULL) != LOOM_OK) {
        loom_sched_fini();
        snprintf(why, len, "cannot create a ULT");
        return LOOM_ERR_NOMEM;
    }
    loom_sched_run();
    loom_sched_fini();
    out->elapsed_s = now_s() - t0;
    if (!out->local_wake_s || !out->copy_bps || !out->mem_bps) {
        snprintf(why, len, "a measurement failed (out of memory?)");
        return LOOM_ERR_NOMEM;
    }
    return LOOM_OK;
}
