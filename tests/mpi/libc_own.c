/*
 * libc_own: a program that defines some of the names that Loom's per-rank C
 * library also defines (getopt and rand here) links without a duplicate
 * definition and keeps its own, while the names it does not define (optind,
 * getopt_long, srand, random) still come from the library, per rank.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int own_calls;

/* The program's own getopt: 'Z' once, then the end. */
int getopt(int argc, char *const argv[], const char *optstring)
{
    return own_calls++ == 0 ? 'Z' : -1;
}

int rand(void)
{
    return 42;
}

int main(int argc, char **argv)
{
    /* The library's default generator is glibc's seed 1, as srand(1) gives. */
    long unseeded = random();
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ok = 1;
    ok &= getopt(argc, argv, "a") == 'Z';
    ok &= getopt(argc, argv, "a") == -1;
    ok &= rand() == 42;
    MPI_Barrier(MPI_COMM_WORLD);
    srand(1);
    ok &= random() == unseeded;
    char *av[] = {(char *)"prog", (char *)"--long", (char *)"x", NULL};
    static const struct option lo[] = {{"long", no_argument, NULL, 'l'}, {NULL, 0, NULL, 0}};
    optind = 1;
    ok &= getopt_long(3, av, "", lo, NULL) == 'l';
    MPI_Barrier(MPI_COMM_WORLD);
    ok &= optind == 2;
    ok &= getopt_long(3, av, "", lo, NULL) == -1 && optind == 2;
    if (!ok)
        fprintf(stderr, "rank %d: a check failed\n", rank);
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0 && all)
        printf("libc_own: %d ranks ok\n", size);
    MPI_Finalize();
    return all ? 0 : 1;
}
