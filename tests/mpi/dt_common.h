/*
 * Helpers of the datatype MPI tests: a patterned buffer, the bytes a type
 * selects from it (by MPI_Pack), and the comparison of two types.
 */
#ifndef DT_COMMON_H
#define DT_COMMON_H

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

#define DT_BUF (1 << 20)
#define DT_MID (1 << 19)

/* A buffer of DT_BUF bytes whose ints are their own index from DT_MID
 * (int k at DT_MID + 4k holds k; negative k before DT_MID). */
static inline char *dt_pattern(void)
{
    char *b = malloc(DT_BUF);
    REQUIRE(b);
    for (int k = -DT_MID / 4; k < DT_MID / 4; k++) {
        int v = k;
        memcpy(b + DT_MID + 4 * k, &v, 4);
    }
    return b;
}

/* Packs count elements of t from the pattern; returns the packed size. */
static inline int dt_select(const char *pattern, MPI_Datatype t, int count, char *out, int outsize)
{
    int pos = 0;
    int rc = MPI_Pack(pattern + DT_MID, count, t, out, outsize, &pos, MPI_COMM_WORLD);
    CHECK_EQ(rc, MPI_SUCCESS);
    return pos;
}

/* Checks that count elements of t select the ints listed in want. */
static inline void dt_check_ints(const char *pattern, MPI_Datatype t, int count, const int *want,
                                 int n, int line)
{
    int *got = malloc((size_t)n * sizeof(int) + 64);
    REQUIRE(got);
    int bytes = dt_select(pattern, t, count, (char *)got, n * (int)sizeof(int) + 64);
    int ok = bytes == n * (int)sizeof(int) && memcmp(got, want, (size_t)bytes) == 0;
    if (!ok) {
        fprintf(stderr, "line %d: type selects %d bytes:", line, bytes);
        for (int i = 0; i < bytes / 4; i++)
            fprintf(stderr, " %d", got[i]);
        fprintf(stderr, "\n");
    }
    CHECK(ok);
    free(got);
}
#define CHECK_INTS(pat, t, count, ...)                                                             \
    do {                                                                                           \
        int w_[] = {__VA_ARGS__};                                                                  \
        dt_check_ints(pat, t, count, w_, (int)(sizeof w_ / sizeof w_[0]), __LINE__);               \
    } while (0)

static inline void dt_check_extent(MPI_Datatype t, MPI_Aint size, MPI_Aint lb, MPI_Aint extent,
                                   int line)
{
    int s;
    MPI_Aint l, e;
    MPI_Type_size(t, &s);
    MPI_Type_get_extent(t, &l, &e);
    if (s != size || l != lb || e != extent) {
        fprintf(stderr, "line %d: size %d lb %ld extent %ld, expected %ld %ld %ld\n", line, s, l, e,
                size, lb, extent);
        CHECK(0);
    } else {
        CHECK(1);
    }
}
#define CHECK_EXTENT(t, size, lb, extent) dt_check_extent(t, size, lb, extent, __LINE__)

/* Checks that a and b have the same size, bounds and layout (2 elements). */
static inline void dt_check_same(const char *pattern, MPI_Datatype a, MPI_Datatype b, int line)
{
    MPI_Count sa, sb, la, lb, ea, eb, ta, tb, tea, teb;
    MPI_Type_size_x(a, &sa);
    MPI_Type_size_x(b, &sb);
    MPI_Type_get_extent_x(a, &la, &ea);
    MPI_Type_get_extent_x(b, &lb, &eb);
    MPI_Type_get_true_extent_x(a, &ta, &tea);
    MPI_Type_get_true_extent_x(b, &tb, &teb);
    int ok = sa == sb && la == lb && ea == eb && ta == tb && tea == teb;
    if (ok && sa > 0) {
        int n = 2 * (int)sa;
        char *x = malloc((size_t)n), *y = malloc((size_t)n);
        REQUIRE(x && y);
        ok = dt_select(pattern, a, 2, x, n) == n && dt_select(pattern, b, 2, y, n) == n &&
             memcmp(x, y, (size_t)n) == 0;
        free(x);
        free(y);
    }
    if (!ok)
        fprintf(stderr, "line %d: types differ (size %lld/%lld lb %lld/%lld extent %lld/%lld)\n",
                line, sa, sb, la, lb, ea, eb);
    CHECK(ok);
}
#define CHECK_SAME(pat, a, b) dt_check_same(pat, a, b, __LINE__)

#endif
