/*
 * The MPI-1 names old codes still call: keyvals and attributes (with their
 * copy callbacks on MPI_Comm_dup), error handlers, MPI_Type_extent/lb/ub,
 * MPI_Type_hvector/hindexed/struct, MPI_Address, and the MPI_LB/MPI_UB
 * markers, whose bounds are checked against MPI-1's definition worked out
 * here by hand (3.12.3: a marker sets its bound whatever the data; an ub
 * marker stops the alignment padding).
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

static int rank, size;

/* ---- attributes ---- */

static int deleted;
static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    deleted++;
    return MPI_SUCCESS;
}

static void test_attributes(void)
{
    int kdup, knull, flag, *got, v1 = 100 + rank, v2 = 7;
    CHECK_EQ(MPI_Keyval_create(MPI_DUP_FN, count_delete, &kdup, NULL), MPI_SUCCESS);
    CHECK_EQ(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &knull, NULL), MPI_SUCCESS);
    CHECK_EQ(MPI_Attr_put(MPI_COMM_WORLD, kdup, &v1), MPI_SUCCESS);
    CHECK_EQ(MPI_Attr_put(MPI_COMM_WORLD, knull, &v2), MPI_SUCCESS);
    CHECK_EQ(MPI_Attr_get(MPI_COMM_WORLD, kdup, &got, &flag), MPI_SUCCESS);
    CHECK(flag && got == &v1);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK_EQ(MPI_Attr_get(dup, kdup, &got, &flag), MPI_SUCCESS);
    CHECK(flag && got == &v1 && *got == 100 + rank);
    CHECK_EQ(MPI_Attr_get(dup, knull, &got, &flag), MPI_SUCCESS);
    CHECK(!flag);
    CHECK_EQ(MPI_Attr_delete(dup, kdup), MPI_SUCCESS);
    CHECK_EQ(deleted, 1);
    CHECK_EQ(MPI_Attr_get(dup, kdup, &got, &flag), MPI_SUCCESS);
    CHECK(!flag);
    MPI_Comm_free(&dup);
    /* A predefined attribute reads through the old name too. */
    CHECK_EQ(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &got, &flag), MPI_SUCCESS);
    CHECK(flag && *got >= 32767);
    CHECK_EQ(MPI_Attr_delete(MPI_COMM_WORLD, kdup), MPI_SUCCESS);
    CHECK_EQ(deleted, 2);
    CHECK_EQ(MPI_Attr_delete(MPI_COMM_WORLD, knull), MPI_SUCCESS);
    CHECK_EQ(MPI_Keyval_free(&kdup), MPI_SUCCESS);
    CHECK_EQ(kdup, MPI_KEYVAL_INVALID);
    CHECK_EQ(MPI_Keyval_free(&knull), MPI_SUCCESS);
    /* Errors: a freed keyval. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Attr_put(MPI_COMM_WORLD, knull, &v2), MPI_ERR_KEYVAL);
    CHECK_EQ(MPI_Keyval_free(&kdup), MPI_ERR_KEYVAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* ---- error handlers ---- */

static int handled, handled_code;
static void handler(MPI_Comm *comm, int *code, ...)
{
    handled++;
    handled_code = *code;
}

static void test_errhandlers(void)
{
    MPI_Errhandler eh, got;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK_EQ(MPI_Errhandler_create(handler, &eh), MPI_SUCCESS);
    CHECK_EQ(MPI_Errhandler_set(dup, eh), MPI_SUCCESS);
    CHECK_EQ(MPI_Errhandler_get(dup, &got), MPI_SUCCESS);
    CHECK_EQ(got, eh);
    MPI_Errhandler_free(&got);
    int s;
    CHECK_EQ(MPI_Send(&s, -1, MPI_INT, 0, 0, dup), MPI_ERR_COUNT);
    CHECK_EQ(handled, 1);
    CHECK_EQ(handled_code, MPI_ERR_COUNT);
    CHECK_EQ(MPI_Errhandler_set(dup, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_EQ(MPI_Errhandler_get(dup, &got), MPI_SUCCESS);
    CHECK_EQ(got, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Send(&s, -1, MPI_INT, 0, 0, dup), MPI_ERR_COUNT);
    CHECK_EQ(handled, 1);
    CHECK_EQ(MPI_Errhandler_set(dup, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&dup);
}

/* ---- datatypes ---- */

/* size, lb, extent, true lb, true extent of t, and the MPI-1 queries. */
static void check_bounds(MPI_Datatype t, int sz, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb,
                         MPI_Aint text, int line)
{
    int s;
    MPI_Aint l, e, tl, te, l1, u1, e1;
    MPI_Type_size(t, &s);
    MPI_Type_get_extent(t, &l, &e);
    MPI_Type_get_true_extent(t, &tl, &te);
    CHECK_EQ(MPI_Type_lb(t, &l1), MPI_SUCCESS);
    CHECK_EQ(MPI_Type_ub(t, &u1), MPI_SUCCESS);
    CHECK_EQ(MPI_Type_extent(t, &e1), MPI_SUCCESS);
    bool ok = s == sz && l == lb && e == ext && tl == tlb && te == text && l1 == lb &&
              u1 == lb + ext && e1 == ext;
    if (!ok)
        fprintf(
            stderr,
            "line %d: size %d lb %ld extent %ld true %ld+%ld (MPI-1: lb %ld ub %ld extent %ld); "
            "want %d %ld %ld %ld+%ld\n",
            line, s, l, e, tl, te, l1, u1, e1, sz, lb, ext, tlb, text);
    CHECK(ok);
}
#define BOUNDS(t, ...) check_bounds(t, __VA_ARGS__, __LINE__)

static MPI_Datatype mkstruct(int n, const MPI_Aint *disp, const MPI_Datatype *types)
{
    int bl[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    MPI_Datatype t;
    CHECK_EQ(MPI_Type_struct(n, bl, (MPI_Aint *)disp, (MPI_Datatype *)types, &t), MPI_SUCCESS);
    MPI_Type_commit(&t);
    return t;
}

static void test_markers(void)
{
    /* {LB at -4, int at 0, UB at 16}: the markers set both bounds. */
    MPI_Datatype a =
        mkstruct(3, (MPI_Aint[]){-4, 0, 16}, (MPI_Datatype[]){MPI_LB, MPI_INT, MPI_UB});
    BOUNDS(a, 4, -4, 20, 0, 4);
    /* An lb marker above the data: lb 8, ub from the data (4), extent -4. */
    MPI_Datatype b = mkstruct(2, (MPI_Aint[]){8, 0}, (MPI_Datatype[]){MPI_LB, MPI_INT});
    BOUNDS(b, 4, 8, -4, 0, 4);
    /* An ub marker inside the data: no padding, extent 2. */
    MPI_Datatype c = mkstruct(2, (MPI_Aint[]){0, 2}, (MPI_Datatype[]){MPI_DOUBLE, MPI_UB});
    BOUNDS(c, 8, 0, 2, 0, 8);
    /* Markers are sticky: a struct holding a keeps a's markers ... */
    MPI_Datatype d = mkstruct(2, (MPI_Aint[]){0, 4}, (MPI_Datatype[]){a, MPI_CHAR});
    BOUNDS(d, 5, -4, 20, 0, 5);
    /* ... even when its data lies beyond them (MPI-1's definition; MPICH
     * extends the ub to the data). */
    MPI_Datatype e = mkstruct(2, (MPI_Aint[]){0, 100}, (MPI_Datatype[]){a, MPI_CHAR});
    BOUNDS(e, 5, -4, 20, 0, 101);
    /* Copies of a: the outermost markers. */
    MPI_Datatype f;
    MPI_Type_contiguous(3, a, &f);
    MPI_Type_commit(&f);
    BOUNDS(f, 12, -4, 60, 0, 44);
    /* Without markers: padding to the strictest alignment. */
    MPI_Datatype g = mkstruct(2, (MPI_Aint[]){0, 5}, (MPI_Datatype[]){MPI_INT, MPI_CHAR});
    BOUNDS(g, 5, 0, 8, 0, 6);
    /* An lb marker alone: the extent (ub - lb) is still padded to the
     * alignment (8 - 3 = 5, padded to 8; MPICH leaves 5). */
    MPI_Datatype h = mkstruct(2, (MPI_Aint[]){0, 3}, (MPI_Datatype[]){MPI_DOUBLE, MPI_LB});
    BOUNDS(h, 8, 3, 8, 0, 8);
    /* The same through MPI_Type_create_struct. */
    int bl[3] = {1, 1, 1};
    MPI_Datatype i2;
    MPI_Type_create_struct(3, bl, (MPI_Aint[]){-4, 0, 16},
                           (MPI_Datatype[]){MPI_LB, MPI_INT, MPI_UB}, &i2);
    MPI_Type_commit(&i2);
    BOUNDS(i2, 4, -4, 20, 0, 4);
    BOUNDS(MPI_LB, 0, 0, 0, 0, 0);
    BOUNDS(MPI_UB, 0, 0, 0, 0, 0);

    /* The extent is what strides elements: 3 elements of a sent and
     * received land 20 bytes apart. */
    int buf[15], got[15];
    for (int k = 0; k < 15; k++)
        buf[k] = rank * 100 + k, got[k] = -1;
    MPI_Sendrecv(buf + 1, 3, a, rank, 0, got + 1, 3, a, rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < 15; k++)
        CHECK_EQ(got[k], k % 5 == 1 ? rank * 100 + k : -1);
    MPI_Datatype all[] = {a, b, c, d, e, f, g, h, i2};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        MPI_Type_free(&all[k]);
}

static void test_constructors(void)
{
    /* MPI_Type_hvector / hindexed / struct are the MPI-2 constructors:
     * the same layout, combiner and contents. */
    MPI_Datatype v1, v2, x1, x2;
    CHECK_EQ(MPI_Type_hvector(3, 2, 24, MPI_INT, &v1), MPI_SUCCESS);
    MPI_Type_create_hvector(3, 2, 24, MPI_INT, &v2);
    int bl[2] = {2, 1};
    MPI_Aint disp[2] = {8, 40};
    CHECK_EQ(MPI_Type_hindexed(2, bl, disp, MPI_DOUBLE, &x1), MPI_SUCCESS);
    MPI_Type_create_hindexed(2, bl, disp, MPI_DOUBLE, &x2);
    MPI_Datatype pairs[2][2] = {{v1, v2}, {x1, x2}};
    for (int k = 0; k < 2; k++) {
        int ni[2], na[2], nd[2], comb[2];
        MPI_Aint lb[2], ext[2];
        for (int j = 0; j < 2; j++) {
            MPI_Type_get_envelope(pairs[k][j], &ni[j], &na[j], &nd[j], &comb[j]);
            MPI_Type_get_extent(pairs[k][j], &lb[j], &ext[j]);
        }
        CHECK(ni[0] == ni[1] && na[0] == na[1] && nd[0] == nd[1] && comb[0] == comb[1]);
        CHECK(lb[0] == lb[1] && ext[0] == ext[1]);
        CHECK_EQ(comb[0], k ? MPI_COMBINER_HINDEXED : MPI_COMBINER_HVECTOR);
        MPI_Type_free(&pairs[k][0]);
        MPI_Type_free(&pairs[k][1]);
    }
    /* MPI_Address and a struct over absolute addresses (MPI_BOTTOM). */
    struct {
        int i;
        double d;
        char c;
    } s = {rank, rank * 0.5, 'x'}, r = {-1, -1, 0};
    MPI_Aint base, at[3];
    CHECK_EQ(MPI_Address(&s, &base), MPI_SUCCESS);
    CHECK_EQ(base, (MPI_Aint)&s);
    MPI_Address(&s.i, &at[0]);
    MPI_Address(&s.d, &at[1]);
    MPI_Address(&s.c, &at[2]);
    for (int k = 0; k < 3; k++)
        at[k] -= base;
    int b3[3] = {1, 1, 1};
    MPI_Datatype t3[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, st;
    CHECK_EQ(MPI_Type_struct(3, b3, at, t3, &st), MPI_SUCCESS);
    MPI_Type_commit(&st);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(st, &lb, &ext);
    CHECK_EQ(ext, (MPI_Aint)sizeof s);
    MPI_Sendrecv(&s, 1, st, rank, 1, &r, 1, st, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(r.i == rank && r.d == rank * 0.5 && r.c == 'x');
    MPI_Type_free(&st);
    /* Errors go through the MPI-2 checks. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype bad;
    CHECK_EQ(MPI_Type_hvector(-1, 1, 8, MPI_INT, &bad), MPI_ERR_COUNT);
    CHECK_EQ(MPI_Type_struct(1, b3, at, (MPI_Datatype[]){MPI_DATATYPE_NULL}, &bad), MPI_ERR_TYPE);
    CHECK_EQ(MPI_Type_extent(MPI_DATATYPE_NULL, &ext), MPI_ERR_TYPE);
    CHECK_EQ(MPI_Type_lb(MPI_INT, NULL), MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_attributes();
    test_errhandlers();
    test_markers();
    test_constructors();
    int failed = check_summary(), any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("names_legacy: %d ranks ok\n", size);
    MPI_Finalize();
    return failed;
}
