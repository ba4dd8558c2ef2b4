/*
 * Accumulate and compare-and-swap on a target's memory, atomic per basic
 * element (MPI-3.1 11.7.1) with respect to every other accumulate to the
 * same location.
 *
 * Every accumulate, fetch-and-op and compare-and-swap holds the stripe
 * locks of the bytes it touches (a job-wide table of 64 spin locks, one per
 * 4 KiB of address space modulo 64, taken in index order) while it reads,
 * combines and writes them, and combines with the operation's vector
 * kernel. An element-wise hardware atomic per element was the first design:
 * a 32 KiB MPI_SUM of doubles then cost a compare-and-swap loop per element
 * (283 us against Open MPI's 0.8 us), and mixing it with locks for the
 * types atomics cannot do would have broken atomicity between the two.
 * One uncontended lock costs what one compare-and-swap does (an 8-byte
 * fetch-and-op stays at 30-50 ns here), and accumulates to different pages
 * proceed in parallel. Under an exclusive lock of the target no stripe is
 * taken: nobody else may access it.
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

/* Applies the access of count x tt at taddr (the caller holds what must
 * be held). */
static void combine(char *taddr, size_t count, const struct loom_type *tt, const struct loom_op *op,
                    const void *in, void *out)
{
    size_t nbytes = count * tt->size;
    bool no_op = op->number == LOOM_HANDLE_INDEX(MPI_NO_OP);
    const struct loom_op_kernels *k = loom_op_kernels_for(op, tt);
    if (k && (uintptr_t)taddr % k->align == 0 && (uintptr_t)in % k->align == 0) {
        /* A predefined type and a computing op: the kernel itself (the
         * path of every fetch-and-op counter). */
        if (out)
            memcpy(out, taddr, nbytes);
        k->two(in, taddr, count);
        return;
    }
    if (tt->contig) {
        /* The packed data is the target's layout, from true_lb. */
        if (out)
            memcpy(out, taddr + tt->true_lb, nbytes);
        if (!no_op)
            loom_op_apply(op, (const char *)in - tt->true_lb, taddr, count, tt);
        return;
    }
    if (out)
        loom_type_pack(out, taddr, tt, 0, nbytes);
    if (no_op)
        return;
    /* The origin's packed data laid out as the target's; kernels of pair
     * types read an element's padding too: room for a whole extent past
     * the last data byte. */
    MPI_Aint last = (MPI_Aint)(count - 1) * (tt->ub - tt->lb);
    MPI_Aint lo = tt->true_lb + (last < 0 ? last : 0), hi = tt->true_ub + (last > 0 ? last : 0);
    size_t room = (size_t)(hi - lo) + (size_t)(tt->ub - tt->lb) + 16;
    char *tmp = malloc(room);
    if (!tmp)
        loom_fatal("out of memory in an RMA accumulate of %zu bytes", room);
    loom_type_unpack(tmp - lo, tt, in, 0, nbytes);
    loom_op_apply(op, tmp - lo, taddr, count, tt);
    free(tmp);
}

void loom_rma_accumulate(char *taddr, size_t count, const struct loom_type *tt,
                         const struct loom_type *basic, const struct loom_op *op, const void *in,
                         void *out, bool exclusive)
{
    (void)basic;
    if (!count || !tt->size)
        return;
    if (exclusive) {
        combine(taddr, count, tt, op, in, out);
        return;
    }
    MPI_Aint last = (MPI_Aint)(count - 1) * (tt->ub - tt->lb);
    MPI_Aint lo = tt->true_lb + (last < 0 ? last : 0), hi = tt->true_ub + (last > 0 ? last : 0);
    uintptr_t a = (uintptr_t)(taddr + lo), b = (uintptr_t)(taddr + hi);
    if ((a >> STRIPE_BITS) == ((b - 1) >> STRIPE_BITS)) {
        /* One stripe: the common case of a counter or a small block. */
        unsigned s = stripe_of(a);
        stripe_lock(s);
        combine(taddr, count, tt, op, in, out);
        stripe_unlock(s);
        return;
    }
    stripes_span(a, b, true);
    combine(taddr, count, tt, op, in, out);
    stripes_span(a, b, false);
}

void loom_rma_cas(char *taddr, const struct loom_type *t, const void *origin, const void *compare,
                  void *result)
{
    size_t esize = t->size;
    uintptr_t a = (uintptr_t)taddr;
    unsigned s1 = stripe_of(a), s2 = stripe_of(a + esize - 1);
    if (s2 < s1) { /* in index order, as every taker does */
        unsigned x = s1;
        s1 = s2;
        s2 = x;
    }
    stripe_lock(s1);
    if (s2 != s1)
        stripe_lock(s2);
    memcpy(result, taddr, esize);
    if (memcmp(taddr, compare, esize) == 0)
        memcpy(taddr, origin, esize);
    if (s2 != s1)
        stripe_unlock(s2);
    stripe_unlock(s1);
}
