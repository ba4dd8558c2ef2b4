/*
 * Fortran-named and C++ predefined types from C: sizes, extents, names,
 * envelopes; reductions (SUM/PROD of every complex type, MINLOC/MAXLOC of
 * the Fortran pairs, logical ops on MPI_LOGICAL, the Fortran integers and
 * reals) compared with the same arithmetic done serially here in plain C;
 * a ring of sends of each type; the ops a type does not take.
 *
 * Complex PROD is C's `*` on _Complex (Annex G): an infinite operand whose
 * plain-formula product is NaN + NaN i comes back infinite, in Loom as in
 * this process. Values are chosen so that every sum and product is exact
 * in any order, so the comparison is bitwise whatever the algorithm.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

#define N 37

static int rank, size;

/* ---- sizes, extents, names, envelopes ---- */

static void check_named(MPI_Datatype t, const char *name, int sz, MPI_Aint extent)
{
    int s, ni, na, nd, comb, len;
    MPI_Aint lb, ext;
    char got[MPI_MAX_OBJECT_NAME];
    CHECK_EQ(MPI_Type_size(t, &s), MPI_SUCCESS);
    CHECK_EQ(s, sz);
    CHECK_EQ(MPI_Type_get_extent(t, &lb, &ext), MPI_SUCCESS);
    CHECK_EQ(lb, 0);
    CHECK_EQ(ext, extent);
    CHECK_EQ(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb), MPI_SUCCESS);
    CHECK_EQ(comb, MPI_COMBINER_NAMED);
    CHECK(ni == 0 && na == 0 && nd == 0);
    int ints[1];
    MPI_Aint aints[1];
    MPI_Datatype types[1];
    CHECK_EQ(MPI_Type_get_contents(t, 1, 1, 1, ints, aints, types), MPI_ERR_ARG);
    CHECK_EQ(MPI_Type_get_name(t, got, &len), MPI_SUCCESS);
    if (strcmp(got, name) != 0)
        fprintf(stderr, "name of %s: %s\n", name, got);
    CHECK(strcmp(got, name) == 0);
    CHECK_EQ(MPI_Type_free(&t), MPI_ERR_TYPE);
}
#define NAMED(t, sz, ext) check_named(t, #t, sz, ext)

struct fpair {
    float v, i;
};
struct dpair {
    double v, i;
};

static void test_named(void)
{
    NAMED(MPI_INTEGER, 4, 4);
    NAMED(MPI_REAL, 4, 4);
    NAMED(MPI_DOUBLE_PRECISION, 8, 8);
    NAMED(MPI_LOGICAL, 4, 4);
    NAMED(MPI_CHARACTER, 1, 1);
    NAMED(MPI_COMPLEX, 8, 8);
    NAMED(MPI_DOUBLE_COMPLEX, 16, 16);
    NAMED(MPI_2INTEGER, 8, 8);
    NAMED(MPI_2REAL, 8, 8);
    NAMED(MPI_2DOUBLE_PRECISION, 16, 16);
    NAMED(MPI_INTEGER1, 1, 1);
    NAMED(MPI_INTEGER2, 2, 2);
    NAMED(MPI_INTEGER4, 4, 4);
    NAMED(MPI_INTEGER8, 8, 8);
    NAMED(MPI_REAL4, 4, 4);
    NAMED(MPI_REAL8, 8, 8);
    NAMED(MPI_REAL16, 16, 16);
    NAMED(MPI_COMPLEX8, 8, 8);
    NAMED(MPI_COMPLEX16, 16, 16);
    NAMED(MPI_COMPLEX32, 32, 32);
    NAMED(MPI_C_FLOAT_COMPLEX, sizeof(float _Complex), sizeof(float _Complex));
    NAMED(MPI_C_DOUBLE_COMPLEX, sizeof(double _Complex), sizeof(double _Complex));
    NAMED(MPI_C_LONG_DOUBLE_COMPLEX, sizeof(long double _Complex), sizeof(long double _Complex));
    NAMED(MPI_CXX_BOOL, 1, 1);
    NAMED(MPI_CXX_FLOAT_COMPLEX, sizeof(float _Complex), sizeof(float _Complex));
    NAMED(MPI_CXX_DOUBLE_COMPLEX, sizeof(double _Complex), sizeof(double _Complex));
    NAMED(MPI_CXX_LONG_DOUBLE_COMPLEX, sizeof(long double _Complex), sizeof(long double _Complex));
    NAMED(MPI_LB, 0, 0);
    NAMED(MPI_UB, 0, 0);
    CHECK(MPI_C_COMPLEX == MPI_C_FLOAT_COMPLEX);
    CHECK(sizeof(struct fpair) == 8 && sizeof(struct dpair) == 16);
    /* Distinct types, distinct handles. */
    CHECK(MPI_INTEGER != MPI_INTEGER4 && MPI_INTEGER != MPI_INT);
    CHECK(MPI_REAL != MPI_REAL4 && MPI_COMPLEX != MPI_COMPLEX8);
}

/* ---- reductions against a serial computation ---- */

/* Rank r's element i of a complex vector: small integer parts (exact
 * sums), and for PROD mostly 1, a few (1 + i) or -1 (exact products), and
 * element 0 infinite at one rank (Annex G's case). */
static double complex cval(int r, int i, bool prod)
{
    if (!prod)
        return (double)((r * 7 + i) % 9 - 4) + (double)((r * 3 + i) % 5 - 2) * I;
    if (i == 0)
        return r == size - 1 ? CMPLX(INFINITY, INFINITY) : 1.0;
    if ((r + i) % 11 == 0)
        return 1.0 + 1.0 * I;
    if ((r * 5 + i) % 13 == 0)
        return -1.0;
    return 1.0;
}

/* Bitwise equality of n bytes, with a message naming the case. */
static void same_bytes(const void *got, const void *want, size_t n, const char *what, int line)
{
    if (memcmp(got, want, n) != 0) {
        fprintf(stderr, "line %d: %s differs from the serial result\n", line, what);
        CHECK(false);
    } else {
        CHECK(true);
    }
}

/* Bitwise equality of n complex elements of esize bytes whose two parts
 * hold `data` bytes each (an x87 long double: 10 of its 16). */
static void same_parts(const void *got, const void *want, int n, size_t esize, size_t data,
                       const char *what, int line)
{
    const unsigned char *g = got, *w = want;
    size_t half = esize / 2;
    for (int i = 0; i < n; i++)
        for (int part = 0; part < 2; part++)
            if (memcmp(g + i * esize + part * half, w + i * esize + part * half, data) != 0) {
                fprintf(stderr, "line %d: %s element %d differs from the serial result\n", line,
                        what, i);
                CHECK(false);
                return;
            }
    CHECK(true);
}
#define DATA_BYTES(T)                                                                              \
    (sizeof(T) == 2 * sizeof(long double) && LDBL_MANT_DIG == 64 ? (size_t)10 : sizeof(T) / 2)

/* Allreduce of one complex C type against the serial fold in rank order. */
#define COMPLEX_CASE(T, type)                                                                      \
    do {                                                                                           \
        for (int prod = 0; prod < 2; prod++) {                                                     \
            T in[N], out[N], want[N];                                                              \
            for (int i = 0; i < N; i++) {                                                          \
                in[i] = (T)cval(rank, i, prod);                                                    \
                want[i] = (T)cval(0, i, prod);                                                     \
                for (int r = 1; r < size; r++)                                                     \
                    want[i] =                                                                      \
                        prod ? want[i] * (T)cval(r, i, prod) : want[i] + (T)cval(r, i, prod);      \
            }                                                                                      \
            CHECK_EQ(MPI_Allreduce(in, out, N, type, prod ? MPI_PROD : MPI_SUM, MPI_COMM_WORLD),   \
                     MPI_SUCCESS);                                                                 \
            same_parts(out, want, N, sizeof(T), DATA_BYTES(T), #type, __LINE__);                   \
            /* The same kernel in this process: in op= inout. */                                   \
            T io[N];                                                                               \
            for (int i = 0; i < N; i++)                                                            \
                io[i] = (T)cval(rank + 1, i, prod);                                                \
            CHECK_EQ(MPI_Reduce_local(in, io, N, type, prod ? MPI_PROD : MPI_SUM), MPI_SUCCESS);   \
            for (int i = 0; i < N; i++)                                                            \
                want[i] = prod ? (T)cval(rank, i, prod) * (T)cval(rank + 1, i, prod)               \
                               : (T)cval(rank, i, prod) + (T)cval(rank + 1, i, prod);              \
            same_parts(io, want, N, sizeof(T), DATA_BYTES(T), #type " (Reduce_local)", __LINE__);  \
        }                                                                                          \
    } while (0)

static void test_complex(void)
{
    COMPLEX_CASE(float _Complex, MPI_COMPLEX);
    COMPLEX_CASE(float _Complex, MPI_COMPLEX8);
    COMPLEX_CASE(float _Complex, MPI_C_COMPLEX);
    COMPLEX_CASE(float _Complex, MPI_C_FLOAT_COMPLEX);
    COMPLEX_CASE(float _Complex, MPI_CXX_FLOAT_COMPLEX);
    COMPLEX_CASE(double _Complex, MPI_DOUBLE_COMPLEX);
    COMPLEX_CASE(double _Complex, MPI_COMPLEX16);
    COMPLEX_CASE(double _Complex, MPI_C_DOUBLE_COMPLEX);
    COMPLEX_CASE(double _Complex, MPI_CXX_DOUBLE_COMPLEX);
    COMPLEX_CASE(long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX);
    COMPLEX_CASE(long double _Complex, MPI_CXX_LONG_DOUBLE_COMPLEX);
    COMPLEX_CASE(_Complex _Float128, MPI_COMPLEX32);
    /* Annex G, not the plain formula: (inf + inf i)(1 + 0i) is infinite. */
    double complex a = CMPLX(INFINITY, INFINITY), b = 1.0;
    CHECK_EQ(MPI_Reduce_local(&a, &b, 1, MPI_DOUBLE_COMPLEX, MPI_PROD), MPI_SUCCESS);
    CHECK(isinf(creal(b)) && isinf(cimag(b)));
}

/* MINLOC/MAXLOC of a Fortran pair type: values with ties, index = rank. */
#define PAIR_CASE(V, type)                                                                         \
    do {                                                                                           \
        struct {                                                                                   \
            V v, i;                                                                                \
        } in[N], out[N], want[N];                                                                  \
        for (int loc = 0; loc < 2; loc++) {                                                        \
            memset(want, 0, sizeof want);                                                          \
            for (int i = 0; i < N; i++) {                                                          \
                in[i].v = (V)((rank * 5 + i * 3) % 7), in[i].i = (V)rank;                          \
                for (int r = 0; r < size; r++) {                                                   \
                    V v = (V)((r * 5 + i * 3) % 7);                                                \
                    bool better = loc ? v > want[i].v : v < want[i].v;                             \
                    if (r == 0 || better)                                                          \
                        want[i].v = v, want[i].i = (V)r;                                           \
                }                                                                                  \
            }                                                                                      \
            CHECK_EQ(                                                                              \
                MPI_Allreduce(in, out, N, type, loc ? MPI_MAXLOC : MPI_MINLOC, MPI_COMM_WORLD),    \
                MPI_SUCCESS);                                                                      \
            same_bytes(out, want, sizeof out, #type, __LINE__);                                    \
        }                                                                                          \
    } while (0)

static void test_pairs(void)
{
    PAIR_CASE(int32_t, MPI_2INTEGER);
    PAIR_CASE(float, MPI_2REAL);
    PAIR_CASE(double, MPI_2DOUBLE_PRECISION);
}

/* Rank r's element i for an integer or real op: small values (exact sums),
 * for PROD -1, 1 and a few 2s (exact products). */
static long long sval(int r, int i, MPI_Op op)
{
    if (op == MPI_PROD)
        return r < 6 && (r + i) % 3 == 0 ? 2 : (r + i) % 4 == 0 ? -1 : 1;
    return ((r + 1) * (i + 3)) % 5 - 1;
}

/* An integer or real op against the serial fold in rank order. */
#define SCALAR_CASE(T, type, op, expr)                                                             \
    do {                                                                                           \
        T in[N], out[N], want[N];                                                                  \
        for (int i = 0; i < N; i++) {                                                              \
            in[i] = (T)sval(rank, i, op);                                                          \
            want[i] = (T)sval(0, i, op);                                                           \
            for (int r = 1; r < size; r++) {                                                       \
                T a = want[i], b = (T)sval(r, i, op);                                              \
                want[i] = (T)(expr);                                                               \
            }                                                                                      \
        }                                                                                          \
        CHECK_EQ(MPI_Allreduce(in, out, N, type, op, MPI_COMM_WORLD), MPI_SUCCESS);                \
        same_bytes(out, want, sizeof out, #type " " #op, __LINE__);                                \
    } while (0)

static void test_scalars(void)
{
    SCALAR_CASE(int32_t, MPI_INTEGER, MPI_SUM, a + b);
    SCALAR_CASE(int32_t, MPI_INTEGER, MPI_PROD, a * b);
    SCALAR_CASE(int32_t, MPI_INTEGER, MPI_MAX, a > b ? a : b);
    SCALAR_CASE(int32_t, MPI_INTEGER, MPI_BOR, a | b);
    SCALAR_CASE(int8_t, MPI_INTEGER1, MPI_MIN, a < b ? a : b);
    SCALAR_CASE(int16_t, MPI_INTEGER2, MPI_SUM, a + b);
    SCALAR_CASE(int32_t, MPI_INTEGER4, MPI_BXOR, a ^ b);
    SCALAR_CASE(int64_t, MPI_INTEGER8, MPI_BAND, a & b);
    SCALAR_CASE(float, MPI_REAL, MPI_SUM, a + b);
    SCALAR_CASE(float, MPI_REAL4, MPI_MAX, a > b ? a : b);
    SCALAR_CASE(double, MPI_DOUBLE_PRECISION, MPI_PROD, a *b);
    SCALAR_CASE(double, MPI_REAL8, MPI_MIN, a < b ? a : b);
    SCALAR_CASE(_Float128, MPI_REAL16, MPI_SUM, a + b);
    SCALAR_CASE(_Float128, MPI_REAL16, MPI_PROD, a * b);
    SCALAR_CASE(_Float128, MPI_REAL16, MPI_MAX, a > b ? a : b);
}

/* Logical ops on MPI_LOGICAL (gfortran: .TRUE. is 1) and MPI_CXX_BOOL. */
static void test_logical(void)
{
    const MPI_Op ops[3] = {MPI_LAND, MPI_LOR, MPI_LXOR};
    for (int k = 0; k < 3; k++) {
        int32_t in[N], out[N], want[N];
        bool bin[N], bout[N], bwant[N];
        for (int i = 0; i < N; i++) {
            for (int r = 0; r < size; r++) {
                int32_t v = (r + i) % 3 != 0 || i % 4 == 0;
                if (r == rank)
                    in[i] = v, bin[i] = v;
                if (r == 0)
                    want[i] = v;
                else if (k == 0)
                    want[i] = want[i] && v;
                else if (k == 1)
                    want[i] = want[i] || v;
                else
                    want[i] = want[i] != v;
                bwant[i] = want[i];
            }
        }
        CHECK_EQ(MPI_Allreduce(in, out, N, MPI_LOGICAL, ops[k], MPI_COMM_WORLD), MPI_SUCCESS);
        same_bytes(out, want, sizeof out, "MPI_LOGICAL", __LINE__);
        CHECK_EQ(MPI_Allreduce(bin, bout, N, MPI_CXX_BOOL, ops[k], MPI_COMM_WORLD), MPI_SUCCESS);
        same_bytes(bout, bwant, sizeof bout, "MPI_CXX_BOOL", __LINE__);
    }
}

/* The groups of MPI-4.1 6.9.2: no logical op on a Fortran integer, no
 * arithmetic on MPI_LOGICAL or MPI_CHARACTER, no MAX on a complex. */
static void test_undefined(void)
{
    int32_t a[2] = {1, 2}, b[2];
    char c[2] = {'a', 'b'}, d[2];
    float _Complex z[2] = {1, 2}, w[2];
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Allreduce(a, b, 2, MPI_INTEGER, MPI_LAND, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_EQ(MPI_Allreduce(a, b, 2, MPI_LOGICAL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_EQ(MPI_Allreduce(c, d, 2, MPI_CHARACTER, MPI_MAX, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_EQ(MPI_Allreduce(z, w, 2, MPI_COMPLEX, MPI_MAX, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_EQ(MPI_Allreduce(a, b, 1, MPI_2INTEGER, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Each type around a ring: what arrives is what was sent. */
static void test_ring(void)
{
    const MPI_Datatype types[] = {MPI_INTEGER,   MPI_REAL,      MPI_DOUBLE_PRECISION, MPI_LOGICAL,
                                  MPI_CHARACTER, MPI_COMPLEX,   MPI_DOUBLE_COMPLEX,   MPI_2REAL,
                                  MPI_REAL16,    MPI_COMPLEX32, MPI_INTEGER8,         MPI_CXX_BOOL};
    unsigned char out[N * 32], in[N * 32];
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        int sz;
        MPI_Type_size(types[k], &sz);
        for (int i = 0; i < N * sz; i++)
            out[i] = (unsigned char)(rank * 31 + i * 7 + (int)k);
        MPI_Status st;
        CHECK_EQ(MPI_Sendrecv(out, N, types[k], next, (int)k, in, N, types[k], prev, (int)k,
                              MPI_COMM_WORLD, &st),
                 MPI_SUCCESS);
        int count;
        MPI_Get_count(&st, types[k], &count);
        CHECK_EQ(count, N);
        bool ok = true;
        for (int i = 0; i < N * sz; i++)
            ok &= in[i] == (unsigned char)(prev * 31 + i * 7 + (int)k);
        CHECK(ok);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_named();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    test_complex();
    test_pairs();
    test_scalars();
    test_logical();
    test_undefined();
    test_ring();
    int failed = check_summary(), any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("names_types: %d ranks ok\n", size);
    MPI_Finalize();
    return failed;
}
