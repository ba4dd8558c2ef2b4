/* Physical limit of the OSU collective loop at 2 ranks: two threads pinned
 * to two cores run the loop of osu_allreduce (and osu_bcast) with nothing
 * of MPI around it.  Each iteration, as bench/coll.c does: read the clock,
 * the collective, read the clock, then a barrier (untimed).  The
 * collective is the least any implementation can do between two cores:
 *   allreduce: each thread writes its 8 bytes and a sequence number into a
 *              line of its own, waits for the other's line and adds the two
 *              (in rank order);
 *   bcast:     thread 0 (the root) writes 8 bytes and a sequence number into
 *              its line and is done; thread 1 waits for the line and copies.
 * The untimed barrier decides which thread starts the next call first, and
 * so how much of the wait falls inside the timed call.  Two barriers, each
 * one flag line per thread:
 *   pair: each sets its flag and waits for the other's: the last to arrive
 *         leaves first (dissemination; Loom's choice at 2 ranks, the
 *         fastest barrier);
 *   root: thread 1 arrives, thread 0 waits for it and releases it: thread 0
 *         leaves first, thread 1 one transfer later (gather-release, as
 *         MPICH's shared-memory barrier does).  A Bcast reader then finds
 *         the root's line already on its way: its wait moved into the
 *         barrier, which costs two transfers instead of one.
 * The floor is the lower of the two; both are printed.  The clock is
 * clock_gettime(CLOCK_MONOTONIC), which Loom's MPI_Wtime reads too.  The
 * time per call is averaged over the two threads, as the MPI benchmarks
 * average over ranks.  Best of -r runs (default 5) of -i calls (default
 * 1000000); -c A,B picks the cores.  No MPI's 8-byte Allreduce or Bcast on
 * two ranks, timed by the OSU method on these two cores, measures below
 * the floor; bench/compare runs this with the physical limits and the
 * report sets the 2-rank results against it. */
#include "twocores.h" /* first: it defines _GNU_SOURCE */

#include <stdatomic.h>
#include <stdint.h>

struct line {
    _Alignas(64) _Atomic uint64_t seq;
    float v[2];
};

static struct line data[2], bar[2];
static int bcast_mode;    /* 0: allreduce, 1: bcast */
static int root_barrier;  /* 0: pair, 1: root (see above) */
static double elapsed[2]; /* per thread, seconds over the timed calls */
static long warm = 1000;

static void wait_seq(struct line *l, uint64_t s)
{
    while (atomic_load_explicit(&l->seq, memory_order_acquire) < s)
        twocores_poll_hint();
}

static void loop(int me)
{
    int peer = !me;
    float in[2] = {1.0f + (float)me, 2.0f}, out[2] = {0};
    double t = 0;
    for (long i = 0; i < warm + iters; i++) {
        uint64_t s = (uint64_t)i + 1; /* run() starts every line at 0 */
        double t0 = now();
        if (!bcast_mode) {
            data[me].v[0] = in[0];
            data[me].v[1] = in[1];
            atomic_store_explicit(&data[me].seq, s, memory_order_release);
            wait_seq(&data[peer], s);
            const float *a = me ? data[peer].v : in, *b = me ? in : data[peer].v;
            out[0] = a[0] + b[0];
            out[1] = a[1] + b[1];
        } else if (me == 0) {
            data[0].v[0] = in[0];
            data[0].v[1] = in[1];
            atomic_store_explicit(&data[0].seq, s, memory_order_release);
        } else {
            wait_seq(&data[0], s);
            out[0] = data[0].v[0];
            out[1] = data[0].v[1];
        }
        double t1 = now();
        if (i >= warm)
            t += t1 - t0;
        if (!root_barrier) {
            atomic_store_explicit(&bar[me].seq, s, memory_order_release);
            wait_seq(&bar[peer], s);
        } else if (me == 1) {
            atomic_store_explicit(&bar[1].seq, s, memory_order_release);
            wait_seq(&bar[0], s);
        } else {
            wait_seq(&bar[1], s);
            atomic_store_explicit(&bar[0].seq, s, memory_order_release);
        }
    }
    if ((!bcast_mode || me == 1) && out[1] == 0.0f)
        fprintf(stderr, "collfloor: no data arrived\n");
    elapsed[me] = t;
}

static void *second(void *arg)
{
    (void)arg;
    pin(cpu_b);
    loop(1);
    return NULL;
}

static double run(void)
{
    pthread_t th;
    for (int i = 0; i < 2; i++) {
        atomic_store(&data[i].seq, 0);
        atomic_store(&bar[i].seq, 0);
    }
    pthread_create(&th, NULL, second, NULL);
    pin(cpu_a);
    loop(0);
    pthread_join(th, NULL);
    return (elapsed[0] + elapsed[1]) / 2 / (double)iters;
}

int main(int argc, char **argv)
{
    int runs, json = 0;
    int rc = twocores_init("collfloor", argc, argv, &runs, &json,
                           "[-i ITER] [-r RUNS] [-c A,B] [--json]", 2, 77);
    if (rc)
        return rc;
    if (warm > iters)
        warm = iters;
    static const char *const names[2] = {"allreduce", "bcast"};
    static const char *const barriers[2] = {"pair", "root"};
    for (bcast_mode = 0; bcast_mode < 2; bcast_mode++) {
        double us[2];
        for (root_barrier = 0; root_barrier < 2; root_barrier++)
            us[root_barrier] = best_of_styles(runs, run, NULL, NULL) * 1e6;
        int b = us[1] < us[0];
        if (json)
            printf("{\"bench\":\"floor_%s\",\"size\":8,\"ranks\":2,\"mode\":\"hot\","
                   "\"value\":%.6g,\"unit\":\"us\",\"avg_us\":%.6g,\"min_us\":%.6g,"
                   "\"max_us\":%.6g,\"iters\":%ld,\"cpus\":[%d,%d],\"barrier\":\"%s\","
                   "\"pair_us\":%.6g,\"root_us\":%.6g}\n",
                   names[bcast_mode], us[b], us[b], us[b], us[b], iters, cpu_a, cpu_b, barriers[b],
                   us[0], us[1]);
        else
            printf("OSU %s loop, 8 B, cpu %d <-> cpu %d, no MPI: %.3f us per call "
                   "(pair barrier %.3f, root barrier %.3f)\n",
                   names[bcast_mode], cpu_a, cpu_b, us[b], us[0], us[1]);
    }
    return 0;
}
