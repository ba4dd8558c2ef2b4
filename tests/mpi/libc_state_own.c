/*
 * A program that defines some of the names that Loom's per-rank C library
 * defines (localtime, strtok): it links without a duplicate definition, its
 * own definitions are the ones called, and the library's other members still
 * work (gmtime from the member that defines localtime too). Built with mpicc
 * and as a plain program with -DREFERENCE; libc_compare.sh compares them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef REFERENCE
#include <sys/wait.h>
#include <unistd.h>
#else
#include <mpi.h>
#endif

static int rank;

struct tm *localtime(const time_t *t)
{
    static struct tm mine;
    memset(&mine, 0, sizeof mine);
    mine.tm_year = 42 + (int)(*t % 7);
    return &mine;
}

char *strtok(char *restrict s, const char *restrict delim)
{
    (void)delim;
    return s ? s : "own strtok";
}

static void run(void)
{
    time_t t = 86400 * (rank + 3) + rank;
    struct tm *l = localtime(&t);
    printf("%d: own localtime year %d\n", rank, l->tm_year);
    struct tm *g = gmtime(&t);
    printf("%d: gmtime mday %d, not own localtime's struct %d\n", rank, g->tm_mday, g != l);
    char buf[] = "a,b";
    char *first = strtok(buf, ",");
    printf("%d: %s / %s\n", rank, first, strtok(NULL, ","));
}

#ifdef REFERENCE
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1;
    for (rank = 0; rank < n; rank++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            run();
            exit(0);
        }
        waitpid(pid, NULL, 0);
    }
    return 0;
}
#else
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    run();
    MPI_Finalize();
    return 0;
}
#endif
