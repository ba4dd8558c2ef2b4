/*
 * Accumulate and compare-and-swap on a target's memory, atomic per basic
 * element (MPI-3.1 11.7.1) with respect to every other accumulate of the
 * same basic type to the same location (rma.h, "Accumulate atomicity").
 *
 * Two paths, chosen by the basic type and the element's address only:
 * - atomic: a basic type that is no pair, of 1, 2, 4 or 8 bytes, at an
 *   address aligned to its size: fetch-add for integer MPI_SUM, exchange
 *   for MPI_REPLACE, a load for MPI_NO_OP, else a compare-and-swap loop
 *   around the operation's one-element kernel;
 * - striped: the element's stripe lock (job-wide table, by address) held
 *   while it is read, combined and written (long double, complex of 16 or
 *   32 bytes, pair types, unaligned elements). An accumulate of such a
 *   type takes every stripe its target span touches, in order, and then
 *   combines the whole span with the operation's vector kernel.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/op.h"
#include "rma/rma.h"
#include "util/log.h"

#define NSTRIPES    64
#define STRIPE_BITS 12 /* a stripe per 4 KiB of address space, modulo NSTRIPES */

static struct {
    _Atomic int lk;
} LOOM_ALIGNED_CL stripes[NSTRIPES];

static unsigned stripe_of(uintptr_t a)
{
    return (unsigned)(a >> STRIPE_BITS) % NSTRIPES;
}

static void stripe_lock(unsigned s)
{
    while (atomic_exchange_explicit(&stripes[s].lk, 1, memory_order_acquire))
        while (atomic_load_explicit(&stripes[s].lk, memory_order_relaxed))
            loom_cpu_relax();
}

static void stripe_unlock(unsigned s)
{
    atomic_store_explicit(&stripes[s].lk, 0, memory_order_release);
}

static bool is_pair(MPI_Datatype b)
{
    return (b >= MPI_FLOAT_INT && b <= MPI_LONG_DOUBLE_INT) ||
           (b >= MPI_2INTEGER && b <= MPI_2DOUBLE_PRECISION);
}

/* Integer types whose MPI_SUM is two's complement addition of their size. */
static bool is_int(MPI_Datatype b)
{
    switch (b) {
    case MPI_SIGNED_CHAR:
    case MPI_UNSIGNED_CHAR:
    case MPI_SHORT:
    case MPI_UNSIGNED_SHORT:
    case MPI_INT:
    case MPI_UNSIGNED:
    case MPI_LONG:
    case MPI_UNSIGNED_LONG:
    case MPI_LONG_LONG:
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_INT8_T:
    case MPI_INT16_T:
    case MPI_INT32_T:
    case MPI_INT64_T:
    case MPI_UINT8_T:
    case MPI_UINT16_T:
    case MPI_UINT32_T:
    case MPI_UINT64_T:
    case MPI_AINT:
    case MPI_OFFSET:
    case MPI_COUNT:
    case MPI_INTEGER:
    case MPI_INTEGER1:
    case MPI_INTEGER2:
    case MPI_INTEGER4:
    case MPI_INTEGER8:
        return true;
    default:
        return false;
    }
}

/* The atomic path for one element at p (aligned, esize 1, 2, 4 or 8). */
#define ATOMIC_ELEMENT(T)                                                                          \
    static void element_##T(T *p, const void *in, void *out, int opn, bool sum_int,                \
                            const struct loom_op_kernels *k)                                       \
    {                                                                                              \
        _Atomic T *a = (_Atomic T *)p;                                                             \
        T v, old;                                                                                  \
        if (opn == LOOM_HANDLE_INDEX(MPI_NO_OP)) {                                                 \
            old = atomic_load_explicit(a, memory_order_acquire);                                   \
        } else if (opn == LOOM_HANDLE_INDEX(MPI_REPLACE)) {                                        \
            memcpy(&v, in, sizeof v);                                                              \
            old = atomic_exchange_explicit(a, v, memory_order_acq_rel);                            \
        } else if (sum_int) {                                                                      \
            memcpy(&v, in, sizeof v);                                                              \
            old = atomic_fetch_add_explicit(a, v, memory_order_acq_rel);                           \
        } else {                                                                                   \
            old = atomic_load_explicit(a, memory_order_relaxed);                                   \
            do {                                                                                   \
                v = old;                                                                           \
                k->two(in, &v, 1);                                                                 \
            } while (!atomic_compare_exchange_weak_explicit(a, &old, v, memory_order_acq_rel,      \
                                                            memory_order_relaxed));                \
        }                                                                                          \
        if (out)                                                                                   \
            memcpy(out, &old, sizeof old);                                                         \
    }
ATOMIC_ELEMENT(uint8_t)
ATOMIC_ELEMENT(uint16_t)
ATOMIC_ELEMENT(uint32_t)
ATOMIC_ELEMENT(uint64_t)

/* One element by its stripe lock (unaligned elements of an atomic type). */
static void element_locked(char *p, size_t esize, const void *in, void *out,
                           const struct loom_op *op, const struct loom_type *basic)
{
    unsigned s = stripe_of((uintptr_t)p);
    stripe_lock(s);
    if (out)
        memcpy(out, p, esize);
    if (in)
        loom_op_apply(op, in, p, 1, basic);
    stripe_unlock(s);
}

/* Takes (or releases) every stripe of [lo, hi), in stripe order. */
static void stripes_span(uintptr_t lo, uintptr_t hi, bool lock)
{
    bool want[NSTRIPES] = {false};
    uintptr_t first = lo >> STRIPE_BITS, last = (hi - 1) >> STRIPE_BITS;
    if (last - first >= NSTRIPES) {
        memset(want, 1, sizeof want);
    } else {
        for (uintptr_t p = first; p <= last; p++)
            want[p % NSTRIPES] = true;
    }
    for (unsigned s = 0; s < NSTRIPES; s++)
        if (want[s]) {
            if (lock)
                stripe_lock(s);
            else
                stripe_unlock(s);
        }
}

/* The striped path for a whole access of count x tt at taddr (with no
 * locks when the origin holds the target exclusively). */
static void accumulate_striped(char *taddr, size_t count, const struct loom_type *tt,
                               const struct loom_op *op, const void *in, void *out, bool lock)
{
    size_t nbytes = count * tt->size;
    MPI_Aint last = (MPI_Aint)(count - 1) * (tt->ub - tt->lb);
    MPI_Aint lo = tt->true_lb + (last < 0 ? last : 0), hi = tt->true_ub + (last > 0 ? last : 0);
    char *tmp = NULL;
    if (in && op->number != LOOM_HANDLE_INDEX(MPI_NO_OP)) {
        /* The origin's packed data, laid out as the target's. */
        /* Kernels of pair types read an element's padding too: room for
         * a whole extent past the last data byte. */
        tmp = malloc((size_t)(hi - lo) + (size_t)(tt->ub - tt->lb) + 16);
        if (!tmp)
            loom_fatal("out of memory in an RMA accumulate of %zu bytes", (size_t)(hi - lo));
        loom_type_unpack(tmp - lo, tt, in, 0, nbytes);
    }
    if (lock)
        stripes_span((uintptr_t)(taddr + lo), (uintptr_t)(taddr + hi), true);
    if (out)
        loom_type_pack(out, taddr, tt, 0, nbytes);
    if (tmp)
        loom_op_apply(op, tmp - lo, taddr, count, tt);
    if (lock)
        stripes_span((uintptr_t)(taddr + lo), (uintptr_t)(taddr + hi), false);
    free(tmp);
}

void loom_rma_accumulate(char *taddr, size_t count, const struct loom_type *tt,
                         const struct loom_type *basic, const struct loom_op *op, const void *in,
                         void *out, bool exclusive)
{
    size_t esize = basic->size;
    if (!count || !tt->size)
        return;
    /* Under an exclusive lock nobody else may access the target: the
     * operation's vector kernel, with no atomics. */
    if (exclusive && count * tt->size >= 64) {
        accumulate_striped(taddr, count, tt, op, in, out, false);
        return;
    }
    if (is_pair(basic->handle) || (esize != 1 && esize != 2 && esize != 4 && esize != 8)) {
        accumulate_striped(taddr, count, tt, op, in, out, true);
        return;
    }
    int opn = op->number;
    bool sum_int = opn == LOOM_HANDLE_INDEX(MPI_SUM) && is_int(basic->handle);
    const struct loom_op_kernels *k = loom_op_kernels_for(op, basic);
    const char *src = in;
    char *dst = out;
    MPI_Aint extent = tt->ub - tt->lb;
    const struct loom_type_block *blocks = tt->blocks;
    size_t nblocks = tt->nblocks;
    struct loom_type_block one = {0, esize};
    if (tt->predefined) {
        blocks = &one;
        nblocks = 1;
    }
    for (size_t e = 0; e < count; e++) {
        for (size_t b = 0; b < nblocks; b++) {
            char *p = taddr + (MPI_Aint)e * extent + blocks[b].off;
            for (size_t i = 0; i < blocks[b].len; i += esize, p += esize) {
                if ((uintptr_t)p % esize) {
                    element_locked(p, esize, opn == LOOM_HANDLE_INDEX(MPI_NO_OP) ? NULL : src, dst,
                                   op, basic);
                } else {
                    switch (esize) {
                    case 1:
                        element_uint8_t((uint8_t *)p, src, dst, opn, sum_int, k);
                        break;
                    case 2:
                        element_uint16_t((uint16_t *)p, src, dst, opn, sum_int, k);
                        break;
                    case 4:
                        element_uint32_t((uint32_t *)p, src, dst, opn, sum_int, k);
                        break;
                    default:
                        element_uint64_t((uint64_t *)p, src, dst, opn, sum_int, k);
                        break;
                    }
                }
                if (src)
                    src += esize;
                if (dst)
                    dst += esize;
            }
        }
    }
}

void loom_rma_cas(char *taddr, const struct loom_type *t, const void *origin, const void *compare,
                  void *result)
{
    size_t esize = t->size;
    if ((uintptr_t)taddr % esize == 0 && (esize == 1 || esize == 2 || esize == 4 || esize == 8)) {
        switch (esize) {
#define CAS(T)                                                                                     \
    {                                                                                              \
        T expected, desired;                                                                       \
        memcpy(&expected, compare, sizeof expected);                                               \
        memcpy(&desired, origin, sizeof desired);                                                  \
        atomic_compare_exchange_strong_explicit((_Atomic T *)taddr, &expected, desired,            \
                                                memory_order_acq_rel, memory_order_acquire);       \
        memcpy(result, &expected, sizeof expected);                                                \
        return;                                                                                    \
    }
        case 1:
            CAS(uint8_t)
        case 2:
            CAS(uint16_t)
        case 4:
            CAS(uint32_t)
        default:
            CAS(uint64_t)
#undef CAS
        }
    }
    unsigned s = stripe_of((uintptr_t)taddr);
    stripe_lock(s);
    memcpy(result, taddr, esize);
    if (memcmp(taddr, compare, esize) == 0)
        memcpy(taddr, origin, esize);
    stripe_unlock(s);
}
