/*
 * The reduction engine without MPI: which (op, type) pairs are accepted
 * (MPI-3.1 5.9.2, written out here independently of the engine's tables),
 * every predefined op on every type it is defined for against a scalar
 * reference, in all four forms (apply; reduce3 into a third buffer, into b,
 * into a) and at lengths that exercise the vector loops and their tails,
 * exact spot values (wrap-around, LXOR, complex PROD, MAXLOC ties), derived
 * layouts (strided, padded pairs, misaligned, empty), user ops (operand
 * order, aliasing) and references on freed ops.
 */
#include <complex.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "../../check.h"
#include "coll/op.h"

#define N 150 /* more than one main-loop step of 1-byte kernels, plus a tail */

static struct loom_type *T(MPI_Datatype h)
{
    struct loom_type *t = loom_type_get(h);
    REQUIRE(t);
    return t;
}

static struct loom_op *O(MPI_Op h)
{
    struct loom_op *op = loom_op_get(h);
    REQUIRE(op);
    return op;
}

static struct loom_type *mk(int combiner, const int *ints, const MPI_Aint *aints,
                            struct loom_type *const *types)
{
    struct loom_type *t;
    REQUIRE(loom_type_create(combiner, ints, aints, types, &t) == LOOM_OK);
    loom_type_commit(t);
    return t;
}

/* ---- which pairs are defined ---- */

static const MPI_Datatype c_ints[] = {
    MPI_INT,         MPI_LONG,          MPI_SHORT,         MPI_UNSIGNED_SHORT,
    MPI_UNSIGNED,    MPI_UNSIGNED_LONG, MPI_LONG_LONG_INT, MPI_UNSIGNED_LONG_LONG,
    MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_INT8_T,        MPI_INT16_T,
    MPI_INT32_T,     MPI_INT64_T,       MPI_UINT8_T,       MPI_UINT16_T,
    MPI_UINT32_T,    MPI_UINT64_T,      MPI_AINT,          MPI_OFFSET,
    MPI_COUNT};
static const MPI_Datatype f_ints[] = {MPI_INTEGER, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4,
                                      MPI_INTEGER8};
static const MPI_Datatype floats[] = {MPI_FLOAT, MPI_DOUBLE,           MPI_LONG_DOUBLE, MPI_REAL,
                                      MPI_REAL4, MPI_DOUBLE_PRECISION, MPI_REAL8,       MPI_REAL16};
static const MPI_Datatype complexes[] = {MPI_C_FLOAT_COMPLEX,
                                         MPI_C_DOUBLE_COMPLEX,
                                         MPI_C_LONG_DOUBLE_COMPLEX,
                                         MPI_COMPLEX,
                                         MPI_DOUBLE_COMPLEX,
                                         MPI_COMPLEX8,
                                         MPI_COMPLEX16,
                                         MPI_COMPLEX32,
                                         MPI_CXX_FLOAT_COMPLEX,
                                         MPI_CXX_DOUBLE_COMPLEX,
                                         MPI_CXX_LONG_DOUBLE_COMPLEX};
static const MPI_Datatype logicals[] = {MPI_C_BOOL, MPI_CXX_BOOL, MPI_LOGICAL};
static const MPI_Datatype pairs[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT,
                                     MPI_2INT,      MPI_SHORT_INT,  MPI_LONG_DOUBLE_INT,
                                     MPI_2INTEGER,  MPI_2REAL,      MPI_2DOUBLE_PRECISION};

static bool in_list(MPI_Datatype h, const MPI_Datatype *l, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (l[i] == h)
            return true;
    return false;
}
#define IN(h, l) in_list(h, l, sizeof l / sizeof l[0])

static bool defined(MPI_Op op, MPI_Datatype h)
{
    bool i = IN(h, c_ints), fi = IN(h, f_ints), f = IN(h, floats), c = IN(h, complexes);
    if (op == MPI_MAX || op == MPI_MIN)
        return i || fi || f;
    if (op == MPI_SUM || op == MPI_PROD)
        return i || fi || f || c;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return i || IN(h, logicals);
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
        return i || fi || h == MPI_BYTE;
    if (op == MPI_MAXLOC || op == MPI_MINLOC)
        return IN(h, pairs);
    return true; /* REPLACE, NO_OP */
}

static void test_defined(void)
{
    char buf[160];
    for (int o = 1; o <= LOOM_NUM_PREDEFINED_OPS; o++) {
        MPI_Op op = (MPI_Op)(0x58000000 | o);
        for (int n = 1; n <= LOOM_NUM_PREDEFINED_TYPES; n++) {
            MPI_Datatype h = (MPI_Datatype)(0x4c000000 | n);
            bool ok = loom_op_problem(O(op), T(h), buf, sizeof buf) == NULL;
            if (h == MPI_LB || h == MPI_UB) {
                CHECK(ok); /* no data, as an empty type: any op applies */
                continue;
            }
            if (ok != defined(op, h))
                fprintf(stderr, "op %d on type %d: engine says %s\n", o, n, ok ? "ok" : buf);
            CHECK(ok == defined(op, h));
        }
    }
    const char *why = loom_op_problem(O(MPI_SUM), T(MPI_2INT), buf, sizeof buf);
    CHECK(why && strcmp(why, "MPI_SUM is not defined for MPI_2INT") == 0);
    why = loom_op_problem(O(MPI_BAND), T(MPI_DOUBLE), buf, sizeof buf);
    CHECK(why && strcmp(why, "MPI_BAND is not defined for MPI_DOUBLE") == 0);
    why = loom_op_problem(O(MPI_MAX), T(MPI_CHAR), buf, sizeof buf);
    CHECK(why && strcmp(why, "MPI_MAX is not defined for MPI_CHAR") == 0);

    /* Derived types: by their basic type; mixed ones only for REPLACE/NO_OP. */
    struct loom_type *ti = T(MPI_INT), *td = T(MPI_DOUBLE);
    int vi[3] = {4, 1, 2};
    struct loom_type *vec = mk(MPI_COMBINER_VECTOR, vi, NULL, &ti);
    CHECK(loom_op_problem(O(MPI_SUM), vec, buf, sizeof buf) == NULL);
    CHECK(loom_op_problem(O(MPI_BXOR), vec, buf, sizeof buf) == NULL);
    CHECK(loom_op_problem(O(MPI_MAXLOC), vec, buf, sizeof buf) != NULL);
    struct loom_type *vecd = mk(MPI_COMBINER_VECTOR, vi, NULL, &td);
    why = loom_op_problem(O(MPI_BOR), vecd, buf, sizeof buf);
    CHECK(why && strstr(why, "MPI_BOR is not defined for MPI_DOUBLE (the basic type of datatype"));
    int si[3] = {2, 1, 1};
    MPI_Aint sa[2] = {0, 8};
    struct loom_type *st[2] = {ti, td};
    struct loom_type *mixed = mk(MPI_COMBINER_STRUCT, si, sa, st);
    why = loom_op_problem(O(MPI_SUM), mixed, buf, sizeof buf);
    CHECK(why && strstr(why, "are not all of one predefined type"));
    CHECK(loom_op_problem(O(MPI_REPLACE), mixed, buf, sizeof buf) == NULL);
    CHECK(loom_op_problem(O(MPI_NO_OP), mixed, buf, sizeof buf) == NULL);
    int ci[1] = {0};
    struct loom_type *empty = mk(MPI_COMBINER_CONTIGUOUS, ci, NULL, &td);
    CHECK(loom_op_problem(O(MPI_LXOR), empty, buf, sizeof buf) == NULL);
    loom_type_free(vec);
    loom_type_free(vecd);
    loom_type_free(mixed);
    loom_type_free(empty);
}

/* ---- every predefined op on every type it is defined for ---- */

/* Values combined: zeros, ones, signs, and the extremes of 8 to 64 bits. */
static const long long pat[] = {0,
                                1,
                                -1,
                                2,
                                3,
                                -7,
                                100,
                                127,
                                -128,
                                255,
                                32767,
                                -32768,
                                65535,
                                2147483647,
                                -2147483647 - 1,
                                4294967295LL,
                                0x7fffffffffffffffLL,
                                -0x7fffffffffffffffLL - 1,
                                5,
                                0,
                                42,
                                -3,
                                1000003};
#define NPAT (sizeof pat / sizeof pat[0])

typedef void gen_fn(void *in, void *io, size_t n);
typedef bool eq_fn(const void *x, const void *y);
typedef void ref_fn(const void *a, const void *b, void *out);

struct tcase {
    const char *name;
    MPI_Datatype type;
    MPI_Op op;
    gen_fn *gen;
    eq_fn *eq;
    ref_fn *ref;
};

/* Scalar types: generator and comparison. */
#define SCALAR(name, Ty)                                                                           \
    static void gen_##name(void *in_, void *io_, size_t n)                                         \
    {                                                                                              \
        Ty *in = in_, *io = io_;                                                                   \
        for (size_t i = 0; i < n; i++) {                                                           \
            in[i] = (Ty)pat[i % NPAT];                                                             \
            io[i] = (Ty)pat[(7 * i + 3) % NPAT];                                                   \
        }                                                                                          \
    }                                                                                              \
    static bool eq_##name(const void *x, const void *y)                                            \
    {                                                                                              \
        return *(const Ty *)x == *(const Ty *)y;                                                   \
    }
/* One reference result. */
#define REF(name, Ty, opname, expr)                                                                \
    static void ref_##name##_##opname(const void *a_, const void *b_, void *out)                   \
    {                                                                                              \
        Ty a = *(const Ty *)a_, b = *(const Ty *)b_;                                               \
        *(Ty *)out = (Ty)(expr);                                                                   \
    }

/* Integers: sums and products computed in 64-bit unsigned arithmetic. */
#define INTEGER(name, Ty)                                                                          \
    SCALAR(name, Ty)                                                                               \
    REF(name, Ty, MAX, a > b ? a : b)                                                              \
    REF(name, Ty, MIN, a < b ? a : b)                                                              \
    REF(name, Ty, SUM, (unsigned long long)a + (unsigned long long)b)                              \
    REF(name, Ty, PROD, (unsigned long long)a *(unsigned long long)b)                              \
    REF(name, Ty, LAND, a != 0 && b != 0)                                                          \
    REF(name, Ty, LOR, a != 0 || b != 0)                                                           \
    REF(name, Ty, LXOR, (a != 0) ^ (b != 0))                                                       \
    REF(name, Ty, BAND, (unsigned long long)a &(unsigned long long)b)                              \
    REF(name, Ty, BOR, (unsigned long long)a | (unsigned long long)b)                              \
    REF(name, Ty, BXOR, (unsigned long long)a ^ (unsigned long long)b)
#define FLOATING(name, Ty)                                                                         \
    SCALAR(name, Ty)                                                                               \
    REF(name, Ty, MAX, a > b ? a : b)                                                              \
    REF(name, Ty, MIN, a < b ? a : b)                                                              \
    REF(name, Ty, SUM, a + b)                                                                      \
    REF(name, Ty, PROD, a *b)

INTEGER(schar, signed char)
INTEGER(uchar, unsigned char)
INTEGER(short, short)
INTEGER(ushort, unsigned short)
INTEGER(int, int)
INTEGER(uint, unsigned)
INTEGER(long, long)
INTEGER(ulong, unsigned long)
INTEGER(llong, long long)
INTEGER(ullong, unsigned long long)
INTEGER(i8, int8_t)
INTEGER(i16, int16_t)
INTEGER(i32, int32_t)
INTEGER(i64, int64_t)
INTEGER(u8, uint8_t)
INTEGER(u16, uint16_t)
INTEGER(u32, uint32_t)
INTEGER(u64, uint64_t)
INTEGER(aint, MPI_Aint)
INTEGER(offset, MPI_Offset)
INTEGER(count, MPI_Count)
SCALAR(byte, unsigned char)
REF(byte, unsigned char, BAND, a &b)
REF(byte, unsigned char, BOR, a | b)
REF(byte, unsigned char, BXOR, a ^ b)
FLOATING(float, float)
FLOATING(double, double)
FLOATING(ldouble, long double)
FLOATING(f128, _Float128)

/* Booleans: all four combinations. */
static void gen_bool(void *in_, void *io_, size_t n)
{
    bool *in = in_, *io = io_;
    for (size_t i = 0; i < n; i++) {
        in[i] = i & 1;
        io[i] = (i >> 1) & 1;
    }
}
static bool eq_bool(const void *x, const void *y)
{
    return *(const bool *)x == *(const bool *)y;
}
REF(bool, bool, LAND, a &&b)
REF(bool, bool, LOR, a || b)
REF(bool, bool, LXOR, a != b)

/* Complex numbers with small integer parts (exact products). */
#define COMPLEX(name, Ty)                                                                          \
    static void gen_##name(void *in_, void *io_, size_t n)                                         \
    {                                                                                              \
        Ty *in = in_, *io = io_;                                                                   \
        for (size_t i = 0; i < n; i++) {                                                           \
            in[i] = (Ty)((int)(i % 7) - 3) + (Ty)((int)(i % 5) - 2) * I;                           \
            io[i] = (Ty)((int)(i % 11) - 5) + (Ty)((int)(i % 3) - 1) * I;                          \
        }                                                                                          \
    }                                                                                              \
    static bool eq_##name(const void *x, const void *y)                                            \
    {                                                                                              \
        return *(const Ty *)x == *(const Ty *)y;                                                   \
    }                                                                                              \
    REF(name, Ty, SUM, a + b)                                                                      \
    REF(name, Ty, PROD, a *b)
COMPLEX(cfloat, float _Complex)
COMPLEX(cdouble, double _Complex)
COMPLEX(cldouble, long double _Complex)
COMPLEX(c128, _Complex _Float128)

/* Pairs: values and indices from short cycles, so equal values with
 * different indices occur. */
#define PAIR(name, V)                                                                              \
    struct name {                                                                                  \
        V v;                                                                                       \
        int i;                                                                                     \
    };                                                                                             \
    static void gen_##name(void *in_, void *io_, size_t n)                                         \
    {                                                                                              \
        struct name *in = in_, *io = io_;                                                          \
        for (size_t i = 0; i < n; i++) {                                                           \
            in[i].v = (V)(i % 5);                                                                  \
            in[i].i = (int)(i % 3);                                                                \
            io[i].v = (V)(i % 4);                                                                  \
            io[i].i = (int)((i + 1) % 3);                                                          \
        }                                                                                          \
    }                                                                                              \
    static bool eq_##name(const void *x_, const void *y_)                                          \
    {                                                                                              \
        const struct name *x = x_, *y = y_;                                                        \
        return x->v == y->v && x->i == y->i;                                                       \
    }                                                                                              \
    static void ref_##name##_MAXLOC(const void *a_, const void *b_, void *out_)                    \
    {                                                                                              \
        const struct name *a = a_, *b = b_;                                                        \
        struct name *out = out_;                                                                   \
        out->v = a->v > b->v ? a->v : b->v;                                                        \
        out->i = a->v > b->v ? a->i : a->v < b->v ? b->i : a->i < b->i ? a->i : b->i;              \
    }                                                                                              \
    static void ref_##name##_MINLOC(const void *a_, const void *b_, void *out_)                    \
    {                                                                                              \
        const struct name *a = a_, *b = b_;                                                        \
        struct name *out = out_;                                                                   \
        out->v = a->v < b->v ? a->v : b->v;                                                        \
        out->i = a->v < b->v ? a->i : a->v > b->v ? b->i : a->i < b->i ? a->i : b->i;              \
    }
PAIR(float_int, float)
PAIR(double_int, double)
PAIR(long_int, long)
PAIR(two_int, int)
PAIR(short_int, short)
PAIR(long_double_int, long double)
/* Fortran's pairs: the index has the value's type. */
#define PAIR2(name, V)                                                                             \
    struct name {                                                                                  \
        V v;                                                                                       \
        V i;                                                                                       \
    };                                                                                             \
    static void gen_##name(void *in_, void *io_, size_t n)                                         \
    {                                                                                              \
        struct name *in = in_, *io = io_;                                                          \
        for (size_t i = 0; i < n; i++) {                                                           \
            in[i].v = (V)(i % 5);                                                                  \
            in[i].i = (V)(i % 3);                                                                  \
            io[i].v = (V)(i % 4);                                                                  \
            io[i].i = (V)((i + 1) % 3);                                                            \
        }                                                                                          \
    }                                                                                              \
    static bool eq_##name(const void *x_, const void *y_)                                          \
    {                                                                                              \
        const struct name *x = x_, *y = y_;                                                        \
        return x->v == y->v && x->i == y->i;                                                       \
    }                                                                                              \
    static void ref_##name##_MAXLOC(const void *a_, const void *b_, void *out_)                    \
    {                                                                                              \
        const struct name *a = a_, *b = b_;                                                        \
        struct name *out = out_;                                                                   \
        out->v = a->v > b->v ? a->v : b->v;                                                        \
        out->i = a->v > b->v ? a->i : a->v < b->v ? b->i : a->i < b->i ? a->i : b->i;              \
    }                                                                                              \
    static void ref_##name##_MINLOC(const void *a_, const void *b_, void *out_)                    \
    {                                                                                              \
        const struct name *a = a_, *b = b_;                                                        \
        struct name *out = out_;                                                                   \
        out->v = a->v < b->v ? a->v : b->v;                                                        \
        out->i = a->v < b->v ? a->i : a->v > b->v ? b->i : a->i < b->i ? a->i : b->i;              \
    }
PAIR2(two_float, float)
PAIR2(two_double, double)

#define C(name, type, op) {#name " " #op, type, MPI_##op, gen_##name, eq_##name, ref_##name##_##op},
#define INT_CASES(name, type)                                                                      \
    C(name, type, MAX)                                                                             \
    C(name, type, MIN)                                                                             \
    C(name, type, SUM)                                                                             \
    C(name, type, PROD)                                                                            \
    C(name, type, LAND)                                                                            \
    C(name, type, LOR)                                                                             \
    C(name, type, LXOR) C(name, type, BAND) C(name, type, BOR) C(name, type, BXOR)
#define FLOAT_CASES(name, type)                                                                    \
    C(name, type, MAX) C(name, type, MIN) C(name, type, SUM) C(name, type, PROD)
#define PAIR_CASES(name, type) C(name, type, MAXLOC) C(name, type, MINLOC)
/* Fortran integers: no logical operations (MPI-4.1 6.9.2). */
#define FINT_CASES(name, type)                                                                     \
    C(name, type, MAX)                                                                             \
    C(name, type, MIN)                                                                             \
    C(name, type, SUM)                                                                             \
    C(name, type, PROD) C(name, type, BAND) C(name, type, BOR) C(name, type, BXOR)
#define LOGICAL_CASES(name, type) C(name, type, LAND) C(name, type, LOR) C(name, type, LXOR)
#define COMPLEX_CASES(name, type) C(name, type, SUM) C(name, type, PROD)

static const struct tcase cases[] = {
    INT_CASES(schar, MPI_SIGNED_CHAR) INT_CASES(uchar, MPI_UNSIGNED_CHAR) INT_CASES(
        short, MPI_SHORT) INT_CASES(ushort, MPI_UNSIGNED_SHORT) INT_CASES(int, MPI_INT)
        INT_CASES(uint, MPI_UNSIGNED) INT_CASES(long, MPI_LONG) INT_CASES(ulong, MPI_UNSIGNED_LONG)
            INT_CASES(llong, MPI_LONG_LONG) INT_CASES(ullong, MPI_UNSIGNED_LONG_LONG) INT_CASES(
                i8, MPI_INT8_T) INT_CASES(i16, MPI_INT16_T) INT_CASES(i32, MPI_INT32_T)
                INT_CASES(i64, MPI_INT64_T) INT_CASES(u8, MPI_UINT8_T) INT_CASES(u16, MPI_UINT16_T)
                    INT_CASES(u32, MPI_UINT32_T) INT_CASES(u64, MPI_UINT64_T) INT_CASES(
                        aint, MPI_AINT) INT_CASES(offset, MPI_OFFSET) INT_CASES(count, MPI_COUNT)
                        C(byte, MPI_BYTE, BAND) C(byte, MPI_BYTE, BOR) C(byte, MPI_BYTE, BXOR)
                            C(bool, MPI_C_BOOL, LAND) C(bool, MPI_C_BOOL, LOR)
                                C(bool, MPI_C_BOOL, LXOR) FLOAT_CASES(float, MPI_FLOAT) FLOAT_CASES(
                                    double, MPI_DOUBLE) FLOAT_CASES(ldouble, MPI_LONG_DOUBLE)
                                    C(cfloat, MPI_C_FLOAT_COMPLEX,
                                      SUM) C(cfloat, MPI_C_FLOAT_COMPLEX,
                                             PROD) C(cdouble, MPI_C_DOUBLE_COMPLEX,
                                                     SUM) C(cdouble, MPI_C_DOUBLE_COMPLEX, PROD)
                                        C(cldouble, MPI_C_LONG_DOUBLE_COMPLEX, SUM)
                                            C(cldouble, MPI_C_LONG_DOUBLE_COMPLEX, PROD)
                                                PAIR_CASES(float_int, MPI_FLOAT_INT)
                                                    PAIR_CASES(double_int, MPI_DOUBLE_INT)
                                                        PAIR_CASES(long_int, MPI_LONG_INT)
                                                            PAIR_CASES(two_int, MPI_2INT)
                                                                PAIR_CASES(short_int, MPI_SHORT_INT)
                                                                    PAIR_CASES(long_double_int,
                                                                               MPI_LONG_DOUBLE_INT)
    /* Fortran's types and C++'s, through the kernels of their C twins. */
    FINT_CASES(i32, MPI_INTEGER) FINT_CASES(i8, MPI_INTEGER1) FINT_CASES(i16, MPI_INTEGER2)
        FINT_CASES(i32, MPI_INTEGER4) FINT_CASES(i64, MPI_INTEGER8) LOGICAL_CASES(i32, MPI_LOGICAL)
            C(bool, MPI_CXX_BOOL, LAND) C(bool, MPI_CXX_BOOL, LOR) C(bool, MPI_CXX_BOOL, LXOR)
                FLOAT_CASES(float, MPI_REAL) FLOAT_CASES(float, MPI_REAL4) FLOAT_CASES(
                    double, MPI_DOUBLE_PRECISION) FLOAT_CASES(double, MPI_REAL8)
                    FLOAT_CASES(f128, MPI_REAL16) COMPLEX_CASES(cfloat, MPI_COMPLEX) COMPLEX_CASES(
                        cfloat, MPI_COMPLEX8) COMPLEX_CASES(cdouble, MPI_DOUBLE_COMPLEX)
                        COMPLEX_CASES(cdouble, MPI_COMPLEX16) COMPLEX_CASES(c128, MPI_COMPLEX32)
                            COMPLEX_CASES(cfloat, MPI_CXX_FLOAT_COMPLEX)
                                COMPLEX_CASES(cdouble, MPI_CXX_DOUBLE_COMPLEX)
                                    COMPLEX_CASES(cldouble, MPI_CXX_LONG_DOUBLE_COMPLEX)
                                        PAIR_CASES(two_int, MPI_2INTEGER)
                                            PAIR_CASES(two_float, MPI_2REAL)
                                                PAIR_CASES(two_double, MPI_2DOUBLE_PRECISION)};

union big {
    max_align_t align;
    unsigned char b[N * 32];
};

/* Compares n elements of size sz; reports the first difference. */
static void check_elems(const struct tcase *c, const char *form, size_t n, const void *got,
                        const void *want, size_t sz)
{
    for (size_t i = 0; i < n; i++)
        if (!c->eq((const char *)got + i * sz, (const char *)want + i * sz)) {
            fprintf(stderr, "%s, %s, %zu elements: element %zu differs\n", c->name, form, n, i);
            CHECK(false);
            return;
        }
    CHECK(true);
}

static void run_case(const struct tcase *c, size_t n)
{
    static union big in, io, want, out, buf;
    struct loom_type *t = T(c->type);
    struct loom_op *op = O(c->op);
    char why[160];
    CHECK(loom_op_problem(op, t, why, sizeof why) == NULL);
    size_t sz = (size_t)(t->ub - t->lb);
    memset(&in, 0, sizeof in);
    memset(&io, 0, sizeof io);
    c->gen(in.b, io.b, n);
    for (size_t i = 0; i < n; i++)
        c->ref(in.b + i * sz, io.b + i * sz, want.b + i * sz);

    memcpy(buf.b, io.b, n * sz);
    loom_op_apply(op, in.b, buf.b, n, t);
    check_elems(c, "apply", n, buf.b, want.b, sz);
    loom_op_reduce3(op, in.b, io.b, out.b, n, t);
    check_elems(c, "reduce3 out=c", n, out.b, want.b, sz);
    memcpy(buf.b, io.b, n * sz);
    loom_op_reduce3(op, in.b, buf.b, buf.b, n, t);
    check_elems(c, "reduce3 out=b", n, buf.b, want.b, sz);
    memcpy(buf.b, in.b, n * sz);
    loom_op_reduce3(op, buf.b, io.b, buf.b, n, t);
    check_elems(c, "reduce3 out=a", n, buf.b, want.b, sz);
}

static void test_all_cases(void)
{
    const size_t lengths[] = {1, 3, 17, 64, 65, N};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
            run_case(&cases[k], lengths[l]);
    /* Every (op, type) pair that is defined has a case. */
    int ncases = 0;
    for (int o = 1; o <= 12; o++)
        for (int n = 1; n <= LOOM_NUM_PREDEFINED_TYPES; n++)
            ncases += defined((MPI_Op)(0x58000000 | o), (MPI_Datatype)(0x4c000000 | n));
    CHECK_EQ(ncases, (int)(sizeof cases / sizeof cases[0]));
}

/* ---- exact values ---- */

static void test_exact(void)
{
    int a[4] = {INT_MAX, -5, 7, 0}, b[4] = {1, 3, -7, 0};
    loom_op_apply(O(MPI_SUM), a, b, 4, T(MPI_INT));
    CHECK(b[0] == INT_MIN && b[1] == -2 && b[2] == 0 && b[3] == 0);
    int c[4] = {0, 0, 5, -5}, d[4] = {0, 3, 0, 7};
    int lx[4], la[4], lo[4];
    loom_op_reduce3(O(MPI_LXOR), c, d, lx, 4, T(MPI_INT));
    loom_op_reduce3(O(MPI_LAND), c, d, la, 4, T(MPI_INT));
    loom_op_reduce3(O(MPI_LOR), c, d, lo, 4, T(MPI_INT));
    CHECK(lx[0] == 0 && lx[1] == 1 && lx[2] == 1 && lx[3] == 0);
    CHECK(la[0] == 0 && la[1] == 0 && la[2] == 0 && la[3] == 1);
    CHECK(lo[0] == 0 && lo[1] == 1 && lo[2] == 1 && lo[3] == 1);

    unsigned short us[2] = {65535, 300}, vs[2] = {65535, 300};
    loom_op_apply(O(MPI_PROD), us, vs, 2, T(MPI_UNSIGNED_SHORT));
    CHECK(vs[0] == 1 && vs[1] == (unsigned short)90000);
    signed char sc[2] = {-128, 100}, tc[2] = {-1, 100};
    loom_op_apply(O(MPI_PROD), sc, tc, 2, T(MPI_SIGNED_CHAR));
    CHECK(tc[0] == -128 && tc[1] == 16);
    unsigned ua[2] = {UINT_MAX, 1}, ub[2] = {1, 2};
    loom_op_apply(O(MPI_MAX), ua, ub, 2, T(MPI_UNSIGNED));
    CHECK(ub[0] == UINT_MAX && ub[1] == 2);
    long la2[2] = {-1, LONG_MIN}, lb2[2] = {1, 0};
    loom_op_apply(O(MPI_MIN), la2, lb2, 2, T(MPI_LONG));
    CHECK(lb2[0] == -1 && lb2[1] == LONG_MIN);
    unsigned char by[2] = {0xf0, 0xaa}, bz[2] = {0x3c, 0xff};
    loom_op_apply(O(MPI_BXOR), by, bz, 2, T(MPI_BYTE));
    CHECK(bz[0] == 0xcc && bz[1] == 0x55);
    bool ba[2] = {true, true}, bb[2] = {true, false};
    loom_op_apply(O(MPI_LXOR), ba, bb, 2, T(MPI_C_BOOL));
    CHECK(!bb[0] && bb[1]);

    double complex za[2] = {1 + 2 * I, -1}, zb[2] = {3 + 4 * I, 2 * I};
    loom_op_apply(O(MPI_PROD), za, zb, 2, T(MPI_C_DOUBLE_COMPLEX));
    CHECK(zb[0] == -5 + 10 * I && zb[1] == -2 * I);
    float complex fa = 1.5f - 1 * I, fb = 2 + 2 * I;
    loom_op_apply(O(MPI_PROD), &fa, &fb, 1, T(MPI_C_FLOAT_COMPLEX));
    CHECK(fb == 5 + 1 * I);
    long double complex lza = 2 + 3 * I, lzb = 1 - 1 * I;
    loom_op_apply(O(MPI_SUM), &lza, &lzb, 1, T(MPI_C_LONG_DOUBLE_COMPLEX));
    CHECK(lzb == 3 + 2 * I);
    double dm[3] = {-0.5, 1e300, 2}, dn[3] = {-1, 1e301, 2};
    loom_op_apply(O(MPI_MAX), dm, dn, 3, T(MPI_DOUBLE));
    CHECK(dn[0] == -0.5 && dn[1] == 1e301 && dn[2] == 2);

    /* MAXLOC/MINLOC: ties keep the lower index, whichever side it is on. */
    struct two_int p[4] = {{3, 5}, {3, 2}, {1, 9}, {-4, 0}},
                   q[4] = {{3, 2}, {3, 5}, {2, 1}, {-4, 7}};
    struct two_int mx[4], mn[4];
    loom_op_reduce3(O(MPI_MAXLOC), p, q, mx, 4, T(MPI_2INT));
    loom_op_reduce3(O(MPI_MINLOC), p, q, mn, 4, T(MPI_2INT));
    CHECK(mx[0].v == 3 && mx[0].i == 2 && mx[1].v == 3 && mx[1].i == 2);
    CHECK(mx[2].v == 2 && mx[2].i == 1 && mx[3].v == -4 && mx[3].i == 0);
    CHECK(mn[0].i == 2 && mn[1].i == 2 && mn[2].v == 1 && mn[2].i == 9 && mn[3].i == 0);
    struct double_int e = {2.5, 4}, f = {2.5, 3};
    loom_op_apply(O(MPI_MINLOC), &e, &f, 1, T(MPI_DOUBLE_INT));
    CHECK(f.v == 2.5 && f.i == 3);

    /* REPLACE takes the left operand, NO_OP keeps the right one. */
    int r1[2] = {1, 2}, r2[2] = {3, 4}, r3[2];
    loom_op_reduce3(O(MPI_REPLACE), r1, r2, r3, 2, T(MPI_INT));
    CHECK(r3[0] == 1 && r3[1] == 2);
    loom_op_reduce3(O(MPI_NO_OP), r1, r2, r3, 2, T(MPI_INT));
    CHECK(r3[0] == 3 && r3[1] == 4);
    loom_op_apply(O(MPI_NO_OP), r1, r2, 2, T(MPI_INT));
    CHECK(r2[0] == 3 && r2[1] == 4);
    loom_op_apply(O(MPI_REPLACE), r1, r2, 2, T(MPI_INT));
    CHECK(r2[0] == 1 && r2[1] == 2);
}

/* ---- derived layouts ---- */

static void test_derived(void)
{
    /* Every other int, 50 elements of 3 blocks: gaps stay untouched. */
    struct loom_type *ti = T(MPI_INT);
    int vi[3] = {3, 1, 2};
    struct loom_type *vec = mk(MPI_COMBINER_VECTOR, vi, NULL, &ti);
    enum { E = 50, L = E * 6 };
    static int x[L], y[L], z[L];
    for (int i = 0; i < L; i++) {
        x[i] = i;
        y[i] = 1000 * i;
    }
    memcpy(z, y, sizeof z);
    loom_op_apply(O(MPI_SUM), x, z, E, vec);
    int bad = 0;
    for (int i = 0; i < L; i++) {
        /* an element spans 5 ints (extent), blocks at 0, 2, 4 of each */
        int k = i % 5;
        bool data = i < E * 5 && (k == 0 || k == 2 || k == 4);
        bad += z[i] != (data ? 1001 * i : 1000 * i);
    }
    CHECK_EQ(bad, 0);
    /* reduce3 on the strided layout: all three aliasing forms. */
    static int w[L];
    memcpy(w, y, sizeof w);
    memcpy(z, y, sizeof z);
    loom_op_reduce3(O(MPI_SUM), x, y, w, E, vec);
    loom_op_reduce3(O(MPI_SUM), x, z, z, E, vec);
    bad = 0;
    for (int i = 0; i < L; i++) {
        int k = i % 5;
        bool data = i < E * 5 && (k == 0 || k == 2 || k == 4);
        bad += w[i] != (data ? 1001 * i : 1000 * i) || z[i] != w[i];
    }
    memcpy(z, x, sizeof z);
    loom_op_reduce3(O(MPI_MAX), z, y, z, E, vec);
    for (int i = 0; i < L; i++) {
        int k = i % 5;
        bool data = i < E * 5 && (k == 0 || k == 2 || k == 4);
        bad += z[i] != (data ? 1000 * i : i);
    }
    CHECK_EQ(bad, 0);

    /* Misaligned ints (hindexed blocks at bytes 1 and 1207; extent 2006),
     * two elements: through bounce buffers, over several of them. */
    int hi[3] = {2, 300, 200};
    MPI_Aint ha[2] = {1, 1207};
    struct loom_type *mis = mk(MPI_COMBINER_HINDEXED, hi, ha, &ti);
    CHECK_EQ(mis->ub - mis->lb, 2006);
    enum { MB = 4096 + 64 };
    static unsigned char ma[MB], mb[MB], mc[MB];
    for (int i = 0; i < MB; i++) {
        ma[i] = (unsigned char)i;
        mb[i] = (unsigned char)(3 * i + 1);
    }
    memcpy(mc, mb, MB);
    loom_op_apply(O(MPI_PROD), ma, mc, 2, mis);
    bad = 0;
    static bool covered[MB];
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 500; j++) {
            size_t off =
                2006 * (size_t)k + (j < 300 ? 1 + 4 * (size_t)j : 1207 + 4 * (size_t)(j - 300));
            int va, vb, vc;
            memcpy(&va, ma + off, 4);
            memcpy(&vb, mb + off, 4);
            memcpy(&vc, mc + off, 4);
            bad += vc != (int)((unsigned)va * (unsigned)vb);
            memset(covered + off, 1, 4);
        }
    for (int i = 0; i < MB; i++)
        bad += !covered[i] && mc[i] != mb[i];
    CHECK_EQ(bad, 0);

    /* Pairs with padding in a strided vector: packed and converted. */
    struct loom_type *tdi = T(MPI_DOUBLE_INT);
    int pv[3] = {40, 2, 3};
    struct loom_type *pvec = mk(MPI_COMBINER_VECTOR, pv, NULL, &tdi);
    static struct double_int pa[120], pb[120];
    for (int i = 0; i < 120; i++) {
        pa[i] = (struct double_int){(double)(i % 4), i};
        pb[i] = (struct double_int){(double)(i % 3), 200 - i};
    }
    loom_op_apply(O(MPI_MAXLOC), pa, pb, 1, pvec);
    bad = 0;
    for (int i = 0; i < 120; i++) {
        double va = i % 4, vb = i % 3;
        struct double_int w2 = {vb, 200 - i};
        if (i % 3 != 2) {
            if (va > vb || (va == vb && i < 200 - i))
                w2 = (struct double_int){va, i};
        }
        bad += pb[i].v != w2.v || pb[i].i != w2.i;
    }
    CHECK_EQ(bad, 0);

    /* A contiguous run of 2INT (one block): the direct path. */
    struct loom_type *t2 = T(MPI_2INT);
    int c3[1] = {3};
    struct loom_type *cont = mk(MPI_COMBINER_CONTIGUOUS, c3, NULL, &t2);
    CHECK(cont->contig);
    struct two_int ca[6] = {{1, 0}, {5, 1}, {2, 2}, {2, 3}, {9, 4}, {0, 5}};
    struct two_int cb[6] = {{1, 9}, {4, 9}, {3, 9}, {2, 1}, {9, 9}, {-1, 9}};
    loom_op_apply(O(MPI_MINLOC), ca, cb, 2, cont);
    CHECK(cb[0].v == 1 && cb[0].i == 0 && cb[1].v == 4 && cb[1].i == 9);
    CHECK(cb[2].v == 2 && cb[2].i == 2 && cb[3].v == 2 && cb[3].i == 1);
    CHECK(cb[4].i == 4 && cb[5].v == -1 && cb[5].i == 9);

    /* REPLACE on a mixed struct type copies its data only. */
    int si[3] = {2, 1, 1};
    MPI_Aint sa[2] = {0, 8};
    struct loom_type *st[2] = {ti, T(MPI_DOUBLE)};
    struct loom_type *mixed = mk(MPI_COMBINER_STRUCT, si, sa, st);
    unsigned char sx[32], sy[32];
    memset(sx, 0x11, sizeof sx);
    memset(sy, 0x22, sizeof sy);
    loom_op_apply(O(MPI_REPLACE), sx, sy, 2, mixed);
    CHECK(sy[0] == 0x11 && sy[4] == 0x22 && sy[8] == 0x11 && sy[16] == 0x11 && sy[20] == 0x22);

    loom_type_free(vec);
    loom_type_free(mis);
    loom_type_free(pvec);
    loom_type_free(cont);
    loom_type_free(mixed);
}

/* ---- user ops ---- */

static int calls;
static MPI_Datatype seen_type;

/* inout = in * inout for 2x2 int matrices (one matrix = 4 MPI_INTs). */
static void matmul(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
    int *a = invec, *b = inoutvec;
    calls++;
    seen_type = *dt;
    for (int m = 0; m < *len; m++, a += 4, b += 4) {
        int r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                    a[2] * b[1] + a[3] * b[3]};
        memcpy(b, r, sizeof r);
    }
}

static void test_user(void)
{
    struct loom_type *ti = T(MPI_INT);
    int c4[1] = {4};
    struct loom_type *mat = mk(MPI_COMBINER_CONTIGUOUS, c4, NULL, &ti);
    struct loom_op *op;
    REQUIRE(loom_op_create(matmul, false, &op) == LOOM_OK);
    CHECK(op->number == 0 && !op->commutative && loom_op_get(op->handle) == op);
    char why[128];
    CHECK(loom_op_problem(op, T(MPI_2INT), why, sizeof why) == NULL);
    CHECK(loom_op_handle_problem(op->handle, why, sizeof why) == NULL);
    CHECK(strcmp(loom_op_name(op), "a user-defined operation") == 0);
    CHECK(strcmp(loom_op_name(O(MPI_MAXLOC)), "MPI_MAXLOC") == 0);

    /* A = [1 1; 0 1], B = [1 0; 1 1]: AB = [2 1; 1 1], BA = [1 1; 1 2]. */
    const int A[4] = {1, 1, 0, 1}, B[4] = {1, 0, 1, 1}, AB[4] = {2, 1, 1, 1};
    int m[4];
    memcpy(m, B, sizeof m);
    loom_op_apply(op, A, m, 1, mat);
    CHECK(memcmp(m, AB, sizeof m) == 0);
    CHECK(calls == 1 && seen_type == mat->handle);
    int out[4];
    loom_op_reduce3(op, A, B, out, 1, mat);
    CHECK(memcmp(out, AB, sizeof out) == 0);
    memcpy(m, B, sizeof m);
    loom_op_reduce3(op, A, m, m, 1, mat);
    CHECK(memcmp(m, AB, sizeof m) == 0);
    memcpy(m, A, sizeof m);
    loom_op_reduce3(op, m, B, m, 1, mat); /* out == a, not commutative */
    CHECK(memcmp(m, AB, sizeof m) == 0);
    CHECK(memcmp(A, (int[4]){1, 1, 0, 1}, sizeof A) == 0);

    /* References: a freed handle is stale, the object lives until released. */
    int h = op->handle;
    loom_op_retain(op);
    loom_op_free(op);
    CHECK(loom_op_get(h) == NULL);
    const char *p = loom_op_handle_problem(h, why, sizeof why);
    CHECK(p && strstr(p, "was freed or never created"));
    memcpy(m, B, sizeof m);
    loom_op_apply(op, A, m, 1, mat);
    CHECK(memcmp(m, AB, sizeof m) == 0);
    loom_op_release(op);

    p = loom_op_handle_problem(MPI_OP_NULL, why, sizeof why);
    CHECK(p && strcmp(p, "is MPI_OP_NULL") == 0);
    p = loom_op_handle_problem(MPI_INT, why, sizeof why);
    CHECK(p && strstr(p, "is not an operation handle"));
    CHECK(loom_op_get(0x58000000) == NULL && loom_op_get(0x5800000f) == NULL);
    /* Predefined ops ignore references. */
    loom_op_retain(O(MPI_SUM));
    loom_op_release(O(MPI_SUM));
    loom_op_release(O(MPI_SUM));
    CHECK(loom_op_get(MPI_SUM)->refs == 1);
    loom_type_free(mat);
}

int main(void)
{
    test_defined();
    test_all_cases();
    test_exact();
    test_derived();
    test_user();
    return check_summary();
}
