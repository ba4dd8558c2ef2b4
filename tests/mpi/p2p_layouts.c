/*
 * Messages between two different layouts of the same type signature:
 * vector -> indexed, struct -> subarray, resized contiguous -> hvector,
 * indexed -> vector of resized, hvector -> vector, subarray -> resized,
 * contiguous <-> indexed, struct with a double -> a resized struct. Each pair
 * runs at three sizes (one element, within an inbox slot; ~2 KiB, eager;
 * ~24 KiB, rendezvous) and in four orders: receive posted first, send first
 * (unexpected: eager cell or rendezvous), synchronous send, and a wildcard
 * receive. Every rank sends to its right and receives from its left.
 *
 * The expected layout of each type is computed here from the constructor's
 * arguments (not by the datatype engine): every byte a receive type selects
 * must hold the sender's value for that position in the type signature, and
 * every other byte of the receive buffer must be left untouched.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

#define MAXB     16   /* basic elements per element */
#define SENTINEL 0xa5 /* receive-buffer bytes no type selects */
#define JUNK     0x5a /* send-buffer bytes no type selects */

struct layout {
    const char *name;
    MPI_Datatype type;
    int n;           /* basic elements in one element */
    int off[MAXB];   /* byte offset of each from the buffer, in type-map order */
    int size[MAXB];  /* its size: 4 (int) or 8 (double) */
    MPI_Aint extent; /* from one element to the next */
};

static void commit(struct layout *l, MPI_Datatype t)
{
    MPI_Type_commit(&t);
    l->type = t;
    MPI_Aint lb;
    MPI_Type_get_extent(t, &lb, &l->extent);
}

static void add(struct layout *l, int off, int size)
{
    REQUIRE(l->n < MAXB);
    l->off[l->n] = off;
    l->size[l->n] = size;
    l->n++;
}

/* vector(3, 2, 4) of int */
static struct layout make_vec(void)
{
    struct layout l = {.name = "vector"};
    MPI_Datatype t;
    MPI_Type_vector(3, 2, 4, MPI_INT, &t);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            add(&l, (i * 4 + j) * 4, 4);
    commit(&l, t);
    CHECK_EQ(l.extent, 40);
    return l;
}

/* indexed({1, 3, 2}, {5, 0, 9}) of int: blocks out of address order */
static struct layout make_idx(void)
{
    struct layout l = {.name = "indexed"};
    int bl[] = {1, 3, 2}, dis[] = {5, 0, 9};
    MPI_Datatype t;
    MPI_Type_indexed(3, bl, dis, MPI_INT, &t);
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < bl[b]; j++)
            add(&l, (dis[b] + j) * 4, 4);
    commit(&l, t);
    CHECK_EQ(l.extent, 44);
    return l;
}

/* struct of ints: 2 at byte 8, 4 at byte 24 (lower bound 8) */
static struct layout make_structi(void)
{
    struct layout l = {.name = "struct"};
    int bl[] = {2, 4};
    MPI_Aint dis[] = {8, 24};
    MPI_Datatype ty[] = {MPI_INT, MPI_INT}, t;
    MPI_Type_create_struct(2, bl, dis, ty, &t);
    for (int b = 0; b < 2; b++)
        for (int j = 0; j < bl[b]; j++)
            add(&l, (int)dis[b] + 4 * j, 4);
    commit(&l, t);
    CHECK_EQ(l.extent, 32);
    return l;
}

/* subarray {2, 3} at {1, 1} of a 4 x 5 int array, C order */
static struct layout make_sub(void)
{
    struct layout l = {.name = "subarray"};
    int sizes[] = {4, 5}, subs[] = {2, 3}, starts[] = {1, 1};
    MPI_Datatype t;
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            add(&l, ((1 + i) * 5 + 1 + j) * 4, 4);
    commit(&l, t);
    CHECK_EQ(l.extent, 80);
    return l;
}

/* contiguous(3) of int resized to an extent of 20 bytes, twice per element
 * through a contiguous(2) */
static struct layout make_rcontig(void)
{
    struct layout l = {.name = "resized contiguous"};
    MPI_Datatype c, r, t;
    MPI_Type_contiguous(3, MPI_INT, &c);
    MPI_Type_create_resized(c, 0, 20, &r);
    MPI_Type_contiguous(2, r, &t);
    MPI_Type_free(&c);
    MPI_Type_free(&r);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            add(&l, i * 20 + j * 4, 4);
    commit(&l, t);
    CHECK_EQ(l.extent, 40);
    return l;
}

/* hvector(2, 3, 28 bytes) of int */
static struct layout make_hvec(void)
{
    struct layout l = {.name = "hvector"};
    MPI_Datatype t;
    MPI_Type_create_hvector(2, 3, 28, MPI_INT, &t);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            add(&l, i * 28 + j * 4, 4);
    commit(&l, t);
    CHECK_EQ(l.extent, 40);
    return l;
}

/* vector(2, 1, 2) of (contiguous(3) of int resized to 20 bytes) */
static struct layout make_nested(void)
{
    struct layout l = {.name = "vector of resized"};
    MPI_Datatype c, r, t;
    MPI_Type_contiguous(3, MPI_INT, &c);
    MPI_Type_create_resized(c, 0, 20, &r);
    MPI_Type_vector(2, 1, 2, r, &t);
    MPI_Type_free(&c);
    MPI_Type_free(&r);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            add(&l, i * 40 + j * 4, 4);
    commit(&l, t);
    CHECK_EQ(l.extent, 60);
    return l;
}

/* contiguous(6) of int */
static struct layout make_contig(void)
{
    struct layout l = {.name = "contiguous"};
    MPI_Datatype t;
    MPI_Type_contiguous(6, MPI_INT, &t);
    for (int j = 0; j < 6; j++)
        add(&l, j * 4, 4);
    commit(&l, t);
    CHECK_EQ(l.extent, 24);
    return l;
}

/* struct {int, int, double, int} at 0, 4, 8, 16 */
static struct layout make_structd(void)
{
    struct layout l = {.name = "struct with double"};
    int bl[] = {2, 1, 1};
    MPI_Aint dis[] = {0, 8, 16};
    MPI_Datatype ty[] = {MPI_INT, MPI_DOUBLE, MPI_INT}, t;
    MPI_Type_create_struct(3, bl, dis, ty, &t);
    add(&l, 0, 4);
    add(&l, 4, 4);
    add(&l, 8, 8);
    add(&l, 16, 4);
    commit(&l, t);
    return l;
}

/* the same signature elsewhere: int at 28, int at 4, double at 12, int at
 * 40 (blocks out of order), resized to 48 bytes */
static struct layout make_structd2(void)
{
    struct layout l = {.name = "resized struct with double"};
    int bl[] = {1, 1, 1, 1};
    MPI_Aint dis[] = {28, 4, 12, 40};
    MPI_Datatype ty[] = {MPI_INT, MPI_INT, MPI_DOUBLE, MPI_INT}, s, t;
    MPI_Type_create_struct(4, bl, dis, ty, &s);
    MPI_Type_create_resized(s, 0, 48, &t);
    MPI_Type_free(&s);
    add(&l, 28, 4);
    add(&l, 4, 4);
    add(&l, 12, 8);
    add(&l, 40, 4);
    commit(&l, t);
    CHECK_EQ(l.extent, 48);
    return l;
}

/* Byte b of basic element e (in signature order) of a message from src. */
static unsigned char value(int src, int pair, long e, int b)
{
    unsigned char v = (unsigned char)(src * 131 + pair * 17 + e * 7 + b * 13 + 1);
    return v == SENTINEL ? 0x11 : v;
}

static size_t span(const struct layout *l, int count)
{
    int hi = 0;
    for (int k = 0; k < l->n; k++)
        if (l->off[k] + l->size[k] > hi)
            hi = l->off[k] + l->size[k];
    return (size_t)(count - 1) * (size_t)l->extent + (size_t)hi + 64;
}

static void fill_send(char *buf, size_t len, const struct layout *l, int count, int me, int pair)
{
    memset(buf, JUNK, len);
    long e = 0;
    for (int i = 0; i < count; i++)
        for (int k = 0; k < l->n; k++, e++)
            for (int b = 0; b < l->size[k]; b++)
                buf[(size_t)i * (size_t)l->extent + (size_t)l->off[k] + (size_t)b] =
                    (char)value(me, pair, e, b);
}

static int check_recv(const char *buf, size_t len, const struct layout *l, int count, int src,
                      int pair, unsigned char *covered)
{
    int bad = 0;
    memset(covered, 0, len);
    long e = 0;
    for (int i = 0; i < count; i++)
        for (int k = 0; k < l->n; k++, e++)
            for (int b = 0; b < l->size[k]; b++) {
                size_t at = (size_t)i * (size_t)l->extent + (size_t)l->off[k] + (size_t)b;
                covered[at] = 1;
                if ((unsigned char)buf[at] != value(src, pair, e, b))
                    bad++;
            }
    for (size_t at = 0; at < len; at++)
        if (!covered[at] && (unsigned char)buf[at] != SENTINEL)
            bad++;
    return bad;
}

enum order { POSTED, UNEXPECTED, SYNC, WILDCARD, NORDERS };
static const char *order_name[] = {"posted", "unexpected", "ssend", "wildcard"};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    struct layout vec = make_vec(), idx = make_idx(), structi = make_structi(), sub = make_sub(),
                  rcontig = make_rcontig(), hvec = make_hvec(), nested = make_nested(),
                  contig = make_contig(), structd = make_structd(), structd2 = make_structd2();
    struct {
        const struct layout *s, *r;
    } pairs[] = {
        {&vec, &idx},        {&structi, &sub},      {&rcontig, &hvec},     {&idx, &nested},
        {&hvec, &vec},       {&sub, &rcontig},      {&contig, &idx},       {&idx, &contig},
        {&nested, &structi}, {&structd, &structd2}, {&structd2, &structd},
    };
    /* One element (<= 40 bytes: an inbox slot), ~2 KiB (eager), ~24 KiB
     * (rendezvous above the 16 KiB eager threshold). */
    const int counts[] = {1, 100, 1000};
    size_t cap = 0;
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
        for (int c = 0; c < 3; c++) {
            size_t a = span(pairs[p].s, counts[c]), b = span(pairs[p].r, counts[c]);
            if (a > cap)
                cap = a;
            if (b > cap)
                cap = b;
        }
    char *sbuf = malloc(cap), *rbuf = malloc(cap), *sref = malloc(cap);
    unsigned char *covered = malloc(cap);
    REQUIRE(sbuf && rbuf && sref && covered);

    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        const struct layout *ls = pairs[p].s, *lr = pairs[p].r;
        int sig = 0;
        for (int k = 0; k < ls->n; k++)
            sig += ls->size[k];
        for (int c = 0; c < 3; c++) {
            int count = counts[c];
            size_t slen = span(ls, count), rlen = span(lr, count);
            for (int o = 0; o < NORDERS; o++) {
                int pair = (int)p * 3 + c;
                fill_send(sbuf, slen, ls, count, rank, pair);
                memset(rbuf, SENTINEL, rlen);
                int tag = pair * NORDERS + o;
                MPI_Request rr = MPI_REQUEST_NULL, sr = MPI_REQUEST_NULL;
                MPI_Status st;
                int src = o == WILDCARD ? MPI_ANY_SOURCE : left;
                int rtag = o == WILDCARD ? MPI_ANY_TAG : tag;
                if (o != UNEXPECTED)
                    MPI_Irecv(rbuf, count, lr->type, src, rtag, MPI_COMM_WORLD, &rr);
                MPI_Barrier(MPI_COMM_WORLD);
                if (o == SYNC)
                    MPI_Issend(sbuf, count, ls->type, right, tag, MPI_COMM_WORLD, &sr);
                else
                    MPI_Isend(sbuf, count, ls->type, right, tag, MPI_COMM_WORLD, &sr);
                if (o == UNEXPECTED) {
                    MPI_Barrier(MPI_COMM_WORLD);
                    MPI_Irecv(rbuf, count, lr->type, src, rtag, MPI_COMM_WORLD, &rr);
                }
                CHECK_EQ(MPI_Wait(&rr, &st), MPI_SUCCESS);
                CHECK_EQ(MPI_Wait(&sr, MPI_STATUS_IGNORE), MPI_SUCCESS);
                CHECK_EQ(st.MPI_SOURCE, left);
                CHECK_EQ(st.MPI_TAG, tag);
                int got = -1;
                MPI_Get_count(&st, lr->type, &got);
                CHECK_EQ(got, count);
                int bytes = -1;
                MPI_Get_count(&st, MPI_BYTE, &bytes);
                CHECK_EQ(bytes, count * sig);
                int bad = check_recv(rbuf, rlen, lr, count, left, pair, covered);
                if (bad) {
                    fprintf(stderr, "rank %d: %s -> %s, %d elements, %s: %d bad bytes\n", rank,
                            ls->name, lr->name, count, order_name[o], bad);
                    CHECK_EQ(bad, 0);
                }
                /* The send buffer is left as it was. */
                fill_send(sref, slen, ls, count, rank, pair);
                CHECK(memcmp(sbuf, sref, slen) == 0);
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
    }

    struct layout *all[] = {&vec,  &idx,    &structi, &sub,     &rcontig,
                            &hvec, &nested, &contig,  &structd, &structd2};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        MPI_Type_free(&all[i]->type);
    free(sbuf);
    free(rbuf);
    free(sref);
    free(covered);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && check_failures_ == 0)
        printf("p2p_layouts: %d ranks ok\n", size);
    return check_summary();
}
