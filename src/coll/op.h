/*
 * Reduction operations (MPI_Op): the predefined operations of MPI-3.1 5.9.2
 * and user functions, and the engine that applies them to typed buffers.
 *
 * Semantics follow MPI: applying op to (in, inout) leaves
 * inout[i] = in[i] op inout[i], in is the left operand. Predefined ops run
 * one generated kernel per (operation, C element type), a simple loop over
 * restrict pointers that the compiler vectorizes; signed integers add and
 * multiply with two's complement wrap-around (no undefined behaviour),
 * LAND/LOR/LXOR give 0 or 1, MAX/MIN use C's > and <, MAXLOC/MINLOC keep
 * the lower index on equal values.
 *
 * Objects are job-wide table entries (util/handle.h, LOOM_KIND_OP) but a
 * user op belongs to the rank that created it: its function lives in that
 * rank's copy of the program. A pending operation holds a reference
 * (loom_op_retain); predefined ops are static and ignore references.
 *
 * Depends on: datatype, runtime (the calling rank), util.
 */
#ifndef LOOM_COLL_OP_H
#define LOOM_COLL_OP_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "datatype/datatype.h"
#include "util/common.h"

struct loom_op {
    _Atomic int refs;
    int handle; /* MPI_Op of this object */
    int number; /* predefined: 1..LOOM_NUM_PREDEFINED_OPS; user: 0 */
    bool commutative;
    MPI_User_function *fn; /* user ops: the creating rank's function */
    int owner;             /* user ops: world rank of the creator (-1 outside a job) */
};

/* The op behind a handle, or NULL when h is MPI_OP_NULL, not an op, or freed
 * (inline for the predefined ops). */
struct loom_op *loom_op_get_slow(MPI_Op h);
extern struct loom_op loom_pre_ops[LOOM_NUM_PREDEFINED_OPS + 1];
static inline struct loom_op *loom_op_get(MPI_Op h)
{
    unsigned n = LOOM_HANDLE_INDEX(h);
    if (LOOM_LIKELY(loom_handle_is_builtin(h, LOOM_KIND_OP) && n - 1u < LOOM_NUM_PREDEFINED_OPS))
        return &loom_pre_ops[n];
    return loom_op_get_slow(h);
}

/* Keeps a user op alive across a pending operation; release drops the
 * reference (and frees an op whose handle was freed). Predefined ops ignore both. */
void loom_op_retain(struct loom_op *op);
void loom_op_release(struct loom_op *op);

/* Why handle h cannot be used by the calling rank, for an error message
 * ("is MPI_OP_NULL", "0x... is not an operation handle", "0x... was freed
 * or never created", "0x... belongs to rank 3"), or NULL when it can. */
const char *loom_op_handle_problem(MPI_Op h, char *buf, size_t len);

/* "MPI_SUM", ..., or "a user-defined operation". */
const char *loom_op_name(const struct loom_op *op);

/* A user op with one reference (its handle's); LOOM_ERR_NOMEM when out of
 * memory or of handles. */
int loom_op_create(MPI_User_function *fn, bool commutative, struct loom_op **op_p) LOOM_MUST_CHECK;

/* MPI_Op_free of a user op: the handle becomes stale and its reference is
 * dropped; pending operations keep the object. */
void loom_op_free(struct loom_op *op);

/* NULL when op may be applied to type t, else why not, written to buf
 * ("MPI_SUM is not defined for MPI_2INT"). Predefined ops: every basic
 * element of t must be of a type the op is defined for (MPI-3.1 5.9.2:
 * MAX/MIN on C integers and floating point; SUM/PROD also complex;
 * LAND/LOR/LXOR on C integers and MPI_C_BOOL; BAND/BOR/BXOR on C integers
 * and MPI_BYTE; MAXLOC/MINLOC on the pair types; REPLACE/NO_OP on any
 * type). MPI_CHAR, MPI_WCHAR and MPI_PACKED are no C integers. A derived
 * type qualifies when all its basic elements are of one such type
 * (t->basic); an empty type always does. User ops: any type. */
const char *loom_op_problem(const struct loom_op *op, const struct loom_type *t, char *buf,
                            size_t len);

/* Whether op on t gives the same bits whatever order and grouping the
 * operands are combined in, so that a reduction may combine them as they
 * arrive: a predefined op on C integers, MPI_BYTE, MPI_C_BOOL or the
 * integer pair types (MAXLOC/MINLOC on MPI_2INT, MPI_LONG_INT,
 * MPI_SHORT_INT), or an empty type. Not floating point or complex (rounding;
 * MAX/MIN of -0.0 and +0.0 or of a NaN depend on the order too), not user
 * ops. The caller has checked loom_op_problem. */
bool loom_op_exact(const struct loom_op *op, const struct loom_type *t);

/* inout = in op inout, element-wise, for count elements of type t; both
 * buffers have t's layout (any layout; in and inout do not overlap). User
 * ops get op->fn(in, inout, &n, &t->handle), in calls of at most INT_MAX
 * elements. The caller has checked loom_op_problem. */
void loom_op_apply(const struct loom_op *op, const void *in, void *inout, size_t count,
                   const struct loom_type *t);

/* A predefined op's kernels for a predefined contiguous type t, working on
 * arrays of t: two(in, inout, n) leaves inout = in op inout, three(a, b,
 * out, n) leaves out = a op b (out may be b); every pointer aligned to
 * `align`. What loom_op_apply() and loom_op_reduce3() run for such types,
 * for callers that apply them without those functions' checks. */
struct loom_op_kernels {
    void (*two)(const void *in, void *inout, size_t n);
    void (*three)(const void *a, const void *b, void *out, size_t n);
    size_t align;
};
/* The kernels for op on t when op is predefined, computes (not REPLACE or
 * NO_OP) and is defined for t (loom_op_problem), and t is predefined,
 * contiguous and not empty; else NULL. A look-up in a table by op and type
 * (an entry with align 0: none), built on first use. */
extern struct loom_op_kernels loom_op_kernel_table[LOOM_NUM_PREDEFINED_OPS + 1]
                                                  [LOOM_NUM_PREDEFINED_TYPES + 1];
extern _Atomic bool loom_op_kernel_table_ready;
void loom_op_kernel_table_build(void);
static inline const struct loom_op_kernels *loom_op_kernels_for(const struct loom_op *op,
                                                                const struct loom_type *t)
{
    if (LOOM_UNLIKELY(!atomic_load_explicit(&loom_op_kernel_table_ready, memory_order_acquire)))
        loom_op_kernel_table_build();
    if (!op->number || !t->predefined)
        return NULL;
    const struct loom_op_kernels *k =
        &loom_op_kernel_table[op->number][LOOM_HANDLE_INDEX(t->handle)];
    return k->align ? k : NULL;
}

/* out = a op b (a is the left operand: the lower rank's data), for count
 * elements of a type whose elements lie back to back (t predefined or
 * t->contig; other layouts are handled too, more slowly). out may be b, or
 * a, or a third buffer; no partial overlap. Predefined ops compute it in one
 * pass with no copy; a user op copies b to out first (when out != b) and
 * calls fn(a, out); when out == a and the op is not commutative, a is first
 * copied to a temporary buffer. */
void loom_op_reduce3(const struct loom_op *op, const void *a, const void *b, void *out,
                     size_t count, const struct loom_type *t);

#endif
