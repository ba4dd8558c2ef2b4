/*
 * Reduction operations (op.h): the predefined ops as generated kernels, user
 * ops as table entries, and the walks that apply either to typed buffers.
 *
 * Kernels are generated from one list (KERNELS below): for every (operation,
 * C element type) it defines k2 (inout = in op inout) and k3 (out = a op b),
 * each a loop over restrict pointers in fixed steps of 64 bytes (which GCC
 * vectorizes at -O2 too) and a tail. Element types are C types by width and
 * signedness (MPI_INT and MPI_INT32_T share kernels; so do MPI_LONG,
 * MPI_INT64_T, MPI_AINT, MPI_COUNT on LP64); signed integers add, multiply
 * and combine logically or bitwise through their unsigned twin (two's
 * complement wrap-around without undefined behaviour), and compare as signed
 * for MAX/MIN. Complex PROD is C's `*` on _Complex (Annex G: the plain
 * formula, with infinities recovered where it gives NaN + NaN i), for the
 * Fortran complex types too, as Open MPI (which maps MPI_COMPLEX and
 * friends onto its C complex kernels). 88 kernels of each form cover the
 * (op, type) pairs.
 *
 * Layouts: when the elements lie back to back (a predefined type, or a
 * contiguous type of a padding-free element), one kernel call covers the
 * buffer; otherwise the blocks of each element are walked (each block holds
 * whole basic elements); misaligned data and pair types with padding go
 * through small bounce buffers (pack, compute, unpack).
 */
#include "coll/op.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/job.h"
#include "util/handle.h"
#include "util/log.h"

/* ---- element types ---- */

/* The pair types of MAXLOC/MINLOC, laid out as the datatype engine's. */
struct float_int {
    float v;
    int i;
};
struct double_int {
    double v;
    int i;
};
struct long_int {
    long v;
    int i;
};
struct two_int {
    int v;
    int i;
};
struct short_int {
    short v;
    int i;
};
struct long_double_int {
    long double v;
    int i;
};
/* Fortran's MPI_2REAL and MPI_2DOUBLE_PRECISION (MPI_2INTEGER is two_int). */
struct two_float {
    float v;
    float i;
};
struct two_double {
    double v;
    double i;
};

/* X(op, suffix, C type) for each group of element types. */
#define SIGNED_INTS(X, op)                                                                         \
    X(op, i8, int8_t) X(op, i16, int16_t) X(op, i32, int32_t) X(op, i64, int64_t)
#define UNSIGNED_INTS(X, op)                                                                       \
    X(op, u8, uint8_t) X(op, u16, uint16_t) X(op, u32, uint32_t) X(op, u64, uint64_t)
#define REALS(X, op) X(op, f32, float) X(op, f64, double) X(op, fld, long double)
#define COMPLEXES(X, op)                                                                           \
    X(op, c32, float _Complex) X(op, c64, double _Complex) X(op, cld, long double _Complex)
// clang-format off
#define PAIRS(X, op) \
    X(op, float_int, struct float_int) \
    X(op, double_int, struct double_int) \
    X(op, long_int, struct long_int) \
    X(op, two_int, struct two_int) \
    X(op, short_int, struct short_int) \
    X(op, long_double_int, struct long_double_int) \
    X(op, two_float, struct two_float) \
    X(op, two_double, struct two_double)
// clang-format on
/* IEEE binary128 (MPI_REAL16, gfortran's REAL(16)) and its complex. */
#define QUAD(X, op)         X(op, f128, _Float128)
#define QUAD_COMPLEX(X, op) X(op, c128, _Complex _Float128)
#define ALL_CTYPES(X)                                                                              \
    SIGNED_INTS(X, _)                                                                              \
    UNSIGNED_INTS(X, _) REALS(X, _) COMPLEXES(X, _) PAIRS(X, _) QUAD(X, _) QUAD_COMPLEX(X, _)

enum ctype {
    CT_NONE,
#define CT_ENUM(op, suf, T) CT_##suf,
    ALL_CTYPES(CT_ENUM)
#undef CT_ENUM
        NCT
};

/* Size and alignment of each element type. */
static const unsigned char ct_size[NCT] = {
#define CT_SIZE(op, suf, T) [CT_##suf] = sizeof(T),
    ALL_CTYPES(CT_SIZE)
#undef CT_SIZE
};
static const unsigned char ct_align[NCT] = {
#define CT_ALIGN(op, suf, T) [CT_##suf] = _Alignof(T),
    ALL_CTYPES(CT_ALIGN)
#undef CT_ALIGN
};

/* The unsigned type of a signed integer's width (others map to themselves). */
static enum ctype unsigned_twin(enum ctype ct)
{
    return ct >= CT_i8 && ct <= CT_i64 ? ct - CT_i8 + CT_u8 : ct;
}

/* The signed / unsigned element type of a C integer type. */
#define SINT(T)                                                                                    \
    (sizeof(T) == 1 ? CT_i8 : sizeof(T) == 2 ? CT_i16 : sizeof(T) == 4 ? CT_i32 : CT_i64)
#define UINT(T) (SINT(T) - CT_i8 + CT_u8)
_Static_assert(sizeof(long long) == 8 && sizeof(long) <= 8, "integers wider than 64 bits");
_Static_assert(sizeof(_Bool) == 1, "MPI_C_BOOL is handled as a byte");

/* ---- the predefined datatypes ---- */

/* Groups of basic types (MPI-3.1 5.9.2). */
enum {
    G_INT = 1,     /* C integer and multi-language (AINT, OFFSET, COUNT) */
    G_FLOAT = 2,   /* floating point */
    G_COMPLEX = 4, /* complex */
    G_BOOL = 8,    /* logical */
    G_BYTE = 16,   /* byte */
    G_PAIR = 32,   /* MAXLOC/MINLOC pairs */
    G_FINT = 64,   /* Fortran integer (not for LAND/LOR/LXOR) */
    G_ANY = 0xff,  /* REPLACE, NO_OP: also the types in no group */
};

#define TYPES(X)                                                                                   \
    X(MPI_CHAR, 0, CT_NONE)                                                                        \
    X(MPI_SIGNED_CHAR, G_INT, SINT(signed char))                                                   \
    X(MPI_UNSIGNED_CHAR, G_INT, UINT(unsigned char))                                               \
    X(MPI_BYTE, G_BYTE, CT_u8)                                                                     \
    X(MPI_WCHAR, 0, CT_NONE)                                                                       \
    X(MPI_SHORT, G_INT, SINT(short))                                                               \
    X(MPI_UNSIGNED_SHORT, G_INT, UINT(unsigned short))                                             \
    X(MPI_INT, G_INT, SINT(int))                                                                   \
    X(MPI_UNSIGNED, G_INT, UINT(unsigned))                                                         \
    X(MPI_LONG, G_INT, SINT(long))                                                                 \
    X(MPI_UNSIGNED_LONG, G_INT, UINT(unsigned long))                                               \
    X(MPI_LONG_LONG_INT, G_INT, SINT(long long))                                                   \
    X(MPI_UNSIGNED_LONG_LONG, G_INT, UINT(unsigned long long))                                     \
    X(MPI_FLOAT, G_FLOAT, CT_f32)                                                                  \
    X(MPI_DOUBLE, G_FLOAT, CT_f64)                                                                 \
    X(MPI_LONG_DOUBLE, G_FLOAT, CT_fld)                                                            \
    X(MPI_INT8_T, G_INT, CT_i8)                                                                    \
    X(MPI_INT16_T, G_INT, CT_i16)                                                                  \
    X(MPI_INT32_T, G_INT, CT_i32)                                                                  \
    X(MPI_INT64_T, G_INT, CT_i64)                                                                  \
    X(MPI_UINT8_T, G_INT, CT_u8)                                                                   \
    X(MPI_UINT16_T, G_INT, CT_u16)                                                                 \
    X(MPI_UINT32_T, G_INT, CT_u32)                                                                 \
    X(MPI_UINT64_T, G_INT, CT_u64)                                                                 \
    X(MPI_C_BOOL, G_BOOL, CT_u8)                                                                   \
    X(MPI_C_FLOAT_COMPLEX, G_COMPLEX, CT_c32)                                                      \
    X(MPI_C_DOUBLE_COMPLEX, G_COMPLEX, CT_c64)                                                     \
    X(MPI_C_LONG_DOUBLE_COMPLEX, G_COMPLEX, CT_cld)                                                \
    X(MPI_AINT, G_INT, SINT(MPI_Aint))                                                             \
    X(MPI_OFFSET, G_INT, SINT(MPI_Offset))                                                         \
    X(MPI_COUNT, G_INT, SINT(MPI_Count))                                                           \
    X(MPI_PACKED, 0, CT_NONE)                                                                      \
    X(MPI_FLOAT_INT, G_PAIR, CT_float_int)                                                         \
    X(MPI_DOUBLE_INT, G_PAIR, CT_double_int)                                                       \
    X(MPI_LONG_INT, G_PAIR, CT_long_int)                                                           \
    X(MPI_2INT, G_PAIR, CT_two_int)                                                                \
    X(MPI_SHORT_INT, G_PAIR, CT_short_int)                                                         \
    X(MPI_LONG_DOUBLE_INT, G_PAIR, CT_long_double_int)                                             \
    X(MPI_2INTEGER, G_PAIR, CT_two_int)                                                            \
    X(MPI_2REAL, G_PAIR, CT_two_float)                                                             \
    X(MPI_2DOUBLE_PRECISION, G_PAIR, CT_two_double)                                                \
    X(MPI_CHARACTER, 0, CT_NONE)                                                                   \
    X(MPI_LOGICAL, G_BOOL, CT_u32)                                                                 \
    X(MPI_INTEGER, G_FINT, CT_i32)                                                                 \
    X(MPI_REAL, G_FLOAT, CT_f32)                                                                   \
    X(MPI_DOUBLE_PRECISION, G_FLOAT, CT_f64)                                                       \
    X(MPI_COMPLEX, G_COMPLEX, CT_c32)                                                              \
    X(MPI_DOUBLE_COMPLEX, G_COMPLEX, CT_c64)                                                       \
    X(MPI_INTEGER1, G_FINT, CT_i8)                                                                 \
    X(MPI_INTEGER2, G_FINT, CT_i16)                                                                \
    X(MPI_INTEGER4, G_FINT, CT_i32)                                                                \
    X(MPI_INTEGER8, G_FINT, CT_i64)                                                                \
    X(MPI_REAL4, G_FLOAT, CT_f32)                                                                  \
    X(MPI_REAL8, G_FLOAT, CT_f64)                                                                  \
    X(MPI_REAL16, G_FLOAT, CT_f128)                                                                \
    X(MPI_COMPLEX8, G_COMPLEX, CT_c32)                                                             \
    X(MPI_COMPLEX16, G_COMPLEX, CT_c64)                                                            \
    X(MPI_COMPLEX32, G_COMPLEX, CT_c128)                                                           \
    X(MPI_CXX_BOOL, G_BOOL, CT_u8)                                                                 \
    X(MPI_CXX_FLOAT_COMPLEX, G_COMPLEX, CT_c32)                                                    \
    X(MPI_CXX_DOUBLE_COMPLEX, G_COMPLEX, CT_c64)                                                   \
    X(MPI_CXX_LONG_DOUBLE_COMPLEX, G_COMPLEX, CT_cld)                                              \
    X(MPI_LB, 0, CT_NONE)                                                                          \
    X(MPI_UB, 0, CT_NONE)

struct type_info {
    const char *name;
    unsigned char group;
    unsigned char ct;
};

static const struct type_info type_info[LOOM_NUM_PREDEFINED_TYPES + 1] = {
#define TYPE_INFO(h, g, ct) [LOOM_HANDLE_INDEX(h)] = {#h, g, ct},
    TYPES(TYPE_INFO)
#undef TYPE_INFO
};

/* ---- the predefined operations ---- */

#define N_OF(h) ((int)LOOM_HANDLE_INDEX(h))
enum {
    N_MAX = N_OF(MPI_MAX),
    N_MIN = N_OF(MPI_MIN),
    N_SUM = N_OF(MPI_SUM),
    N_PROD = N_OF(MPI_PROD),
    N_UPROD = N_PROD, /* PROD of unsigned integers (below) */
    N_LAND = N_OF(MPI_LAND),
    N_BAND = N_OF(MPI_BAND),
    N_LOR = N_OF(MPI_LOR),
    N_BOR = N_OF(MPI_BOR),
    N_LXOR = N_OF(MPI_LXOR),
    N_BXOR = N_OF(MPI_BXOR),
    N_MAXLOC = N_OF(MPI_MAXLOC),
    N_MINLOC = N_OF(MPI_MINLOC),
    N_REPLACE = N_OF(MPI_REPLACE),
    N_NO_OP = N_OF(MPI_NO_OP),
};

/* X(op, groups of types it is defined for) */
#define OPS(X)                                                                                     \
    X(MAX, G_INT | G_FINT | G_FLOAT)                                                               \
    X(MIN, G_INT | G_FINT | G_FLOAT)                                                               \
    X(SUM, G_INT | G_FINT | G_FLOAT | G_COMPLEX)                                                   \
    X(PROD, G_INT | G_FINT | G_FLOAT | G_COMPLEX)                                                  \
    X(LAND, G_INT | G_BOOL)                                                                        \
    X(BAND, G_INT | G_FINT | G_BYTE)                                                               \
    X(LOR, G_INT | G_BOOL)                                                                         \
    X(BOR, G_INT | G_FINT | G_BYTE)                                                                \
    X(LXOR, G_INT | G_BOOL)                                                                        \
    X(BXOR, G_INT | G_FINT | G_BYTE)                                                               \
    X(MAXLOC, G_PAIR)                                                                              \
    X(MINLOC, G_PAIR)                                                                              \
    X(REPLACE, G_ANY)                                                                              \
    X(NO_OP, G_ANY)

static const char *const op_names[LOOM_NUM_PREDEFINED_OPS + 1] = {
#define OP_NAME(op, g) [N_##op] = "MPI_" #op,
    OPS(OP_NAME)
#undef OP_NAME
};
static const unsigned char op_groups[LOOM_NUM_PREDEFINED_OPS + 1] = {
#define OP_GROUPS(op, g) [N_##op] = g,
    OPS(OP_GROUPS)
#undef OP_GROUPS
};

struct loom_op loom_pre_ops[LOOM_NUM_PREDEFINED_OPS + 1] = {
#define OP_OBJECT(op, g)                                                                           \
    [N_##op] = {.refs = 1, .handle = MPI_##op, .number = N_##op, .commutative = true, .owner = -1},
    OPS(OP_OBJECT)
#undef OP_OBJECT
};

/* ---- kernels ---- */

/* a op b for one element (a is the left operand). */
#define E_MAX(a, b)   ((a) > (b) ? (a) : (b))
#define E_MIN(a, b)   ((a) < (b) ? (a) : (b))
#define E_SUM(a, b)   ((a) + (b))
#define E_PROD(a, b)  ((a) * (b))
#define E_UPROD(a, b) (1u * (a) * (b))          /* no promotion of short operands to int */
#define E_LAND(a, b)  (((a) != 0) & ((b) != 0)) /* both operands read: no branch */
#define E_LOR(a, b)   (((a) != 0) | ((b) != 0))
#define E_LXOR(a, b)  (!(a) != !(b))
#define E_BAND(a, b)  ((a) & (b))
#define E_BOR(a, b)   ((a) | (b))
#define E_BXOR(a, b)  ((a) ^ (b))
/* Equal values keep the lower index. */
#define E_MAXLOC(a, b) ((a).v > (b).v || ((a).v == (b).v && (a).i < (b).i) ? (a) : (b))
#define E_MINLOC(a, b) ((a).v < (b).v || ((a).v == (b).v && (a).i < (b).i) ? (a) : (b))

/* The (operation, element type) pairs that have kernels. */
// clang-format off
#define KERNELS(X) \
    SIGNED_INTS(X, MAX) \
    UNSIGNED_INTS(X, MAX) \
    REALS(X, MAX) \
    SIGNED_INTS(X, MIN) \
    UNSIGNED_INTS(X, MIN) \
    REALS(X, MIN) \
    UNSIGNED_INTS(X, SUM) \
    REALS(X, SUM) \
    COMPLEXES(X, SUM) \
    UNSIGNED_INTS(X, UPROD) \
    REALS(X, PROD) \
    COMPLEXES(X, PROD) \
    UNSIGNED_INTS(X, LAND) \
    UNSIGNED_INTS(X, LOR) \
    UNSIGNED_INTS(X, LXOR) \
    UNSIGNED_INTS(X, BAND) \
    UNSIGNED_INTS(X, BOR) \
    UNSIGNED_INTS(X, BXOR) \
    PAIRS(X, MAXLOC) \
    PAIRS(X, MINLOC) \
    QUAD(X, MAX) \
    QUAD(X, MIN) \
    QUAD(X, SUM) \
    QUAD(X, PROD) \
    QUAD_COMPLEX(X, SUM) \
    QUAD_COMPLEX(X, PROD)
// clang-format on

typedef void kernel2_fn(const void *in, void *inout, size_t n);
typedef void kernel3_fn(const void *a, const void *b, void *out, size_t n);

/* Elements per step of the main loop: a fixed count the compiler turns into
 * whole vectors even when it does not version loops for unknown trip counts
 * (GCC's -O2); the rest goes element by element. */
#define LANES(T) (sizeof(T) >= 64 ? 1 : 64 / sizeof(T))

#define KERNEL(op, suf, T)                                                                         \
    static void k2_##op##_##suf(const void *restrict in_, void *restrict io_, size_t n)            \
    {                                                                                              \
        const T *restrict in = in_;                                                                \
        T *restrict io = io_;                                                                      \
        size_t i = 0;                                                                              \
        for (; i + LANES(T) <= n; i += LANES(T))                                                   \
            for (size_t j = 0; j < LANES(T); j++)                                                  \
                io[i + j] = E_##op(in[i + j], io[i + j]);                                          \
        for (; i < n; i++)                                                                         \
            io[i] = E_##op(in[i], io[i]);                                                          \
    }                                                                                              \
    static void k3_##op##_##suf(const void *restrict a_, const void *restrict b_,                  \
                                void *restrict out_, size_t n)                                     \
    {                                                                                              \
        const T *restrict a = a_;                                                                  \
        const T *restrict b = b_;                                                                  \
        T *restrict out = out_;                                                                    \
        size_t i = 0;                                                                              \
        for (; i + LANES(T) <= n; i += LANES(T))                                                   \
            for (size_t j = 0; j < LANES(T); j++)                                                  \
                out[i + j] = E_##op(a[i + j], b[i + j]);                                           \
        for (; i < n; i++)                                                                         \
            out[i] = E_##op(a[i], b[i]);                                                           \
    }
KERNELS(KERNEL)
#undef KERNEL

struct kernel {
    kernel2_fn *two;
    kernel3_fn *three;
};

static const struct kernel kernels[LOOM_NUM_PREDEFINED_OPS + 1][NCT] = {
#define KERNEL_ENTRY(op, suf, T) [N_##op][CT_##suf] = {k2_##op##_##suf, k3_##op##_##suf},
    KERNELS(KERNEL_ENTRY)
#undef KERNEL_ENTRY
};

/* ---- objects and handles ---- */

struct loom_op *loom_op_get_slow(MPI_Op h)
{
    if (loom_handle_is_builtin(h, LOOM_KIND_OP)) {
        unsigned n = LOOM_HANDLE_INDEX(h);
        return n >= 1 && n <= LOOM_NUM_PREDEFINED_OPS ? &loom_pre_ops[n] : NULL;
    }
    return loom_handle_get(LOOM_KIND_OP, h);
}

void loom_op_retain(struct loom_op *op)
{
    if (op->number == 0)
        atomic_fetch_add_explicit(&op->refs, 1, memory_order_relaxed);
}

void loom_op_release(struct loom_op *op)
{
    if (op->number != 0)
        return;
    /* The last release sees every other holder's use of the op done. */
    if (atomic_fetch_sub_explicit(&op->refs, 1, memory_order_acq_rel) == 1)
        free(op);
}

const char *loom_op_handle_problem(MPI_Op h, char *buf, size_t len)
{
    if (h == MPI_OP_NULL)
        return "is MPI_OP_NULL";
    struct loom_op *op = loom_op_get(h);
    if (!op) {
        if (LOOM_HANDLE_KIND(h) == LOOM_KIND_OP && LOOM_HANDLE_STORAGE(h) == LOOM_HANDLE_TABLE)
            snprintf(buf, len, "0x%x was freed or never created", (unsigned)h);
        else
            snprintf(buf, len, "0x%x is not an operation handle", (unsigned)h);
        return buf;
    }
    struct loom_rank *self = loom_rank_self();
    if (op->number == 0 && self && op->owner >= 0 && op->owner != self->rank) {
        snprintf(buf, len, "0x%x belongs to rank %d", (unsigned)h, op->owner);
        return buf;
    }
    return NULL;
}

const char *loom_op_name(const struct loom_op *op)
{
    return op->number ? op_names[op->number] : "a user-defined operation";
}

int loom_op_create(MPI_User_function *fn, bool commutative, struct loom_op **op_p)
{
    struct loom_op *op = malloc(sizeof *op);
    if (!op)
        return LOOM_ERR_NOMEM;
    struct loom_rank *self = loom_rank_self();
    *op = (struct loom_op){
        .refs = 1, .commutative = commutative, .fn = fn, .owner = self ? self->rank : -1};
    op->handle = loom_handle_alloc(LOOM_KIND_OP, op);
    if (!op->handle) {
        free(op);
        return LOOM_ERR_NOMEM;
    }
    *op_p = op;
    return LOOM_OK;
}

void loom_op_free(struct loom_op *op)
{
    loom_handle_free(LOOM_KIND_OP, op->handle);
    loom_op_release(op);
}

const char *loom_op_problem(const struct loom_op *op, const struct loom_type *t, char *buf,
                            size_t len)
{
    if (op->number == 0 || op_groups[op->number] == G_ANY || t->size == 0)
        return NULL;
    const char *name = op_names[op->number];
    if (!t->basic) {
        snprintf(buf, len,
                 "%s is not defined for datatype 0x%x, whose basic elements are not all of one "
                 "predefined type",
                 name, (unsigned)t->handle);
        return buf;
    }
    const struct type_info *ti = &type_info[LOOM_HANDLE_INDEX(t->basic)];
    if (ti->group & op_groups[op->number])
        return NULL;
    if (t->predefined)
        snprintf(buf, len, "%s is not defined for %s", name, ti->name);
    else
        snprintf(buf, len, "%s is not defined for %s (the basic type of datatype 0x%x)", name,
                 ti->name, (unsigned)t->handle);
    return buf;
}

bool loom_op_exact(const struct loom_op *op, const struct loom_type *t)
{
    if (op->number == 0)
        return false;
    if (t->size == 0)
        return true;
    if (!t->basic)
        return false;
    enum ctype ct = type_info[LOOM_HANDLE_INDEX(t->basic)].ct;
    return (ct >= CT_i8 && ct <= CT_u64) || ct == CT_long_int || ct == CT_two_int ||
           ct == CT_short_int;
}

/* ---- applying kernels to layouts ---- */

/* Bytes of each bounce buffer. */
#define BOUNCE 2048
union bounce {
    max_align_t align;
    unsigned char b[BOUNCE];
};

static bool aligned(const void *p, size_t align)
{
    return (uintptr_t)p % align == 0;
}

/* The kernel of op for the basic type of t (the caller checked that there is one). */
static const struct kernel *kernel_of(const struct loom_op *op, const struct loom_type *t,
                                      enum ctype *ct_p)
{
    enum ctype ct = type_info[LOOM_HANDLE_INDEX(t->basic)].ct;
    if (op->number != N_MAX && op->number != N_MIN)
        ct = unsigned_twin(ct);
    const struct kernel *k = &kernels[op->number][ct];
    LOOM_CHECK(k->two);
    *ct_p = ct;
    return k;
}

/* The number of basic elements in count elements of t, and where they
 * start when they lie back to back as an array of the basic type (else -1). */
static MPI_Aint direct_layout(const struct loom_type *t, const struct loom_type *basic,
                              size_t count, size_t *n_p)
{
    *n_p = count * (t->size / basic->size);
    if (t->predefined)
        return 0;
    return t->contig && basic->contig ? t->true_lb : -1;
}

/* Whether every block of count elements of t is aligned for the element
 * type in both buffers (then each block is an array of basic elements). */
static bool blocks_aligned(const struct loom_type *t, const char *x, const char *y, size_t align)
{
    MPI_Aint ext = t->ub - t->lb;
    if (!aligned(x, align) || !aligned(y, align) || ext % (MPI_Aint)align)
        return false;
    for (size_t j = 0; j < t->nblocks; j++)
        if (t->blocks[j].off % (MPI_Aint)align)
            return false;
    return true;
}

/* inout = in op inout through bounce buffers: pack a chunk of both, convert
 * pairs with padding to their C layout, compute, and unpack. */
static void apply_bounced(kernel2_fn *k2, const char *in, char *inout, size_t n,
                          const struct loom_type *t, const struct loom_type *basic)
{
    union bounce bin, bio, packed;
    size_t per = BOUNCE / (size_t)(basic->ub - basic->lb);
    for (size_t done = 0; done < n; done += per) {
        size_t k = n - done < per ? n - done : per;
        size_t off = done * basic->size, bytes = k * basic->size;
        if (basic->contig) {
            loom_type_pack(bin.b, in, t, off, bytes);
            loom_type_pack(bio.b, inout, t, off, bytes);
            k2(bin.b, bio.b, k);
            loom_type_unpack(inout, t, bio.b, off, bytes);
        } else {
            loom_type_pack(packed.b, in, t, off, bytes);
            loom_type_unpack(bin.b, basic, packed.b, 0, bytes);
            loom_type_pack(packed.b, inout, t, off, bytes);
            loom_type_unpack(bio.b, basic, packed.b, 0, bytes);
            k2(bin.b, bio.b, k);
            loom_type_pack(packed.b, bio.b, basic, 0, bytes);
            loom_type_unpack(inout, t, packed.b, off, bytes);
        }
    }
}

static void apply_predefined(const struct loom_op *op, const char *in, char *inout, size_t count,
                             const struct loom_type *t)
{
    enum ctype ct;
    const struct kernel *k = kernel_of(op, t, &ct);
    const struct loom_type *basic = loom_type_get(t->basic);
    LOOM_CHECK((size_t)(basic->ub - basic->lb) == ct_size[ct]);
    size_t n;
    MPI_Aint at = direct_layout(t, basic, count, &n);
    if (at >= 0 && aligned(in + at, ct_align[ct]) && aligned(inout + at, ct_align[ct])) {
        k->two(in + at, inout + at, n);
        return;
    }
    if (basic->contig && blocks_aligned(t, in, inout, ct_align[ct])) {
        MPI_Aint ext = t->ub - t->lb;
        for (size_t e = 0; e < count; e++)
            for (size_t j = 0; j < t->nblocks; j++) {
                MPI_Aint p = (MPI_Aint)e * ext + t->blocks[j].off;
                k->two(in + p, inout + p, t->blocks[j].len / basic->size);
            }
        return;
    }
    apply_bounced(k->two, in, inout, n, t, basic);
}

/* Copies count elements of t from src to dst (same layout). */
static void copy_elements(void *dst, const void *src, size_t count, const struct loom_type *t)
{
    if (count && t->size && dst != src)
        loom_type_copy(dst, t, src, t, 0, count * t->size);
}

/* Calls a user function on count elements, at most INT_MAX at a time. */
static void apply_user(const struct loom_op *op, const char *in, char *inout, size_t count,
                       const struct loom_type *t)
{
    MPI_Aint ext = t->ub - t->lb;
    MPI_Datatype dt = t->handle;
    while (count) {
        int n = count > INT_MAX ? INT_MAX : (int)count;
        op->fn((void *)in, inout, &n, &dt);
        in += (MPI_Aint)n * ext;
        inout += (MPI_Aint)n * ext;
        count -= (size_t)n;
    }
}

void loom_op_apply(const struct loom_op *op, const void *in, void *inout, size_t count,
                   const struct loom_type *t)
{
    if (!count)
        return;
    if (op->number == 0)
        apply_user(op, in, inout, count, t);
    else if (op->number == N_REPLACE)
        copy_elements(inout, in, count, t);
    else if (op->number != N_NO_OP && t->size)
        apply_predefined(op, in, inout, count, t);
}

/* The bytes count elements of t span from the lowest data byte, and the
 * offset of that byte from the buffer pointer. */
static size_t span_of(const struct loom_type *t, size_t count, MPI_Aint *lo_p)
{
    MPI_Aint last = (MPI_Aint)(count - 1) * (t->ub - t->lb);
    MPI_Aint lo = t->true_lb + (last < 0 ? last : 0), hi = t->true_ub + (last > 0 ? last : 0);
    *lo_p = lo;
    return (size_t)(hi - lo);
}

/* out = a op b for a non-commutative user op with out == a: a goes to a
 * temporary first. */
static void reduce3_user_into_a(const struct loom_op *op, const void *a, const void *b, void *out,
                                size_t count, const struct loom_type *t)
{
    MPI_Aint lo;
    size_t span = span_of(t, count, &lo);
    char *tmp = malloc(span ? span : 1);
    if (!tmp)
        loom_fatal("out of memory for a reduction's temporary buffer (%zu bytes)", span);
    char *copy = tmp - lo;
    copy_elements(copy, a, count, t);
    copy_elements(out, b, count, t);
    apply_user(op, copy, out, count, t);
    free(tmp);
}

struct loom_op_kernels loom_op_kernel_table[LOOM_NUM_PREDEFINED_OPS + 1]
                                           [LOOM_NUM_PREDEFINED_TYPES + 1];
_Atomic bool loom_op_kernel_table_ready;
static pthread_once_t kernel_table_once = PTHREAD_ONCE_INIT;

static void kernel_table_init(void)
{
    for (int o = 1; o <= LOOM_NUM_PREDEFINED_OPS; o++) {
        if (o == N_REPLACE || o == N_NO_OP)
            continue;
        struct loom_op *op = loom_op_get(LOOM_HANDLE(LOOM_HANDLE_BUILTIN, LOOM_KIND_OP, o));
        for (int i = 1; i <= LOOM_NUM_PREDEFINED_TYPES; i++) {
            const struct loom_type *t =
                loom_type_get(LOOM_HANDLE(LOOM_HANDLE_BUILTIN, LOOM_KIND_DATATYPE, i));
            char buf[160];
            if (!op || op->number != o || !t || !t->contig || !t->size ||
                loom_op_problem(op, t, buf, sizeof buf))
                continue;
            enum ctype ct;
            const struct kernel *kn = kernel_of(op, t, &ct);
            loom_op_kernel_table[o][i] = (struct loom_op_kernels){kn->two, kn->three, ct_align[ct]};
        }
    }
    atomic_store_explicit(&loom_op_kernel_table_ready, true, memory_order_release);
}

void loom_op_kernel_table_build(void)
{
    pthread_once(&kernel_table_once, kernel_table_init);
}

void loom_op_reduce3(const struct loom_op *op, const void *a, const void *b, void *out,
                     size_t count, const struct loom_type *t)
{
    if (!count || !t->size)
        return;
    if (op->number == N_REPLACE || op->number == N_NO_OP) {
        copy_elements(out, op->number == N_REPLACE ? a : b, count, t);
        return;
    }
    if (op->number) {
        enum ctype ct;
        const struct kernel *k = kernel_of(op, t, &ct);
        const struct loom_type *basic = loom_type_get(t->basic);
        size_t n, al = ct_align[ct];
        MPI_Aint at = direct_layout(t, basic, count, &n);
        if (at >= 0) {
            const char *pa = (const char *)a + at, *pb = (const char *)b + at;
            char *po = (char *)out + at;
            if (aligned(pa, al) && aligned(pb, al) && aligned(po, al)) {
                if (out == b)
                    k->two(pa, po, n);
                else if (out == a) /* predefined kernels are commutative */
                    k->two(pb, po, n);
                else
                    k->three(pa, pb, po, n);
                return;
            }
        }
    }
    /* Other layouts, and user ops: into the inout form. */
    if (out == b) {
        loom_op_apply(op, a, out, count, t);
    } else if (out == a) {
        if (op->commutative)
            loom_op_apply(op, b, out, count, t);
        else
            reduce3_user_into_a(op, a, b, out, count, t);
    } else {
        copy_elements(out, b, count, t);
        loom_op_apply(op, a, out, count, t);
    }
}
