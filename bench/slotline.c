/* Physical limit of a message through a receiver's inbox: two threads
 * pinned to two cores ping-pong through rings of one-cache-line slots (an
 * envelope, 8 bytes of payload and a sequence number written last), as
 * Loom's inbox does for tiny messages but without any MPI work around it.
 * Unlike cacheline.c, where one line bounces and each side writes the line
 * it has just read, here each direction has its own line (the receiver's
 * slot), which is what any protocol with a per-receiver inbox pays.
 * Reports the best one-way time of -r runs (default 5) of -i round trips
 * (default 1000000), polling back to back and with a pause (twocores.h); -c A,B picks the cores;
 * --json prints one result line.  bench/compare runs it with the physical limits. */
#include "twocores.h" /* first: it defines _GNU_SOURCE */

#include <stdatomic.h>
#include <stdint.h>

#define SLOTS 64

struct slot {
    _Alignas(64) _Atomic uint64_t seq;
    uint32_t ctx;
    int src, tag;
    uint32_t bytes;
    char data[40];
};

static struct slot ring[2][SLOTS];
static void put(int to, uint64_t pos, const char *buf)
{
    struct slot *s = &ring[to][pos % SLOTS];
    s->ctx = 1;
    s->src = !to;
    s->tag = 1;
    s->bytes = 8;
    memcpy(s->data, buf, 8);
    /* Publish the slot's contents before its sequence number (a release
     * store, as Loom's inbox does since watched parking). */
    atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
}

static void get(int me, uint64_t pos, char *buf)
{
    struct slot *s = &ring[me][pos % SLOTS];
    while (atomic_load_explicit(&s->seq, memory_order_acquire) != pos + 1)
        twocores_poll_hint();
    memcpy(buf, s->data, 8);
}

static uint64_t base; /* positions already used by earlier runs */

static void *pong(void *arg)
{
    (void)arg;
    pin(cpu_b);
    char b[8];
    for (long i = 0; i < iters; i++) {
        get(1, base + (uint64_t)i, b);
        put(0, base + (uint64_t)i, b);
    }
    return NULL;
}

static double run(void)
{
    pthread_t t;
    pthread_create(&t, NULL, pong, NULL);
    pin(cpu_a);
    char b[8] = {0};
    double t0 = now();
    for (long i = 0; i < iters; i++) {
        put(1, base + (uint64_t)i, b);
        get(0, base + (uint64_t)i, b);
    }
    double dt = now() - t0;
    pthread_join(t, NULL);
    base += (uint64_t)iters;
    return dt / (double)iters / 2;
}

int main(int argc, char **argv)
{
    int runs, json = 0;
    int rc = twocores_init("slotline", argc, argv, &runs, &json,
                           "[-i ITER] [-r RUNS] [-c A,B] [--json]", 2, 77);
    if (rc)
        return rc;
    double plain, paused;
    double best = best_of_styles(runs, run, &plain, &paused);
    twocores_report("slotline", "inbox-slot", json, best, plain, paused);
    return 0;
}
