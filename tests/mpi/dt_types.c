/*
 * Datatypes on every rank (no communication): predefined sizes, extents and
 * names; every constructor against hand-computed layouts (the ints it
 * selects from a patterned buffer); darray partitions for every rank of a
 * process grid; addresses; commit/free; Pack/Unpack round trips with
 * non-contiguous types; Pack_size; names; Get_count/Get_elements(_x).
 * Rank r varies its counts with r, so ranks test different types.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dt_common.h"

static int rank, nranks;
static char *pat;

struct pre {
    MPI_Datatype t;
    const char *name;
    int size;
    MPI_Aint extent;
};

struct di {
    double d;
    int i;
};
struct li {
    long l;
    int i;
};
struct si {
    short s;
    int i;
};
struct ldi {
    long double d;
    int i;
};

static void test_predefined(void)
{
    const struct pre p[] = {
        {MPI_CHAR, "MPI_CHAR", 1, 1},
        {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, 1},
        {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, 1},
        {MPI_BYTE, "MPI_BYTE", 1, 1},
        {MPI_WCHAR, "MPI_WCHAR", sizeof(wchar_t), sizeof(wchar_t)},
        {MPI_SHORT, "MPI_SHORT", sizeof(short), sizeof(short)},
        {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", sizeof(short), sizeof(short)},
        {MPI_INT, "MPI_INT", 4, 4},
        {MPI_UNSIGNED, "MPI_UNSIGNED", 4, 4},
        {MPI_LONG, "MPI_LONG", sizeof(long), sizeof(long)},
        {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(long), sizeof(long)},
        {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", 8, 8},
        {MPI_LONG_LONG, "MPI_LONG_LONG_INT", 8, 8},
        {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 8, 8},
        {MPI_FLOAT, "MPI_FLOAT", 4, 4},
        {MPI_DOUBLE, "MPI_DOUBLE", 8, 8},
        {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double), sizeof(long double)},
        {MPI_INT8_T, "MPI_INT8_T", 1, 1},
        {MPI_INT16_T, "MPI_INT16_T", 2, 2},
        {MPI_INT32_T, "MPI_INT32_T", 4, 4},
        {MPI_INT64_T, "MPI_INT64_T", 8, 8},
        {MPI_UINT8_T, "MPI_UINT8_T", 1, 1},
        {MPI_UINT16_T, "MPI_UINT16_T", 2, 2},
        {MPI_UINT32_T, "MPI_UINT32_T", 4, 4},
        {MPI_UINT64_T, "MPI_UINT64_T", 8, 8},
        {MPI_C_BOOL, "MPI_C_BOOL", sizeof(_Bool), sizeof(_Bool)},
        {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", 8, 8},
        {MPI_C_COMPLEX, "MPI_C_FLOAT_COMPLEX", 8, 8},
        {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16, 16},
        {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", sizeof(long double _Complex),
         sizeof(long double _Complex)},
        {MPI_AINT, "MPI_AINT", sizeof(MPI_Aint), sizeof(MPI_Aint)},
        {MPI_OFFSET, "MPI_OFFSET", sizeof(MPI_Offset), sizeof(MPI_Offset)},
        {MPI_COUNT, "MPI_COUNT", sizeof(MPI_Count), sizeof(MPI_Count)},
        {MPI_PACKED, "MPI_PACKED", 1, 1},
        {MPI_FLOAT_INT, "MPI_FLOAT_INT", 8, 8},
        {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 12, sizeof(struct di)},
        {MPI_LONG_INT, "MPI_LONG_INT", sizeof(long) + 4, sizeof(struct li)},
        {MPI_2INT, "MPI_2INT", 8, 8},
        {MPI_SHORT_INT, "MPI_SHORT_INT", sizeof(short) + 4, sizeof(struct si)},
        {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(long double) + 4, sizeof(struct ldi)},
    };
    for (size_t k = 0; k < sizeof p / sizeof p[0]; k++) {
        int size, len;
        MPI_Aint lb, ext, tlb, text;
        MPI_Count sx;
        char name[MPI_MAX_OBJECT_NAME];
        CHECK_EQ(MPI_Type_size(p[k].t, &size), MPI_SUCCESS);
        CHECK_EQ(size, p[k].size);
        MPI_Type_size_x(p[k].t, &sx);
        CHECK_EQ(sx, p[k].size);
        MPI_Type_get_extent(p[k].t, &lb, &ext);
        CHECK_EQ(lb, 0);
        CHECK_EQ(ext, p[k].extent);
        MPI_Type_get_true_extent(p[k].t, &tlb, &text);
        CHECK_EQ(tlb, 0);
        CHECK(text <= ext && text >= size);
        MPI_Type_get_name(p[k].t, name, &len);
        CHECK(strcmp(name, p[k].name) == 0);
        CHECK_EQ(len, (int)strlen(p[k].name));
        int ni, na, nd, comb;
        MPI_Type_get_envelope(p[k].t, &ni, &na, &nd, &comb);
        CHECK_EQ(comb, MPI_COMBINER_NAMED);
        CHECK_EQ(ni + na + nd, 0);
        /* Committing a predefined type is allowed and changes nothing. */
        MPI_Datatype t = p[k].t;
        CHECK_EQ(MPI_Type_commit(&t), MPI_SUCCESS);
        CHECK_EQ(t, p[k].t);
    }
}

static void test_constructors(void)
{
    MPI_Datatype t, u;
    int n = 1 + rank % 5; /* rank-dependent count */

    MPI_Type_contiguous(n, MPI_INT, &t);
    MPI_Type_commit(&t);
    CHECK_EXTENT(t, 4 * n, 0, 4 * n);
    int seq[5] = {0, 1, 2, 3, 4};
    dt_check_ints(pat, t, 1, seq, n, __LINE__);
    MPI_Type_free(&t);
    CHECK_EQ(t, MPI_DATATYPE_NULL);

    MPI_Type_contiguous(3, MPI_INT, &t);
    MPI_Type_commit(&t);
    CHECK_INTS(pat, t, 2, 0, 1, 2, 3, 4, 5);
    MPI_Type_free(&t);

    MPI_Type_vector(3, 2, 4, MPI_INT, &t);
    MPI_Type_commit(&t);
    CHECK_EXTENT(t, 24, 0, 40);
    CHECK_INTS(pat, t, 2, 0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19);
    MPI_Type_free(&t);

    MPI_Type_vector(n, 1, -3, MPI_INT, &t);
    MPI_Type_commit(&t);
    CHECK_EXTENT(t, 4 * n, -12 * (n - 1), 12 * (n - 1) + 4);
    MPI_Type_free(&t);

    MPI_Type_create_hvector(3, 2, 20, MPI_INT, &t);
    MPI_Type_commit(&t);
    CHECK_EXTENT(t, 24, 0, 48);
    CHECK_INTS(pat, t, 1, 0, 1, 5, 6, 10, 11);
    MPI_Type_free(&t);

    int bl[3] = {2, 1, 3}, disp[3] = {6, 0, 2};
    MPI_Type_indexed(3, bl, disp, MPI_INT, &t);
    MPI_Type_commit(&t);
    CHECK_EXTENT(t, 24, 0, 32);
    CHECK_INTS(pat, t, 2, 6, 7, 0, 2, 3, 4, 14, 15, 8, 10, 11, 12);
    MPI_Type_free(&t);

    MPI_Aint hd[3] = {24, 0, 8};
    MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &t);
    MPI_Type_commit(&t);
    CHECK_EXTENT(t, 24, 0, 32);
    CHECK_INTS(pat, t, 1, 6, 7, 0, 2, 3, 4);
    MPI_Type_free(&t);

    MPI_Type_create_indexed_block(3, 2, disp, MPI_INT, &t);
    MPI_Type_commit(&t);
    CHECK_INTS(pat, t, 1, 6, 7, 0, 1, 2, 3);
    MPI_Type_free(&t);

    MPI_Type_create_hindexed_block(3, 1, hd, MPI_INT, &t);
    MPI_Type_commit(&t);
    CHECK_EXTENT(t, 12, 0, 28);
    CHECK_INTS(pat, t, 1, 6, 0, 2);
    MPI_Type_free(&t);

    /* struct {char c; double d; int i[2];}: C layout, padded extent. */
    struct s {
        char c;
        double d;
        int i[2];
    } sv[2];
    MPI_Aint base, sd[3];
    MPI_Get_address(&sv[0], &base);
    MPI_Get_address(&sv[0].c, &sd[0]);
    MPI_Get_address(&sv[0].d, &sd[1]);
    MPI_Get_address(&sv[0].i, &sd[2]);
    for (int k = 0; k < 3; k++)
        sd[k] = MPI_Aint_diff(sd[k], base);
    CHECK_EQ(sd[1], offsetof(struct s, d));
    CHECK_EQ(MPI_Aint_add(base, sd[2]), (MPI_Aint)(uintptr_t)&sv[0].i);
    int sbl[3] = {1, 1, 2};
    MPI_Datatype st[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    MPI_Type_create_struct(3, sbl, sd, st, &t);
    MPI_Type_commit(&t);
    CHECK_EXTENT(t, 17, 0, sizeof(struct s));
    /* A Pack/Unpack round trip of 2 structs into a zeroed pair. */
    memset(sv, 0, sizeof sv);
    sv[0] = (struct s){'a', 1.5, {2, 3}};
    sv[1] = (struct s){'b', -2.5, {4, 5}};
    char packed[64];
    int pos = 0, size;
    MPI_Pack_size(2, t, MPI_COMM_WORLD, &size);
    CHECK_EQ(size, 34);
    CHECK_EQ(MPI_Pack(sv, 2, t, packed, sizeof packed, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(pos, 34);
    struct s rv[2];
    memset(rv, 0, sizeof rv);
    pos = 0;
    CHECK_EQ(MPI_Unpack(packed, 34, &pos, rv, 2, t, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(pos, 34);
    CHECK(rv[1].c == 'b' && rv[1].d == -2.5 && rv[1].i[1] == 5 && rv[0].i[0] == 2);
    MPI_Type_free(&t);

    /* Resized: every third int. */
    MPI_Type_create_resized(MPI_INT, -4, 12, &t);
    MPI_Type_commit(&t);
    CHECK_EXTENT(t, 4, -4, 12);
    MPI_Aint tlb, text;
    MPI_Type_get_true_extent(t, &tlb, &text);
    CHECK_EQ(tlb, 0);
    CHECK_EQ(text, 4);
    CHECK_INTS(pat, t, 4, 0, 3, 6, 9);
    MPI_Type_contiguous(2, t, &u);
    MPI_Type_commit(&u);
    CHECK_EXTENT(u, 8, -4, 24);
    CHECK_INTS(pat, u, 2, 0, 3, 6, 9);
    MPI_Type_free(&u);
    MPI_Type_free(&t);

    /* Subarray 4x5, 2x3 at (1,2), C and Fortran order. */
    int sz[2] = {4, 5}, sub[2] = {2, 3}, start[2] = {1, 2};
    MPI_Type_create_subarray(2, sz, sub, start, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    CHECK_EXTENT(t, 24, 0, 80);
    CHECK_INTS(pat, t, 2, 7, 8, 9, 12, 13, 14, 27, 28, 29, 32, 33, 34);
    MPI_Type_free(&t);
    MPI_Type_create_subarray(2, sz, sub, start, MPI_ORDER_FORTRAN, MPI_INT, &t);
    MPI_Type_commit(&t);
    CHECK_EXTENT(t, 24, 0, 80);
    CHECK_INTS(pat, t, 1, 9, 10, 13, 14, 17, 18);
    MPI_Type_free(&t);

    /* Darray 4x6: rows block over 2, columns cyclic over 3; rank 4 of 6. */
    int gs[2] = {4, 6}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 3};
    MPI_Type_create_darray(6, 4, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    CHECK_EXTENT(t, 16, 0, 96);
    CHECK_INTS(pat, t, 1, 13, 16, 19, 22);
    MPI_Type_free(&t);

    /* Dup keeps layout, bounds and the committed state. */
    MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    MPI_Type_dup(t, &u);
    CHECK_SAME(pat, t, u);
    MPI_Type_free(&u);
    MPI_Type_free(&t);

    /* Zero-count types. */
    MPI_Type_contiguous(0, MPI_INT, &t);
    MPI_Type_commit(&t);
    CHECK_EXTENT(t, 0, 0, 0);
    MPI_Status st0 = {0};
    int cnt;
    MPI_Get_count(&st0, t, &cnt);
    CHECK_EQ(cnt, 0);
    MPI_Type_free(&t);
}

/* Each rank builds the darray of every rank of a grid: together they cover
 * the array exactly once. */
static void test_darray_partition(void)
{
    int p0 = 1;
    while ((p0 + 1) * (p0 + 1) <= nranks)
        p0++;
    int ps[2] = {p0, nranks / p0}, size = ps[0] * ps[1];
    int gs[2] = {13 + rank % 3, 11};
    int orders[2] = {MPI_ORDER_C, MPI_ORDER_FORTRAN};
    int dists[3][2] = {{MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
                       {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
                       {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC}};
    int dargs[3][2] = {{MPI_DISTRIBUTE_DFLT_DARG, 2},
                       {3, MPI_DISTRIBUTE_DFLT_DARG},
                       {2, MPI_DISTRIBUTE_DFLT_DARG}};
    int total = gs[0] * gs[1];
    int *seen = malloc((size_t)total * sizeof(int));
    int *got = malloc((size_t)total * sizeof(int));
    REQUIRE(seen && got);
    for (int o = 0; o < 2; o++)
        for (int d = 0; d < 3; d++) {
            memset(seen, 0, (size_t)total * sizeof(int));
            int sum = 0, bad = 0;
            for (int r = 0; r < size; r++) {
                MPI_Datatype t;
                CHECK_EQ(MPI_Type_create_darray(size, r, 2, gs, dists[d], dargs[d], ps, orders[o],
                                                MPI_INT, &t),
                         MPI_SUCCESS);
                MPI_Type_commit(&t);
                MPI_Aint lb, ext;
                MPI_Type_get_extent(t, &lb, &ext);
                bad += lb != 0 || ext != 4 * total;
                int bytes = dt_select(pat, t, 1, (char *)got, total * 4);
                for (int k = 0; k < bytes / 4; k++) {
                    bad += got[k] < 0 || got[k] >= total || (k && got[k] <= got[k - 1]);
                    if (got[k] >= 0 && got[k] < total)
                        seen[got[k]]++;
                }
                sum += bytes / 4;
                MPI_Type_free(&t);
            }
            for (int k = 0; k < total; k++)
                bad += seen[k] != 1;
            CHECK_EQ(sum, total);
            CHECK_EQ(bad, 0);
        }
    free(seen);
    free(got);
}

static void test_pack_unpack(void)
{
    /* A vector, then an int, then an indexed type, in one buffer. */
    int n = 100 + rank;
    int *src = malloc(3 * (size_t)n * sizeof(int)), *dst = malloc(3 * (size_t)n * sizeof(int));
    REQUIRE(src && dst);
    for (int k = 0; k < 3 * n; k++)
        src[k] = k * 3 + 1;
    MPI_Datatype v, x;
    MPI_Type_vector(n, 1, 3, MPI_INT, &v);
    int bl[2] = {1, 2}, disp[2] = {2, 0};
    MPI_Type_indexed(2, bl, disp, MPI_INT, &x);
    MPI_Type_commit(&v);
    MPI_Type_commit(&x);
    int s1, s2, s3;
    MPI_Pack_size(1, v, MPI_COMM_WORLD, &s1);
    MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &s2);
    MPI_Pack_size(5, x, MPI_COMM_WORLD, &s3);
    CHECK_EQ(s1, 4 * n);
    CHECK_EQ(s2, 4);
    CHECK_EQ(s3, 60);
    int size = s1 + s2 + s3;
    char *buf = malloc((size_t)size);
    int pos = 0, one = 42;
    CHECK_EQ(MPI_Pack(src, 1, v, buf, size, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(MPI_Pack(&one, 1, MPI_INT, buf, size, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(MPI_Pack(src, 5, x, buf, size, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(pos, size);
    /* The packed bytes are the elements in type-map order. */
    int first[4];
    memcpy(first, buf, sizeof first);
    CHECK(first[0] == src[0] && first[1] == src[3] && first[3] == src[9]);
    int xs[3];
    memcpy(xs, buf + s1 + s2, sizeof xs);
    CHECK(xs[0] == src[2] && xs[1] == src[0] && xs[2] == src[1]);
    memset(dst, 0, 3 * (size_t)n * sizeof(int));
    pos = 0;
    int got_one = 0;
    CHECK_EQ(MPI_Unpack(buf, size, &pos, dst, 1, v, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(MPI_Unpack(buf, size, &pos, &got_one, 1, MPI_INT, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(pos, s1 + s2);
    CHECK_EQ(got_one, 42);
    int bad = 0;
    for (int k = 0; k < 3 * n; k++)
        bad += dst[k] != (k % 3 ? 0 : src[k]);
    CHECK_EQ(bad, 0);
    memset(dst, 0, 3 * (size_t)n * sizeof(int));
    CHECK_EQ(MPI_Unpack(buf, size, &pos, dst, 5, x, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK_EQ(pos, size);
    bad = 0;
    for (int k = 0; k < 15; k++)
        bad += dst[k] != src[k];
    CHECK_EQ(bad, 0);
    free(buf);
    MPI_Type_free(&v);
    MPI_Type_free(&x);

    /* A large strided vector of doubles, packed and unpacked. */
    int big = 1 << 16;
    double *ds = malloc(2 * (size_t)big * sizeof(double)),
           *dd = calloc(2 * (size_t)big, sizeof(double));
    char *pb = malloc((size_t)big * sizeof(double));
    REQUIRE(ds && dd && pb);
    for (int k = 0; k < 2 * big; k++)
        ds[k] = k + 0.5;
    MPI_Type_vector(big, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    pos = 0;
    MPI_Pack(ds + 1, 1, v, pb, big * (int)sizeof(double), &pos, MPI_COMM_WORLD);
    pos = 0;
    MPI_Unpack(pb, big * (int)sizeof(double), &pos, dd + 1, 1, v, MPI_COMM_WORLD);
    bad = 0;
    for (int k = 0; k < 2 * big; k++)
        bad += dd[k] != (k % 2 ? ds[k] : 0);
    CHECK_EQ(bad, 0);
    MPI_Type_free(&v);
    free(ds);
    free(dd);
    free(pb);
    free(src);
    free(dst);
}

static void test_names(void)
{
    MPI_Datatype t;
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Type_vector(2, 1, 2, MPI_INT, &t);
    MPI_Type_get_name(t, name, &len);
    CHECK_EQ(len, 0);
    CHECK_EQ(name[0], 0);
    char want[64];
    snprintf(want, sizeof want, "vector of rank %d", rank);
    CHECK_EQ(MPI_Type_set_name(t, want), MPI_SUCCESS);
    MPI_Type_get_name(t, name, &len);
    CHECK(strcmp(name, want) == 0);
    CHECK_EQ(len, (int)strlen(want));
    /* Names longer than MPI_MAX_OBJECT_NAME - 1 are cut. */
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    MPI_Type_set_name(t, longname);
    MPI_Type_get_name(t, name, &len);
    CHECK_EQ(len, MPI_MAX_OBJECT_NAME - 1);
    MPI_Type_free(&t);
}

static void test_counts(void)
{
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int c;
    MPI_Count cx;
    st.loom_count = 40;
    MPI_Get_count(&st, MPI_INT, &c);
    CHECK_EQ(c, 10);
    MPI_Get_count(&st, MPI_DOUBLE, &c);
    CHECK_EQ(c, 5);
    MPI_Get_count(&st, MPI_SHORT_INT, &c);
    CHECK_EQ(c, MPI_UNDEFINED);
    MPI_Get_elements(&st, MPI_INT, &c);
    CHECK_EQ(c, 10);
    /* struct {int; double}: 12 bytes, 2 elements each. */
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, t;
    MPI_Type_create_struct(2, bl, d, ty, &t);
    MPI_Type_commit(&t);
    st.loom_count = 12 * 3 + 4;
    MPI_Get_count(&st, t, &c);
    CHECK_EQ(c, MPI_UNDEFINED);
    MPI_Get_elements(&st, t, &c);
    CHECK_EQ(c, 7);
    MPI_Get_elements_x(&st, t, &cx);
    CHECK_EQ(cx, 7);
    st.loom_count = 12 * 3 + 6;
    MPI_Get_elements(&st, t, &c);
    CHECK_EQ(c, MPI_UNDEFINED);
    st.loom_count = 12 * (rank + 1);
    MPI_Get_count(&st, t, &c);
    CHECK_EQ(c, rank + 1);
    MPI_Get_elements_x(&st, t, &cx);
    CHECK_EQ(cx, 2 * (rank + 1));
    MPI_Type_free(&t);
    st.loom_count = 3 * 12 + 8;
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &c);
    CHECK_EQ(c, 7);
    /* Beyond int: Get_elements says MPI_UNDEFINED, the _x form counts. */
    st.loom_count = 1LL << 33;
    MPI_Get_elements(&st, MPI_BYTE, &c);
    CHECK_EQ(c, MPI_UNDEFINED);
    MPI_Get_count(&st, MPI_BYTE, &c);
    CHECK_EQ(c, MPI_UNDEFINED);
    MPI_Get_elements_x(&st, MPI_BYTE, &cx);
    CHECK_EQ(cx, 1LL << 33);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    pat = dt_pattern();
    test_predefined();
    test_constructors();
    test_darray_partition();
    test_pack_unpack();
    test_names();
    test_counts();
    free(pat);
    int rc = check_summary();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && rc == 0)
        printf("dt_types: %d ranks ok\n", nranks);
    MPI_Finalize();
    return rc;
}
