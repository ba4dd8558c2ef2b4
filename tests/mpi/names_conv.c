/*
 * Handle conversions (c2f/f2c round trips for every handle kind Loom has,
 * the null handles, requests and messages in flight, the status),
 * MPI_Type_match_size, and MPI_Type_create_f90_integer/real/complex (the
 * kind gfortran's SELECTED_INT_KIND / SELECTED_REAL_KIND gives, envelope
 * and contents, the same handle for the same arguments, use in a
 * reduction), with their error classes.
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

static int rank, size;

static void test_handles(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    const MPI_Comm comms[] = {MPI_COMM_WORLD, MPI_COMM_SELF, MPI_COMM_NULL, dup};
    for (size_t k = 0; k < 4; k++)
        CHECK_EQ(MPI_Comm_f2c(MPI_Comm_c2f(comms[k])), comms[k]);
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
    const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE_COMPLEX, MPI_DATATYPE_NULL, vec};
    for (size_t k = 0; k < 4; k++)
        CHECK_EQ(MPI_Type_f2c(MPI_Type_c2f(types[k])), types[k]);
    MPI_Group g;
    MPI_Comm_group(dup, &g);
    const MPI_Group groups[] = {g, MPI_GROUP_EMPTY, MPI_GROUP_NULL};
    for (size_t k = 0; k < 3; k++)
        CHECK_EQ(MPI_Group_f2c(MPI_Group_c2f(groups[k])), groups[k]);
    MPI_Info info;
    MPI_Info_create(&info);
    const MPI_Info infos[] = {info, MPI_INFO_NULL, MPI_INFO_ENV};
    for (size_t k = 0; k < 3; k++)
        CHECK_EQ(MPI_Info_f2c(MPI_Info_c2f(infos[k])), infos[k]);
    const MPI_Op ops[] = {MPI_SUM, MPI_MAXLOC, MPI_OP_NULL};
    for (size_t k = 0; k < 3; k++)
        CHECK_EQ(MPI_Op_f2c(MPI_Op_c2f(ops[k])), ops[k]);
    const MPI_Errhandler ehs[] = {MPI_ERRORS_RETURN, MPI_ERRORS_ARE_FATAL, MPI_ERRHANDLER_NULL};
    for (size_t k = 0; k < 3; k++)
        CHECK_EQ(MPI_Errhandler_f2c(MPI_Errhandler_c2f(ehs[k])), ehs[k]);
    /* A converted handle is usable: the size of the world through it. */
    int n;
    MPI_Comm_size(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)), &n);
    CHECK_EQ(n, size);
    MPI_Type_free(&vec);
    MPI_Group_free(&g);
    MPI_Info_free(&info);
    MPI_Comm_free(&dup);
}

static void test_requests(void)
{
    CHECK_EQ(MPI_Request_c2f(MPI_REQUEST_NULL), 0);
    CHECK(MPI_Request_f2c(0) == MPI_REQUEST_NULL);
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL);
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC);
    /* Requests in flight: complete them through their converted handles. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out[4], in[4] = {0};
    MPI_Request req[4];
    MPI_Fint f[4];
    for (int k = 0; k < 2; k++) {
        out[k] = rank * 10 + k;
        MPI_Irecv(&in[k], 1, MPI_INT, prev, k, MPI_COMM_WORLD, &req[2 * k]);
        MPI_Isend(&out[k], 1, MPI_INT, next, k, MPI_COMM_WORLD, &req[2 * k + 1]);
    }
    for (int k = 0; k < 4; k++) {
        f[k] = MPI_Request_c2f(req[k]);
        CHECK(f[k] != 0);
        CHECK_EQ(MPI_Request_c2f(req[k]), f[k]); /* the same handle again */
        for (int j = 0; j < k; j++)
            CHECK(f[j] != f[k]);
    }
    for (int k = 0; k < 4; k++) {
        MPI_Request r = MPI_Request_f2c(f[k]);
        CHECK(r == req[k]);
        MPI_Status st;
        CHECK_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
        /* The status through Fortran's view and back. */
        MPI_Fint fs[MPI_F_STATUS_SIZE];
        MPI_Status back;
        CHECK_EQ(MPI_Status_c2f(&st, fs), MPI_SUCCESS);
        CHECK_EQ(MPI_Status_f2c(fs, &back), MPI_SUCCESS);
        if (k % 2 == 0) {
            CHECK_EQ(fs[MPI_F_SOURCE], prev);
            CHECK_EQ(fs[MPI_F_TAG], k / 2);
            int count;
            MPI_Get_count(&back, MPI_INT, &count);
            CHECK_EQ(count, 1);
            CHECK_EQ(back.MPI_SOURCE, prev);
        }
    }
    CHECK(in[0] == prev * 10 && in[1] == prev * 10 + 1);
    /* A matched message, by its Fortran handle. */
    int v = rank, got = -1, flag = 0;
    MPI_Request sr;
    MPI_Isend(&v, 1, MPI_INT, next, 9, MPI_COMM_WORLD, &sr);
    MPI_Message msg;
    MPI_Mprobe(prev, 9, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
    MPI_Fint fm = MPI_Message_c2f(msg);
    CHECK(fm > 1);
    MPI_Message m2 = MPI_Message_f2c(fm);
    CHECK(m2 == msg);
    CHECK_EQ(MPI_Mrecv(&got, 1, MPI_INT, &m2, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(got, prev);
    MPI_Test(&sr, &flag, MPI_STATUS_IGNORE);
    if (!flag)
        MPI_Wait(&sr, MPI_STATUS_IGNORE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Status_c2f(MPI_STATUS_IGNORE, (MPI_Fint[MPI_F_STATUS_SIZE]){0}), MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_match_size(void)
{
    const struct {
        int tc, sz;
        MPI_Datatype want;
    } ok[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1},   {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4},   {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},         {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_REAL, 16, MPI_REAL16},       {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16}, {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
    };
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        MPI_Datatype t = MPI_DATATYPE_NULL;
        int s;
        CHECK_EQ(MPI_Type_match_size(ok[k].tc, ok[k].sz, &t), MPI_SUCCESS);
        CHECK_EQ(t, ok[k].want);
        MPI_Type_size(t, &s);
        CHECK_EQ(s, ok[k].sz);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t = MPI_DATATYPE_NULL;
    CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_REAL, 2, &t), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 4, &t), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, &t), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_match_size(42, 4, &t), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, NULL), MPI_ERR_ARG);
    CHECK_EQ(t, MPI_DATATYPE_NULL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* The f90 type's size, envelope and contents. */
static void check_f90(MPI_Datatype t, int sz, int combiner, int p, int r, int line)
{
    int s, ni, na, nd, comb, ints[2] = {-9, -9};
    MPI_Type_size(t, &s);
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    bool ok = s == sz && comb == combiner && na == 0 && nd == 0 &&
              ni == (combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2);
    CHECK_EQ(MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL), MPI_SUCCESS);
    if (combiner == MPI_COMBINER_F90_INTEGER)
        ok &= ints[0] == r;
    else
        ok &= ints[0] == p && ints[1] == r;
    if (!ok)
        fprintf(stderr, "line %d: size %d combiner %d (%d %d %d) contents %d %d\n", line, s, comb,
                ni, na, nd, ints[0], ints[1]);
    CHECK(ok);
}

static void test_f90(void)
{
    /* gfortran: SELECTED_INT_KIND(r) 1, 2, 4, 8 bytes for r <= 2, 4, 9, 18. */
    const int ir[][2] = {{1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 4}, {9, 4}, {10, 8}, {18, 8}};
    for (size_t k = 0; k < sizeof ir / sizeof ir[0]; k++) {
        MPI_Datatype t, again;
        CHECK_EQ(MPI_Type_create_f90_integer(ir[k][0], &t), MPI_SUCCESS);
        check_f90(t, ir[k][1], MPI_COMBINER_F90_INTEGER, 0, ir[k][0], __LINE__);
        MPI_Type_create_f90_integer(ir[k][0], &again);
        CHECK_EQ(again, t);
    }
    /* SELECTED_REAL_KIND(p, r): 4 bytes to p 6 / r 37, 8 to 15 / 307, then 16. */
    const int rp[][3] = {
        {6, MPI_UNDEFINED, 4},   {MPI_UNDEFINED, 37, 4}, {7, 30, 8}, {15, 307, 8}, {6, 38, 8},
        {16, MPI_UNDEFINED, 16}, {33, 4931, 16}};
    for (size_t k = 0; k < sizeof rp / sizeof rp[0]; k++) {
        MPI_Datatype t, c;
        CHECK_EQ(MPI_Type_create_f90_real(rp[k][0], rp[k][1], &t), MPI_SUCCESS);
        check_f90(t, rp[k][2], MPI_COMBINER_F90_REAL, rp[k][0], rp[k][1], __LINE__);
        CHECK_EQ(MPI_Type_create_f90_complex(rp[k][0], rp[k][1], &c), MPI_SUCCESS);
        check_f90(c, 2 * rp[k][2], MPI_COMBINER_F90_COMPLEX, rp[k][0], rp[k][1], __LINE__);
    }
    /* Usable in communication and reductions, as the named type of that kind. */
    MPI_Datatype d;
    MPI_Type_create_f90_real(15, MPI_UNDEFINED, &d);
    double x[3] = {rank, 1.0, -rank}, y[3];
    CHECK_EQ(MPI_Allreduce(x, y, 3, d, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(y[0] == size * (size - 1) / 2.0 && y[1] == size && y[2] == -y[0]);
    /* In a struct, get_contents hands back the same (named) handle. */
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype st, tt[2] = {d, MPI_INT}, back[2];
    MPI_Type_create_struct(2, bl, disp, tt, &st);
    int ints[3];
    MPI_Aint aints[2];
    MPI_Type_get_contents(st, 3, 2, 2, ints, aints, back);
    CHECK_EQ(back[0], d);
    MPI_Type_free(&st);
    /* Errors. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t;
    CHECK_EQ(MPI_Type_create_f90_integer(19, &t), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_create_f90_real(34, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_create_f90_complex(6, 5000, &t), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_create_f90_real(6, 30, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_free(&d), MPI_ERR_TYPE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_handles();
    test_requests();
    test_match_size();
    test_f90();
    int failed = check_summary(), any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("names_conv: %d ranks ok\n", size);
    MPI_Finalize();
    return failed;
}
