/*
 * Argument errors of the collectives under MPI_ERRORS_RETURN (on
 * MPI_COMM_WORLD and MPI_COMM_SELF): invalid roots (MPI_ERR_ROOT), negative
 * counts (MPI_ERR_COUNT), MPI_DATATYPE_NULL and an uncommitted type
 * (MPI_ERR_TYPE), MPI_OP_NULL and ops undefined for the type, such as
 * MPI_SUM on MPI_2INT or MPI_MAXLOC on MPI_INT (MPI_ERR_OP), MPI_COMM_NULL
 * (MPI_ERR_COMM), and MPI_IN_PLACE where the standard does not allow it
 * (MPI_ERR_BUFFER or MPI_ERR_ARG). Every bad argument is bad on all ranks,
 * so every rank gets the error and nobody waits for a partner; after each
 * group of errors a valid collective must still work. Classes are checked
 * with MPI_Error_class.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;

/* Checks that rc is an error of class want (or want2 when not 0). */
static void expect_class(int rc, int want, int want2, const char *what, int line)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (rc == MPI_SUCCESS || (cls != want && (want2 == 0 || cls != want2))) {
        char name[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        if (rc != MPI_SUCCESS)
            MPI_Error_string(rc, name, &len);
        fprintf(stderr,
                "coll_errors: rank %d of %d: line %d: %s returned %d (class %d: %s), expected "
                "class %d%s\n",
                rank, size, line, what, rc, cls, name, want, want2 ? " or its alternative" : "");
        failures++;
    }
}

#define EXPECT(call, cls)     expect_class((call), (cls), 0, #call, __LINE__)
#define EXPECT2(call, c1, c2) expect_class((call), (c1), (c2), #call, __LINE__)

/* Checks that MPICH 4.0 does not do (negative counts of the reductions,
 * MPI_IN_PLACE at non-roots: it goes on with the bad argument and crashes or
 * returns MPI_SUCCESS): skipped when validating with MPICH. Open MPI 4.1
 * does them all, but accepts MPI_SUM on MPI_BYTE (an extension). */
#ifdef MPICH_NUMVERSION
#define NOT_IN_MPICH(x) ((void)0)
#else
#define NOT_IN_MPICH(x) x
#endif

/* A valid collective after errors: the communicator still works. */
static void still_works(MPI_Comm comm, int line)
{
    int csize, v = 1, sum = 0;
    MPI_Comm_size(comm, &csize);
    int rc = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm);
    if (rc != MPI_SUCCESS || sum != csize) {
        fprintf(stderr,
                "coll_errors: rank %d of %d: line %d: MPI_Allreduce after errors: rc %d "
                "sum %d expected %d\n",
                rank, size, line, rc, sum, csize);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    rc = MPI_Barrier(comm);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "coll_errors: rank %d of %d: line %d: MPI_Barrier after errors: rc %d\n",
                rank, size, line, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm w = MPI_COMM_WORLD;

    enum { N = 8 };
    int *sbuf = calloc((size_t)size * N + N, sizeof(int));
    int *rbuf = calloc((size_t)size * N + N, sizeof(int));
    int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    int *bad_counts = malloc(size * sizeof(int));
    MPI_Datatype *types = malloc(size * sizeof(MPI_Datatype));
    for (int r = 0; r < size; r++) {
        counts[r] = 1;
        displs[r] = r;
        bad_counts[r] = -1;
        types[r] = MPI_INT;
    }

    /* Invalid roots: size, a large rank and a negative one. */
    int bad_roots[3] = {size, size + 100, -5};
    for (int k = 0; k < 3; k++) {
        int root = bad_roots[k];
        EXPECT(MPI_Bcast(sbuf, 1, MPI_INT, root, w), MPI_ERR_ROOT);
        EXPECT(MPI_Reduce(sbuf, rbuf, 1, MPI_INT, MPI_SUM, root, w), MPI_ERR_ROOT);
        EXPECT(MPI_Gather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, root, w), MPI_ERR_ROOT);
        EXPECT(MPI_Gatherv(sbuf, 1, MPI_INT, rbuf, counts, displs, MPI_INT, root, w), MPI_ERR_ROOT);
        EXPECT(MPI_Scatter(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, root, w), MPI_ERR_ROOT);
        EXPECT(MPI_Scatterv(sbuf, counts, displs, MPI_INT, rbuf, 1, MPI_INT, root, w),
               MPI_ERR_ROOT);
    }
    still_works(w, __LINE__);

    /* Negative counts. */
    EXPECT(MPI_Bcast(sbuf, -1, MPI_INT, 0, w), MPI_ERR_COUNT);
    NOT_IN_MPICH(EXPECT(MPI_Reduce(sbuf, rbuf, -1, MPI_INT, MPI_SUM, 0, w), MPI_ERR_COUNT));
    NOT_IN_MPICH(EXPECT(MPI_Allreduce(sbuf, rbuf, -1, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT));
    NOT_IN_MPICH(EXPECT(MPI_Scan(sbuf, rbuf, -3, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT));
    NOT_IN_MPICH(EXPECT(MPI_Exscan(sbuf, rbuf, -3, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT));
    EXPECT(MPI_Allgather(sbuf, -1, MPI_INT, rbuf, -1, MPI_INT, w), MPI_ERR_COUNT);
    EXPECT(MPI_Alltoall(sbuf, -1, MPI_INT, rbuf, -1, MPI_INT, w), MPI_ERR_COUNT);
    EXPECT(MPI_Gather(sbuf, -1, MPI_INT, rbuf, -1, MPI_INT, 0, w), MPI_ERR_COUNT);
    EXPECT(MPI_Scatter(sbuf, -1, MPI_INT, rbuf, -1, MPI_INT, 0, w), MPI_ERR_COUNT);
    NOT_IN_MPICH(
        EXPECT(MPI_Reduce_scatter_block(sbuf, rbuf, -2, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT));
    EXPECT(MPI_Reduce_scatter(sbuf, rbuf, bad_counts, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    EXPECT(MPI_Allgatherv(sbuf, -1, MPI_INT, rbuf, bad_counts, displs, MPI_INT, w), MPI_ERR_COUNT);
    EXPECT(MPI_Alltoallv(sbuf, bad_counts, displs, MPI_INT, rbuf, bad_counts, displs, MPI_INT, w),
           MPI_ERR_COUNT);
    NOT_IN_MPICH(EXPECT(MPI_Reduce_local(sbuf, rbuf, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT));
    still_works(w, __LINE__);

    /* MPI_DATATYPE_NULL and an uncommitted type. A reduction may report
     * the null type as MPI_ERR_OP (no op is defined on it; Open MPI does). */
    MPI_Datatype unc;
    MPI_Type_contiguous(2, MPI_INT, &unc);
    EXPECT(MPI_Bcast(sbuf, 1, MPI_DATATYPE_NULL, 0, w), MPI_ERR_TYPE);
    EXPECT(MPI_Bcast(sbuf, 1, unc, 0, w), MPI_ERR_TYPE);
    EXPECT2(MPI_Allreduce(sbuf, rbuf, 1, MPI_DATATYPE_NULL, MPI_SUM, w), MPI_ERR_TYPE, MPI_ERR_OP);
    EXPECT2(MPI_Reduce(sbuf, rbuf, 1, MPI_DATATYPE_NULL, MPI_SUM, 0, w), MPI_ERR_TYPE, MPI_ERR_OP);
    EXPECT(MPI_Allgather(sbuf, 1, MPI_DATATYPE_NULL, rbuf, 1, MPI_DATATYPE_NULL, w), MPI_ERR_TYPE);
    EXPECT(MPI_Alltoall(sbuf, 1, unc, rbuf, 1, unc, w), MPI_ERR_TYPE);
    EXPECT(MPI_Gather(sbuf, 1, MPI_DATATYPE_NULL, rbuf, 1, MPI_DATATYPE_NULL, 0, w), MPI_ERR_TYPE);
    EXPECT2(MPI_Scan(sbuf, rbuf, 1, MPI_DATATYPE_NULL, MPI_SUM, w), MPI_ERR_TYPE, MPI_ERR_OP);
    for (int r = 0; r < size; r++)
        types[r] = MPI_DATATYPE_NULL;
    EXPECT(MPI_Alltoallw(sbuf, counts, displs, types, rbuf, counts, displs, types, w),
           MPI_ERR_TYPE);
    for (int r = 0; r < size; r++)
        types[r] = MPI_INT;
    MPI_Type_free(&unc);
    still_works(w, __LINE__);

    /* Ops: MPI_OP_NULL, and ops not defined for the type. */
    EXPECT(MPI_Allreduce(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, w), MPI_ERR_OP);
    EXPECT(MPI_Reduce(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, 0, w), MPI_ERR_OP);
    EXPECT(MPI_Scan(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, w), MPI_ERR_OP);
    EXPECT(MPI_Reduce_scatter_block(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, w), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(sbuf, rbuf, 1, MPI_2INT, MPI_SUM, w), MPI_ERR_OP);
    EXPECT(MPI_Reduce(sbuf, rbuf, 1, MPI_2INT, MPI_SUM, 0, w), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(sbuf, rbuf, 1, MPI_INT, MPI_MAXLOC, w), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(sbuf, rbuf, 1, MPI_DOUBLE, MPI_BAND, w), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(sbuf, rbuf, 1, MPI_BYTE, MPI_SUM, w), MPI_ERR_OP);
    EXPECT(MPI_Allreduce(sbuf, rbuf, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, w), MPI_ERR_OP);
    EXPECT(MPI_Reduce_local(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
    EXPECT(MPI_Reduce_local(sbuf, rbuf, 1, MPI_2INT, MPI_PROD), MPI_ERR_OP);
    still_works(w, __LINE__);

    /* MPI_COMM_NULL: raised on MPI_COMM_WORLD's (or MPI_COMM_SELF's)
     * handler, both set to return. */
    EXPECT(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Bcast(sbuf, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Allreduce(sbuf, rbuf, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Gather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM);
    still_works(w, __LINE__);

    /* MPI_IN_PLACE where the standard does not allow it, on every rank:
     * Gather with MPI_IN_PLACE as the root's recvbuf and the non-roots'
     * sendbuf; Scatter with it as the root's sendbuf and the non-roots'
     * recvbuf; Allreduce and Allgather with it as recvbuf. */
    for (int root = 0; root<size; root += size> 2 ? size - 1 : 1) {
        if (rank == root)
            EXPECT2(MPI_Gather(sbuf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, root, w), MPI_ERR_BUFFER,
                    MPI_ERR_ARG);
        else
            NOT_IN_MPICH(EXPECT2(MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, rbuf, 1, MPI_INT, root, w),
                                 MPI_ERR_BUFFER, MPI_ERR_ARG));
        if (rank == root)
            EXPECT2(MPI_Scatter(MPI_IN_PLACE, 1, MPI_INT, rbuf, 1, MPI_INT, root, w),
                    MPI_ERR_BUFFER, MPI_ERR_ARG);
        else
            NOT_IN_MPICH(EXPECT2(MPI_Scatter(sbuf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, root, w),
                                 MPI_ERR_BUFFER, MPI_ERR_ARG));
    }
    EXPECT2(MPI_Allreduce(sbuf, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER, MPI_ERR_ARG);
    EXPECT2(MPI_Allgather(sbuf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w), MPI_ERR_BUFFER,
            MPI_ERR_ARG);
    still_works(w, __LINE__);

    /* The same on MPI_COMM_SELF and on a dup of MPI_COMM_WORLD (which
     * inherits MPI_ERRORS_RETURN). */
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm comms[2] = {MPI_COMM_SELF, d};
    for (int k = 0; k < 2; k++) {
        MPI_Comm c = comms[k];
        int csize;
        MPI_Comm_size(c, &csize);
        EXPECT(MPI_Bcast(sbuf, 1, MPI_INT, csize, c), MPI_ERR_ROOT);
        EXPECT(MPI_Reduce(sbuf, rbuf, 1, MPI_INT, MPI_SUM, -2, c), MPI_ERR_ROOT);
        NOT_IN_MPICH(EXPECT(MPI_Allreduce(sbuf, rbuf, -1, MPI_INT, MPI_SUM, c), MPI_ERR_COUNT));
        EXPECT2(MPI_Allreduce(sbuf, rbuf, 1, MPI_DATATYPE_NULL, MPI_SUM, c), MPI_ERR_TYPE,
                MPI_ERR_OP);
        EXPECT(MPI_Allreduce(sbuf, rbuf, 1, MPI_2INT, MPI_SUM, c), MPI_ERR_OP);
        EXPECT(MPI_Allreduce(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, c), MPI_ERR_OP);
        still_works(c, __LINE__);
    }
    MPI_Comm_free(&d);
    EXPECT(MPI_Barrier(d), MPI_ERR_COMM); /* d is MPI_COMM_NULL now */

    still_works(w, __LINE__);
    free(sbuf);
    free(rbuf);
    free(counts);
    free(displs);
    free(bad_counts);
    free(types);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && total == 0)
        printf("coll_errors: %d ranks ok\n", size);
    return failures ? 1 : 0;
}
