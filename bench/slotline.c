/* Physical limit of a message through a receiver's inbox: two threads
 * pinned to two cores ping-pong through rings of one-cache-line slots (an
 * envelope, 8 bytes of payload and a sequence number written last), as
 * Loom's inbox does for tiny messages but without any MPI work around it.
 * Unlike cacheline.c, where one line bounces and each side writes the line
 * it has just read, here each direction has its own line (the receiver's
 * slot), which is what any protocol with a per-receiver inbox pays.
 * Reports the best one-way time of -r runs (default 5) of -i round trips
 * (default 1000000); -c A,B picks the cores.  Not run by bench/compare;
 * build it by hand: cc -O2 -pthread -o slotline bench/slotline.c */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOTS 64

struct slot {
    _Alignas(64) _Atomic uint64_t seq;
    uint32_t ctx;
    int src, tag;
    uint32_t bytes;
    char data[40];
};

static struct slot ring[2][SLOTS];
static long iters = 1000000;
static int cpu_a = -1, cpu_b = -1;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set))
        fprintf(stderr, "slotline: cannot pin to cpu %d\n", cpu);
}

static void put(int to, uint64_t pos, const char *buf)
{
    struct slot *s = &ring[to][pos % SLOTS];
    s->ctx = 1;
    s->src = !to;
    s->tag = 1;
    s->bytes = 8;
    memcpy(s->data, buf, 8);
    atomic_store_explicit(&s->seq, pos + 1, memory_order_seq_cst);
}

static void get(int me, uint64_t pos, char *buf)
{
    struct slot *s = &ring[me][pos % SLOTS];
    while (atomic_load_explicit(&s->seq, memory_order_acquire) != pos + 1)
        ;
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
    int runs = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-i") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-c") && i + 1 < argc &&
                 sscanf(argv[i + 1], "%d,%d", &cpu_a, &cpu_b) == 2)
            i++;
        else {
            fprintf(stderr, "usage: slotline [-i ITER] [-r RUNS] [-c A,B]\n");
            return 2;
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
            fprintf(stderr, "slotline: needs two cpus\n");
            return 77;
        }
    }
    double best = 1e9;
    for (int r = 0; r < runs; r++) {
        double t = run();
        if (t < best)
            best = t;
    }
    printf("inbox-slot ping-pong cpu %d <-> cpu %d: one-way %.1f ns\n", cpu_a, cpu_b, best * 1e9);
    return 0;
}
