/* Start-up benchmark program: MPI_Init, rank/size, MPI_Finalize.  The
 * driver times `mpiexec -n N hello` from outside (wall clock). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        printf("hello from rank 0 of %d\n", size);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
