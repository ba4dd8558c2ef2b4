/*
 * Reduction operations: Allreduce and Reduce (rotating roots) with every
 * predefined op on every predefined C type it is defined for (integers:
 * all of MAX MIN SUM PROD LAND LOR LXOR BAND BOR BXOR; floating point:
 * MAX MIN SUM PROD on exact small integers; MPI_C_BOOL: logical ops;
 * MPI_BYTE: bitwise ops; MPI_C_DOUBLE_COMPLEX: SUM PROD), MAXLOC/MINLOC on
 * the pair types with ties resolved to the lowest index, a non-commutative
 * user op (2x2 integer matrix product mod 10007) checked against the
 * rank-ordered product for Reduce (several roots), Allreduce, Scan, Exscan,
 * Reduce_scatter_block and Reduce_scatter, a commutative user op, and
 * MPI_Op_commutative / MPI_Op_free. Counts 1, 7 and 1031 elements.
 *
 * Usage: coll_ops [quick] [user]   quick: counts 1, 7 and 131 (for many
 * ranks); user: only the user-defined ops.
 * A failure prints type, op, collective, root, index, expected and got.
 */
#include <complex.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MPICH 4.0.2 compares unsigned integers as signed in MAX/MIN
 * (pmodels/mpich#6083, fixed in 4.0.3): skip those when validating with it. */
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40003000
#define UNSIGNED_MINMAX_BROKEN 1
#else
#define UNSIGNED_MINMAX_BROKEN 0
#endif

static int rank, size;
static int roots_seq;
static int counts[] = {1, 7, 1031}; /* quick: 1, 7, 131 */
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))
#define MAXN    1031

enum { OMAX, OMIN, OSUM, OPROD, OLAND, OLOR, OLXOR, OBAND, OBOR, OBXOR, NOPS };
static const char *op_names[NOPS] = {"MPI_MAX", "MPI_MIN",  "MPI_SUM",  "MPI_PROD", "MPI_LAND",
                                     "MPI_LOR", "MPI_LXOR", "MPI_BAND", "MPI_BOR",  "MPI_BXOR"};
static MPI_Op ops[NOPS];

static unsigned hash(unsigned a, unsigned b, unsigned c)
{
    unsigned h = a * 2654435761u ^ (b * 0x9e3779b9u + 0x7f4a7c15u);
    h ^= h >> 15;
    h = (h ^ c) * 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    h *= 0x297a2d39u;
    h ^= h >> 15;
    return h;
}

static void fail(const char *what)
{
    fprintf(stderr, "coll_ops: rank %d of %d: %s\n", rank, size, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check_rc(int rc, const char *call, const char *tname, const char *oname)
{
    if (rc != MPI_SUCCESS) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s on %s with %s returned %d", call, tname, oname, rc);
        fail(msg);
    }
}

/* The root of the next Reduce (rotates through the ranks). */
static int next_root(void)
{
    return roots_seq++ % size;
}

/*
 * Input of rank r at index i for op o, as a long long to be converted to the
 * type: chosen so that the result is exact in every type (no overflow in
 * int8/uint8 at 64 ranks, small integers in floating point) and the ops are
 * distinguishable (logical ops see nonzero values other than 1, bitwise ops
 * see full bit patterns).
 */
static long long input(int o, int r, int i, int bits, int is_signed)
{
    unsigned h = hash((unsigned)o, (unsigned)r, (unsigned)i);
    switch (o) {
    case OMAX:
    case OMIN:
        return is_signed ? (long long)(h % 201) - 100 : (long long)(h % 251);
    case OSUM: /* |sum| <= 64 */
        return is_signed ? (long long)(h % 3) - 1 : (long long)(h % 2);
    case OPROD: /* at most two factors other than 1 per index */
        if (r == i % size)
            return 2;
        if (r == (i + 1) % size && size > 1)
            return is_signed ? -1 : 3;
        return 1;
    case OLAND:
    case OLOR:
    case OLXOR:
        /* i % 4 == 0: all zero; 1: one rank zero; else nonzero (2, 4, 6) */
        if (i % 4 == 0 || (i % 4 == 1 && r == (i / 4) % size))
            return 0;
        return 2 + 2 * (long long)(h % 3);
    default: { /* bitwise: all bits set except a few, or a few set */
        unsigned long long m = ((unsigned long long)h << 32) | hash(7, (unsigned)r, (unsigned)i);
        if (o == OBAND)
            m = ~(1ull << (h % (unsigned)bits)) & ~(1ull << ((h >> 8) % (unsigned)bits));
        else if (o == OBOR)
            m = (1ull << (h % (unsigned)bits)) | (i % 5 == 0 ? 0 : (1ull << ((h >> 8) % 8)));
        if (bits < 64)
            m &= (1ull << bits) - 1;
        if (is_signed && bits < 64 && (m >> (bits - 1)) & 1)
            return (long long)m - (1ll << bits) + 0; /* two's complement value */
        return (long long)m;
    }
    }
}

/* Predefined integer type tests: every op, Allreduce and Reduce. The
 * expected value is computed in the type itself, in rank order. */
#define INT_TEST(NAME, T, DT, SIGNED)                                                              \
    static void test_##NAME(void)                                                                  \
    {                                                                                              \
        static T in[MAXN], out[MAXN], exp[MAXN];                                                   \
        const int bits = (int)(8 * sizeof(T));                                                     \
        for (int o = 0; o < NOPS; o++)                                                             \
            for (int c = 0; c < NCOUNTS; c++) {                                                    \
                int n = counts[c];                                                                 \
                if (UNSIGNED_MINMAX_BROKEN && !(SIGNED) && o <= OMIN)                              \
                    continue;                                                                      \
                for (int i = 0; i < n; i++) {                                                      \
                    in[i] = (T)input(o, rank, i, bits, SIGNED);                                    \
                    T e = (T)input(o, 0, i, bits, SIGNED);                                         \
                    for (int r = 1; r < size; r++) {                                               \
                        T v = (T)input(o, r, i, bits, SIGNED);                                     \
                        switch (o) {                                                               \
                        case OMAX:                                                                 \
                            e = v > e ? v : e;                                                     \
                            break;                                                                 \
                        case OMIN:                                                                 \
                            e = v < e ? v : e;                                                     \
                            break;                                                                 \
                        case OSUM:                                                                 \
                            e = (T)(e + v);                                                        \
                            break;                                                                 \
                        case OPROD:                                                                \
                            e = (T)(e * v);                                                        \
                            break;                                                                 \
                        case OLAND:                                                                \
                            e = (T)(e && v);                                                       \
                            break;                                                                 \
                        case OLOR:                                                                 \
                            e = (T)(e || v);                                                       \
                            break;                                                                 \
                        case OLXOR:                                                                \
                            e = (T)(!e != !v);                                                     \
                            break;                                                                 \
                        case OBAND:                                                                \
                            e = (T)(e & v);                                                        \
                            break;                                                                 \
                        case OBOR:                                                                 \
                            e = (T)(e | v);                                                        \
                            break;                                                                 \
                        case OBXOR:                                                                \
                            e = (T)(e ^ v);                                                        \
                            break;                                                                 \
                        }                                                                          \
                    }                                                                              \
                    /* a single rank's logical result is its value as-is */                        \
                    exp[i] = e;                                                                    \
                }                                                                                  \
                for (int k = 0; k < 2; k++) {                                                      \
                    int root = k ? next_root() : -1;                                               \
                    for (int i = 0; i < n; i++)                                                    \
                        out[i] = (T)0x5a;                                                          \
                    if (k == 0)                                                                    \
                        check_rc(MPI_Allreduce(in, out, n, DT, ops[o], MPI_COMM_WORLD),            \
                                 "MPI_Allreduce", #DT, op_names[o]);                               \
                    else                                                                           \
                        check_rc(MPI_Reduce(in, out, n, DT, ops[o], root, MPI_COMM_WORLD),         \
                                 "MPI_Reduce", #DT, op_names[o]);                                  \
                    if (k == 1 && rank != root)                                                    \
                        continue;                                                                  \
                    for (int i = 0; i < n; i++)                                                    \
                        if (out[i] != exp[i] &&                                                    \
                            !(size == 1 && o >= OLAND && o <= OLXOR && !out[i] == !exp[i])) {      \
                            char msg[300];                                                         \
                            snprintf(msg, sizeof msg,                                              \
                                     "%s %s %s root %d count %d: [%d] expected %lld got %lld",     \
                                     k ? "MPI_Reduce" : "MPI_Allreduce", #DT, op_names[o], root,   \
                                     n, i, (long long)exp[i], (long long)out[i]);                  \
                            fail(msg);                                                             \
                        }                                                                          \
                }                                                                                  \
            }                                                                                      \
    }

typedef long long llong;
typedef unsigned long long ullong;
INT_TEST(int, int, MPI_INT, 1)
INT_TEST(long, long, MPI_LONG, 1)
INT_TEST(short, short, MPI_SHORT, 1)
INT_TEST(unsigned, unsigned, MPI_UNSIGNED, 0)
INT_TEST(long_long, llong, MPI_LONG_LONG, 1)
INT_TEST(unsigned_long_long, ullong, MPI_UNSIGNED_LONG_LONG, 0)
INT_TEST(int8, int8_t, MPI_INT8_T, 1)
INT_TEST(int16, int16_t, MPI_INT16_T, 1)
INT_TEST(int32, int32_t, MPI_INT32_T, 1)
INT_TEST(int64, int64_t, MPI_INT64_T, 1)
INT_TEST(uint8, uint8_t, MPI_UINT8_T, 0)
INT_TEST(uint16, uint16_t, MPI_UINT16_T, 0)
INT_TEST(uint32, uint32_t, MPI_UINT32_T, 0)
INT_TEST(uint64, uint64_t, MPI_UINT64_T, 0)

/* Floating point: MAX MIN SUM PROD on small integers (exact). */
#define FLOAT_TEST(NAME, T, DT)                                                                    \
    static void test_##NAME(void)                                                                  \
    {                                                                                              \
        static T in[MAXN], out[MAXN], exp[MAXN];                                                   \
        for (int o = OMAX; o <= OPROD; o++)                                                        \
            for (int c = 0; c < NCOUNTS; c++) {                                                    \
                int n = counts[c];                                                                 \
                for (int i = 0; i < n; i++) {                                                      \
                    in[i] = (T)input(o, rank, i, 32, 1);                                           \
                    if (o == OSUM)                                                                 \
                        in[i] = in[i] * 1024 + (T)0.5;                                             \
                    T e = 0;                                                                       \
                    for (int r = 0; r < size; r++) {                                               \
                        T v = (T)input(o, r, i, 32, 1);                                            \
                        if (o == OSUM)                                                             \
                            v = v * 1024 + (T)0.5;                                                 \
                        if (r == 0)                                                                \
                            e = v;                                                                 \
                        else if (o == OMAX)                                                        \
                            e = v > e ? v : e;                                                     \
                        else if (o == OMIN)                                                        \
                            e = v < e ? v : e;                                                     \
                        else if (o == OSUM)                                                        \
                            e += v;                                                                \
                        else                                                                       \
                            e *= v;                                                                \
                    }                                                                              \
                    exp[i] = e;                                                                    \
                }                                                                                  \
                for (int k = 0; k < 2; k++) {                                                      \
                    int root = k ? next_root() : -1;                                               \
                    for (int i = 0; i < n; i++)                                                    \
                        out[i] = (T)-12345.25;                                                     \
                    if (k == 0)                                                                    \
                        check_rc(MPI_Allreduce(in, out, n, DT, ops[o], MPI_COMM_WORLD),            \
                                 "MPI_Allreduce", #DT, op_names[o]);                               \
                    else                                                                           \
                        check_rc(MPI_Reduce(in, out, n, DT, ops[o], root, MPI_COMM_WORLD),         \
                                 "MPI_Reduce", #DT, op_names[o]);                                  \
                    if (k == 1 && rank != root)                                                    \
                        continue;                                                                  \
                    for (int i = 0; i < n; i++)                                                    \
                        if (out[i] != exp[i]) {                                                    \
                            char msg[300];                                                         \
                            snprintf(msg, sizeof msg,                                              \
                                     "%s %s %s root %d count %d: [%d] expected %g got %g",         \
                                     k ? "MPI_Reduce" : "MPI_Allreduce", #DT, op_names[o], root,   \
                                     n, i, (double)exp[i], (double)out[i]);                        \
                            fail(msg);                                                             \
                        }                                                                          \
                }                                                                                  \
            }                                                                                      \
    }

FLOAT_TEST(float, float, MPI_FLOAT)
FLOAT_TEST(double, double, MPI_DOUBLE)

/* Runs Allreduce and Reduce of n elements of elem bytes and compares with
 * exp bytewise. */
static void run_both(const void *in, void *out, const void *exp, int n, size_t elem,
                     MPI_Datatype dt, MPI_Op op, const char *tname, const char *oname)
{
    for (int k = 0; k < 2; k++) {
        int root = k ? next_root() : -1;
        memset(out, 0x5a, (size_t)n * elem);
        if (k == 0)
            check_rc(MPI_Allreduce(in, out, n, dt, op, MPI_COMM_WORLD), "MPI_Allreduce", tname,
                     oname);
        else
            check_rc(MPI_Reduce(in, out, n, dt, op, root, MPI_COMM_WORLD), "MPI_Reduce", tname,
                     oname);
        if (k == 1 && rank != root)
            continue;
        for (int i = 0; i < n; i++)
            if (memcmp((const char *)out + i * elem, (const char *)exp + i * elem, elem) != 0) {
                char msg[400], e[40] = "", g[40] = "";
                for (size_t b = 0; b < elem && b < 16; b++) {
                    snprintf(e + 2 * b, 3, "%02x", ((const unsigned char *)exp)[i * elem + b]);
                    snprintf(g + 2 * b, 3, "%02x", ((const unsigned char *)out)[i * elem + b]);
                }
                snprintf(msg, sizeof msg,
                         "%s %s %s root %d count %d: element %d differs: expected bytes %s got %s",
                         k ? "MPI_Reduce" : "MPI_Allreduce", tname, oname, root, n, i, e, g);
                fail(msg);
            }
    }
}

/* MPI_C_BOOL with the logical ops. */
static void test_c_bool(void)
{
    static bool in[MAXN], out[MAXN], exp[MAXN];
    for (int o = OLAND; o <= OLXOR; o++)
        for (int c = 0; c < NCOUNTS; c++) {
            int n = counts[c];
            for (int i = 0; i < n; i++) {
                in[i] = input(o, rank, i, 8, 0) != 0;
                bool e = input(o, 0, i, 8, 0) != 0;
                for (int r = 1; r < size; r++) {
                    bool v = input(o, r, i, 8, 0) != 0;
                    e = o == OLAND ? (e && v) : o == OLOR ? (e || v) : (e != v);
                }
                exp[i] = e;
            }
            run_both(in, out, exp, n, sizeof(bool), MPI_C_BOOL, ops[o], "MPI_C_BOOL", op_names[o]);
        }
}

/* MPI_BYTE with the bitwise ops. */
static void test_byte(void)
{
    static unsigned char in[MAXN], out[MAXN], exp[MAXN];
    for (int o = OBAND; o <= OBXOR; o++)
        for (int c = 0; c < NCOUNTS; c++) {
            int n = counts[c];
            for (int i = 0; i < n; i++) {
                in[i] = (unsigned char)input(o, rank, i, 8, 0);
                unsigned char e = (unsigned char)input(o, 0, i, 8, 0);
                for (int r = 1; r < size; r++) {
                    unsigned char v = (unsigned char)input(o, r, i, 8, 0);
                    e = o == OBAND ? e & v : o == OBOR ? e | v : e ^ v;
                }
                exp[i] = e;
            }
            run_both(in, out, exp, n, 1, MPI_BYTE, ops[o], "MPI_BYTE", op_names[o]);
        }
}

/* MPI_C_DOUBLE_COMPLEX with SUM and PROD: Gaussian integers, exact. */
static void test_complex(void)
{
    static double complex in[MAXN], out[MAXN], exp[MAXN];
    for (int o = OSUM; o <= OPROD; o++)
        for (int c = 0; c < NCOUNTS; c++) {
            int n = counts[c];
            for (int i = 0; i < n; i++) {
                double complex e = 0;
                for (int r = 0; r < size; r++) {
                    double re, im;
                    if (o == OSUM) {
                        re = (double)input(OMAX, r, i, 32, 1);
                        im = (double)input(OMIN, r, i, 32, 1);
                    } else { /* 1, except i (rank i%size) and 1+i (next rank) */
                        re = 1, im = 0;
                        if (r == i % size)
                            re = 0, im = 1;
                        else if (r == (i + 1) % size)
                            re = 1, im = 1;
                    }
                    double complex v = CMPLX(re, im);
                    if (r == rank)
                        in[i] = v;
                    e = r == 0 ? v : o == OSUM ? e + v : e * v;
                }
                exp[i] = e;
            }
            run_both(in, out, exp, n, sizeof(double complex), MPI_C_DOUBLE_COMPLEX, ops[o],
                     "MPI_C_DOUBLE_COMPLEX", op_names[o]);
        }
}

/* MAXLOC/MINLOC: few distinct values (many ties); the index is not the
 * rank, so the lowest index is not simply the first rank. */
#define LOC_TEST(NAME, VT, DT)                                                                     \
    static void test_##NAME(void)                                                                  \
    {                                                                                              \
        struct pair {                                                                              \
            VT v;                                                                                  \
            int i;                                                                                 \
        };                                                                                         \
        static struct pair in[MAXN], out[MAXN], exp[MAXN];                                         \
        for (int maxloc = 0; maxloc < 2; maxloc++)                                                 \
            for (int c = 0; c < NCOUNTS; c++) {                                                    \
                int n = counts[c];                                                                 \
                for (int e = 0; e < n; e++) {                                                      \
                    for (int r = 0; r < size; r++) {                                               \
                        struct pair p;                                                             \
                        memset(&p, 0, sizeof p);                                                   \
                        p.v = (VT)((int)(hash(maxloc, (unsigned)r, (unsigned)e) % 4) - 1);         \
                        p.i = (int)((hash(9, (unsigned)r, (unsigned)e) % 1000) * 64) + size - r;   \
                        if (r == rank)                                                             \
                            in[e] = p;                                                             \
                        if (r == 0 || (maxloc ? p.v > exp[e].v : p.v < exp[e].v) ||                \
                            (p.v == exp[e].v && p.i < exp[e].i))                                   \
                            exp[e] = p;                                                            \
                    }                                                                              \
                }                                                                                  \
                MPI_Op op = maxloc ? MPI_MAXLOC : MPI_MINLOC;                                      \
                for (int k = 0; k < 2; k++) {                                                      \
                    int root = k ? next_root() : -1;                                               \
                    for (int e = 0; e < n; e++)                                                    \
                        out[e].v = (VT)-99, out[e].i = -99;                                        \
                    if (k == 0)                                                                    \
                        check_rc(MPI_Allreduce(in, out, n, DT, op, MPI_COMM_WORLD),                \
                                 "MPI_Allreduce", #DT, maxloc ? "MPI_MAXLOC" : "MPI_MINLOC");      \
                    else                                                                           \
                        check_rc(MPI_Reduce(in, out, n, DT, op, root, MPI_COMM_WORLD),             \
                                 "MPI_Reduce", #DT, maxloc ? "MPI_MAXLOC" : "MPI_MINLOC");         \
                    if (k == 1 && rank != root)                                                    \
                        continue;                                                                  \
                    for (int e = 0; e < n; e++)                                                    \
                        if (out[e].v != exp[e].v || out[e].i != exp[e].i) {                        \
                            char msg[300];                                                         \
                            snprintf(msg, sizeof msg,                                              \
                                     "%s %s %s root %d count %d: [%d] expected (%g, %d) got "      \
                                     "(%g, %d)",                                                   \
                                     k ? "MPI_Reduce" : "MPI_Allreduce", #DT,                      \
                                     maxloc ? "MPI_MAXLOC" : "MPI_MINLOC", root, n, e,             \
                                     (double)exp[e].v, exp[e].i, (double)out[e].v, out[e].i);      \
                            fail(msg);                                                             \
                        }                                                                          \
                }                                                                                  \
            }                                                                                      \
    }

LOC_TEST(2int, int, MPI_2INT)
LOC_TEST(double_int, double, MPI_DOUBLE_INT)
LOC_TEST(long_int, long, MPI_LONG_INT)
LOC_TEST(short_int, short, MPI_SHORT_INT)
LOC_TEST(float_int, float, MPI_FLOAT_INT)

/* Non-commutative user op: 2x2 matrix product mod P, a = a_lower * a_higher
 * (MPI calls f(invec, inoutvec) with invec from the lower ranks and stores
 * invec * inoutvec). Elements are MPI_Type_contiguous(4, MPI_INT). */
#define P 10007
typedef struct {
    int m[4];
} mat;
static MPI_Datatype mat_type;

static mat mat_mul(mat a, mat b)
{
    mat c;
    c.m[0] = (a.m[0] * b.m[0] + a.m[1] * b.m[2]) % P;
    c.m[1] = (a.m[0] * b.m[1] + a.m[1] * b.m[3]) % P;
    c.m[2] = (a.m[2] * b.m[0] + a.m[3] * b.m[2]) % P;
    c.m[3] = (a.m[2] * b.m[1] + a.m[3] * b.m[3]) % P;
    return c;
}

static void mat_op(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
    mat *in = invec, *io = inoutvec;
    int tsize = 0;
    MPI_Type_size(*dt, &tsize); /* the type of the call: 4 ints */
    for (int i = 0; i < *len; i++) {
        if (tsize != (int)sizeof(mat)) /* make the result visibly wrong */
            io[i].m[0] = -1;
        else
            io[i] = mat_mul(in[i], io[i]);
    }
}

static mat mat_of(int r, int i)
{
    mat a;
    for (int k = 0; k < 4; k++)
        a.m[k] = (int)(hash(100 + k, (unsigned)r, (unsigned)i) % P);
    return a;
}

/* Product of the matrices of ranks lo..hi-1 in rank order at index i. */
static mat mat_prod(int lo, int hi, int i)
{
    mat a = mat_of(lo, i);
    for (int r = lo + 1; r < hi; r++)
        a = mat_mul(a, mat_of(r, i));
    return a;
}

static void mat_check(const char *coll, int root, int n, const mat *got, int lo, int hi, int off)
{
    for (int i = 0; i < n; i++) {
        mat e = mat_prod(lo, hi, off + i);
        if (memcmp(&e, &got[i], sizeof e) != 0) {
            char msg[400];
            snprintf(msg, sizeof msg,
                     "%s non-commutative matrix op root %d count %d: [%d] expected product of "
                     "ranks %d..%d (%d %d %d %d) got (%d %d %d %d)",
                     coll, root, n, i, lo, hi - 1, e.m[0], e.m[1], e.m[2], e.m[3], got[i].m[0],
                     got[i].m[1], got[i].m[2], got[i].m[3]);
            fail(msg);
        }
    }
}

static void test_noncommutative(void)
{
    MPI_Op op;
    int commute = -1;
    MPI_Type_contiguous(4, MPI_INT, &mat_type);
    MPI_Type_commit(&mat_type);
    check_rc(MPI_Op_create(mat_op, 0, &op), "MPI_Op_create", "mat", "user");
    MPI_Op_commutative(op, &commute);
    if (commute != 0)
        fail("MPI_Op_commutative of a non-commutative op is not 0");
    static const int ncounts[] = {1, 5, 300};
    int maxn = 302 * size;
    mat *in = malloc(maxn * sizeof(mat)), *out = malloc(maxn * sizeof(mat));
    int *rcounts = malloc(size * sizeof(int));
    if (!in || !out || !rcounts)
        fail("out of memory");
    for (int c = 0; c < 3; c++) {
        int n = ncounts[c];
        for (int i = 0; i < n * size; i++)
            in[i] = mat_of(rank, i);
        /* Reduce at several roots */
        int rts[3] = {0, size - 1, size / 2};
        for (int k = 0; k < 3; k++) {
            memset(out, 0, n * sizeof(mat));
            check_rc(MPI_Reduce(in, out, n, mat_type, op, rts[k], MPI_COMM_WORLD), "MPI_Reduce",
                     "mat", "user");
            if (rank == rts[k])
                mat_check("MPI_Reduce", rts[k], n, out, 0, size, 0);
        }
        memset(out, 0, n * sizeof(mat));
        check_rc(MPI_Allreduce(in, out, n, mat_type, op, MPI_COMM_WORLD), "MPI_Allreduce", "mat",
                 "user");
        mat_check("MPI_Allreduce", -1, n, out, 0, size, 0);
        memcpy(out, in, n * sizeof(mat));
        check_rc(MPI_Allreduce(MPI_IN_PLACE, out, n, mat_type, op, MPI_COMM_WORLD),
                 "MPI_Allreduce in place", "mat", "user");
        mat_check("MPI_Allreduce MPI_IN_PLACE", -1, n, out, 0, size, 0);
        memset(out, 0, n * sizeof(mat));
        check_rc(MPI_Scan(in, out, n, mat_type, op, MPI_COMM_WORLD), "MPI_Scan", "mat", "user");
        mat_check("MPI_Scan", -1, n, out, 0, rank + 1, 0);
        memset(out, 0, n * sizeof(mat));
        check_rc(MPI_Exscan(in, out, n, mat_type, op, MPI_COMM_WORLD), "MPI_Exscan", "mat", "user");
        if (rank > 0)
            mat_check("MPI_Exscan", -1, n, out, 0, rank, 0);
        memset(out, 0, n * sizeof(mat));
        check_rc(MPI_Reduce_scatter_block(in, out, n, mat_type, op, MPI_COMM_WORLD),
                 "MPI_Reduce_scatter_block", "mat", "user");
        mat_check("MPI_Reduce_scatter_block", -1, n, out, 0, size, rank * n);
        int off = 0, total = 0;
        for (int r = 0; r < size; r++) {
            rcounts[r] = (r + c) % 3 == 0 ? 0 : n + r % 2;
            if (r < rank)
                off += rcounts[r];
            total += rcounts[r];
        }
        for (int i = 0; i < total; i++)
            in[i] = mat_of(rank, i);
        memset(out, 0, (rcounts[rank] + 1) * sizeof(mat));
        check_rc(MPI_Reduce_scatter(in, out, rcounts, mat_type, op, MPI_COMM_WORLD),
                 "MPI_Reduce_scatter", "mat", "user");
        mat_check("MPI_Reduce_scatter", -1, rcounts[rank], out, 0, size, off);
    }
    MPI_Op_free(&op);
    if (op != MPI_OP_NULL)
        fail("MPI_Op_free did not set the handle to MPI_OP_NULL");
    MPI_Type_free(&mat_type);
    free(in);
    free(out);
    free(rcounts);
}

/* Commutative user op on MPI_INT: a + b mod P, checked with Allreduce and
 * Reduce; also MPI_Op_commutative on predefined ops. */
static void addmod(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
    int *in = invec, *io = inoutvec;
    for (int i = 0; i < *len; i++)
        io[i] = *dt == MPI_INT ? (in[i] + io[i]) % P : -1;
}

static void test_commutative(void)
{
    MPI_Op op;
    int commute = -1;
    check_rc(MPI_Op_create(addmod, 1, &op), "MPI_Op_create", "MPI_INT", "user");
    MPI_Op_commutative(op, &commute);
    if (commute != 1)
        fail("MPI_Op_commutative of a commutative user op is not 1");
    for (int o = 0; o < NOPS; o++) {
        commute = -1;
        MPI_Op_commutative(ops[o], &commute);
        if (commute != 1)
            fail("MPI_Op_commutative of a predefined op is not 1");
    }
    MPI_Op_commutative(MPI_MAXLOC, &commute);
    if (commute != 1)
        fail("MPI_Op_commutative(MPI_MAXLOC) is not 1");
    static int in[MAXN], out[MAXN], exp[MAXN];
    for (int c = 0; c < NCOUNTS; c++) {
        int n = counts[c];
        for (int i = 0; i < n; i++) {
            in[i] = (int)(hash(200, (unsigned)rank, (unsigned)i) % P);
            exp[i] = 0;
            for (int r = 0; r < size; r++)
                exp[i] = (exp[i] + (int)(hash(200, (unsigned)r, (unsigned)i) % P)) % P;
        }
        run_both(in, out, exp, n, sizeof(int), MPI_INT, op, "MPI_INT", "user addmod");
    }
    MPI_Op_free(&op);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int user_only = 0;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "quick") == 0)
            counts[NCOUNTS - 1] = 131;
        else if (strcmp(argv[a], "user") == 0)
            user_only = 1;
    }
    MPI_Op o[NOPS] = {MPI_MAX, MPI_MIN,  MPI_SUM,  MPI_PROD, MPI_LAND,
                      MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR,  MPI_BXOR};
    memcpy(ops, o, sizeof ops);

    if (!user_only) {
        test_int();
        test_long();
        test_short();
        test_unsigned();
        test_long_long();
        test_unsigned_long_long();
        test_int8();
        test_int16();
        test_int32();
        test_int64();
        test_uint8();
        test_uint16();
        test_uint32();
        test_uint64();
        test_float();
        test_double();
        test_c_bool();
        test_byte();
        test_complex();
        test_2int();
        test_double_int();
        test_long_int();
        test_short_int();
        test_float_int();
    }
    test_noncommutative();
    test_commutative();

    MPI_Finalize();
    if (rank == 0)
        printf("coll_ops: %d ranks ok\n", size);
    return 0;
}
