/*
 * Every bad argument of the datatype functions under MPI_ERRORS_RETURN,
 * checking the returned error class; output arguments stay untouched.
 * With the argument "fatal", one bad call under the default handler (the
 * job ends with MPI_ERR_COUNT and the message).
 */
#include <stdio.h>

#include "dt_common.h"

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

static void test_errors(void)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, freed, uncommitted, out = MPI_DATATYPE_NULL;
    const MPI_Datatype bad[] = {MPI_DATATYPE_NULL, MPI_COMM_WORLD, 0x4c000000, 0x4c000041, 12345};
    int one[1] = {1}, neg[2] = {1, -1}, zero[2] = {0, 0};
    MPI_Aint aone[1] = {0}, az[2] = {0, 8};

    MPI_Type_contiguous(2, MPI_INT, &freed);
    MPI_Type_free(&freed);
    MPI_Type_contiguous(2, MPI_INT, &t);
    freed = t; /* a stale copy of a freed handle */
    MPI_Type_free(&t);
    MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted);

    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        EXPECT(MPI_ERR_TYPE, MPI_Type_contiguous(1, bad[k], &out));
        EXPECT(MPI_ERR_TYPE, MPI_Type_vector(1, 1, 1, bad[k], &out));
        int s;
        EXPECT(MPI_ERR_TYPE, MPI_Type_size(bad[k], &s));
    }
    CHECK_EQ(out, MPI_DATATYPE_NULL);

    /* Constructors. */
    EXPECT(MPI_ERR_COUNT, MPI_Type_contiguous(-1, MPI_INT, &out));
    EXPECT(MPI_ERR_TYPE, MPI_Type_contiguous(1, freed, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_contiguous(1, MPI_INT, NULL));
    EXPECT(MPI_ERR_COUNT, MPI_Type_vector(-1, 1, 1, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_vector(1, -1, 1, MPI_INT, &out));
    EXPECT(MPI_ERR_TYPE, MPI_Type_vector(1, 1, 1, freed, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_vector(1, 1, 1, MPI_INT, NULL));
    EXPECT(MPI_ERR_COUNT, MPI_Type_create_hvector(-2, 1, 8, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_hvector(1, -1, 8, MPI_INT, &out));
    EXPECT(MPI_ERR_TYPE, MPI_Type_create_hvector(1, 1, 8, MPI_DATATYPE_NULL, &out));
    EXPECT(MPI_ERR_COUNT, MPI_Type_indexed(-1, one, one, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_indexed(1, NULL, one, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_indexed(1, one, NULL, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_indexed(2, neg, zero, MPI_INT, &out));
    EXPECT(MPI_ERR_TYPE, MPI_Type_indexed(1, one, one, freed, &out));
    EXPECT(MPI_ERR_COUNT, MPI_Type_create_hindexed(-1, one, aone, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_hindexed(1, NULL, aone, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_hindexed(1, one, NULL, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_hindexed(2, neg, az, MPI_INT, &out));
    EXPECT(MPI_ERR_TYPE, MPI_Type_create_hindexed(1, one, aone, MPI_DATATYPE_NULL, &out));
    EXPECT(MPI_ERR_COUNT, MPI_Type_create_indexed_block(-1, 1, one, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_indexed_block(1, -1, one, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_indexed_block(1, 1, NULL, MPI_INT, &out));
    EXPECT(MPI_ERR_TYPE, MPI_Type_create_indexed_block(1, 1, one, freed, &out));
    EXPECT(MPI_ERR_COUNT, MPI_Type_create_hindexed_block(-1, 1, aone, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_hindexed_block(1, -1, aone, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_hindexed_block(1, 1, NULL, MPI_INT, &out));
    EXPECT(MPI_ERR_TYPE, MPI_Type_create_hindexed_block(1, 1, aone, freed, &out));
    MPI_Datatype st[2] = {MPI_INT, MPI_DATATYPE_NULL}, st_ok[2] = {MPI_INT, MPI_DOUBLE};
    EXPECT(MPI_ERR_COUNT, MPI_Type_create_struct(-1, one, aone, st_ok, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_struct(1, NULL, aone, st_ok, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_struct(1, one, NULL, st_ok, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_struct(1, one, aone, NULL, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_struct(2, neg, az, st_ok, &out));
    int two[2] = {1, 1};
    EXPECT(MPI_ERR_TYPE, MPI_Type_create_struct(2, two, az, st, &out));
    st[1] = freed;
    EXPECT(MPI_ERR_TYPE, MPI_Type_create_struct(2, two, az, st, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_struct(2, two, az, st_ok, NULL));

    int sz[2] = {4, 5}, sub[2] = {2, 3}, start[2] = {1, 2};
    int bsz[2] = {4, 0}, bsub[2] = {5, 3}, bstart[2] = {3, 2}, nsub[2] = {-1, 3};
    EXPECT(MPI_ERR_DIMS, MPI_Type_create_subarray(0, sz, sub, start, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_subarray(2, NULL, sub, start, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_subarray(2, sz, NULL, start, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_subarray(2, sz, sub, NULL, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_subarray(2, bsz, sub, start, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_subarray(2, sz, bsub, start, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_subarray(2, sz, nsub, start, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_subarray(2, sz, sub, bstart, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_subarray(2, sz, sub, start, 3, MPI_INT, &out));
    EXPECT(MPI_ERR_TYPE, MPI_Type_create_subarray(2, sz, sub, start, MPI_ORDER_C, freed, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_subarray(2, sz, sub, start, MPI_ORDER_C, MPI_INT, NULL));

    int gs[2] = {8, 9}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 3};
    int bdist[2] = {MPI_DISTRIBUTE_BLOCK, 7}, bdargs[2] = {0, 2}, smalld[2] = {3, 2};
    int bgs[2] = {8, -1};
    EXPECT(MPI_SUCCESS,
           MPI_Type_create_darray(6, 5, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &t));
    MPI_Type_free(&t);
    EXPECT(MPI_ERR_ARG,
           MPI_Type_create_darray(0, 0, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG,
           MPI_Type_create_darray(6, 6, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG,
           MPI_Type_create_darray(6, -1, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG,
           MPI_Type_create_darray(7, 0, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_DIMS,
           MPI_Type_create_darray(6, 0, 0, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG,
           MPI_Type_create_darray(6, 0, 2, bgs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG,
           MPI_Type_create_darray(6, 0, 2, gs, bdist, dargs, ps, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG,
           MPI_Type_create_darray(6, 0, 2, gs, dist, bdargs, ps, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG,
           MPI_Type_create_darray(6, 0, 2, gs, dist, smalld, ps, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_darray(6, 0, 2, gs, dist, dargs, ps, 0, MPI_INT, &out));
    EXPECT(MPI_ERR_ARG,
           MPI_Type_create_darray(6, 0, 2, NULL, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &out));
    EXPECT(MPI_ERR_TYPE,
           MPI_Type_create_darray(6, 0, 2, gs, dist, dargs, ps, MPI_ORDER_C, freed, &out));

    EXPECT(MPI_ERR_TYPE, MPI_Type_create_resized(freed, 0, 8, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_create_resized(MPI_INT, 0, 8, NULL));
    EXPECT(MPI_ERR_TYPE, MPI_Type_dup(MPI_DATATYPE_NULL, &out));
    EXPECT(MPI_ERR_TYPE, MPI_Type_dup(freed, &out));
    EXPECT(MPI_ERR_ARG, MPI_Type_dup(MPI_INT, NULL));
    CHECK_EQ(out, MPI_DATATYPE_NULL);

    /* Commit and free. */
    MPI_Datatype h = MPI_DATATYPE_NULL;
    EXPECT(MPI_ERR_ARG, MPI_Type_commit(NULL));
    EXPECT(MPI_ERR_TYPE, MPI_Type_commit(&h));
    h = freed;
    EXPECT(MPI_ERR_TYPE, MPI_Type_commit(&h));
    EXPECT(MPI_ERR_ARG, MPI_Type_free(NULL));
    h = MPI_INT;
    EXPECT(MPI_ERR_TYPE, MPI_Type_free(&h));
    CHECK_EQ(h, MPI_INT);
    h = MPI_DOUBLE_INT;
    EXPECT(MPI_ERR_TYPE, MPI_Type_free(&h));
    h = freed;
    EXPECT(MPI_ERR_TYPE, MPI_Type_free(&h));
    h = MPI_DATATYPE_NULL;
    EXPECT(MPI_ERR_TYPE, MPI_Type_free(&h));

    /* Queries. */
    int i;
    MPI_Aint a, b;
    MPI_Count c, d;
    EXPECT(MPI_ERR_ARG, MPI_Type_size(MPI_INT, NULL));
    EXPECT(MPI_ERR_ARG, MPI_Type_size_x(MPI_INT, NULL));
    EXPECT(MPI_ERR_TYPE, MPI_Type_size_x(freed, &c));
    EXPECT(MPI_ERR_ARG, MPI_Type_get_extent(MPI_INT, NULL, &b));
    EXPECT(MPI_ERR_ARG, MPI_Type_get_extent(MPI_INT, &a, NULL));
    EXPECT(MPI_ERR_TYPE, MPI_Type_get_extent(freed, &a, &b));
    EXPECT(MPI_ERR_ARG, MPI_Type_get_extent_x(MPI_INT, NULL, &d));
    EXPECT(MPI_ERR_TYPE, MPI_Type_get_extent_x(MPI_DATATYPE_NULL, &c, &d));
    EXPECT(MPI_ERR_ARG, MPI_Type_get_true_extent(MPI_INT, &a, NULL));
    EXPECT(MPI_ERR_TYPE, MPI_Type_get_true_extent(freed, &a, &b));
    EXPECT(MPI_ERR_ARG, MPI_Type_get_true_extent_x(MPI_INT, NULL, &d));
    EXPECT(MPI_ERR_TYPE, MPI_Type_get_true_extent_x(freed, &c, &d));
    EXPECT(MPI_ERR_ARG, MPI_Get_address(&i, NULL));
    /* Uncommitted types may be queried. */
    EXPECT(MPI_SUCCESS, MPI_Type_size(uncommitted, &i));

    /* Pack, Unpack, Pack_size. */
    char buf[64];
    int src[8] = {0}, pos = 0;
    EXPECT(MPI_ERR_COUNT, MPI_Pack(src, -1, MPI_INT, buf, 64, &pos, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TYPE, MPI_Pack(src, 1, uncommitted, buf, 64, &pos, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TYPE, MPI_Pack(src, 1, freed, buf, 64, &pos, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TYPE, MPI_Pack(src, 1, MPI_DATATYPE_NULL, buf, 64, &pos, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_COMM, MPI_Pack(src, 1, MPI_INT, buf, 64, &pos, MPI_COMM_NULL));
    EXPECT(MPI_ERR_ARG, MPI_Pack(src, 1, MPI_INT, buf, 64, NULL, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_ARG, MPI_Pack(src, 1, MPI_INT, buf, -1, &pos, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TRUNCATE, MPI_Pack(src, 8, MPI_INT, buf, 16, &pos, MPI_COMM_WORLD));
    pos = 60;
    EXPECT(MPI_ERR_TRUNCATE, MPI_Pack(src, 2, MPI_INT, buf, 64, &pos, MPI_COMM_WORLD));
    CHECK_EQ(pos, 60);
    pos = 65;
    EXPECT(MPI_ERR_ARG, MPI_Pack(src, 1, MPI_INT, buf, 64, &pos, MPI_COMM_WORLD));
    pos = 0;
    EXPECT(MPI_ERR_COUNT, MPI_Unpack(buf, 64, &pos, src, -1, MPI_INT, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TYPE, MPI_Unpack(buf, 64, &pos, src, 1, uncommitted, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TYPE, MPI_Unpack(buf, 64, &pos, src, 1, freed, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_COMM, MPI_Unpack(buf, 64, &pos, src, 1, MPI_INT, 77));
    EXPECT(MPI_ERR_ARG, MPI_Unpack(buf, 64, NULL, src, 1, MPI_INT, MPI_COMM_WORLD));
    EXPECT(MPI_ERR_TRUNCATE, MPI_Unpack(buf, 12, &pos, src, 4, MPI_INT, MPI_COMM_WORLD));
    CHECK_EQ(pos, 0);
    EXPECT(MPI_ERR_COUNT, MPI_Pack_size(-1, MPI_INT, MPI_COMM_WORLD, &i));
    EXPECT(MPI_ERR_TYPE, MPI_Pack_size(1, freed, MPI_COMM_WORLD, &i));
    EXPECT(MPI_ERR_TYPE, MPI_Pack_size(1, uncommitted, MPI_COMM_WORLD, &i));
    EXPECT(MPI_ERR_COMM, MPI_Pack_size(1, MPI_INT, MPI_COMM_NULL, &i));
    EXPECT(MPI_ERR_ARG, MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, NULL));
    EXPECT(MPI_ERR_ARG, MPI_Pack_size(1 << 30, MPI_DOUBLE, MPI_COMM_WORLD, &i));

    /* Envelope and contents. */
    int ni, na, nd, comb, ints[4];
    MPI_Aint aints[4];
    MPI_Datatype types[4];
    EXPECT(MPI_ERR_TYPE, MPI_Type_get_envelope(freed, &ni, &na, &nd, &comb));
    EXPECT(MPI_ERR_ARG, MPI_Type_get_envelope(MPI_INT, NULL, &na, &nd, &comb));
    EXPECT(MPI_ERR_ARG, MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, NULL));
    EXPECT(MPI_ERR_ARG, MPI_Type_get_contents(MPI_INT, 4, 4, 4, ints, aints, types));
    EXPECT(MPI_ERR_TYPE, MPI_Type_get_contents(freed, 4, 4, 4, ints, aints, types));
    EXPECT(MPI_ERR_ARG, MPI_Type_get_contents(uncommitted, 2, 4, 4, ints, aints, types));
    EXPECT(MPI_ERR_ARG, MPI_Type_get_contents(uncommitted, 3, 4, 0, ints, aints, types));
    EXPECT(MPI_ERR_ARG, MPI_Type_get_contents(uncommitted, 3, 0, 1, NULL, aints, types));
    EXPECT(MPI_SUCCESS, MPI_Type_get_contents(uncommitted, 3, 0, 1, ints, NULL, types));

    /* Names. */
    char name[MPI_MAX_OBJECT_NAME];
    EXPECT(MPI_ERR_ARG, MPI_Type_set_name(uncommitted, NULL));
    EXPECT(MPI_ERR_TYPE, MPI_Type_set_name(freed, "x"));
    EXPECT(MPI_ERR_ARG, MPI_Type_get_name(MPI_INT, NULL, &i));
    EXPECT(MPI_ERR_ARG, MPI_Type_get_name(MPI_INT, name, NULL));
    EXPECT(MPI_ERR_TYPE, MPI_Type_get_name(MPI_DATATYPE_NULL, name, &i));

    /* Counts of a status. */
    MPI_Status s;
    memset(&s, 0, sizeof s);
    EXPECT(MPI_ERR_ARG, MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &i));
    EXPECT(MPI_ERR_ARG, MPI_Get_count(NULL, MPI_INT, &i));
    EXPECT(MPI_ERR_ARG, MPI_Get_count(&s, MPI_INT, NULL));
    EXPECT(MPI_ERR_TYPE, MPI_Get_count(&s, freed, &i));
    EXPECT(MPI_ERR_ARG, MPI_Get_elements(MPI_STATUS_IGNORE, MPI_INT, &i));
    EXPECT(MPI_ERR_TYPE, MPI_Get_elements(&s, MPI_DATATYPE_NULL, &i));
    EXPECT(MPI_ERR_ARG, MPI_Get_elements(&s, MPI_INT, NULL));
    EXPECT(MPI_ERR_ARG, MPI_Get_elements_x(MPI_STATUS_IGNORE, MPI_INT, &c));
    EXPECT(MPI_ERR_TYPE, MPI_Get_elements_x(&s, freed, &c));
    EXPECT(MPI_ERR_ARG, MPI_Get_elements_x(&s, MPI_INT, NULL));

    /* The error string names the class. */
    char str[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(MPI_Type_free(&h), str, &len);
    CHECK(strstr(str, "MPI_ERR_TYPE") != NULL);

    MPI_Type_free(&uncommitted);
    EXPECT(MPI_ERR_TYPE, MPI_Type_size(uncommitted, &i));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
        MPI_Datatype t;
        if (rank == nranks - 1)
            MPI_Type_vector(-1, 1, 1, MPI_INT, &t);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_errors();
    int rc = check_summary();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && rc == 0)
        printf("dt_errors: %d ranks ok\n", nranks);
    MPI_Finalize();
    return rc;
}
