/*
 * The datatype engine: MPI datatypes as flattened layouts, and typed copies
 * between two layouts with no intermediate pack buffer.
 *
 * A datatype describes one element: `size` bytes of data spread over blocks
 * at byte offsets from the buffer pointer, and an extent (ub - lb) that
 * separates consecutive elements. A message is the concatenation of the data
 * bytes of its elements (its type signature's bytes); offsets "in the
 * message" below count those bytes, so a copy can be split into chunks.
 *
 * Objects are shared by all ranks (handles are job-wide, util/handle.h):
 * the receiver of a large message copies straight from the sender's layout,
 * so pending operations hold a reference (loom_type_retain) and a type freed
 * by its owner lives until the last one is released.
 *
 * Depends on: util.
 */
#ifndef LOOM_DATATYPE_H
#define LOOM_DATATYPE_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/common.h"
#include "util/handle.h"

struct loom_type_block {
    MPI_Aint off; /* from the element's start (the buffer pointer) */
    size_t len;   /* bytes */
};

struct loom_type {
    _Atomic int refs;
    int handle;      /* MPI_Datatype of this object */
    size_t size;     /* data bytes of one element (MPI_Type_size) */
    MPI_Aint lb, ub; /* extent = ub - lb (MPI_Type_get_extent) */
    MPI_Aint true_lb, true_ub;
    bool committed; /* predefined types are always committed */
    bool predefined;
    bool contig;      /* one block: data at [true_lb, true_lb + size) and
                         extent == size, so count elements are one block */
    int basic;        /* the predefined type all basic elements share, or 0 */
    MPI_Count nbasic; /* basic elements in one element (MPI_Get_elements) */
    size_t nblocks;
    struct loom_type_block *blocks; /* the element's layout, in type-map order */
    /* what the engine needs beyond this (envelope, contents, name) is its own */
    void *priv;
};

/* The type behind a handle (predefined or user-defined), or NULL when h is
 * no datatype or a freed one. Inline for the predefined types, which every
 * message and collective call of most programs names: an index into their
 * table once it is built. */
struct loom_type *loom_type_get_slow(MPI_Datatype h);
extern struct loom_type loom_pre_types[];
extern _Atomic bool loom_pre_types_ready;
static inline struct loom_type *loom_type_get(MPI_Datatype h)
{
    unsigned n = LOOM_HANDLE_INDEX(h);
    if (LOOM_LIKELY(loom_handle_is_builtin(h, LOOM_KIND_DATATYPE) &&
                    n - 1u < LOOM_NUM_PREDEFINED_TYPES &&
                    atomic_load_explicit(&loom_pre_types_ready, memory_order_acquire)))
        return &loom_pre_types[n];
    return loom_type_get_slow(h);
}

/* Keeps t alive across a pending operation; release drops the reference
 * (and frees a user type whose handle was freed). Predefined types ignore both. */
void loom_type_retain(struct loom_type *t);
void loom_type_release(struct loom_type *t);

/* Copies nbytes of message data, starting at byte `offset` of the message,
 * from (src, st) to (dst, dt); both may be non-contiguous, and the two
 * layouts may differ (only the bytes of the type signatures line up). The
 * caller has checked that offset + nbytes fits both sides. */
void loom_type_copy(void *dst, const struct loom_type *dt, const void *src,
                    const struct loom_type *st, size_t offset, size_t nbytes);

/* Contiguous bytes <-> typed buffer, starting at byte `offset` of the message. */
void loom_type_pack(void *out, const void *src, const struct loom_type *t, size_t offset,
                    size_t nbytes);
void loom_type_unpack(void *dst, const struct loom_type *t, const void *in, size_t offset,
                      size_t nbytes);

/* Basic elements in the first nbytes of a message of type t (MPI_Get_elements),
 * or MPI_UNDEFINED when nbytes ends inside a basic element. */
MPI_Count loom_type_elements(const struct loom_type *t, MPI_Count nbytes);

/* Whether t may be used in communication (committed; predefined types are). */
static inline bool loom_type_usable(const struct loom_type *t)
{
    return t && t->committed;
}

/* Why handle h cannot be used, for an error message ("is MPI_DATATYPE_NULL",
 * "0x... is not a datatype handle", "0x... was freed", "... is not
 * committed" when need_commit), or NULL when it can. */
const char *loom_type_problem(MPI_Datatype h, bool need_commit, char *buf, size_t len);

/* Builds a derived type from a constructor's contents: the arrays that
 * MPI_Type_get_contents returns for `combiner` (MPI-3.1 table 4.1); the
 * caller has checked them. types are retained by the new type. The new type
 * has a handle, one reference (the handle's) and is not committed. Returns
 * LOOM_ERR_INVALID when its size or bounds overflow, LOOM_ERR_NOMEM. */
int loom_type_create(int combiner, const int *ints, const MPI_Aint *aints,
                     struct loom_type *const *types, struct loom_type **new_p) LOOM_MUST_CHECK;

/* A new handle and object equal to t (for MPI_Type_get_contents). */
int loom_type_clone(struct loom_type *t, struct loom_type **new_p) LOOM_MUST_CHECK;

void loom_type_commit(struct loom_type *t);

/* MPI_Type_free of a user type: the handle becomes stale and its reference
 * is dropped; pending operations keep the object. */
void loom_type_free(struct loom_type *t);

/* The constructor and its arguments (MPI_Type_get_envelope/get_contents);
 * combiner is MPI_COMBINER_NAMED for predefined types (no contents). */
void loom_type_envelope(const struct loom_type *t, int *ni_p, int *na_p, int *nd_p,
                        int *combiner_p);
void loom_type_contents(const struct loom_type *t, const int **ints_p, const MPI_Aint **aints_p,
                        struct loom_type *const **types_p);

/* Names (MPI_Type_set_name/get_name); name is at most MPI_MAX_OBJECT_NAME - 1
 * characters (longer ones are cut). get copies the name into
 * buf[MPI_MAX_OBJECT_NAME] and returns its length. */
void loom_type_set_name(struct loom_type *t, const char *name);
int loom_type_get_name(const struct loom_type *t, char *buf);

/* The type signature of count elements of t, in order, as runs: fn(basic,
 * n, arg) for n consecutive basic elements of the predefined type basic (a
 * pair type such as MPI_DOUBLE_INT is one element). Types of no data
 * (MPI_LB, MPI_UB, empty types) contribute nothing. */
typedef void loom_type_run_fn(const struct loom_type *basic, size_t n, void *arg);
void loom_type_signature(const struct loom_type *t, size_t count, loom_type_run_fn *fn, void *arg);

/* The type MPI_Type_create_f90_integer/real/complex returns: combiner
 * MPI_COMBINER_F90_*, contents (p, r) or (r), the layout and basic type of
 * the predefined type base. Made on first use and kept for the job, so the
 * same arguments give the same handle. LOOM_ERR_NOMEM when out of memory or
 * of the 64 entries. */
int loom_type_f90(int combiner, int p, int r, MPI_Datatype base,
                  struct loom_type **t_p) LOOM_MUST_CHECK;

/* Predefined types and the F90 types above: they cannot be freed, and
 * MPI_Type_get_contents hands out their own handle, not a copy. */
bool loom_type_is_named(const struct loom_type *t);

/* external32 (MPI-3.1 13.5.2): big-endian, the standard's sizes (e.g.
 * MPI_LONG 4 bytes, MPI_LONG_DOUBLE IEEE binary128, MPI_WCHAR 2 bytes).
 * size: the bytes of count elements of t. pack writes count elements of t
 * from inbuf as external32 to out; LOOM_ERR_INVALID when a value has no
 * external32 form (an MPI_LONG beyond 32 bits: MPI_ERR_CONVERSION),
 * LOOM_ERR_NOMEM. unpack reads them back into outbuf. */
size_t loom_type_ext32_size(const struct loom_type *t, size_t count);
int loom_type_ext32_pack(void *out, const void *inbuf, const struct loom_type *t,
                         size_t count) LOOM_MUST_CHECK;
int loom_type_ext32_unpack(void *outbuf, const struct loom_type *t, size_t count,
                           const void *in) LOOM_MUST_CHECK;

/* The block index and the byte within it where message byte `offset` of an
 * element lies (0 <= offset < t->size); binary search, O(log nblocks). */
size_t loom_type_find_block(const struct loom_type *t, size_t offset, size_t *in_p);

#endif
