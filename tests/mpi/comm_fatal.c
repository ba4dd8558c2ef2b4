/* MPI_Group_incl with rank 5 in a group of 4 under MPI_ERRORS_ARE_FATAL. */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Group g, ng;
    int five = 5;
    MPI_Init(&argc, &argv);
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    MPI_Group_incl(g, 1, &five, &ng);
    MPI_Finalize();
    return 0;
}
