/*
 * Reduction operations through MPI_Reduce_local on every rank, with values
 * that depend on the rank: predefined ops against exact results (wrap-around,
 * logical ops giving 0/1, complex products, MAXLOC/MINLOC ties on pairs with
 * and without padding, REPLACE, NO_OP), a strided derived type, and a
 * non-commutative user op (2x2 matrix product) whose function and call
 * counter are the rank's own; MPI_Op_commutative, MPI_Op_free.
 */
#include <complex.h>
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

static int rank, nranks;

#define OK(call) CHECK_EQ((call), MPI_SUCCESS)

static void test_predefined(void)
{
    int r = rank;
    int a[4] = {r, INT_MAX, -r - 1, 7}, b[4] = {10, 1 + r, 3, -7};
    OK(MPI_Reduce_local(a, b, 4, MPI_INT, MPI_SUM));
    CHECK(b[0] == r + 10 && b[1] == INT_MIN + r && b[2] == 2 - r && b[3] == 0);
    int c[3] = {r + 2, -3, 0}, d[3] = {4, -5, 9};
    OK(MPI_Reduce_local(c, d, 3, MPI_INT, MPI_PROD));
    CHECK(d[0] == 4 * (r + 2) && d[1] == 15 && d[2] == 0);
    long e[2] = {-r, 5}, f[2] = {-1, 5 + r};
    OK(MPI_Reduce_local(e, f, 2, MPI_LONG, MPI_MAX));
    CHECK(f[0] == (r == 0 ? 0 : -1) && f[1] == 5 + r);
    unsigned g[2] = {UINT_MAX, (unsigned)r}, h[2] = {1, 3};
    OK(MPI_Reduce_local(g, h, 2, MPI_UNSIGNED, MPI_MIN));
    CHECK(h[0] == 1 && h[1] == (unsigned)(r < 3 ? r : 3));

    int l1[4] = {0, 0, r + 1, -2}, l2[4] = {0, 6, 0, 9}, l3[4], l4[4];
    memcpy(l3, l2, sizeof l3);
    memcpy(l4, l2, sizeof l4);
    OK(MPI_Reduce_local(l1, l2, 4, MPI_INT, MPI_LXOR));
    OK(MPI_Reduce_local(l1, l3, 4, MPI_INT, MPI_LAND));
    OK(MPI_Reduce_local(l1, l4, 4, MPI_INT, MPI_LOR));
    CHECK(l2[0] == 0 && l2[1] == 1 && l2[2] == 1 && l2[3] == 0);
    CHECK(l3[0] == 0 && l3[1] == 0 && l3[2] == 0 && l3[3] == 1);
    CHECK(l4[0] == 0 && l4[1] == 1 && l4[2] == 1 && l4[3] == 1);
    bool ba[2] = {true, r & 1}, bb[2] = {true, true};
    OK(MPI_Reduce_local(ba, bb, 2, MPI_C_BOOL, MPI_LXOR));
    CHECK(!bb[0] && bb[1] == !(r & 1));

    unsigned char x1[2] = {0xf0, (unsigned char)r}, x2[2] = {0x3c, 0x80};
    OK(MPI_Reduce_local(x1, x2, 2, MPI_BYTE, MPI_BXOR));
    CHECK(x2[0] == 0xcc && x2[1] == (0x80 ^ r));
    uint16_t y1 = 0xff00, y2 = 0x0ff0;
    OK(MPI_Reduce_local(&y1, &y2, 1, MPI_UINT16_T, MPI_BAND));
    CHECK(y2 == 0x0f00);
    y2 = 0x0ff0;
    OK(MPI_Reduce_local(&y1, &y2, 1, MPI_UINT16_T, MPI_BOR));
    CHECK(y2 == 0xfff0);

    double dm[2] = {-0.5, r}, dn[2] = {-1, 2.5};
    OK(MPI_Reduce_local(dm, dn, 2, MPI_DOUBLE, MPI_MAX));
    CHECK(dn[0] == -0.5 && dn[1] == (r > 2 ? r : 2.5));
    float complex fz1 = 1 + 2 * I, fz2 = 3 + 4 * I;
    OK(MPI_Reduce_local(&fz1, &fz2, 1, MPI_C_FLOAT_COMPLEX, MPI_PROD));
    CHECK(fz2 == -5 + 10 * I);
    double complex dz1[2] = {r * I, 2}, dz2[2] = {I, 1 - I};
    OK(MPI_Reduce_local(dz1, dz2, 2, MPI_C_DOUBLE_COMPLEX, MPI_PROD));
    CHECK(dz2[0] == -r && dz2[1] == 2 - 2 * I);
    long double complex lz1 = 1.5L + r * I, lz2 = 0.5L - I;
    OK(MPI_Reduce_local(&lz1, &lz2, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM));
    CHECK(lz2 == 2 + (r - 1) * I);

    /* Pairs: the lower index wins a tie, wherever it comes from. */
    struct {
        int v, i;
    } p[3] = {{5, r + 1}, {5, 0}, {1, 4}}, q[3] = {{5, r}, {5, 9}, {2, 7}};
    OK(MPI_Reduce_local(p, q, 3, MPI_2INT, MPI_MAXLOC));
    CHECK(q[0].v == 5 && q[0].i == r && q[1].i == 0 && q[2].v == 2 && q[2].i == 7);
    struct {
        short v;
        int i;
    } s1[2] = {{-3, 8}, {4, 1}}, s2[2] = {{-3, 2}, {4, 0}};
    OK(MPI_Reduce_local(s1, s2, 2, MPI_SHORT_INT, MPI_MINLOC));
    CHECK(s2[0].v == -3 && s2[0].i == 2 && s2[1].v == 4 && s2[1].i == 0);
    struct {
        long double v;
        int i;
    } ld1 = {2.5L, r}, ld2 = {2.25L, 99};
    OK(MPI_Reduce_local(&ld1, &ld2, 1, MPI_LONG_DOUBLE_INT, MPI_MINLOC));
    CHECK(ld2.v == 2.25L && ld2.i == 99);
    struct {
        double v;
        int i;
    } di1 = {1.0, 3}, di2 = {1.0, 3 + r};
    OK(MPI_Reduce_local(&di1, &di2, 1, MPI_DOUBLE_INT, MPI_MAXLOC));
    CHECK(di2.v == 1.0 && di2.i == 3);

    int rp1[2] = {r, r}, rp2[2] = {-1, -1};
    OK(MPI_Reduce_local(rp1, rp2, 2, MPI_INT, MPI_NO_OP));
    CHECK(rp2[0] == -1 && rp2[1] == -1);
    OK(MPI_Reduce_local(rp1, rp2, 2, MPI_INT, MPI_REPLACE));
    CHECK(rp2[0] == r && rp2[1] == r);
    /* Zero elements need no buffers. */
    OK(MPI_Reduce_local(NULL, NULL, 0, MPI_INT, MPI_SUM));
}

/* Two elements of a vector of 3 ints with stride 2: gaps untouched. */
static void test_vector(void)
{
    MPI_Datatype v;
    OK(MPI_Type_vector(3, 1, 2, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    int in[10], io[10];
    for (int i = 0; i < 10; i++) {
        in[i] = i + rank;
        io[i] = 100 * i;
    }
    /* extent 5 ints: element 0 at 0, 2, 4; element 1 at 5, 7, 9 */
    OK(MPI_Reduce_local(in, io, 2, v, MPI_SUM));
    int bad = 0;
    for (int i = 0; i < 10; i++) {
        bool data = i == 0 || i == 2 || i == 4 || i == 5 || i == 7 || i == 9;
        bad += io[i] != (data ? 101 * i + rank : 100 * i);
    }
    CHECK_EQ(bad, 0);
    OK(MPI_Type_free(&v));
}

/* ---- a user op: 2x2 integer matrices ---- */

static int calls; /* this rank's copy of the program */
static MPI_Datatype seen;

static void matmul(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
    const int *a = invec;
    int *b = inoutvec;
    calls++;
    seen = *dt;
    for (int m = 0; m < *len; m++, a += 4, b += 4) {
        int r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                    a[2] * b[1] + a[3] * b[3]};
        memcpy(b, r, sizeof r);
    }
}

static void test_user(void)
{
    MPI_Datatype mat;
    OK(MPI_Type_contiguous(4, MPI_INT, &mat));
    OK(MPI_Type_commit(&mat));
    MPI_Op op, cop;
    OK(MPI_Op_create(matmul, 0, &op));
    OK(MPI_Op_create(matmul, 1, &cop));
    CHECK(op != cop && op != MPI_OP_NULL);
    int commute = -1;
    OK(MPI_Op_commutative(op, &commute));
    CHECK_EQ(commute, 0);
    OK(MPI_Op_commutative(cop, &commute));
    CHECK_EQ(commute, 1);
    OK(MPI_Op_commutative(MPI_MAXLOC, &commute));
    CHECK_EQ(commute, 1);

    /* inoutvec = invec * inoutvec: A = [1 r; 0 1], B = [1 0; 1 1]. */
    int r = rank;
    int A[2][4] = {{1, r, 0, 1}, {2, 0, 0, 2}}, B[2][4] = {{1, 0, 1, 1}, {1, 1, 0, 1}};
    OK(MPI_Reduce_local(A, B, 2, mat, op));
    CHECK(B[0][0] == 1 + r && B[0][1] == r && B[0][2] == 1 && B[0][3] == 1);
    CHECK(B[1][0] == 2 && B[1][1] == 2 && B[1][2] == 0 && B[1][3] == 2);
    CHECK(calls == 1 && seen == mat);
    /* Reverse order: B * A = [1 r; 1 1 + r]. */
    int B2[4] = {1, 0, 1, 1}, A2[4] = {1, r, 0, 1};
    OK(MPI_Reduce_local(B2, A2, 1, mat, op));
    CHECK(A2[0] == 1 && A2[1] == r && A2[2] == 1 && A2[3] == 1 + r);
    /* Sixteen identity matrices with the commutative op. */
    int big[64], acc[64];
    for (int i = 0; i < 64; i++)
        big[i] = acc[i] = (i % 4 == 0 || i % 4 == 3) ? 1 : 0;
    OK(MPI_Reduce_local(big, acc, 16, mat, cop));
    CHECK(calls == 3 && acc[0] == 1 && acc[1] == 0 && acc[63] == 1);

    OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL);
    OK(MPI_Op_free(&cop));
    /* Handles are reused safely: many creations and frees. */
    for (int i = 0; i < 100; i++) {
        OK(MPI_Op_create(matmul, i & 1, &op));
        OK(MPI_Op_free(&op));
    }
    OK(MPI_Type_free(&mat));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    test_predefined();
    test_vector();
    test_user();
    int rc = check_summary();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && rc == 0)
        printf("op_local: %d ranks ok\n", nranks);
    MPI_Finalize();
    return rc;
}
