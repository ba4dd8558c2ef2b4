/* A nonblocking neighbourhood collective whose blocks are longer than the
 * receive blocks, under MPI_ERRORS_ARE_FATAL: MPI_Wait ends the job with
 * the error (tests/topo.cmake checks the message and the status). */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size, rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int dims[1] = {size}, per[1] = {1}, s[4] = {0}, r[4];
    MPI_Comm c;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &c);
    MPI_Request q;
    MPI_Ineighbor_allgather(s, 2, MPI_INT, r, 1, MPI_INT, c, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
