/* Per-rank globals: every rank sees pristine initial values of globals,
 * statics, function-local statics and thread-locals, and its own copy of
 * each, also while other ranks on the same worker change theirs. Also a
 * 4 MiB array on the rank's stack. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

int global_counter = 42;
int global_bss;
static int static_counter = 7;
__thread int tls_counter = 5;
static char big_static[1 << 16];

static int bump_local_static(void)
{
    static int local = 100;
    return ++local;
}

static unsigned stack_array_sum(int rank)
{
    unsigned char a[4 << 20];
    memset(a, rank & 0xff, sizeof a);
    unsigned sum = 0;
    for (size_t i = 0; i < sizeof a; i += 4096)
        sum += a[i];
    return sum;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Initial values are the program's, not another rank's. */
    CHECK_EQ(global_counter, 42);
    CHECK_EQ(global_bss, 0);
    CHECK_EQ(static_counter, 7);
    CHECK_EQ(tls_counter, 5);
    CHECK_EQ(big_static[12345], 0);

    global_counter += rank;
    global_bss = rank;
    static_counter = rank * 3;
    tls_counter = rank * 5;
    big_static[12345] = (char)(rank % 100 + 1);
    CHECK_EQ(bump_local_static(), 101);

    /* Let every other rank write its values, then check ours survived. */
    for (int k = 0; k < 3; k++)
        MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(global_counter, 42 + rank);
    CHECK_EQ(global_bss, rank);
    CHECK_EQ(static_counter, rank * 3);
    CHECK_EQ(tls_counter, rank * 5);
    CHECK_EQ(big_static[12345], rank % 100 + 1);
    CHECK_EQ(bump_local_static(), 102);
    CHECK_EQ(stack_array_sum(rank), (unsigned)(rank & 0xff) * ((4u << 20) / 4096));

    MPI_Finalize();
    if (rank == 0 && check_failures_ == 0)
        printf("globals: %d ranks ok\n", size);
    return check_summary();
}
