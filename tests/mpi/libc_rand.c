/*
 * libc_rand: rand/srand, random/srandom/initstate/setstate and the drand48
 * family give every rank glibc's own sequences, bit for bit, as in a plain
 * process (issue 17). Built twice (libc_seq.h): the reference prints every
 * result, the MPI program checks it in every rank, with barriers between
 * draws so that other ranks draw in between.
 * Covers: rand() unseeded (seed 1) and srand(0) == srand(1), many seeds
 * (large ones, whose arithmetic is signed), every initstate size class
 * (8, 32, 64, 128, 256 bytes and sizes between), refused sizes (errno),
 * the words left in state buffers, the old-state pointers initstate and
 * setstate return, switching between states, the unseeded drand48 family,
 * srand48/seed48/lcong48 (whose a and c erand48/nrand48/jrand48 also use),
 * doubles as hex floats; then a per-rank section seeded by the rank.
 * Usage: libc_rand (reference) | libc_rand REFERENCE_OUTPUT (MPI)
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "libc_seq.h"

/* Buffers for initstate, each larger than the largest size used. */
static char bufs[8][1100] __attribute__((aligned(8)));
static char *default_state;

/* Names a state pointer: NULL, the default table, or one of bufs. */
static const char *which(const char *p)
{
    static char name[32];
    if (!p)
        return "NULL";
    if (p == default_state)
        return "default";
    for (int i = 0; i < 8; i++)
        if (p == bufs[i]) {
            snprintf(name, sizeof name, "buf%d", i);
            return name;
        }
    return "other";
}

/* Prints the words of a state buffer: word 0 (type, rear) and the table. */
static void dump_state(const char *tag, const char *buf, size_t size)
{
    size_t words = size / 4 > 64 ? 64 : size / 4;
    char line[1200];
    size_t o = 0;
    for (size_t i = 0; i < words; i++) {
        int32_t w;
        memcpy(&w, buf + 4 * i, 4);
        o += (size_t)snprintf(line + o, sizeof line - o, " %d", w);
    }
    seq_out("%s state%s", tag, line);
}

static void draws(const char *tag, int n)
{
    for (int i = 0; i < n; i++) {
        long a = random();
        int b = rand();
        seq_out("%s %d: %ld %d", tag, i, a, b);
        if (i % 4 == 3)
            seq_sync();
    }
}

static void rand_battery(void)
{
    /* The first draws of the program: glibc's seed-1 sequence. */
    for (int i = 0; i < 40; i++) {
        seq_out("unseeded rand %d: %d", i, rand());
        seq_sync();
    }
    for (int i = 0; i < 10; i++)
        seq_out("unseeded random %d: %ld", i, random());
    seq_sync();

    static const unsigned seeds[] = {
        0,          1,          2,          3,          42,         12345,
        127773,     16807,      2147483646, 2147483647, 2147483648, 2147483649,
        3000000000, 4294967294, 4294967295, 0xdeadbeef, 0x12345678, 1u << 31 | 127773};
    for (size_t s = 0; s < sizeof seeds / sizeof *seeds; s++) {
        char tag[48];
        snprintf(tag, sizeof tag, "srand(%u)", seeds[s]);
        srand(seeds[s]);
        draws(tag, 12);
        snprintf(tag, sizeof tag, "srandom(%u)", seeds[s]);
        srandom(seeds[s]);
        draws(tag, 4);
        seq_sync();
    }

    /* Every size class, and sizes between; the first initstate returns the default table. */
    static const size_t sizes[] = {8,   9,   16,  31,  32,  33,  40,  63,  64,  65,
                                   100, 127, 128, 129, 200, 255, 256, 257, 300, 1024};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        char *buf = bufs[k % 8];
        memset(buf, 0x5a, sizeof bufs[0]);
        unsigned seed = (unsigned)(k * 2654435761u);
        char *old = initstate(seed, buf, sizes[k]);
        if (!default_state)
            default_state = old;
        seq_out("initstate(%u, buf%zu, %zu) = %s", seed, k % 8, sizes[k], which(old));
        char tag[48];
        snprintf(tag, sizeof tag, "size %zu", sizes[k]);
        draws(tag, 24);
        dump_state(tag, buf, sizes[k]);
        srandom(seed ^ 0x5555);
        draws(tag, 8);
        dump_state(tag, buf, sizes[k]);
        seq_sync();
    }

    /* Refused sizes: NULL, EINVAL, the generator unchanged. */
    for (size_t n = 0; n < 8; n += 3) {
        errno = 0;
        char *old = initstate(7, bufs[7], n);
        int e = errno;
        seq_out("initstate(7, buf7, %zu) = %s errno %s", n, which(old),
                e == EINVAL ? "EINVAL" : "?");
        draws("after refused", 3);
    }

    /* Switching: A (256 B), B (32 B), C (8 B), the default; setstate returns the old one. */
    char *a = bufs[0], *b = bufs[1], *c = bufs[2];
    seq_out("initstate A = %s", which(initstate(11, a, 256)));
    seq_out("initstate B = %s", which(initstate(22, b, 32)));
    seq_out("initstate C = %s", which(initstate(33, c, 8)));
    char *cycle[] = {a, b, c, default_state, b, a, c, a, default_state, c, b};
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof cycle / sizeof *cycle; i++) {
            char *old = setstate(cycle[i]);
            char tag[48];
            snprintf(tag, sizeof tag, "switch %d.%zu to %s", round, i, which(cycle[i]));
            seq_out("%s: old %s", tag, which(old));
            draws(tag, 3);
            if (i == 4)
                srandom((unsigned)(round + 5));
        }
    dump_state("A", a, 256);
    dump_state("B", b, 32);
    dump_state("C", c, 8);
    dump_state("default", default_state, 128);

    /* setstate refuses NULL and a bad type word, and what it leaves behind. */
    /* Through a pointer: setstate is declared nonnull, which UBSan enforces at calls. */
    char *(*volatile setstate_p)(char *) = setstate;
    errno = 0;
    char *old = setstate_p(NULL);
    seq_out("setstate(NULL) = %s errno %s", which(old), errno == EINVAL ? "EINVAL" : "?");
    draws("after setstate(NULL)", 3);
    memcpy(bufs[5], a, 256);
    int32_t bad = -1;
    memcpy(bufs[5], &bad, 4);
    errno = 0;
    old = setstate(bufs[5]);
    seq_out("setstate(bad) = %s errno %s", which(old), errno == EINVAL ? "EINVAL" : "?");
    draws("after setstate(bad)", 3);
    seq_out("back to default: old %s", which(setstate(default_state)));
    draws("default again", 5);
}

static void show48(const char *tag, const unsigned short x[3])
{
    seq_out("%s %04x %04x %04x", tag, x[0], x[1], x[2]);
}

static void draws48(const char *tag, int n)
{
    for (int i = 0; i < n; i++) {
        double d = drand48();
        long l = lrand48();
        long m = mrand48();
        seq_out("%s %d: %a %ld %ld", tag, i, d, l, m);
        if (i % 3 == 2)
            seq_sync();
    }
}

static void xdraws48(const char *tag, unsigned short x[3], int n)
{
    for (int i = 0; i < n; i++) {
        double d = erand48(x);
        long l = nrand48(x);
        long m = jrand48(x);
        seq_out("%s %d: %a %ld %ld", tag, i, d, l, m);
        show48(tag, x);
        if (i % 3 == 2)
            seq_sync();
    }
}

static void drand48_battery(void)
{
    /* Unseeded: X = 0 and the default a, c, for the hidden and a caller's X. */
    unsigned short x0[3] = {0, 0, 0};
    xdraws48("unseeded erand48", x0, 4);
    draws48("unseeded", 12);

    static const long seeds[] = {0,          1,           -1,          42,         0x330e,
                                 0x7fffffff, 0x80000000L, 0xffffffffL, 0x12345678, 0x123456789abL,
                                 -123456789, 1L << 40};
    for (size_t s = 0; s < sizeof seeds / sizeof *seeds; s++) {
        char tag[48];
        snprintf(tag, sizeof tag, "srand48(%ld)", seeds[s]);
        srand48(seeds[s]);
        draws48(tag, 6);
        seq_sync();
    }

    /* seed48 returns its static copy of the old X (the same pointer each time). */
    unsigned short s1[3] = {0x1234, 0xabcd, 0x0042};
    unsigned short *old1 = seed48(s1);
    show48("seed48 old", old1);
    draws48("seed48", 6);
    unsigned short s2[3] = {0xffff, 0xffff, 0xffff};
    unsigned short *old2 = seed48(s2);
    show48("seed48 old", old2);
    seq_out("seed48 same pointer: %d", old1 == old2);
    draws48("seed48 max", 6);
    /* The idiom seed48(seed48(x)): the second call gets the old X back, which is now current. */
    unsigned short s3[3] = {1, 2, 3};
    unsigned short *old3 = seed48(seed48(s3));
    show48("seed48(seed48) old", old3);
    draws48("seed48(seed48)", 4);

    /* lcong48: X, a and c; erand48 & co use the new a and c too. */
    unsigned short p[7] = {0x1111, 0x2222, 0x3333, 0xe66d, 0xdeec, 0x0005, 0x000b};
    for (int k = 0; k < 4; k++) {
        char tag[48];
        snprintf(tag, sizeof tag, "lcong48 %d", k);
        lcong48(p);
        draws48(tag, 5);
        unsigned short x[3] = {(unsigned short)(k * 7), 0x8000, 0xffff};
        xdraws48(tag, x, 3);
        p[3] = (unsigned short)(p[3] * 31 + 17);
        p[4] ^= 0x1357;
        p[5] = (unsigned short)(k * 4099 + 1);
        p[6] = (unsigned short)(k * 0x3fff);
        seq_sync();
    }
    /* srand48 and seed48 reset a and c. */
    srand48(99);
    unsigned short x[3] = {5, 6, 7};
    xdraws48("after srand48", x, 3);
    lcong48(p);
    seed48(s1);
    xdraws48("after seed48", x, 3);
    draws48("after seed48", 3);
}

/* Rank r's own seeds: its section starts from the default state. */
static void rank_section(int r)
{
    seq_section(r);
    setstate(default_state);
    srand((unsigned)r * 7919u + 1);
    draws("rank", 10);
    char *buf = bufs[6];
    static const size_t sizes[] = {8, 32, 64, 128, 256};
    initstate((unsigned)r, buf, sizes[r % 5]);
    draws("rank initstate", 10);
    dump_state("rank", buf, sizes[r % 5]);
    setstate(default_state);
    srand48(r);
    draws48("rank", 10);
    unsigned short s[3] = {(unsigned short)r, (unsigned short)(r * 3), (unsigned short)(r * 5)};
    seed48(s);
    draws48("rank seed48", 5);
    unsigned short p[7] = {(unsigned short)r, 1, 2, (unsigned short)(r + 3), 4, 5, 11};
    lcong48(p);
    unsigned short x[3] = {3, 2, 1};
    xdraws48("rank lcong48", x, 4);
    srand48(0);
}

int main(int argc, char **argv)
{
#ifdef REFERENCE
    (void)argc;
    (void)argv;
    rand_battery();
    drand48_battery();
    for (int r = 0; r < 64; r++)
        rank_section(r);
    return 0;
#else
    MPI_Init(&argc, &argv);
    if (argc < 2) {
        fprintf(stderr, "usage: libc_rand REFERENCE_OUTPUT\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    seq_load(argv[1]);
    rand_battery();
    drand48_battery();
    rank_section(seq_rank);
    return seq_finish("libc_rand");
#endif
}
