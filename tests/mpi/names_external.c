/*
 * MPI_Pack_external / MPI_Unpack_external / MPI_Pack_external_size with
 * "external32": the bytes are compared with a big-endian encoding built
 * here independently (shifts of each value, the standard's sizes: MPI_LONG
 * 4 bytes, MPI_LONG_DOUBLE IEEE binary128, MPI_WCHAR 2), round trips of
 * derived types (a struct with padding, a vector), a packed buffer sent
 * between ranks and unpacked by the receiver, and the error classes (a
 * data representation other than "external32", a buffer too small, an
 * MPI_LONG beyond 32 bits).
 */
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "../check.h"

static int rank, size;

/* Appends the n low bytes of v, most significant first. */
static unsigned char *be(unsigned char *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--)
        *p++ = (unsigned char)(v >> (8 * i));
    return p;
}

static uint64_t bits_of_double(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

static uint32_t bits_of_float(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* IEEE binary128 of a finite double, by its fields (exact: a double
 * widens without rounding): sign, exponent rebiased 1023 -> 16383,
 * fraction shifted from 52 to 112 bits. */
static unsigned char *be_quad_of(unsigned char *p, double d)
{
    uint64_t u = bits_of_double(d), sign = u >> 63, exp = (u >> 52) & 0x7ff,
             frac = u & ((1ull << 52) - 1);
    uint64_t hi = 0, lo = 0;
    if (exp != 0 || frac != 0) {
        hi = (sign << 63) | ((exp - 1023 + 16383) << 48) | (frac >> 4);
        lo = (frac & 0xf) << 60;
    } else {
        hi = sign << 63;
    }
    p = be(p, hi, 8);
    return be(p, lo, 8);
}

static void check_pack(const void *in, int count, MPI_Datatype t, const unsigned char *want,
                       MPI_Aint nwant, int line)
{
    unsigned char out[512];
    MPI_Aint sz = -1, pos = 0;
    CHECK_EQ(MPI_Pack_external_size("external32", count, t, &sz), MPI_SUCCESS);
    CHECK_EQ(MPI_Pack_external("external32", in, count, t, out, sizeof out, &pos), MPI_SUCCESS);
    bool ok = sz == nwant && pos == nwant && memcmp(out, want, (size_t)nwant) == 0;
    if (!ok) {
        fprintf(stderr, "line %d: size %ld position %ld (want %ld):", line, sz, pos, nwant);
        for (MPI_Aint i = 0; i < pos && i < 64; i++)
            fprintf(stderr, " %02x", out[i]);
        fprintf(stderr, "\n");
    }
    CHECK(ok);
}
#define PACKS(in, count, t, want, n) check_pack(in, count, t, want, n, __LINE__)

static void test_basic(void)
{
    unsigned char want[256], *p;
    int iv[3] = {1, -2, 0x12345678 + rank};
    p = want;
    for (int i = 0; i < 3; i++)
        p = be(p, (uint32_t)iv[i], 4);
    PACKS(iv, 3, MPI_INT, want, p - want);
    PACKS(iv, 3, MPI_INTEGER, want, p - want);

    long lv[2] = {-5, 2000000000L};
    p = be(want, (uint32_t)(int32_t)lv[0], 4);
    p = be(p, (uint32_t)lv[1], 4);
    PACKS(lv, 2, MPI_LONG, want, p - want);

    short sv[2] = {-3, 0x1234};
    p = be(want, (uint16_t)sv[0], 2);
    p = be(p, (uint16_t)sv[1], 2);
    PACKS(sv, 2, MPI_SHORT, want, p - want);

    long long llv = -0x0102030405060708LL - rank;
    p = be(want, (uint64_t)llv, 8);
    PACKS(&llv, 1, MPI_LONG_LONG, want, p - want);
    PACKS(&llv, 1, MPI_INTEGER8, want, p - want);

    double dv[2] = {1.5 + rank, -0.1};
    p = be(want, bits_of_double(dv[0]), 8);
    p = be(p, bits_of_double(dv[1]), 8);
    PACKS(dv, 2, MPI_DOUBLE, want, p - want);
    PACKS(dv, 1, MPI_DOUBLE_COMPLEX, want, p - want); /* (re, im) as two doubles */

    float fv[2] = {3.25f, -1e-3f};
    p = be(want, bits_of_float(fv[0]), 4);
    p = be(p, bits_of_float(fv[1]), 4);
    PACKS(fv, 2, MPI_REAL, want, p - want);
    PACKS(fv, 1, MPI_COMPLEX, want, p - want);
    PACKS(fv, 1, MPI_2REAL, want, p - want);

    long double ld[2] = {1.5L, (long double)-3.0e-300};
    p = be_quad_of(want, 1.5);
    p = be_quad_of(p, (double)ld[1]);
    if ((long double)(double)ld[1] == ld[1]) /* the second value is a double too */
        PACKS(ld, 2, MPI_LONG_DOUBLE, want, p - want);

    wchar_t wc[2] = {L'A', 0x20ac};
    p = be(want, 0x41, 2);
    p = be(p, 0x20ac, 2);
    PACKS(wc, 2, MPI_WCHAR, want, p - want);

    _Bool bv[3] = {1, 0, 1};
    unsigned char bw[3] = {1, 0, 1};
    PACKS(bv, 3, MPI_C_BOOL, bw, 3);
    int32_t logv[2] = {1, 0};
    p = be(want, 1, 4);
    p = be(p, 0, 4);
    PACKS(logv, 2, MPI_LOGICAL, want, p - want);

    struct {
        double v;
        int i;
    } di = {2.0, 7};
    p = be(want, bits_of_double(2.0), 8);
    p = be(p, 7, 4); /* no padding in external32 */
    PACKS(&di, 1, MPI_DOUBLE_INT, want, p - want);
    struct {
        long v;
        int i;
    } li = {-9, 3};
    p = be(want, (uint32_t)-9, 4);
    p = be(p, 3, 4);
    PACKS(&li, 1, MPI_LONG_INT, want, p - want);

    /* Round trips of each. */
    unsigned char buf[512];
    MPI_Aint pos = 0, upos = 0;
    long lback[2];
    MPI_Pack_external("external32", lv, 2, MPI_LONG, buf, sizeof buf, &pos);
    MPI_Unpack_external("external32", buf, pos, &upos, lback, 2, MPI_LONG);
    CHECK(upos == pos && lback[0] == lv[0] && lback[1] == lv[1]);
    long double ldback[2];
    pos = upos = 0;
    MPI_Pack_external("external32", ld, 2, MPI_LONG_DOUBLE, buf, sizeof buf, &pos);
    MPI_Unpack_external("external32", buf, pos, &upos, ldback, 2, MPI_LONG_DOUBLE);
    CHECK(pos == 32 && ldback[0] == ld[0] && ldback[1] == ld[1]);
    wchar_t wback[2];
    pos = upos = 0;
    MPI_Pack_external("external32", wc, 2, MPI_WCHAR, buf, sizeof buf, &pos);
    MPI_Unpack_external("external32", buf, pos, &upos, wback, 2, MPI_WCHAR);
    CHECK(wback[0] == wc[0] && wback[1] == wc[1]);
}

/* A struct with padding, in a vector: packed, unpacked, compared. */
struct rec {
    char c;
    double d;
    short s;
    long l;
};

static MPI_Datatype rec_type(void)
{
    int bl[4] = {1, 1, 1, 1};
    MPI_Aint disp[4] = {offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, s),
                        offsetof(struct rec, l)};
    MPI_Datatype types[4] = {MPI_CHAR, MPI_DOUBLE, MPI_SHORT, MPI_LONG}, t;
    MPI_Type_create_struct(4, bl, disp, types, &t);
    MPI_Type_commit(&t);
    return t;
}

static void test_derived(void)
{
    MPI_Datatype t = rec_type(), v;
    struct rec r[6], back[6];
    memset(back, 0, sizeof back);
    for (int i = 0; i < 6; i++)
        r[i] = (struct rec){(char)('a' + i), i * 0.25 - rank, (short)(-i), 1000L * i - rank};
    unsigned char want[256], *p = want;
    for (int i = 0; i < 6; i += 2) {
        *p++ = (unsigned char)r[i].c;
        p = be(p, bits_of_double(r[i].d), 8);
        p = be(p, (uint16_t)r[i].s, 2);
        p = be(p, (uint32_t)(int32_t)r[i].l, 4);
    }
    MPI_Type_vector(3, 1, 2, t, &v);
    MPI_Type_commit(&v);
    PACKS(r, 1, v, want, p - want);
    CHECK_EQ(p - want, 3 * 15);
    unsigned char buf[256];
    MPI_Aint pos = 0, upos = 0;
    MPI_Pack_external("external32", r, 1, v, buf, sizeof buf, &pos);
    CHECK_EQ(MPI_Unpack_external("external32", buf, pos, &upos, back, 1, v), MPI_SUCCESS);
    CHECK_EQ(upos, pos);
    for (int i = 0; i < 6; i++) {
        if (i % 2)
            CHECK(back[i].c == 0 && back[i].l == 0);
        else
            CHECK(back[i].c == r[i].c && back[i].d == r[i].d && back[i].s == r[i].s &&
                  back[i].l == r[i].l);
    }

    /* Across ranks: each packs for its successor, which unpacks. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    unsigned char rb[256];
    MPI_Sendrecv(buf, (int)pos, MPI_BYTE, next, 3, rb, sizeof rb, MPI_BYTE, prev, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    struct rec from[6];
    upos = 0;
    MPI_Unpack_external("external32", rb, pos, &upos, from, 3, t);
    for (int i = 0; i < 3; i++)
        CHECK(from[i].c == 'a' + 2 * i && from[i].d == 2 * i * 0.25 - prev &&
              from[i].l == 1000L * 2 * i - prev);
    MPI_Type_free(&v);
    MPI_Type_free(&t);
}

static void test_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x[4] = {1, 2, 3, 4};
    unsigned char buf[16];
    MPI_Aint pos = 0, sz;
    CHECK_EQ(MPI_Pack_external("native", x, 4, MPI_INT, buf, sizeof buf, &pos), MPI_ERR_ARG);
    CHECK_EQ(MPI_Pack_external("external64", x, 4, MPI_INT, buf, sizeof buf, &pos), MPI_ERR_ARG);
    CHECK_EQ(MPI_Unpack_external("internal", buf, 16, &pos, x, 4, MPI_INT), MPI_ERR_ARG);
    CHECK_EQ(MPI_Pack_external_size("EXTERNAL32", 4, MPI_INT, &sz), MPI_ERR_ARG);
    CHECK_EQ(MPI_Pack_external_size("external32", -1, MPI_INT, &sz), MPI_ERR_COUNT);
    CHECK_EQ(MPI_Pack_external_size("external32", 1, MPI_DATATYPE_NULL, &sz), MPI_ERR_TYPE);
    CHECK_EQ(MPI_Pack_external("external32", x, 4, MPI_INT, buf, 12, &pos), MPI_ERR_TRUNCATE);
    CHECK_EQ(pos, 0);
    pos = 20;
    CHECK_EQ(MPI_Pack_external("external32", x, 1, MPI_INT, buf, sizeof buf, &pos), MPI_ERR_ARG);
    pos = 0;
    long big = 1L << 40;
    CHECK_EQ(MPI_Pack_external("external32", &big, 1, MPI_LONG, buf, sizeof buf, &pos),
             MPI_ERR_CONVERSION);
    MPI_Datatype unc;
    MPI_Type_contiguous(2, MPI_INT, &unc);
    CHECK_EQ(MPI_Pack_external("external32", x, 1, unc, buf, sizeof buf, &pos), MPI_ERR_TYPE);
    MPI_Type_free(&unc);
    pos = 0;
    CHECK_EQ(MPI_Unpack_external("external32", buf, 8, &pos, x, 4, MPI_INT), MPI_ERR_TRUNCATE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_basic();
    test_derived();
    test_errors();
    int failed = check_summary(), any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("names_external: %d ranks ok\n", size);
    MPI_Finalize();
    return failed;
}
