/*
 * The small-message path of Bcast, Reduce, Allreduce, Gather, Scatter,
 * Allgather and Alltoall (src/coll/small.c):
 * a call of a few bytes of a predefined datatype takes it from its second
 * call of a shape on (the first one's choice of algorithm is remembered).
 * Every case runs several times in a row, so that both paths run, and
 * checks exact results:
 *  - each predefined op on the integer, floating and bool types it is
 *    defined for, counts 0 to 8 (up to 32 bytes), in place and not, every
 *    root for Reduce and Bcast;
 *  - members on different paths in one call: some ranks pass a receive
 *    buffer misaligned for the type (the general path), the others an
 *    aligned one;
 *  - shapes that alternate between small and large calls, and blocking
 *    calls while nonblocking ones are outstanding;
 *  - Gather, Scatter, Allgather and Alltoall of blocks of those types,
 *    every root, in place and not, some ranks describing their blocks with
 *    a derived datatype;
 *  - truncation found on the path, and bad arguments after it was taken
 *    (ERRORS_RETURN: the classes).
 *
 * usage: coll_small
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPEAT 3

static int me, np, failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond) && failures++ < 20) {                                                          \
            fprintf(stderr, "rank %d: ", me);                                                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* The contribution of rank r to element i: small, distinct, non-zero. */
static int64_t value(int r, int i)
{
    return (int64_t)((r * 7 + i * 3) % 11 + 1);
}

enum which { W_SUM, W_PROD, W_MAX, W_MIN, W_BAND, W_BOR, W_BXOR, W_LAND, W_LOR, W_LXOR };
static const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX,  MPI_MIN, MPI_BAND,
                             MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR};
static const char *const op_names[] = {"SUM", "PROD", "MAX",  "MIN", "BAND",
                                       "BOR", "BXOR", "LAND", "LOR", "LXOR"};

/* The reduction of element i over ranks 0..n-1 (as int64; PROD wraps). */
static int64_t expect(enum which w, int n, int i)
{
    int64_t acc = value(0, i);
    for (int r = 1; r < n; r++) {
        int64_t v = value(r, i);
        switch (w) {
        case W_SUM:
            acc += v;
            break;
        case W_PROD:
            acc = (int64_t)((uint64_t)acc * (uint64_t)v);
            break;
        case W_MAX:
            acc = v > acc ? v : acc;
            break;
        case W_MIN:
            acc = v < acc ? v : acc;
            break;
        case W_BAND:
            acc &= v;
            break;
        case W_BOR:
            acc |= v;
            break;
        case W_BXOR:
            acc ^= v;
            break;
        case W_LAND:
            acc = acc && v;
            break;
        case W_LOR:
            acc = acc || v;
            break;
        case W_LXOR:
            acc = !acc != !v;
            break;
        }
    }
    return acc;
}

/* Element types: how to store and load an int64 value. */
enum kind { K_I32, K_I64, K_U8, K_DOUBLE, K_FLOAT };
struct type {
    MPI_Datatype dt;
    enum kind k;
    size_t size;
    const char *name;
};
static const struct type types[] = {
    {MPI_INT, K_I32, 4, "MPI_INT"},        {MPI_LONG_LONG, K_I64, 8, "MPI_LONG_LONG"},
    {MPI_UINT8_T, K_U8, 1, "MPI_UINT8_T"}, {MPI_DOUBLE, K_DOUBLE, 8, "MPI_DOUBLE"},
    {MPI_FLOAT, K_FLOAT, 4, "MPI_FLOAT"},
};

static void store(const struct type *t, void *buf, int i, int64_t v)
{
    char *p = (char *)buf + (size_t)i * t->size;
    switch (t->k) {
    case K_I32: {
        int32_t x = (int32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    case K_I64:
        memcpy(p, &v, 8);
        break;
    case K_U8: {
        uint8_t x = (uint8_t)v;
        memcpy(p, &x, 1);
        break;
    }
    case K_DOUBLE: {
        double x = (double)v;
        memcpy(p, &x, 8);
        break;
    }
    case K_FLOAT: {
        float x = (float)v;
        memcpy(p, &x, 4);
        break;
    }
    }
}

static int64_t load(const struct type *t, const void *buf, int i)
{
    const char *p = (const char *)buf + (size_t)i * t->size;
    switch (t->k) {
    case K_I32: {
        int32_t x;
        memcpy(&x, p, 4);
        return x;
    }
    case K_I64: {
        int64_t x;
        memcpy(&x, p, 8);
        return x;
    }
    case K_U8: {
        uint8_t x;
        memcpy(&x, p, 1);
        return x;
    }
    case K_DOUBLE: {
        double x;
        memcpy(&x, p, 8);
        return (int64_t)x;
    }
    case K_FLOAT: {
        float x;
        memcpy(&x, p, 4);
        return (int64_t)x;
    }
    }
    return 0;
}

/* The value element i of the result must have, in t's terms. */
static int64_t expect_as(const struct type *t, enum which w, int n, int i)
{
    char buf[8];
    store(t, buf, 0, expect(w, n, i));
    return load(t, buf, 0);
}

static bool defined(const struct type *t, enum which w)
{
    bool fp = t->k == K_DOUBLE || t->k == K_FLOAT;
    if (fp)
        return w == W_SUM || w == W_MAX || w == W_MIN;
    if (w == W_PROD)
        return t->k != K_U8 || np <= 2; /* keep exact products small */
    return true;
}

/* Allreduce and Reduce of count elements of t with op w; misalign: this
 * rank's receive buffer starts one byte off (the general path). */
static void reductions(const struct type *t, enum which w, int count, bool misalign)
{
    _Alignas(16) char sb[64], rbuf[80];
    char *rb = rbuf + (misalign ? 1 : 0);
    for (int in_place = 0; in_place < 2; in_place++)
        for (int rep = 0; rep < REPEAT; rep++) {
            for (int i = 0; i < count; i++) {
                store(t, sb, i, value(me, i));
                store(t, rb, i, in_place ? value(me, i) : -1);
            }
            int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : sb, rb, count, t->dt, ops[w],
                                   MPI_COMM_WORLD);
            CHECK(rc == MPI_SUCCESS, "Allreduce %s %s: rc %d", t->name, op_names[w], rc);
            for (int i = 0; i < count; i++)
                CHECK(load(t, rb, i) == expect_as(t, w, np, i),
                      "Allreduce %s %s count %d%s rep %d: [%d] = %lld, want %lld", t->name,
                      op_names[w], count, in_place ? " in place" : "", rep, i,
                      (long long)load(t, rb, i), (long long)expect_as(t, w, np, i));
        }
    for (int root = 0; root < np; root++)
        for (int in_place = 0; in_place < 2; in_place++)
            for (int rep = 0; rep < REPEAT; rep++) {
                bool ip = in_place && me == root;
                for (int i = 0; i < count; i++) {
                    store(t, sb, i, value(me, i));
                    store(t, rb, i, ip ? value(me, i) : -1);
                }
                int rc = MPI_Reduce(ip ? MPI_IN_PLACE : sb, rb, count, t->dt, ops[w], root,
                                    MPI_COMM_WORLD);
                CHECK(rc == MPI_SUCCESS, "Reduce %s %s: rc %d", t->name, op_names[w], rc);
                char untouched[8];
                store(t, untouched, 0, -1);
                for (int i = 0; i < count; i++) {
                    int64_t want = me == root ? expect_as(t, w, np, i) : load(t, untouched, 0);
                    CHECK(load(t, rb, i) == want,
                          "Reduce %s %s count %d root %d%s rep %d: [%d] = %lld, want %lld", t->name,
                          op_names[w], count, root, ip ? " in place" : "", rep, i,
                          (long long)load(t, rb, i), (long long)want);
                }
            }
}

static void bcasts(const struct type *t, int count, bool misalign)
{
    _Alignas(16) char buf[80];
    char *b = buf + (misalign ? 1 : 0);
    for (int root = 0; root < np; root++)
        for (int rep = 0; rep < REPEAT; rep++) {
            for (int i = 0; i < count; i++)
                store(t, b, i, me == root ? value(root, i + rep) : -1);
            int rc = MPI_Bcast(b, count, t->dt, root, MPI_COMM_WORLD);
            CHECK(rc == MPI_SUCCESS, "Bcast %s: rc %d", t->name, rc);
            for (int i = 0; i < count; i++) {
                char want[8];
                store(t, want, 0, value(root, i + rep));
                CHECK(load(t, b, i) == load(t, want, 0),
                      "Bcast %s count %d root %d rep %d: [%d] = %lld, want %lld", t->name, count,
                      root, rep, i, (long long)load(t, b, i), (long long)load(t, want, 0));
            }
        }
}

/* Gather and Scatter of count elements of t per block, every root, in
 * place at the root and not; derived: this rank describes its blocks with a
 * contiguous derived datatype (the general path) while others use t. */
static void blocks(const struct type *t, int count, bool derived)
{
    MPI_Datatype dt = t->dt;
    if (derived) {
        MPI_Type_contiguous(1, t->dt, &dt);
        MPI_Type_commit(&dt);
    }
    enum { MAXN = 64 };
    static _Alignas(16) char all[MAXN * 32], mine[32];
    size_t block = (size_t)count * t->size;
    for (int root = 0; root < np; root++)
        for (int in_place = 0; in_place < 2; in_place++)
            for (int rep = 0; rep < REPEAT; rep++) {
                bool ip = in_place && me == root;
                /* Gather: block r of the root's buffer is rank r's. */
                for (int i = 0; i < count; i++)
                    store(t, mine, i, value(me, i + rep));
                for (int r = 0; r < np; r++)
                    for (int i = 0; i < count; i++)
                        store(t, all + (size_t)r * block, i,
                              ip && r == me ? value(me, i + rep) : -1);
                int rc = MPI_Gather(ip ? MPI_IN_PLACE : mine, count, dt, all, count, dt, root,
                                    MPI_COMM_WORLD);
                CHECK(rc == MPI_SUCCESS, "Gather %s: rc %d", t->name, rc);
                if (me == root)
                    for (int r = 0; r < np; r++)
                        for (int i = 0; i < count; i++) {
                            char want[8];
                            store(t, want, 0, value(r, i + rep));
                            CHECK(load(t, all + (size_t)r * block, i) == load(t, want, 0),
                                  "Gather %s count %d root %d%s rep %d: block %d [%d] = %lld, "
                                  "want %lld",
                                  t->name, count, root, ip ? " in place" : "", rep, r, i,
                                  (long long)load(t, all + (size_t)r * block, i),
                                  (long long)load(t, want, 0));
                        }
                /* Scatter: block r of the root's buffer goes to rank r. */
                for (int r = 0; r < np; r++)
                    for (int i = 0; i < count; i++)
                        store(t, all + (size_t)r * block, i, value(r, i + rep + root));
                for (int i = 0; i < count; i++)
                    store(t, mine, i, -1);
                rc = MPI_Scatter(all, count, dt, ip ? MPI_IN_PLACE : mine, count, dt, root,
                                 MPI_COMM_WORLD);
                CHECK(rc == MPI_SUCCESS, "Scatter %s: rc %d", t->name, rc);
                const char *got = ip ? all + (size_t)me * block : mine;
                for (int i = 0; i < count; i++) {
                    char want[8];
                    store(t, want, 0, value(me, i + rep + root));
                    CHECK(load(t, got, i) == load(t, want, 0),
                          "Scatter %s count %d root %d%s rep %d: [%d] = %lld, want %lld", t->name,
                          count, root, ip ? " in place" : "", rep, i, (long long)load(t, got, i),
                          (long long)load(t, want, 0));
                }
            }
    for (int in_place = 0; in_place < 2; in_place++)
        for (int rep = 0; rep < REPEAT; rep++) {
            /* Allgather: block r is rank r's everywhere. */
            for (int i = 0; i < count; i++)
                store(t, mine, i, value(me, i + rep));
            for (int r = 0; r < np; r++)
                for (int i = 0; i < count; i++)
                    store(t, all + (size_t)r * block, i,
                          in_place && r == me ? value(me, i + rep) : -1);
            int rc = MPI_Allgather(in_place ? MPI_IN_PLACE : mine, count, dt, all, count, dt,
                                   MPI_COMM_WORLD);
            CHECK(rc == MPI_SUCCESS, "Allgather %s: rc %d", t->name, rc);
            for (int r = 0; r < np; r++)
                for (int i = 0; i < count; i++) {
                    char want[8];
                    store(t, want, 0, value(r, i + rep));
                    CHECK(load(t, all + (size_t)r * block, i) == load(t, want, 0),
                          "Allgather %s count %d%s rep %d: block %d [%d] = %lld, want %lld",
                          t->name, count, in_place ? " in place" : "", rep, r, i,
                          (long long)load(t, all + (size_t)r * block, i),
                          (long long)load(t, want, 0));
                }
            /* Alltoall: rank r's block j goes to rank j's block r. */
            static _Alignas(16) char out[MAXN * 32];
            char *dst = in_place ? all : out;
            for (int j = 0; j < np; j++)
                for (int i = 0; i < count; i++) {
                    store(t, all + (size_t)j * block, i, value(me * np + j, i + rep));
                    if (!in_place)
                        store(t, out + (size_t)j * block, i, -1);
                }
            rc = MPI_Alltoall(in_place ? MPI_IN_PLACE : all, count, dt, dst, count, dt,
                              MPI_COMM_WORLD);
            CHECK(rc == MPI_SUCCESS, "Alltoall %s: rc %d", t->name, rc);
            for (int r = 0; r < np; r++)
                for (int i = 0; i < count; i++) {
                    char want[8];
                    store(t, want, 0, value(r * np + me, i + rep));
                    CHECK(load(t, dst + (size_t)r * block, i) == load(t, want, 0),
                          "Alltoall %s count %d%s rep %d: block %d [%d] = %lld, want %lld", t->name,
                          count, in_place ? " in place" : "", rep, r, i,
                          (long long)load(t, dst + (size_t)r * block, i),
                          (long long)load(t, want, 0));
                }
        }
    if (derived)
        MPI_Type_free(&dt);
}

/* Truncation found on the small path: a rank receives fewer elements than
 * were sent to it (Scatter), the root fewer than a rank sent (Gather). */
static void truncation(void)
{
    if (np < 2)
        return;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int all[2 * 64], two[2] = {me, me}, cls;
    for (int rep = 0; rep < 3; rep++) {
        bool short_one = rep == 2;
        int rc = MPI_Scatter(all, 2, MPI_INT, two, short_one && me == 1 ? 1 : 2, MPI_INT, 0,
                             MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(cls == (short_one && me == 1 ? MPI_ERR_TRUNCATE : MPI_SUCCESS),
              "Scatter truncation rep %d: class %d", rep, cls);
        rc = MPI_Gather(two, short_one && me == 1 ? 2 : 1, MPI_INT, all, 1, MPI_INT, 0,
                        MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(cls == (short_one && me == 0 ? MPI_ERR_TRUNCATE : MPI_SUCCESS),
              "Gather truncation rep %d: class %d", rep, cls);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Small and large calls of one kind in turn, and blocking calls while
 * nonblocking ones are outstanding. */
static void mixed(void)
{
    enum { BIG = 4096 };
    int *big = malloc(BIG * sizeof *big), *bigr = malloc(BIG * sizeof *bigr);
    for (int rep = 0; rep < 6; rep++) {
        int x = me + rep, s = -1;
        MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(s == np * (np - 1) / 2 + np * rep, "alternating: small sum %d", s);
        for (int i = 0; i < BIG; i++)
            big[i] = me + i;
        MPI_Allreduce(big, bigr, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(bigr[BIG - 1] == np * (np - 1) / 2 + np * (BIG - 1), "alternating: large sum %d",
              bigr[BIG - 1]);
    }
    for (int rep = 0; rep < 4; rep++) {
        int a = me, ar = -1, b = me * 2, br = -1, c = me + 1, cr = -1;
        MPI_Request rq[2];
        MPI_Iallreduce(&a, &ar, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
        MPI_Iallreduce(&b, &br, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq[1]);
        MPI_Allreduce(&c, &cr, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        CHECK(ar == np * (np - 1) / 2, "with nonblocking: Iallreduce sum %d", ar);
        CHECK(br == 2 * (np - 1), "with nonblocking: Iallreduce max %d", br);
        CHECK(cr == np * (np + 1) / 2, "with nonblocking: Allreduce sum %d", cr);
    }
    free(big);
    free(bigr);
}

/* Bad arguments after the small path was taken for the same shapes. */
static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 1, y = 0, cls;
    for (int rep = 0; rep < 2; rep++) {
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    int rc = MPI_Bcast(&x, 1, MPI_INT, np, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT, "Bcast root %d: class %d", np, cls);
    rc = MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT, "Reduce root -1: class %d", cls);
    rc = MPI_Allreduce(&x, &y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "Allreduce count -1: class %d", cls);
    rc = MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "Allreduce BAND on double: class %d", cls);
    rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "Allreduce MPI_OP_NULL: class %d", cls);
    rc = MPI_Allreduce(&x, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "Allreduce sendbuf == recvbuf: class %d", cls);
    rc = MPI_Allreduce(&x, &y, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "Allreduce MPI_DATATYPE_NULL: class %d", cls);
    rc = MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "Bcast MPI_COMM_NULL: class %d", cls);
    /* The communicator still works, on the small path. */
    for (int rep = 0; rep < 2; rep++) {
        x = me;
        rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        CHECK(rc == MPI_SUCCESS && y == np - 1, "after the errors: max %d (rc %d)", y, rc);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    static const int counts[] = {0, 1, 2, 3, 4, 8};
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
        const struct type *t = &types[ti];
        for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
            int count = counts[ci];
            if ((size_t)count * t->size > 32)
                continue;
            for (int w = W_SUM; w <= W_LXOR; w++)
                if (defined(t, (enum which)w))
                    for (int mis = 0; mis < 2; mis++) /* odd ranks misaligned */
                        reductions(t, (enum which)w, count, mis && (me & 1));
            for (int mis = 0; mis < 2; mis++)
                bcasts(t, count, mis && (me & 1));
            for (int derived = 0; derived < 2; derived++)
                blocks(t, count, derived && (me & 1));
        }
    }
    truncation();
    mixed();
    errors();
    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && total == 0)
        printf("coll_small: %d ranks ok\n", np);
    MPI_Finalize();
    return total != 0;
}
