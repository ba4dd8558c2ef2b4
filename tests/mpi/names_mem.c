/*
 * MPI_Alloc_mem / MPI_Free_mem (aligned, writable, MPI_INFO_NULL or an info
 * object, size 0, MPI_ERR_NO_MEM for a size no machine has under
 * MPI_ERRORS_RETURN, the other argument errors), MPI_Pcontrol at every
 * level, MPI_Get_library_version's text. With argument "fatal" the huge
 * allocation runs under the default handler, which ends the job with
 * MPI_ERR_NO_MEM.
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const MPI_Aint huge = (MPI_Aint)1 << 60;
    if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
        void *p;
        if (rank == 1)
            MPI_Alloc_mem(huge, MPI_INFO_NULL, &p);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }

    /* Sizes from 0 to 1 MiB, with and without info; every byte writable. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    const MPI_Aint sizes[] = {0, 1, 7, 64, 4096, 1 << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        char *p = NULL;
        CHECK_EQ(MPI_Alloc_mem(sizes[k], k % 2 ? info : MPI_INFO_NULL, &p), MPI_SUCCESS);
        CHECK(p != NULL);
        CHECK_EQ((uintptr_t)p % 16, 0);
        memset(p, rank, (size_t)sizes[k]);
        CHECK_EQ(MPI_Free_mem(p), MPI_SUCCESS);
    }
    /* Memory from MPI_Alloc_mem used as a message buffer. */
    int *buf;
    MPI_Alloc_mem(size * (MPI_Aint)sizeof(int), MPI_INFO_NULL, &buf);
    MPI_Allgather(&rank, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        CHECK_EQ(buf[r], r);
    MPI_Free_mem(buf);

    /* Errors under MPI_ERRORS_RETURN. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    void *p = &p;
    CHECK_EQ(MPI_Alloc_mem(huge, MPI_INFO_NULL, &p), MPI_ERR_NO_MEM);
    CHECK(p == &p); /* not set on failure */
    int cls;
    MPI_Error_class(MPI_ERR_NO_MEM, &cls);
    CHECK_EQ(cls, MPI_ERR_NO_MEM);
    CHECK_EQ(MPI_Alloc_mem(-1, MPI_INFO_NULL, &p), MPI_ERR_ARG);
    CHECK_EQ(MPI_Alloc_mem(8, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Alloc_mem(8, (MPI_Info)12345, &p), MPI_ERR_INFO);
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* MPI_Pcontrol: any level, extra arguments ignored. */
    CHECK_EQ(MPI_Pcontrol(0), MPI_SUCCESS);
    CHECK_EQ(MPI_Pcontrol(1), MPI_SUCCESS);
    CHECK_EQ(MPI_Pcontrol(2, "phase", 3), MPI_SUCCESS);
    CHECK_EQ(MPI_Pcontrol(-1), MPI_SUCCESS);

    /* The library version names Loom and its version. */
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    CHECK_EQ(MPI_Get_library_version(v, &len), MPI_SUCCESS);
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (size_t)len == strlen(v));
    CHECK(strncmp(v, "Loom ", 5) == 0 && strstr(v, LOOM_VERSION_STRING));

    int failed = check_summary(), any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("names_mem: %d ranks ok\n", size);
    MPI_Finalize();
    return failed;
}
