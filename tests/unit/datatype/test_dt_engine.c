/*
 * The datatype engine without MPI: predefined sizes, the block lists of
 * every constructor against hand-computed offsets (vector, indexed, struct
 * padding, resized, subarray in both orders, darray block/cyclic), typed
 * copies between different layouts against a byte-by-byte reference, copies
 * in chunks of 1..17 bytes at arbitrary offsets, basic-element counts, and
 * references keeping a freed type alive.
 */
#include <stdint.h>
#include <string.h>

#include "../../check.h"
#include "datatype/datatype.h"

static struct loom_type *T(MPI_Datatype h)
{
    struct loom_type *t = loom_type_get(h);
    REQUIRE(t);
    return t;
}

static struct loom_type *mk(int combiner, const int *ints, const MPI_Aint *aints,
                            struct loom_type *const *types)
{
    struct loom_type *t;
    REQUIRE(loom_type_create(combiner, ints, aints, types, &t) == LOOM_OK);
    loom_type_commit(t);
    return t;
}

static struct loom_type *vector(int count, int bl, int stride, struct loom_type *old)
{
    int ints[3] = {count, bl, stride};
    return mk(MPI_COMBINER_VECTOR, ints, NULL, &old);
}

static struct loom_type *contiguous(int count, struct loom_type *old)
{
    int ints[1] = {count};
    return mk(MPI_COMBINER_CONTIGUOUS, ints, NULL, &old);
}

static struct loom_type *resized(struct loom_type *old, MPI_Aint lb, MPI_Aint ext)
{
    MPI_Aint a[2] = {lb, ext};
    return mk(MPI_COMBINER_RESIZED, NULL, a, &old);
}

/* Checks t's blocks against (off, len) pairs. */
static void check_blocks(const struct loom_type *t, size_t n, const long *want, int line)
{
    int ok = t->nblocks == n;
    for (size_t i = 0; ok && i < n; i++)
        ok = t->blocks[i].off == want[2 * i] && (long)t->blocks[i].len == want[2 * i + 1];
    if (!ok) {
        fprintf(stderr, "line %d: blocks differ; have %zu:", line, t->nblocks);
        for (size_t i = 0; i < t->nblocks; i++)
            fprintf(stderr, " (%ld,%zu)", t->blocks[i].off, t->blocks[i].len);
        fprintf(stderr, "\n");
    }
    CHECK(ok);
}
#define BLOCKS(t, ...)                                                                             \
    do {                                                                                           \
        long w_[] = {__VA_ARGS__};                                                                 \
        check_blocks(t, LOOM_ARRAY_SIZE(w_) / 2, w_, __LINE__);                                    \
    } while (0)

static void test_predefined(void)
{
    CHECK_EQ(T(MPI_INT)->size, sizeof(int));
    CHECK(T(MPI_INT)->contig);
    CHECK_EQ(T(MPI_LONG_DOUBLE)->size, sizeof(long double));
    CHECK_EQ(T(MPI_C_LONG_DOUBLE_COMPLEX)->size, sizeof(long double _Complex));
    CHECK_EQ(T(MPI_WCHAR)->size, sizeof(wchar_t));
    CHECK_EQ(T(MPI_AINT)->size, sizeof(MPI_Aint));
    CHECK_EQ(T(MPI_COUNT)->size, 8);
    struct loom_type *di = T(MPI_DOUBLE_INT);
    CHECK_EQ(di->size, 12);
    CHECK_EQ(di->ub - di->lb, 16);
    CHECK(!di->contig);
    BLOCKS(di, 0, 12);
    CHECK_EQ(di->nbasic, 2);
    struct loom_type *si = T(MPI_SHORT_INT);
    CHECK_EQ(si->size, 6);
    CHECK_EQ(si->ub - si->lb, 8);
    BLOCKS(si, 0, 2, 4, 4);
    CHECK(T(MPI_2INT)->contig);
    CHECK(T(MPI_FLOAT_INT)->contig);
    struct loom_type *ldi = T(MPI_LONG_DOUBLE_INT);
    CHECK_EQ(ldi->size, sizeof(long double) + sizeof(int));
    CHECK_EQ(ldi->ub, (MPI_Aint)(2 * sizeof(long double)));
    CHECK(loom_type_get(MPI_DATATYPE_NULL) == NULL);
    CHECK(loom_type_get(0x4c000000) == NULL);
    CHECK(loom_type_get(0x4c000041) == NULL);
    CHECK(loom_type_get(MPI_COMM_WORLD) == NULL);
}

static void test_constructors(void)
{
    struct loom_type *i = T(MPI_INT), *d = T(MPI_DOUBLE), *c = T(MPI_CHAR);

    struct loom_type *v = vector(3, 2, 4, i);
    BLOCKS(v, 0, 8, 16, 8, 32, 8);
    CHECK_EQ(v->size, 24);
    CHECK_EQ(v->lb, 0);
    CHECK_EQ(v->ub, 40);
    CHECK_EQ(v->true_ub, 40);
    CHECK(!v->contig);
    CHECK_EQ(v->nbasic, 6);
    CHECK_EQ(v->basic, MPI_INT);

    /* Negative stride: the lower bound moves left. */
    struct loom_type *vn = vector(3, 1, -2, i);
    BLOCKS(vn, 0, 4, -8, 4, -16, 4);
    CHECK_EQ(vn->lb, -16);
    CHECK_EQ(vn->ub, 4);

    /* A vector whose blocks touch is one block, and contig. */
    struct loom_type *vc = vector(4, 2, 2, i);
    BLOCKS(vc, 0, 32);
    CHECK(vc->contig);
    struct loom_type *cc = contiguous(5, vc);
    BLOCKS(cc, 0, 160);
    CHECK(cc->contig);

    int ix[5] = {2, 1, 2, 5, 0};
    struct loom_type *x = mk(MPI_COMBINER_INDEXED, ix, NULL, &i);
    BLOCKS(x, 20, 4, 0, 8);
    CHECK_EQ(x->lb, 0);
    CHECK_EQ(x->ub, 24);

    int hx[3] = {2, 1, 3};
    MPI_Aint hd[2] = {3, 100};
    struct loom_type *hxt = mk(MPI_COMBINER_HINDEXED, hx, hd, &d);
    BLOCKS(hxt, 3, 8, 100, 24);
    CHECK_EQ(hxt->lb, 3);
    CHECK_EQ(hxt->ub, 124);

    int ib[5] = {3, 2, 0, 3, 6};
    struct loom_type *ibt = mk(MPI_COMBINER_INDEXED_BLOCK, ib, NULL, &c);
    BLOCKS(ibt, 0, 2, 3, 2, 6, 2);
    CHECK_EQ(ibt->ub, 8);

    int hb[2] = {2, 1};
    MPI_Aint hbd[2] = {16, 0};
    struct loom_type *hbt = mk(MPI_COMBINER_HINDEXED_BLOCK, hb, hbd, &i);
    BLOCKS(hbt, 16, 4, 0, 4);

    /* struct {char; double;}: padded to 16 like the C struct. */
    int si[3] = {2, 1, 1};
    MPI_Aint sd[2] = {0, 8};
    struct loom_type *st[2] = {c, d};
    struct loom_type *s = mk(MPI_COMBINER_STRUCT, si, sd, st);
    BLOCKS(s, 0, 1, 8, 8);
    CHECK_EQ(s->size, 9);
    CHECK_EQ(s->ub - s->lb, 16);
    CHECK_EQ(s->true_ub - s->true_lb, 16);
    CHECK_EQ(s->basic, 0);
    CHECK_EQ(s->nbasic, 2);

    struct loom_type *r = resized(i, -4, 12);
    BLOCKS(r, 0, 4);
    CHECK_EQ(r->lb, -4);
    CHECK_EQ(r->ub, 8);
    CHECK_EQ(r->true_lb, 0);
    CHECK_EQ(r->true_ub, 4);
    CHECK(!r->contig);
    struct loom_type *rc = contiguous(3, r);
    BLOCKS(rc, 0, 4, 12, 4, 24, 4);
    CHECK_EQ(rc->lb, -4);
    CHECK_EQ(rc->ub, 32);
    /* A resized struct is not padded again. */
    MPI_Aint sd2[2] = {0, 4};
    struct loom_type *st2[2] = {resized(c, 0, 3), i};
    struct loom_type *s2 = mk(MPI_COMBINER_STRUCT, si, sd2, st2);
    CHECK_EQ(s2->ub - s2->lb, 8);

    /* Subarray 4x5 of int, 2x3 starting at (1,2). */
    int sa[9] = {2, 4, 5, 2, 3, 1, 2, MPI_ORDER_C};
    struct loom_type *sub = mk(MPI_COMBINER_SUBARRAY, sa, NULL, &i);
    BLOCKS(sub, 28, 12, 48, 12);
    CHECK_EQ(sub->lb, 0);
    CHECK_EQ(sub->ub, 80);
    CHECK_EQ(sub->size, 24);
    int sf[8] = {2, 4, 5, 2, 3, 1, 2, MPI_ORDER_FORTRAN};
    struct loom_type *subf = mk(MPI_COMBINER_SUBARRAY, sf, NULL, &i);
    BLOCKS(subf, 36, 8, 52, 8, 68, 8);
    CHECK_EQ(subf->ub, 80);
    /* 3-D, C order: 2x3x4 doubles, 1x2x2 at (1,1,1). */
    int s3[11] = {3, 2, 3, 4, 1, 2, 2, 1, 1, 1, MPI_ORDER_C};
    struct loom_type *sub3 = mk(MPI_COMBINER_SUBARRAY, s3, NULL, &d);
    BLOCKS(sub3, (12 + 4 + 1) * 8, 16, (12 + 8 + 1) * 8, 16);
    CHECK_EQ(sub3->ub, 24 * 8);

    /* darray, 1-D block: 8 ints over 3 processes, rank 1 owns 3..5. */
    int da[8] = {3, 1, 1, 8, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_DFLT_DARG, 3, MPI_ORDER_C};
    struct loom_type *dab = mk(MPI_COMBINER_DARRAY, da, NULL, &i);
    BLOCKS(dab, 12, 12);
    CHECK_EQ(dab->ub, 32);
    /* rank 2 owns 6..7 */
    da[1] = 2;
    BLOCKS(mk(MPI_COMBINER_DARRAY, da, NULL, &i), 24, 8);
    /* 1-D cyclic(2): 10 ints over 3, rank 1 owns 2,3 and 8,9. */
    int dc[8] = {3, 1, 1, 10, MPI_DISTRIBUTE_CYCLIC, 2, 3, MPI_ORDER_C};
    struct loom_type *dct = mk(MPI_COMBINER_DARRAY, dc, NULL, &i);
    BLOCKS(dct, 8, 8, 32, 8);
    CHECK_EQ(dct->ub, 40);
    /* 2-D 4x6, rows block over 2, columns cyclic over 3; rank 4 = (1,1):
     * rows 2,3 and columns 1,4. */
    int d2[12] = {6,
                  4,
                  2,
                  4,
                  6,
                  MPI_DISTRIBUTE_BLOCK,
                  MPI_DISTRIBUTE_CYCLIC,
                  MPI_DISTRIBUTE_DFLT_DARG,
                  MPI_DISTRIBUTE_DFLT_DARG,
                  2,
                  3,
                  MPI_ORDER_C};
    struct loom_type *d2t = mk(MPI_COMBINER_DARRAY, d2, NULL, &i);
    BLOCKS(d2t, 52, 4, 64, 4, 76, 4, 88, 4);
    CHECK_EQ(d2t->ub, 96);
    /* The same in Fortran order: the array is 4 (fast) x 6; rank 4 = (1,1):
     * first index 2,3, second 1,4: offsets (j*4 + i)*4. */
    d2[11] = MPI_ORDER_FORTRAN;
    struct loom_type *d2f = mk(MPI_COMBINER_DARRAY, d2, NULL, &i);
    BLOCKS(d2f, (4 + 2) * 4, 8, (16 + 2) * 4, 8);

    /* Empty types. */
    int z[1] = {0};
    struct loom_type *zt = mk(MPI_COMBINER_CONTIGUOUS, z, NULL, &i);
    CHECK_EQ(zt->size, 0);
    CHECK_EQ(zt->nblocks, 0);
    CHECK_EQ(zt->ub - zt->lb, 0);

    /* Dup keeps the layout and the bounds. */
    struct loom_type *dup = mk(MPI_COMBINER_DUP, NULL, NULL, &r);
    BLOCKS(dup, 0, 4);
    CHECK_EQ(dup->lb, -4);
    CHECK_EQ(dup->ub, 8);
}

/* Reference: the buffer offset of every message byte of count elements. */
static size_t byte_map(const struct loom_type *t, size_t count, MPI_Aint *offs)
{
    size_t k = 0;
    for (size_t e = 0; e < count; e++)
        for (size_t b = 0; b < t->nblocks; b++)
            for (size_t j = 0; j < t->blocks[b].len; j++)
                offs[k++] = (MPI_Aint)e * (t->ub - t->lb) + t->blocks[b].off + (MPI_Aint)j;
    return k;
}

#define BUF 65536
#define MID 16384
static unsigned char srcbuf[BUF], dstbuf[BUF], refbuf[BUF], packbuf[BUF];
static MPI_Aint smap[BUF], dmap[BUF];

/* Copies count elements of st into a dt layout holding the same bytes, whole
 * and in chunks of every size 1..17 from several starting offsets, with
 * copy, pack+unpack; compares each with the reference. */
static void check_copy(struct loom_type *dt, size_t dcount, struct loom_type *st, size_t scount,
                       int line)
{
    size_t n = byte_map(st, scount, smap);
    REQUIRE(byte_map(dt, dcount, dmap) == n);
    for (size_t i = 0; i < BUF; i++)
        srcbuf[i] = (unsigned char)(i * 7 + 3);
    memset(refbuf, 0xee, BUF);
    for (size_t i = 0; i < n; i++)
        refbuf[MID + dmap[i]] = srcbuf[MID + smap[i]];
    int bad = 0;
    memset(dstbuf, 0xee, BUF);
    loom_type_copy(dstbuf + MID, dt, srcbuf + MID, st, 0, n);
    bad += memcmp(dstbuf, refbuf, BUF) != 0;
    for (size_t chunk = 1; chunk <= 17; chunk++) {
        memset(dstbuf, 0xee, BUF);
        size_t first = (chunk * 5) % (n ? n : 1);
        /* The tail from `first` in chunks, then the head in one piece. */
        for (size_t o = first; o < n; o += chunk)
            loom_type_copy(dstbuf + MID, dt, srcbuf + MID, st, o, o + chunk > n ? n - o : chunk);
        loom_type_copy(dstbuf + MID, dt, srcbuf + MID, st, 0, first);
        bad += memcmp(dstbuf, refbuf, BUF) != 0;
        /* Pack in chunks, unpack in other chunks. */
        memset(dstbuf, 0xee, BUF);
        for (size_t o = 0; o < n; o += chunk)
            loom_type_pack(packbuf + o, srcbuf + MID, st, o, o + chunk > n ? n - o : chunk);
        size_t c2 = 18 - chunk;
        for (size_t o = 0; o < n; o += c2)
            loom_type_unpack(dstbuf + MID, dt, packbuf + o, o, o + c2 > n ? n - o : c2);
        bad += memcmp(dstbuf, refbuf, BUF) != 0;
    }
    if (bad)
        fprintf(stderr, "line %d: %d copies differ from the reference\n", line, bad);
    CHECK(bad == 0);
}

static void test_copies(void)
{
    struct loom_type *i = T(MPI_INT), *d = T(MPI_DOUBLE), *c = T(MPI_CHAR);
    struct loom_type *v = vector(5, 3, 7, i); /* 15 ints */
    int ix[7] = {3, 4, 10, 1, 10, 0, 20};     /* 15 ints, out of order */
    struct loom_type *x = mk(MPI_COMBINER_INDEXED, ix, NULL, &i);
    check_copy(x, 3, v, 3, __LINE__);
    check_copy(v, 3, x, 3, __LINE__);
    check_copy(i, 45, v, 3, __LINE__);
    check_copy(v, 3, i, 45, __LINE__);
    check_copy(contiguous(45, i), 1, v, 3, __LINE__);

    /* struct with gaps <-> bytes. */
    int si[4] = {3, 1, 2, 3};
    MPI_Aint sd[3] = {1, 8, 32};
    struct loom_type *st[3] = {c, d, c};
    struct loom_type *s = mk(MPI_COMBINER_STRUCT, si, sd, st);
    check_copy(T(MPI_BYTE), 20 * s->size, s, 20, __LINE__);
    check_copy(s, 20, T(MPI_BYTE), 20 * s->size, __LINE__);
    check_copy(s, 20, s, 20, __LINE__);

    /* Resized types (negative lb, overlapping extents not used). */
    struct loom_type *r = resized(i, -8, 16);
    check_copy(r, 30, v, 2, __LINE__);
    check_copy(vector(6, 5, 9, i), 1, r, 30, __LINE__);

    /* Subarray -> darray of the same element count (6 ints each). */
    int sa[8] = {2, 4, 5, 2, 3, 1, 2, MPI_ORDER_C};
    struct loom_type *sub = mk(MPI_COMBINER_SUBARRAY, sa, NULL, &i);
    int dc[8] = {3, 1, 1, 18, MPI_DISTRIBUTE_CYCLIC, 2, 3, MPI_ORDER_C};
    struct loom_type *dct = mk(MPI_COMBINER_DARRAY, dc, NULL, &i);
    CHECK_EQ(dct->size, 24);
    check_copy(dct, 4, sub, 4, __LINE__);
    check_copy(sub, 4, dct, 4, __LINE__);

    /* Pair types with padding. */
    check_copy(T(MPI_DOUBLE_INT), 50, vector(50, 12, 13, c), 1, __LINE__);
    check_copy(T(MPI_SHORT_INT), 33, T(MPI_SHORT_INT), 33, __LINE__);
}

static void test_large_vector(void)
{
    /* 1M one-int blocks: the copy is one memcpy per block. */
    enum { N = 1 << 20 };
    struct loom_type *i = T(MPI_INT);
    struct loom_type *v = vector(N, 1, 2, i);
    CHECK_EQ(v->nblocks, N);
    int *src = malloc(2 * N * sizeof(int)), *dst = malloc(N * sizeof(int));
    REQUIRE(src && dst);
    for (int k = 0; k < 2 * N; k++)
        src[k] = k;
    loom_type_copy(dst, i, src, v, 0, N * sizeof(int));
    int bad = 0;
    for (int k = 0; k < N; k++)
        bad += dst[k] != 2 * k;
    CHECK_EQ(bad, 0);
    /* From the middle of the message. */
    memset(dst, 0, N * sizeof(int));
    loom_type_copy(dst, i, src, v, 4 * (N / 2) + 4, 8);
    CHECK_EQ(dst[N / 2 + 1], N + 2);
    CHECK_EQ(dst[N / 2 + 2], N + 4);
    free(src);
    free(dst);
}

static void test_elements(void)
{
    struct loom_type *i = T(MPI_INT), *d = T(MPI_DOUBLE), *c = T(MPI_CHAR);
    CHECK_EQ(loom_type_elements(i, 0), 0);
    CHECK_EQ(loom_type_elements(i, 12), 3);
    CHECK_EQ(loom_type_elements(i, 13), MPI_UNDEFINED);
    int si[3] = {2, 2, 1};
    MPI_Aint sd[2] = {0, 8};
    struct loom_type *st[2] = {i, d};
    struct loom_type *s = mk(MPI_COMBINER_STRUCT, si, sd, st); /* int int double */
    CHECK_EQ(s->size, 16);
    CHECK_EQ(loom_type_elements(s, 4), 1);
    CHECK_EQ(loom_type_elements(s, 8), 2);
    CHECK_EQ(loom_type_elements(s, 12), MPI_UNDEFINED);
    CHECK_EQ(loom_type_elements(s, 16), 3);
    CHECK_EQ(loom_type_elements(s, 36), 7);
    struct loom_type *v = vector(2, 2, 3, s);
    CHECK_EQ(loom_type_elements(v, 64 + 20), 16);
    CHECK_EQ(loom_type_elements(T(MPI_DOUBLE_INT), 12 * 3 + 8), 7);
    CHECK_EQ(loom_type_elements(T(MPI_DOUBLE_INT), 12 * 3 + 4), MPI_UNDEFINED);
    CHECK_EQ(loom_type_elements(contiguous(3, T(MPI_2INT)), 24 + 4), 7);
    CHECK_EQ(loom_type_elements(vector(3, 2, 4, c), 5), 5);
    int z[1] = {0};
    struct loom_type *zt = mk(MPI_COMBINER_CONTIGUOUS, z, NULL, &i);
    CHECK_EQ(loom_type_elements(zt, 0), 0);
    CHECK_EQ(loom_type_elements(zt, 4), MPI_UNDEFINED);
}

static void test_lifetime(void)
{
    struct loom_type *i = T(MPI_INT);
    struct loom_type *v = vector(4, 1, 2, i);
    struct loom_type *w = contiguous(2, v);
    int hv = v->handle, hw = w->handle;
    CHECK(loom_type_get(hv) == v);
    loom_type_retain(w); /* a pending operation */
    loom_type_free(v);   /* w holds v */
    loom_type_free(w);
    CHECK(loom_type_get(hv) == NULL);
    CHECK(loom_type_get(hw) == NULL);
    char buf[80];
    CHECK(loom_type_problem(hw, false, buf, sizeof buf) != NULL);
    CHECK(strstr(buf, "freed") != NULL);
    /* Still usable by the operation. */
    int src[16], dst[8];
    for (int k = 0; k < 16; k++)
        src[k] = k;
    loom_type_copy(dst, i, src, w, 0, 32);
    CHECK_EQ(dst[5], 9);
    loom_type_release(w);
    /* Handles are reused with a new generation. */
    struct loom_type *u = contiguous(1, i);
    CHECK(u->handle != hv && u->handle != hw);
    loom_type_free(u);
    /* Predefined types ignore references. */
    loom_type_retain(i);
    loom_type_release(i);
    loom_type_release(i);
    CHECK_EQ(T(MPI_INT)->size, 4);
    CHECK(loom_type_problem(MPI_INT, true, buf, sizeof buf) == NULL);
    CHECK(loom_type_problem(MPI_DATATYPE_NULL, true, buf, sizeof buf) != NULL);
}

static void test_contents(void)
{
    struct loom_type *i = T(MPI_INT);
    int ix[5] = {2, 1, 2, 5, 0};
    struct loom_type *x = mk(MPI_COMBINER_INDEXED, ix, NULL, &i);
    int ni, na, nd, comb;
    loom_type_envelope(x, &ni, &na, &nd, &comb);
    CHECK_EQ(comb, MPI_COMBINER_INDEXED);
    CHECK_EQ(ni, 5);
    CHECK_EQ(na, 0);
    CHECK_EQ(nd, 1);
    const int *ints;
    const MPI_Aint *aints;
    struct loom_type *const *types;
    loom_type_contents(x, &ints, &aints, &types);
    CHECK(memcmp(ints, ix, sizeof ix) == 0);
    CHECK(types[0] == i);
    struct loom_type *y;
    REQUIRE(loom_type_clone(x, &y) == LOOM_OK);
    CHECK(y->handle != x->handle);
    CHECK_EQ(y->nblocks, 2);
    CHECK(y->committed);
    loom_type_envelope(i, &ni, &na, &nd, &comb);
    CHECK_EQ(comb, MPI_COMBINER_NAMED);
    char name[MPI_MAX_OBJECT_NAME];
    CHECK_EQ(loom_type_get_name(i, name), 7);
    CHECK(strcmp(name, "MPI_INT") == 0);
    loom_type_set_name(x, "my indexed");
    loom_type_get_name(x, name);
    CHECK(strcmp(name, "my indexed") == 0);
    loom_type_free(y);
    loom_type_free(x);
}

int main(void)
{
    test_predefined();
    test_constructors();
    test_copies();
    test_large_vector();
    test_elements();
    test_lifetime();
    test_contents();
    return check_summary();
}
