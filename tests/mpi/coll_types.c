/*
 * Collectives with derived datatypes, different on the two sides when the
 * type signatures match: Bcast of a vector received as contiguous ints and
 * the reverse; Bcast of a struct with ints and doubles; Gather with a
 * resized struct send type into contiguous ints, and Scatter the other way;
 * Alltoallw with a different send and receive type per peer (contiguous,
 * vector, reversed indexed); Allreduce/Reduce of a sum on contiguous-of-int
 * and vector-of-int types with a user op and with MPI_SUM (also
 * MPI_IN_PLACE); Allgather into an indexed and a
 * resized indexed receive type. Gaps of non-contiguous receive buffers must
 * stay untouched. Failures print the test, root, index, expected and got.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENT (-777777)

static int rank, size;
static char ctx[200];

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "coll_types: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static int val(int a, int b, int c)
{
    unsigned h = (unsigned)a * 2654435761u ^ ((unsigned)b * 0x9e3779b9u + (unsigned)c * 40503u);
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return (int)(h % 200001) - 100000;
}

static void check_ints(const char *buf, const int *got, const int *exp, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (got[i] != exp[i]) {
            if (bad++ < 5)
                fprintf(stderr, "coll_types: rank %d of %d: %s: %s[%d] expected %d got %d\n", rank,
                        size, ctx, buf, i, exp[i], got[i]);
        }
    if (bad) {
        fprintf(stderr, "coll_types: rank %d of %d: %s: %d of %d ints wrong\n", rank, size, ctx,
                bad, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void check_rc(int rc, const char *call)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "coll_types: rank %d of %d: %s: %s returned %d\n", rank, size, ctx, call,
                rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void fill(int *p, int n, int v)
{
    for (int i = 0; i < n; i++)
        p[i] = v;
}

static int nroots, roots[3];

static void pick_roots(void)
{
    int cand[3] = {0, size - 1, size / 2};
    for (int k = 0; k < 3; k++) {
        int dup = 0;
        for (int j = 0; j < nroots; j++)
            dup |= roots[j] == cand[k];
        if (!dup)
            roots[nroots++] = cand[k];
    }
}

/* Bcast: root sends a vector (K blocks of 2, stride 5), the others receive
 * 2K contiguous ints; then root sends contiguous and the others receive
 * into the vector (gaps untouched); then everyone uses 3 vectors. */
static void test_bcast_vector(void)
{
    enum { K = 37, BL = 2, STRIDE = 5, SPAN = (K - 1) * STRIDE + BL };
    MPI_Datatype vec;
    MPI_Type_vector(K, BL, STRIDE, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    static int big[3 * SPAN + 16], ebig[3 * SPAN + 16], flat[3 * K * BL + 8], eflat[3 * K * BL + 8];
    MPI_Aint lb, ext;
    MPI_Type_get_extent(vec, &lb, &ext);
    int vext = (int)(ext / sizeof(int));
    for (int k = 0; k < nroots; k++) {
        int root = roots[k];
        /* vector -> contiguous */
        snprintf(ctx, sizeof ctx, "MPI_Bcast vector -> %d MPI_INT root %d", K * BL, root);
        fill(big, SPAN, SENT);
        fill(flat, K * BL + 8, SENT);
        fill(eflat, K * BL + 8, SENT);
        for (int b = 0; b < K; b++)
            for (int j = 0; j < BL; j++) {
                big[b * STRIDE + j] = val(1, root, b * STRIDE + j);
                eflat[b * BL + j] = val(1, root, b * STRIDE + j);
            }
        if (rank == root)
            check_rc(MPI_Bcast(big, 1, vec, root, MPI_COMM_WORLD), "MPI_Bcast");
        else {
            check_rc(MPI_Bcast(flat, K * BL, MPI_INT, root, MPI_COMM_WORLD), "MPI_Bcast");
            check_ints("recv", flat, eflat, K * BL + 8);
        }
        /* contiguous -> vector */
        snprintf(ctx, sizeof ctx, "MPI_Bcast %d MPI_INT -> vector root %d", K * BL, root);
        fill(big, SPAN + 16, SENT);
        fill(ebig, SPAN + 16, SENT);
        for (int b = 0; b < K; b++)
            for (int j = 0; j < BL; j++) {
                flat[b * BL + j] = val(2, root, b * BL + j);
                ebig[b * STRIDE + j] = val(2, root, b * BL + j);
            }
        if (rank == root)
            check_rc(MPI_Bcast(flat, K * BL, MPI_INT, root, MPI_COMM_WORLD), "MPI_Bcast");
        else {
            check_rc(MPI_Bcast(big, 1, vec, root, MPI_COMM_WORLD), "MPI_Bcast");
            check_ints("recv", big, ebig, SPAN + 16);
        }
        /* 3 vectors on both sides (chained by the extent) */
        snprintf(ctx, sizeof ctx, "MPI_Bcast 3 vectors root %d", root);
        int n3 = 2 * vext + SPAN;
        fill(big, n3 + 16, SENT);
        fill(ebig, n3 + 16, SENT);
        for (int c = 0; c < 3; c++)
            for (int b = 0; b < K; b++)
                for (int j = 0; j < BL; j++) {
                    int at = c * vext + b * STRIDE + j;
                    ebig[at] = val(3, root, at);
                    if (rank == root)
                        big[at] = ebig[at];
                }
        check_rc(MPI_Bcast(big, 3, vec, root, MPI_COMM_WORLD), "MPI_Bcast");
        check_ints("buffer", big, ebig, n3 + 16);
    }
    MPI_Type_free(&vec);
}

/* Bcast of a struct type {int, double[2], int} both sides. */
struct mixed {
    int a;
    double d[2];
    int b;
};

static void test_bcast_struct(void)
{
    int bl[3] = {1, 2, 1};
    MPI_Aint disp[3] = {offsetof(struct mixed, a), offsetof(struct mixed, d),
                        offsetof(struct mixed, b)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_INT}, st, str;
    MPI_Type_create_struct(3, bl, disp, types, &st);
    MPI_Type_create_resized(st, 0, sizeof(struct mixed), &str);
    MPI_Type_commit(&str);
    enum { N = 29 };
    struct mixed m[N];
    for (int k = 0; k < nroots; k++) {
        int root = roots[k];
        snprintf(ctx, sizeof ctx, "MPI_Bcast struct {int, double[2], int} root %d", root);
        for (int i = 0; i < N; i++) {
            memset(&m[i], 0x3c, sizeof m[i]);
            if (rank == root) {
                m[i].a = val(4, root, i);
                m[i].d[0] = val(5, root, i) * 0.5;
                m[i].d[1] = val(6, root, i) * 0.25;
                m[i].b = val(7, root, i);
            }
        }
        check_rc(MPI_Bcast(m, N, str, root, MPI_COMM_WORLD), "MPI_Bcast");
        for (int i = 0; i < N; i++)
            if (m[i].a != val(4, root, i) || m[i].d[0] != val(5, root, i) * 0.5 ||
                m[i].d[1] != val(6, root, i) * 0.25 || m[i].b != val(7, root, i)) {
                fprintf(stderr,
                        "coll_types: rank %d of %d: %s: element %d is {%d, %g, %g, %d}, "
                        "expected {%d, %g, %g, %d}\n",
                        rank, size, ctx, i, m[i].a, m[i].d[0], m[i].d[1], m[i].b, val(4, root, i),
                        val(5, root, i) * 0.5, val(6, root, i) * 0.25, val(7, root, i));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    }
    MPI_Type_free(&st);
    MPI_Type_free(&str);
}

/* Gather: each rank sends NREC records {int a; double x; int b;} through a
 * struct type selecting a and b, resized to the record; root receives
 * 2*NREC contiguous ints per rank. Scatter: the reverse. */
struct rec {
    int a;
    double x;
    int b;
};

static void test_gather_struct(void)
{
    enum { NREC = 11 };
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(struct rec, a), offsetof(struct rec, b)};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT}, st, rt;
    MPI_Type_create_struct(2, bl, disp, types, &st);
    MPI_Type_create_resized(st, 0, sizeof(struct rec), &rt);
    MPI_Type_commit(&rt);
    struct rec r[NREC];
    int n = size * 2 * NREC;
    int *flat = xmalloc((n + 8) * sizeof(int)), *exp = xmalloc((n + 8) * sizeof(int));
    for (int k = 0; k < nroots; k++) {
        int root = roots[k];
        snprintf(ctx, sizeof ctx, "MPI_Gather %d resized struct -> %d MPI_INT root %d", NREC,
                 2 * NREC, root);
        for (int i = 0; i < NREC; i++) {
            r[i].a = val(8, rank, 2 * i);
            r[i].x = -1.5;
            r[i].b = val(8, rank, 2 * i + 1);
        }
        fill(flat, n + 8, SENT);
        fill(exp, n + 8, SENT);
        for (int q = 0; q < size; q++)
            for (int i = 0; i < 2 * NREC; i++)
                exp[q * 2 * NREC + i] = val(8, q, i);
        check_rc(MPI_Gather(r, NREC, rt, flat, 2 * NREC, MPI_INT, root, MPI_COMM_WORLD),
                 "MPI_Gather");
        if (rank == root)
            check_ints("recvbuf", flat, exp, n + 8);

        snprintf(ctx, sizeof ctx, "MPI_Scatter %d MPI_INT -> %d resized struct root %d", 2 * NREC,
                 NREC, root);
        for (int i = 0; i < n; i++)
            flat[i] = val(9, root, i);
        for (int i = 0; i < NREC; i++)
            r[i].a = r[i].b = SENT, r[i].x = -2.5;
        check_rc(MPI_Scatter(flat, 2 * NREC, MPI_INT, r, NREC, rt, root, MPI_COMM_WORLD),
                 "MPI_Scatter");
        for (int i = 0; i < NREC; i++)
            if (r[i].a != val(9, root, rank * 2 * NREC + 2 * i) ||
                r[i].b != val(9, root, rank * 2 * NREC + 2 * i + 1) || r[i].x != -2.5) {
                fprintf(stderr,
                        "coll_types: rank %d of %d: %s: record %d is {%d, %g, %d}, expected "
                        "{%d, -2.5, %d}\n",
                        rank, size, ctx, i, r[i].a, r[i].x, r[i].b,
                        val(9, root, rank * 2 * NREC + 2 * i),
                        val(9, root, rank * 2 * NREC + 2 * i + 1));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    }
    free(flat);
    free(exp);
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
}

/* Alltoallw: src sends m(src, dst) ints to dst. The send type depends on
 * dst % 3 (m x MPI_INT, 1 x vector(m,1,2), 1 x contiguous(m)); the receive
 * type on src % 3 (1 x vector(m,1,3), m x MPI_INT, 1 x indexed placing the
 * ints in reverse order). Every peer's region is separate, with gaps. */
static int mcount(int src, int dst)
{
    return (src * 3 + dst * 5) % 7 == 0 ? 0 : 1 + (src * 3 + dst * 5) % 7 * 3;
}

static void test_alltoallw(void)
{
    snprintf(ctx, sizeof ctx, "MPI_Alltoallw mixed types");
    int *sc = xmalloc(size * sizeof(int)), *sd = xmalloc(size * sizeof(int));
    int *rc = xmalloc(size * sizeof(int)), *rd = xmalloc(size * sizeof(int));
    MPI_Datatype *stypes = xmalloc(size * sizeof(MPI_Datatype));
    MPI_Datatype *rtypes = xmalloc(size * sizeof(MPI_Datatype));
    int sn = 0, rn = 0;
    /* regions: sized 3m + 2 ints, peers in reverse order for sends */
    for (int j = size - 1; j >= 0; j--) {
        sd[j] = sn * (int)sizeof(int);
        sn += 3 * mcount(rank, j) + 2;
    }
    for (int j = 0; j < size; j++) {
        rd[j] = rn * (int)sizeof(int);
        rn += 3 * mcount(j, rank) + 2;
    }
    int *sbuf = xmalloc((sn + 1) * sizeof(int)), *rbuf = xmalloc((rn + 1) * sizeof(int));
    int *exp = xmalloc((rn + 1) * sizeof(int));
    fill(sbuf, sn + 1, SENT);
    fill(rbuf, rn + 1, SENT);
    fill(exp, rn + 1, SENT);
    for (int j = 0; j < size; j++) {
        int m = mcount(rank, j), *s = sbuf + sd[j] / (int)sizeof(int);
        switch (j % 3) {
        case 0:
            stypes[j] = MPI_INT;
            sc[j] = m;
            for (int i = 0; i < m; i++)
                s[i] = val(10, rank * 1000 + j, i);
            break;
        case 1:
            MPI_Type_vector(m, 1, 2, MPI_INT, &stypes[j]);
            MPI_Type_commit(&stypes[j]);
            sc[j] = 1;
            for (int i = 0; i < m; i++)
                s[2 * i] = val(10, rank * 1000 + j, i);
            break;
        default:
            MPI_Type_contiguous(m, MPI_INT, &stypes[j]);
            MPI_Type_commit(&stypes[j]);
            sc[j] = 1;
            for (int i = 0; i < m; i++)
                s[i] = val(10, rank * 1000 + j, i);
            break;
        }
        m = mcount(j, rank);
        int *e = exp + rd[j] / (int)sizeof(int);
        switch (j % 3) {
        case 0:
            MPI_Type_vector(m, 1, 3, MPI_INT, &rtypes[j]);
            MPI_Type_commit(&rtypes[j]);
            rc[j] = 1;
            for (int i = 0; i < m; i++)
                e[3 * i] = val(10, j * 1000 + rank, i);
            break;
        case 1:
            rtypes[j] = MPI_INT;
            rc[j] = m;
            for (int i = 0; i < m; i++)
                e[i] = val(10, j * 1000 + rank, i);
            break;
        default: {
            int *bls = xmalloc((m + 1) * sizeof(int)), *dis = xmalloc((m + 1) * sizeof(int));
            for (int i = 0; i < m; i++) {
                bls[i] = 1;
                dis[i] = m - 1 - i;
                e[m - 1 - i] = val(10, j * 1000 + rank, i);
            }
            MPI_Type_indexed(m, bls, dis, MPI_INT, &rtypes[j]);
            MPI_Type_commit(&rtypes[j]);
            rc[j] = 1;
            free(bls);
            free(dis);
            break;
        }
        }
    }
    check_rc(MPI_Alltoallw(sbuf, sc, sd, stypes, rbuf, rc, rd, rtypes, MPI_COMM_WORLD),
             "MPI_Alltoallw");
    check_ints("recvbuf", rbuf, exp, rn + 1);
    for (int j = 0; j < size; j++) {
        if (stypes[j] != MPI_INT)
            MPI_Type_free(&stypes[j]);
        if (rtypes[j] != MPI_INT)
            MPI_Type_free(&rtypes[j]);
    }
    free(sbuf);
    free(rbuf);
    free(exp);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(stypes);
    free(rtypes);
}

/* User-defined sums for the two derived types below: the function sees
 * *len elements laid out by the type (gaps included). */
static void sum_contig3(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    (void)dt;
    for (int i = 0; i < 3 * *len; i++)
        b[i] += a[i];
}

static void sum_vec4(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    (void)dt;
    for (int e = 0; e < *len; e++)
        for (int k = 0; k < 4; k++)
            b[7 * e + 2 * k] += a[7 * e + 2 * k];
}

/* Allreduce/Reduce/Scan/Exscan of a sum on contiguous(3, MPI_INT) and on
 * vector(4, 1, 2) (ints at 0, 2, 4, 6 of an extent of 7), also
 * MPI_IN_PLACE, with a user-defined op (always valid) and with MPI_SUM.
 * MPI-3.1 defines the predefined ops on predefined types only (MPICH and
 * Open MPI return MPI_ERR_OP), so MPI_SUM on these types may fail with
 * MPI_ERR_OP; when it succeeds the result must be right. Up to 16 ranks the
 * vectors are long enough (9001 elements, 144 KiB of data) for a chained
 * Scan to pass them on in several chunks. */
enum { NMAX = 9001 };
static int sbuf[7 * NMAX + 8], rbuf[7 * NMAX + 8], exp[7 * NMAX + 8];

static const char *const reduce_names[] = {"MPI_Allreduce", "MPI_Allreduce", "MPI_Reduce",
                                           "MPI_Scan",      "MPI_Scan",      "MPI_Exscan",
                                           "MPI_Exscan"};

static void test_reduce_derived(void)
{
    int N = size <= 16 ? NMAX : 45;
    MPI_Datatype contig, vec;
    MPI_Type_contiguous(3, MPI_INT, &contig);
    MPI_Type_commit(&contig);
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Op uops[2];
    MPI_Op_create(sum_contig3, 1, &uops[0]);
    MPI_Op_create(sum_vec4, 1, &uops[1]);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (int t = 0; t < 2; t++) {
        MPI_Datatype dt = t ? vec : contig;
        int span = t ? 7 * N : 3 * N; /* ints covered by N elements */
        for (int predefined = 0; predefined < 2; predefined++) {
            MPI_Op op = predefined ? MPI_SUM : uops[t];
            /* 0, 1 (in place): Allreduce; 2: Reduce; 3, 4 (in place): Scan;
             * 5, 6 (in place): Exscan. */
            for (int variant = 0; variant < 7; variant++) {
                int root = variant == 2 ? (size - 1) / 2 : -1;
                bool in_place = variant == 1 || variant == 4 || variant == 6;
                const char *name = reduce_names[variant];
                /* The ranks whose inputs the result sums: 0..upto-1. */
                int upto = variant >= 5 ? rank : variant >= 3 ? rank + 1 : size;
                snprintf(ctx, sizeof ctx, "%s %s on %d %s%s", name,
                         predefined ? "MPI_SUM" : "user sum", N,
                         t ? "vector(4,1,2)" : "contiguous(3)", in_place ? " MPI_IN_PLACE" : "");
                fill(sbuf, span + 8, SENT);
                fill(rbuf, span + 8, SENT);
                fill(exp, span + 8, SENT);
                for (int i = 0; i < span; i++) {
                    if (t && (i % 7) % 2 != 0)
                        continue; /* a gap of the vector */
                    sbuf[i] = val(11, rank, i);
                    int sum = 0;
                    for (int q = 0; q < upto; q++)
                        sum += val(11, q, i);
                    exp[i] = sum;
                }
                if (in_place)
                    memcpy(rbuf, sbuf, (size_t)(span + 8) * sizeof *rbuf); /* gaps keep SENT */
                const void *in = in_place ? MPI_IN_PLACE : sbuf;
                int rc;
                if (variant <= 1)
                    rc = MPI_Allreduce(in, rbuf, N, dt, op, comm);
                else if (variant == 2)
                    rc = MPI_Reduce(sbuf, rbuf, N, dt, op, root, comm);
                else if (variant <= 4)
                    rc = MPI_Scan(in, rbuf, N, dt, op, comm);
                else
                    rc = MPI_Exscan(in, rbuf, N, dt, op, comm);
                if (predefined && rc != MPI_SUCCESS) {
                    int cls;
                    MPI_Error_class(rc, &cls);
                    if (cls == MPI_ERR_OP)
                        continue; /* not defined by MPI-3.1: refused */
                }
                check_rc(rc, name);
                /* Reduce: the root's only; Exscan: rank 0's is undefined. */
                if ((variant != 2 || rank == root) && (variant < 5 || rank > 0))
                    check_ints("recvbuf", rbuf, exp, span + 8);
            }
        }
    }
    MPI_Comm_free(&comm);
    MPI_Op_free(&uops[0]);
    MPI_Op_free(&uops[1]);
    MPI_Type_free(&contig);
    MPI_Type_free(&vec);
}

/* Allgather: 6 MPI_INT sent, received as 1 indexed {2,1,3} at {0,4,7}
 * (extent 10), then as the same type resized to an extent of 12. */
static void test_allgather_indexed(void)
{
    int bl[3] = {2, 1, 3}, dis[3] = {0, 4, 7};
    MPI_Datatype idx, idxr;
    MPI_Type_indexed(3, bl, dis, MPI_INT, &idx);
    MPI_Type_commit(&idx);
    MPI_Type_create_resized(idx, 0, 12 * sizeof(int), &idxr);
    MPI_Type_commit(&idxr);
    int n = 12 * size + 8;
    int *rbuf = xmalloc(n * sizeof(int)), *exp = xmalloc(n * sizeof(int));
    int sbuf[6];
    for (int t = 0; t < 2; t++) {
        int ext = t ? 12 : 10;
        snprintf(ctx, sizeof ctx, "MPI_Allgather 6 MPI_INT -> 1 indexed (extent %d)", ext);
        for (int i = 0; i < 6; i++)
            sbuf[i] = val(12 + t, rank, i);
        fill(rbuf, n, SENT);
        fill(exp, n, SENT);
        for (int q = 0; q < size; q++) {
            int k = 0;
            for (int b = 0; b < 3; b++)
                for (int j = 0; j < bl[b]; j++)
                    exp[q * ext + dis[b] + j] = val(12 + t, q, k++);
        }
        check_rc(MPI_Allgather(sbuf, 6, MPI_INT, rbuf, 1, t ? idxr : idx, MPI_COMM_WORLD),
                 "MPI_Allgather");
        check_ints("recvbuf", rbuf, exp, n);
    }
    free(rbuf);
    free(exp);
    MPI_Type_free(&idx);
    MPI_Type_free(&idxr);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pick_roots();

    test_bcast_vector();
    test_bcast_struct();
    test_gather_struct();
    test_alltoallw();
    test_reduce_derived();
    test_allgather_indexed();

    MPI_Finalize();
    if (rank == 0)
        printf("coll_types: %d ranks ok\n", size);
    return 0;
}
