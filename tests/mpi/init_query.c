/* MPI_Init_thread and the query functions, their error cases under
 * MPI_ERRORS_RETURN, and the communicators of this stage. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

int main(int argc, char **argv)
{
    int flag = -1, provided = -1, rank, size, len;
    CHECK_EQ(MPI_Initialized(&flag), MPI_SUCCESS);
    CHECK_EQ(flag, 0);
    CHECK_EQ(MPI_Finalized(&flag), MPI_SUCCESS);
    CHECK_EQ(flag, 0);
    CHECK_EQ(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
    CHECK_EQ(provided, MPI_THREAD_FUNNELED);
    CHECK_EQ(MPI_Query_thread(&provided), MPI_SUCCESS);
    CHECK_EQ(provided, MPI_THREAD_FUNNELED);
    CHECK_EQ(MPI_Initialized(&flag), MPI_SUCCESS);
    CHECK_EQ(flag, 1);
    CHECK_EQ(MPI_Is_thread_main(&flag), MPI_SUCCESS);
    CHECK_EQ(flag, 1);

    CHECK_EQ(MPI_Comm_rank(MPI_COMM_WORLD, &rank), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_size(MPI_COMM_WORLD, &size), MPI_SUCCESS);
    CHECK(rank >= 0 && rank < size);
    int r2 = -1, s2 = -1;
    CHECK_EQ(MPI_Comm_rank(MPI_COMM_SELF, &r2), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_size(MPI_COMM_SELF, &s2), MPI_SUCCESS);
    CHECK_EQ(r2, 0);
    CHECK_EQ(s2, 1);

    int v = 0, sv = -1;
    CHECK_EQ(MPI_Get_version(&v, &sv), MPI_SUCCESS);
    CHECK_EQ(v, 3);
    CHECK_EQ(sv, 1);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    CHECK_EQ(MPI_Get_library_version(lib, &len), MPI_SUCCESS);
    CHECK(strncmp(lib, "Loom", 4) == 0 && len == (int)strlen(lib));
    char host[MPI_MAX_PROCESSOR_NAME];
    CHECK_EQ(MPI_Get_processor_name(host, &len), MPI_SUCCESS);
    CHECK(len > 0 && len == (int)strlen(host));
    double t0 = MPI_Wtime(), t1 = MPI_Wtime();
    CHECK(t1 >= t0 && t0 > 0);
    CHECK(MPI_Wtick() > 0 && MPI_Wtick() < 1e-3);

    /* Errors come back with their class once the handler says so. */
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    CHECK_EQ(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh), MPI_SUCCESS);
    CHECK_EQ(eh, MPI_ERRORS_ARE_FATAL);
    CHECK_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh), MPI_SUCCESS);
    CHECK_EQ(eh, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Comm_rank(MPI_COMM_NULL, &r2), MPI_ERR_COMM);
    CHECK_EQ(MPI_Comm_size(0x12345, &s2), MPI_ERR_COMM);
    CHECK_EQ(MPI_Comm_rank(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_EQ(MPI_Init(&argc, &argv), MPI_ERR_OTHER);
    CHECK_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, 0x777), MPI_ERR_ARG);
    int cls = -1;
    CHECK_EQ(MPI_Error_class(MPI_ERR_RANK, &cls), MPI_SUCCESS);
    CHECK_EQ(cls, MPI_ERR_RANK);
    CHECK_EQ(MPI_Error_class(-5, &cls), MPI_ERR_ARG);
    char msg[MPI_MAX_ERROR_STRING];
    CHECK_EQ(MPI_Error_string(MPI_ERR_TRUNCATE, msg, &len), MPI_SUCCESS);
    CHECK(strstr(msg, "MPI_ERR_TRUNCATE") != NULL && len == (int)strlen(msg));

    CHECK_EQ(MPI_Finalize(), MPI_SUCCESS);
    CHECK_EQ(MPI_Finalized(&flag), MPI_SUCCESS);
    CHECK_EQ(flag, 1);
    if (rank == 0 && check_failures_ == 0)
        printf("init_query: %d ranks ok\n", size);
    return check_summary();
}
