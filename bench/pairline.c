/* Physical limit of a message through the box of a pair of ranks: two threads pinned to two
 * cores ping-pong 8 bytes through one cache line that holds a half for each direction (an
 * envelope, the payload and a word with the message count and the count of the other half's
 * messages taken, written last), as Loom's pair boxes do (src/pt2pt/p2p.c: the envelope is stored
 * only when it changes, so a reply with the same envelope stores its payload and its word) but
 * without any MPI work around it. A sender first checks that its last message there was taken;
 * the reply's word acknowledges the request, so only the one line moves, as in cacheline.c.
 * Reports the best one-way time of -r runs (default 5) of -i round trips (default 1000000),
 * polling back to back and with a pause (twocores.h); -c A,B picks the cores; --json prints one
 * result line. bench/compare runs it with the physical limits. -w N puts a loop of N empty turns
 * (about a core cycle each) between a receive and its reply: a model of an MPI library's software
 * there (docs/pt2pt-perf.md measures how it adds to the one-way time). -p makes the receiver
 * prefetch the line for writing when it sees a message, as Loom did until 2026-11-26. -d demotes
 * the line (CLDEMOTE, a NOP where the CPU lacks it) after each store, as Loom does since then. */
#include "twocores.h" /* first: it defines _GNU_SOURCE */

#include <stdatomic.h>
#include <stdint.h>

struct half {
    _Atomic uint32_t word; /* bytes | count << 8 | ack << 16 */
    uint32_t ctx;
    int src, tag;
    char data[16];
};

static struct {
    _Alignas(64) struct half h[2];
} box;

/* PREFETCHW: the line in a writable state, ahead of a store. */
static inline void prefetch_write(const void *p)
{
#if defined(__x86_64__)
    __asm__ __volatile__("prefetchw %0" ::"m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

/* CLDEMOTE: the line we just wrote to the shared cache, for the other core. */
static inline void demote(const void *p)
{
#if defined(__x86_64__)
    __asm__ __volatile__("cldemote %0" ::"m"(*(const char *)p));
#else
    (void)p;
#endif
}

static int demote_after; /* -d */

/* Each thread's own counts: messages sent through its half, taken from the other. */
struct side {
    uint32_t sent, taken;
    int envelope; /* our half holds the envelope (stored once, as Loom stores a changed one) */
};

static void put(int me, struct side *s, const char *buf)
{
    struct half *h = &box.h[me], *o = &box.h[!me];
    /* our last message taken? (the other half acknowledges it) */
    while (((atomic_load_explicit(&o->word, memory_order_acquire) >> 16) & 0xffu) !=
           (s->sent & 0xffu))
        twocores_poll_hint();
    if (!s->envelope) {
        h->ctx = 1;
        h->src = me;
        h->tag = 1;
        s->envelope = 1;
    }
    memcpy(h->data, buf, 8);
    s->sent++;
    /* Publish the message, and acknowledge the other's, in one store. */
    atomic_store_explicit(&h->word, 8u | (s->sent & 0xffu) << 8 | (s->taken & 0xffu) << 16,
                          memory_order_release);
    if (demote_after)
        demote(h);
}

/* -w: cycles of work between a receive and the reply; -p: prefetch. */
static long work_cycles;
static int prefetch;

static void work(void)
{
    for (long i = 0; i < work_cycles; i++)
        __asm__ __volatile__(""); /* a turn: about a cycle (one taken branch) */
}

static void get(int me, struct side *s, char *buf)
{
    struct half *o = &box.h[!me];
    while (((atomic_load_explicit(&o->word, memory_order_acquire) >> 8) & 0xffu) ==
           (s->taken & 0xffu))
        twocores_poll_hint();
    /* -p: our half takes the reply; ask for the line for writing now. */
    if (prefetch)
        prefetch_write(o);
    memcpy(buf, o->data, 8);
    s->taken++;
}

static void *pong(void *arg)
{
    struct side s = {0, 0, 0};
    (void)arg;
    pin(cpu_b);
    char b[8];
    for (long i = 0; i < iters; i++) {
        get(1, &s, b);
        work();
        put(1, &s, b);
    }
    return NULL;
}

static double run(void)
{
    memset(&box, 0, sizeof box);
    pthread_t t;
    pthread_create(&t, NULL, pong, NULL);
    pin(cpu_a);
    struct side s = {0, 0, 0};
    char b[8] = {0};
    double t0 = now();
    for (long i = 0; i < iters; i++) {
        put(0, &s, b);
        get(0, &s, b);
        work();
    }
    double dt = now() - t0;
    pthread_join(t, NULL);
    return dt / (double)iters / 2;
}

int main(int argc, char **argv)
{
    int runs, json = 0;
    /* -w N, -p and -d are ours; the rest is twocores_init's. */
    int n = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-w") && i + 1 < argc)
            work_cycles = atol(argv[++i]);
        else if (!strcmp(argv[i], "-p"))
            prefetch = 1;
        else if (!strcmp(argv[i], "-d"))
            demote_after = 1;
        else
            argv[n++] = argv[i];
    }
    int rc = twocores_init("pairline", n, argv, &runs, &json,
                           "[-i ITER] [-r RUNS] [-c A,B] [-w CYCLES] [-p] [-d] [--json]", 2, 77);
    if (rc)
        return rc;
    double plain, paused;
    double best = best_of_styles(runs, run, &plain, &paused);
    twocores_report("pairline", "pair-box", json, best, plain, paused);
    return 0;
}
