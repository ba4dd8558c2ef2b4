/*
 * Every bad argument of the MPI_Op functions and MPI_Reduce_local under
 * MPI_ERRORS_RETURN, checking the returned error class; output arguments
 * stay untouched. Another rank's op is refused (its function is in that
 * rank's copy of the program). With the argument "fatal", one bad call under
 * the default handler (the job ends with MPI_ERR_OP and the message).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

static int rank, nranks;

#define EXPECT(cls, call)                                                                          \
    do {                                                                                           \
        int rc_ = (call), c_ = -1;                                                                 \
        MPI_Error_class(rc_, &c_);                                                                 \
        if (c_ != (cls))                                                                           \
            fprintf(stderr, "line %d: %s returned class %d, expected %s\n", __LINE__, #call, c_,   \
                    #cls);                                                                         \
        CHECK_EQ(c_, cls);                                                                         \
    } while (0)

static void add(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void test_errors(void)
{
    int a[4] = {1, 2, 3, 4}, b[4] = {0};
    double d[2] = {1, 2}, e[2] = {0};

    /* Freeing: predefined, null, stale, NULL pointer. */
    MPI_Op op = MPI_SUM;
    EXPECT(MPI_ERR_OP, MPI_Op_free(&op));
    CHECK(op == MPI_SUM);
    op = MPI_MAXLOC;
    EXPECT(MPI_ERR_OP, MPI_Op_free(&op));
    op = MPI_OP_NULL;
    EXPECT(MPI_ERR_OP, MPI_Op_free(&op));
    EXPECT(MPI_ERR_ARG, MPI_Op_free(NULL));
    MPI_Op freed;
    EXPECT(MPI_SUCCESS, MPI_Op_create(add, 1, &freed));
    op = freed;
    EXPECT(MPI_SUCCESS, MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL);
    op = freed;
    EXPECT(MPI_ERR_OP, MPI_Op_free(&op));
    CHECK(op == freed);

    /* Creating and querying. */
    MPI_Op out = MPI_OP_NULL;
    EXPECT(MPI_ERR_ARG, MPI_Op_create(NULL, 1, &out));
    EXPECT(MPI_ERR_ARG, MPI_Op_create(add, 1, NULL));
    CHECK(out == MPI_OP_NULL);
    int commute = -1;
    EXPECT(MPI_ERR_OP, MPI_Op_commutative(MPI_OP_NULL, &commute));
    EXPECT(MPI_ERR_OP, MPI_Op_commutative(freed, &commute));
    EXPECT(MPI_ERR_OP, MPI_Op_commutative(MPI_INT, &commute));
    EXPECT(MPI_ERR_ARG, MPI_Op_commutative(MPI_SUM, NULL));
    CHECK_EQ(commute, -1);

    /* Reduce_local: ops. */
    const MPI_Op bad_ops[] = {MPI_OP_NULL, freed, MPI_COMM_WORLD, 0x58000000, 0x5800000f, 12345};
    for (size_t k = 0; k < sizeof bad_ops / sizeof bad_ops[0]; k++)
        EXPECT(MPI_ERR_OP, MPI_Reduce_local(a, b, 4, MPI_INT, bad_ops[k]));
    EXPECT(MPI_ERR_OP, MPI_Reduce_local(a, b, 2, MPI_2INT, MPI_SUM));
    EXPECT(MPI_ERR_OP, MPI_Reduce_local(d, e, 2, MPI_DOUBLE, MPI_BAND));
    EXPECT(MPI_ERR_OP, MPI_Reduce_local(d, e, 2, MPI_DOUBLE, MPI_LAND));
    EXPECT(MPI_ERR_OP, MPI_Reduce_local(a, b, 4, MPI_INT, MPI_MAXLOC));
    EXPECT(MPI_ERR_OP, MPI_Reduce_local(a, b, 4, MPI_CHAR, MPI_SUM));
    EXPECT(MPI_ERR_OP, MPI_Reduce_local(a, b, 4, MPI_BYTE, MPI_MAX));
    EXPECT(MPI_ERR_OP, MPI_Reduce_local(a, b, 4, MPI_C_BOOL, MPI_SUM));
    EXPECT(MPI_ERR_OP, MPI_Reduce_local(d, e, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX));
    MPI_Datatype mixed;
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    EXPECT(MPI_SUCCESS, MPI_Type_create_struct(2, bl, disp, types, &mixed));
    EXPECT(MPI_SUCCESS, MPI_Type_commit(&mixed));
    EXPECT(MPI_ERR_OP, MPI_Reduce_local(a, b, 1, mixed, MPI_SUM));
    double s1[2] = {1, 2}, s2[2] = {0, 0};
    EXPECT(MPI_SUCCESS, MPI_Reduce_local(s1, s2, 1, mixed, MPI_REPLACE));
    CHECK(s2[1] == 2);
    EXPECT(MPI_SUCCESS, MPI_Type_free(&mixed));

    /* Reduce_local: count, types, buffers. */
    EXPECT(MPI_ERR_COUNT, MPI_Reduce_local(a, b, -1, MPI_INT, MPI_SUM));
    EXPECT(MPI_ERR_TYPE, MPI_Reduce_local(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM));
    MPI_Datatype unc, stale;
    EXPECT(MPI_SUCCESS, MPI_Type_vector(2, 1, 2, MPI_INT, &unc));
    EXPECT(MPI_ERR_TYPE, MPI_Reduce_local(a, b, 1, unc, MPI_SUM));
    EXPECT(MPI_SUCCESS, MPI_Type_free(&unc));
    EXPECT(MPI_SUCCESS, MPI_Type_contiguous(2, MPI_INT, &stale));
    MPI_Datatype keep = stale;
    EXPECT(MPI_SUCCESS, MPI_Type_free(&stale));
    EXPECT(MPI_ERR_TYPE, MPI_Reduce_local(a, b, 1, keep, MPI_SUM));
    EXPECT(MPI_ERR_BUFFER, MPI_Reduce_local(NULL, b, 1, MPI_INT, MPI_SUM));
    EXPECT(MPI_ERR_BUFFER, MPI_Reduce_local(a, NULL, 1, MPI_INT, MPI_SUM));
    EXPECT(MPI_ERR_BUFFER, MPI_Reduce_local(a, a, 4, MPI_INT, MPI_SUM));
    EXPECT(MPI_SUCCESS, MPI_Reduce_local(NULL, NULL, 0, MPI_INT, MPI_SUM));
    CHECK(b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0 && e[0] == 0 && e[1] == 0);
    CHECK(a[0] == 1 && a[3] == 4);
}

/* Rank 1's op, used by rank 0. */
static void test_foreign(void)
{
    if (nranks < 2)
        return;
    MPI_Op op = MPI_OP_NULL;
    if (rank == 1) {
        EXPECT(MPI_SUCCESS, MPI_Op_create(add, 1, &op));
        MPI_Send(&op, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Recv(&op, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int a = 1, b = 2, commute;
        EXPECT(MPI_ERR_OP, MPI_Reduce_local(&a, &b, 1, MPI_INT, op));
        EXPECT(MPI_ERR_OP, MPI_Op_commutative(op, &commute));
        EXPECT(MPI_ERR_OP, MPI_Op_free(&op));
        CHECK_EQ(b, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        EXPECT(MPI_SUCCESS, MPI_Op_free(&op));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
        int a[2] = {1, 2}, b[2] = {3, 4};
        if (rank == nranks - 1)
            MPI_Reduce_local(a, b, 1, MPI_2INT, MPI_SUM);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_errors();
    test_foreign();
    int rc = check_summary();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && rc == 0)
        printf("op_errors: %d ranks ok\n", nranks);
    MPI_Finalize();
    return rc;
}
