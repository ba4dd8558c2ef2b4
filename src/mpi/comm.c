/*
 * Communicators: MPI_COMM_WORLD and MPI_COMM_SELF for now (the full object
 * model comes with point-to-point; see docs/mpi-coverage.md).
 */
#include "mpi/mpi_impl.h"

bool loom_mpi_comm_valid(MPI_Comm comm)
{
    return comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF;
}

int loom_mpi_comm_size(MPI_Comm comm)
{
    return comm == MPI_COMM_SELF ? 1 : loom_job.nranks;
}

int loom_mpi_bad_comm(MPI_Comm comm, const char *fn)
{
    if (comm == MPI_COMM_NULL)
        return loom_mpi_err(comm, MPI_ERR_COMM, fn, "the communicator is MPI_COMM_NULL");
    return loom_mpi_err(comm, MPI_ERR_COMM, fn, "invalid communicator handle 0x%x",
                        (unsigned)comm);
}

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    int rc = loom_mpi_check_init("MPI_Comm_rank");
    if (rc)
        return rc;
    if (!loom_mpi_comm_valid(comm))
        return loom_mpi_bad_comm(comm, "MPI_Comm_rank");
    if (!rank)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_rank", "rank is NULL");
    *rank = comm == MPI_COMM_SELF ? 0 : loom_rank_self()->rank;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_rank);

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    int rc = loom_mpi_check_init("MPI_Comm_size");
    if (rc)
        return rc;
    if (!loom_mpi_comm_valid(comm))
        return loom_mpi_bad_comm(comm, "MPI_Comm_size");
    if (!size)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_size", "size is NULL");
    *size = loom_mpi_comm_size(comm);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_size);
