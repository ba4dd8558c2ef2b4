/*
 * external32, the portable data representation of MPI_Pack_external
 * (MPI-3.1 13.5.2): every basic element big-endian, at the standard's size
 * whatever the platform's (MPI_LONG 4 bytes, MPI_LONG_DOUBLE IEEE binary128,
 * MPI_WCHAR 2 bytes, MPI_C_BOOL 1, MPI_LOGICAL 4, ...), with no padding.
 *
 * A typed buffer is first packed natively (loom_type_pack: the type
 * signature's bytes back to back), then that stream is converted element by
 * element along the type signature (loom_type_signature); unpacking runs
 * the same way backwards.
 */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "datatype/datatype.h"

/* How one component of a basic element is converted. */
enum kind {
    K_BYTES,   /* copied as is (characters, bytes, booleans) */
    K_SINT,    /* signed integer: sign-extended or range-checked */
    K_UINT,    /* unsigned integer: zero-extended or range-checked */
    K_FLOAT,   /* IEEE binary32/64/128 of the same size: byte order only */
    K_LDOUBLE, /* long double <-> IEEE binary128 */
};

struct comp {
    unsigned char kind, nsize, esize; /* native and external32 bytes */
};

/* A basic element: one component, two (complex: both parts; pairs: value
 * and index), each converted on its own. */
struct ext {
    struct comp c[2];
    int n;
};

#define ONE(k, T, e)                                                                               \
    (struct ext)                                                                                   \
    {                                                                                              \
        {{k, sizeof(T), e}}, 1                                                                     \
    }
#define TWO(k1, T1, e1, k2, T2, e2)                                                                \
    (struct ext)                                                                                   \
    {                                                                                              \
        {{k1, sizeof(T1), e1}, {k2, sizeof(T2), e2}}, 2                                            \
    }

/* The external32 form of a predefined basic type (MPI-3.1 table 13.2,
 * MPI-4.1 table 14.3 for the types added since). */
static struct ext ext_of(MPI_Datatype h)
{
    switch (h) {
    case MPI_CHAR:
    case MPI_SIGNED_CHAR:
    case MPI_UNSIGNED_CHAR:
    case MPI_BYTE:
    case MPI_PACKED:
    case MPI_CHARACTER:
    case MPI_C_BOOL:
    case MPI_CXX_BOOL:
    case MPI_INT8_T:
    case MPI_UINT8_T:
    case MPI_INTEGER1:
        return ONE(K_BYTES, char, 1);
    case MPI_WCHAR:
        return ONE(K_UINT, wchar_t, 2);
    case MPI_SHORT:
    case MPI_INT16_T:
    case MPI_INTEGER2:
        return ONE(K_SINT, int16_t, 2);
    case MPI_UNSIGNED_SHORT:
    case MPI_UINT16_T:
        return ONE(K_UINT, uint16_t, 2);
    case MPI_INT:
    case MPI_INT32_T:
    case MPI_INTEGER:
    case MPI_INTEGER4:
    case MPI_LOGICAL:
        return ONE(K_SINT, int32_t, 4);
    case MPI_UNSIGNED:
    case MPI_UINT32_T:
        return ONE(K_UINT, uint32_t, 4);
    case MPI_LONG:
        return ONE(K_SINT, long, 4);
    case MPI_UNSIGNED_LONG:
        return ONE(K_UINT, unsigned long, 4);
    case MPI_LONG_LONG_INT:
    case MPI_INT64_T:
    case MPI_INTEGER8:
    case MPI_AINT:
    case MPI_OFFSET:
    case MPI_COUNT:
        return ONE(K_SINT, int64_t, 8);
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_UINT64_T:
        return ONE(K_UINT, uint64_t, 8);
    case MPI_FLOAT:
    case MPI_REAL:
    case MPI_REAL4:
        return ONE(K_FLOAT, float, 4);
    case MPI_DOUBLE:
    case MPI_DOUBLE_PRECISION:
    case MPI_REAL8:
        return ONE(K_FLOAT, double, 8);
    case MPI_LONG_DOUBLE:
        return ONE(K_LDOUBLE, long double, 16);
    case MPI_REAL16:
        return ONE(K_FLOAT, _Float128, 16);
    case MPI_C_FLOAT_COMPLEX:
    case MPI_CXX_FLOAT_COMPLEX:
    case MPI_COMPLEX:
    case MPI_COMPLEX8:
        return TWO(K_FLOAT, float, 4, K_FLOAT, float, 4);
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_CXX_DOUBLE_COMPLEX:
    case MPI_DOUBLE_COMPLEX:
    case MPI_COMPLEX16:
        return TWO(K_FLOAT, double, 8, K_FLOAT, double, 8);
    case MPI_C_LONG_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX:
        return TWO(K_LDOUBLE, long double, 16, K_LDOUBLE, long double, 16);
    case MPI_COMPLEX32:
        return TWO(K_FLOAT, _Float128, 16, K_FLOAT, _Float128, 16);
    case MPI_FLOAT_INT:
        return TWO(K_FLOAT, float, 4, K_SINT, int, 4);
    case MPI_DOUBLE_INT:
        return TWO(K_FLOAT, double, 8, K_SINT, int, 4);
    case MPI_LONG_INT:
        return TWO(K_SINT, long, 4, K_SINT, int, 4);
    case MPI_2INT:
    case MPI_2INTEGER:
        return TWO(K_SINT, int, 4, K_SINT, int, 4);
    case MPI_SHORT_INT:
        return TWO(K_SINT, short, 2, K_SINT, int, 4);
    case MPI_LONG_DOUBLE_INT:
        return TWO(K_LDOUBLE, long double, 16, K_SINT, int, 4);
    case MPI_2REAL:
        return TWO(K_FLOAT, float, 4, K_FLOAT, float, 4);
    case MPI_2DOUBLE_PRECISION:
        return TWO(K_FLOAT, double, 8, K_FLOAT, double, 8);
    default:
        /* MPI_LB, MPI_UB: no data, never in a signature. */
        return (struct ext){{{K_BYTES, 0, 0}}, 0};
    }
}

static size_t ext_size(const struct ext *e)
{
    size_t n = 0;
    for (int i = 0; i < e->n; i++)
        n += e->c[i].esize;
    return n;
}

/* Copies n bytes, reversed on a little-endian machine (native <-> big-endian). */
static void to_big(unsigned char *dst, const unsigned char *src, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (size_t i = 0; i < n; i++)
        dst[i] = src[n - 1 - i];
#else
    memcpy(dst, src, n);
#endif
}

/* An integer of n native bytes, widened to 64 bits. */
static uint64_t load_int(const unsigned char *p, size_t n, bool sign)
{
    switch (n) {
    case 1: {
        uint8_t v;
        memcpy(&v, p, 1);
        return sign ? (uint64_t)(int64_t)(int8_t)v : v;
    }
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return sign ? (uint64_t)(int64_t)(int16_t)v : v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return sign ? (uint64_t)(int64_t)(int32_t)v : v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
}

static void store_int(unsigned char *p, size_t n, uint64_t v)
{
    uint8_t v1 = (uint8_t)v;
    uint16_t v2 = (uint16_t)v;
    uint32_t v4 = (uint32_t)v;
    memcpy(p, n == 1 ? (void *)&v1 : n == 2 ? (void *)&v2 : n == 4 ? (void *)&v4 : (void *)&v, n);
}

/* Whether v (widened from a native integer) fits in n bytes. */
static bool int_fits(uint64_t v, size_t n, bool sign)
{
    if (n >= 8)
        return true;
    unsigned bits = 8 * (unsigned)n;
    if (!sign)
        return v >> bits == 0;
    int64_t s = (int64_t)v, lim = (int64_t)1 << (bits - 1);
    return s >= -lim && s < lim;
}

/* One component, native -> external32; false when the value does not fit. */
static bool comp_out(const struct comp *c, const unsigned char *in, unsigned char *out)
{
    switch (c->kind) {
    case K_BYTES:
        memcpy(out, in, c->esize);
        return true;
    case K_SINT:
    case K_UINT: {
        bool sign = c->kind == K_SINT;
        uint64_t v = load_int(in, c->nsize, sign);
        if (!int_fits(v, c->esize, sign))
            return false;
        unsigned char tmp[8];
        store_int(tmp, c->esize, v);
        to_big(out, tmp, c->esize);
        return true;
    }
    case K_FLOAT:
        to_big(out, in, c->esize);
        return true;
    default: {
        long double ld;
        memcpy(&ld, in, sizeof ld);
        _Float128 q = (_Float128)ld;
        to_big(out, (const unsigned char *)&q, sizeof q);
        return true;
    }
    }
}

/* One component, external32 -> native. */
static void comp_in(const struct comp *c, const unsigned char *in, unsigned char *out)
{
    switch (c->kind) {
    case K_BYTES:
        memcpy(out, in, c->esize);
        break;
    case K_SINT:
    case K_UINT: {
        unsigned char tmp[8];
        to_big(tmp, in, c->esize);
        store_int(out, c->nsize, load_int(tmp, c->esize, c->kind == K_SINT));
        break;
    }
    case K_FLOAT:
        to_big(out, in, c->esize);
        break;
    default: {
        _Float128 q;
        to_big((unsigned char *)&q, in, sizeof q);
        long double ld = (long double)q;
        memset(out, 0, c->nsize);
        memcpy(out, &ld, sizeof ld);
        break;
    }
    }
}

/* The walk along a signature: the native stream, the external32 stream. */
struct walk {
    const unsigned char *from;
    unsigned char *to;
    bool pack, bad;
    size_t bytes;
};

static void size_run(const struct loom_type *basic, size_t n, void *arg)
{
    struct ext e = ext_of(basic->handle);
    ((struct walk *)arg)->bytes += n * ext_size(&e);
}

static void convert_run(const struct loom_type *basic, size_t n, void *arg)
{
    struct walk *w = arg;
    struct ext e = ext_of(basic->handle);
    for (size_t k = 0; k < n; k++)
        for (int i = 0; i < e.n; i++) {
            const struct comp *c = &e.c[i];
            if (w->pack)
                w->bad |= !comp_out(c, w->from, w->to);
            else
                comp_in(c, w->from, w->to);
            w->from += w->pack ? c->nsize : c->esize;
            w->to += w->pack ? c->esize : c->nsize;
        }
}

size_t loom_type_ext32_size(const struct loom_type *t, size_t count)
{
    struct walk w = {0};
    loom_type_signature(t, count, size_run, &w);
    return w.bytes;
}

int loom_type_ext32_pack(void *out, const void *inbuf, const struct loom_type *t, size_t count)
{
    size_t bytes = count * t->size;
    if (!bytes)
        return LOOM_OK;
    unsigned char *native = malloc(bytes);
    if (!native)
        return LOOM_ERR_NOMEM;
    loom_type_pack(native, inbuf, t, 0, bytes);
    struct walk w = {.from = native, .to = out, .pack = true};
    loom_type_signature(t, count, convert_run, &w);
    free(native);
    return w.bad ? LOOM_ERR_INVALID : LOOM_OK;
}

int loom_type_ext32_unpack(void *outbuf, const struct loom_type *t, size_t count, const void *in)
{
    size_t bytes = count * t->size;
    if (!bytes)
        return LOOM_OK;
    unsigned char *native = malloc(bytes);
    if (!native)
        return LOOM_ERR_NOMEM;
    struct walk w = {.from = in, .to = native};
    loom_type_signature(t, count, convert_run, &w);
    loom_type_unpack(outbuf, t, native, 0, bytes);
    free(native);
    return LOOM_OK;
}
