/*
 * Fixes found with MPICH's test suite (issue 20):
 *  - MPI_Group_incl of 0 ranks (ranks may be NULL) is MPI_GROUP_EMPTY, and
 *    MPI_Group_excl of 0 ranks the whole group;
 *  - MPI_LASTUSEDCODE is at least MPI_ERR_LASTCODE, and a class added by
 *    MPI_Add_error_class lies above MPI_ERR_LASTCODE and becomes it;
 *  - MPI_Finalize first deletes the attributes on MPI_COMM_SELF, running
 *    their delete callbacks newest first while MPI still works (MPI-2.2).
 * With the argument "fatal", rank 0 raises its new class on MPI_COMM_WORLD
 * under MPI_ERRORS_ARE_FATAL: the job must end with a non-zero status.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

static int rank, order[8], ndeleted, finalized_in_callback = -1;

static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)keyval;
    (void)extra;
    CHECK(comm == MPI_COMM_SELF);
    /* MPI still works: the callbacks run first in MPI_Finalize. */
    MPI_Finalized(&finalized_in_callback);
    int r = -1;
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &r) == MPI_SUCCESS && r == rank);
    if (ndeleted < 8)
        order[ndeleted] = (int)(long)val;
    ndeleted++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    CHECK(MPI_Group_incl(world, 0, NULL, &g) == MPI_SUCCESS);
    CHECK(g == MPI_GROUP_EMPTY);
    int gsize = -1, one = 0;
    MPI_Group_size(g, &gsize);
    CHECK(gsize == 0);
    CHECK(MPI_Group_incl(world, 0, &one, &g) == MPI_SUCCESS && g == MPI_GROUP_EMPTY);
    CHECK(MPI_Group_excl(world, 0, NULL, &g) == MPI_SUCCESS);
    MPI_Group_size(g, &gsize);
    CHECK(gsize == size);
    int cmp;
    MPI_Group_compare(g, world, &cmp);
    CHECK(cmp == MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_free(&world);

    int *last, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
    CHECK(flag && *last >= MPI_ERR_LASTCODE);
    int cls;
    CHECK(MPI_Add_error_class(&cls) == MPI_SUCCESS);
    CHECK(cls > MPI_ERR_LASTCODE);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
    CHECK(flag && *last == cls);
    int code;
    CHECK(MPI_Add_error_code(cls, &code) == MPI_SUCCESS && code > cls);
    int back = -1;
    MPI_Error_class(code, &back);
    CHECK(back == cls);
    if (argc > 1 && strcmp(argv[1], "fatal") == 0 && rank == 0)
        MPI_Comm_call_errhandler(MPI_COMM_WORLD, cls);

    int k[3];
    for (int i = 0; i < 3; i++) {
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &k[i], NULL);
        MPI_Comm_set_attr(MPI_COMM_SELF, k[i], (void *)(long)(i + 1));
    }
    /* Set again: the callback deletes the old value now. */
    MPI_Comm_set_attr(MPI_COMM_SELF, k[1], (void *)(long)22);
    CHECK(ndeleted == 1 && order[0] == 2);
    ndeleted = 0;
    int failed = check_failures_ != 0, any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    MPI_Finalize();
    /* Newest first: 3, then 22 (the replaced 2 keeps its place), then 1. */
    CHECK(ndeleted == 3);
    CHECK(order[0] == 3 && order[1] == 22 && order[2] == 1);
    CHECK(finalized_in_callback == 0);
    if (check_failures_ == 0 && !any)
        printf("comm_finalize: rank %d of %d ok\n", rank, size);
    return check_summary();
}
