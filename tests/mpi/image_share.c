/*
 * What a rank's copy of the program shares and what it owns (issue 18):
 *  - every rank's text is backed by one file (the same device and inode in
 *    /proc/self/maps), while its globals lie at its own addresses;
 *  - a large initialized array that ranks only read is in memory once, not
 *    once per rank (the process's Pss, in which a page mapped by n ranks
 *    counts 1/n, grows by less than one copy per rank);
 *  - each rank costs few mappings (the maximum is checked and printed);
 *  - the constructors ran once in each rank, in order, with the process's
 *    argc and argv, as dlopen runs them (mpiexec runs them itself once the
 *    shared text is mapped);
 *  - built with -DWITH_IFUNC, an IFUNC symbol (a resolver that runs while the
 *    program loads) works: such a program gets a whole copy per rank.
 * Usage: image_share [MAX_MAPS_PER_RANK]; prints its figures on one line.
 * -DBIG_MIB=N sets the array's size (default 8 MiB).
 */
#include <mpi.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

#ifndef BIG_MIB
#define BIG_MIB 8 /* the array's size */
#endif
#define BIG_INTS (BIG_MIB << 18)

int big[BIG_INTS] = {1, 2, 3};
int mine = 17;

static int ctor_calls, ctor_order[2], ctor_argc;
static char **ctor_argv, **ctor_envp;

__attribute__((constructor(101))) static void ctor_first(int argc, char **argv, char **envp)
{
    ctor_order[ctor_calls++] = 1;
    ctor_argc = argc;
    ctor_argv = argv;
    ctor_envp = envp;
}

__attribute__((constructor(102))) static void ctor_second(void)
{
    ctor_order[ctor_calls++ & 1] = 2;
}

#if defined(WITH_IFUNC)
static int answer_impl(void)
{
    return 42;
}
static int (*resolve_answer(void))(void)
{
    return answer_impl;
}
int answer(void) __attribute__((ifunc("resolve_answer")));
#endif

/* The process's argv[0], from /proc/self/cmdline. */
static void process_argv0(char *buf, size_t len)
{
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
}

/* Device and inode backing the mapping that holds addr (0 if none). */
static unsigned long long backing_of(const void *addr, int *maps_p)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 0;
    char line[512];
    unsigned long long id = 0;
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi, off, ino;
        unsigned maj, min;
        n++;
        if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu", &lo, &hi, &off, &maj, &min, &ino) == 6 &&
            (unsigned long)addr >= lo && (unsigned long)addr < hi)
            id = ((unsigned long long)maj << 52) ^ ((unsigned long long)min << 32) ^ ino;
    }
    fclose(f);
    *maps_p = n;
    return id;
}

static long pss_kib(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Pss: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long max_maps_per_rank = argc > 1 ? atol(argv[1]) : 0;

    char argv0[4096];
    process_argv0(argv0, sizeof argv0);
    CHECK_EQ(ctor_calls, 2);
    CHECK_EQ(ctor_order[0], 1);
    CHECK_EQ(ctor_order[1], 2);
    CHECK(ctor_argc >= 1);
    CHECK(ctor_argv && ctor_argv[0] && strcmp(ctor_argv[0], argv0) == 0);
    CHECK(ctor_envp != NULL);
#if defined(WITH_IFUNC)
    CHECK_EQ(answer(), 42);
#endif

    /* Each rank reads the whole array, then they compare. */
    long sum = 0;
    for (int i = 0; i < BIG_INTS; i += 1024)
        sum += big[i];
    CHECK_EQ(sum, 1);
    CHECK_EQ(mine, 17);
    mine = rank;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(mine, rank);

    /* Ranks 0, 1 and the last read their maps (reading them is O(ranks)). */
    int maps = 0;
    bool looks = rank <= 1 || rank == size - 1;
    unsigned long long text = looks ? backing_of((const void *)main, &maps) : 0;
    if (looks)
        CHECK(text != 0);
    /* min and max of the text's backing over them: equal when shared */
    unsigned long long lo = looks ? text : ULLONG_MAX, hi = text, out[2];
    MPI_Allreduce(&lo, &out[0], 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&hi, &out[1], 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    CHECK(out[0] == out[1]);
    unsigned long long addr = (unsigned long long)(unsigned long)&mine, amin, amax;
    MPI_Allreduce(&addr, &amin, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&addr, &amax, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (size > 1)
        CHECK(amin != amax);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long pss = pss_kib();
        long per_rank = (long)(maps / size);
        printf("image_share: %d ranks, %d mappings (%.1f per rank), pss %ld MiB\n", size, maps,
               (double)maps / size, pss >> 10);
        if (max_maps_per_rank > 0)
            CHECK(per_rank <= max_maps_per_rank);
        /* One copy of the array plus 2 MiB per rank at most, where a copy
         * per rank would be BIG_MIB each. */
        CHECK(pss < BIG_MIB * 1024 + 64 * 1024 + size * 2048L);
    }
    int failed = check_summary();
    MPI_Finalize();
    if (!failed && rank == 0)
        printf("image_share: %d ranks ok\n", size);
    return failed;
}
