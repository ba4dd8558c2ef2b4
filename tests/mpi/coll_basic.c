/*
 * Every blocking collective on MPI_COMM_WORLD with MPI_INT data whose
 * expected value is computed exactly: Barrier, Bcast, Gather(v), Scatter(v),
 * Allgather(v), Alltoall(v,w), Reduce, Allreduce, Reduce_scatter(_block),
 * Scan, Exscan, Reduce_local. Counts 0, 1, 3, 17, 1000 at every root and
 * 100003 at roots 0, size-1, size/2; the MPI_IN_PLACE variants the standard
 * allows; v-variants with zero counts and displacements out of rank order
 * with gaps (the gaps and a guard zone after every receive buffer must stay
 * untouched); arguments that are not significant (non-root receive
 * buffers, in-place send counts and types) passed as NULL/0/null type.
 * The all-to-all families skip counts where size*count > 2^20.
 *
 * Usage: coll_basic [quick]   quick: counts <= 1000, roots 0, size-1, size/2.
 * A failure prints the collective, root, count, buffer, index, expected and
 * got value, and calls MPI_Abort.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENT  0x5eedf00d /* never a data value (those are within +-500000) */
#define GUARD 8          /* sentinel ints after every receive buffer */

static int rank, size;
static char ctx[200];
static int tagseq;

static const int all_counts[] = {0, 1, 3, 17, 1000, 100003};
static int ncounts;
static int roots[1024], nroots; /* every root (quick: 0, size-1, size/2) */
static int few[3], nfew;        /* 0, size-1, size/2: for counts > 1000 */

/* Data of rank r at index i for test tag (cheap: checking large buffers
 * at every root must stay fast). Neighbouring indices differ by 31,
 * neighbouring ranks by 104729 (mod 1000003). */
static int val(int tag, int r, int i)
{
    unsigned h = (unsigned)tag * 7919u + (unsigned)r * 104729u + (unsigned)i * 31u;
    return (int)(h % 1000003u) - 500000;
}

/* Reduction input of rank r at index i: linear in r so that sums over
 * ranks have a closed form (checking stays O(count) at any rank count);
 * |value| <= 20500, sums over 64 ranks fit an int. */
static int coef_a(int tag, int i)
{
    return (int)(((unsigned)tag * 13u + (unsigned)i * 37u) % 601u) - 300;
}

static int coef_b(int tag, int i)
{
    return (int)(((unsigned)tag * 29u + (unsigned)i * 53u) % 2001u) - 1000;
}

static int sval(int tag, int r, int i)
{
    return (r + 1) * coef_a(tag, i) + coef_b(tag, i);
}

/* What src sends to dst at index i (all-to-all). */
static int val3(int tag, int src, int dst, int i)
{
    return val(tag, src * 4099 + dst, i);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "coll_basic: rank %d: out of memory (%zu bytes)\n", rank, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* n ints plus the guard zone, all SENT. */
static int *newbuf(long n)
{
    int *p = xmalloc((size_t)(n + GUARD) * sizeof(int));
    for (long i = 0; i < n + GUARD; i++)
        p[i] = SENT;
    return p;
}

/* Compares got with exp over n ints plus the guard zone. */
static void check(const char *buf, const int *got, const int *exp, long n)
{
    long bad = 0;
    for (long i = 0; i < n + GUARD; i++) {
        if (got[i] == exp[i])
            continue;
        if (bad < 5)
            fprintf(stderr, "coll_basic: rank %d of %d: %s: %s[%ld]%s expected %d got %d\n", rank,
                    size, ctx, buf, i, i >= n ? " (guard zone)" : "", exp[i], got[i]);
        bad++;
    }
    if (bad) {
        fprintf(stderr, "coll_basic: rank %d of %d: %s: %ld of %ld ints wrong\n", rank, size, ctx,
                bad, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void check_rc(int rc, const char *call)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "coll_basic: rank %d of %d: %s: %s returned %d\n", rank, size, ctx, call,
                rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void set_ctx(const char *coll, int root, int count, int in_place)
{
    if (root >= 0)
        snprintf(ctx, sizeof ctx, "%s root %d count %d%s", coll, root, count,
                 in_place ? " MPI_IN_PLACE" : "");
    else
        snprintf(ctx, sizeof ctx, "%s count %d%s", coll, count, in_place ? " MPI_IN_PLACE" : "");
}

/* All-to-all families hold size*count ints per rank: keep that bounded. */
static int fits(int count)
{
    return (long)count * size <= (1L << 20);
}

/* v-variant count of rank r: some zeros, otherwise count-1..count+1. */
static int vcount(int count, int r)
{
    if (count == 0 || r % 4 == 2)
        return 0;
    return count + r % 3 - 1;
}

/* Displacements in reverse rank order with a one-int gap after each block;
 * returns the buffer length. */
static long vdispls(const int *counts, int *displs)
{
    long pos = 0;
    for (int r = size - 1; r >= 0; r--) {
        displs[r] = (int)pos;
        pos += counts[r] + 1;
    }
    return pos;
}

static void test_barrier(void)
{
    set_ctx("MPI_Barrier", -1, 0, 0);
    for (int k = 0; k < 10; k++)
        check_rc(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    if (size == 1)
        return;
    /* Nobody leaves a barrier before the late rank entered it: the late rank
     * must not see any "I left" message before it enters. */
    for (int k = 0; k < 2 * size; k++) {
        int late = (k * 5 + 1) % size, tag = 1000 + k;
        snprintf(ctx, sizeof ctx, "MPI_Barrier round %d late rank %d", k, late);
        if (rank == late) {
            double t0 = MPI_Wtime();
            while (MPI_Wtime() - t0 < 0.002) {
                int flag = 0;
                MPI_Status st;
                MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st);
                if (flag) {
                    fprintf(stderr,
                            "coll_basic: rank %d of %d: %s: rank %d left the barrier before "
                            "rank %d entered it\n",
                            rank, size, ctx, st.MPI_SOURCE, late);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
            check_rc(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
            for (int j = 0; j < size - 1; j++) {
                int v;
                MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        } else {
            check_rc(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
            MPI_Send(&rank, 1, MPI_INT, late, tag, MPI_COMM_WORLD);
        }
    }
}

static void test_bcast(int count, int root)
{
    int tag = ++tagseq;
    set_ctx("MPI_Bcast", root, count, 0);
    int *buf = newbuf(count), *exp = newbuf(count);
    for (int i = 0; i < count; i++) {
        exp[i] = val(tag, root, i);
        if (rank == root)
            buf[i] = exp[i];
    }
    check_rc(MPI_Bcast(buf, count, MPI_INT, root, MPI_COMM_WORLD), "MPI_Bcast");
    check("buffer", buf, exp, count);
    free(buf);
    free(exp);
}

static void test_gather(int count, int root, int in_place)
{
    int tag = ++tagseq;
    set_ctx("MPI_Gather", root, count, in_place);
    int *sbuf = newbuf(count);
    for (int i = 0; i < count; i++)
        sbuf[i] = val(tag, rank, i);
    if (rank != root) {
        check_rc(MPI_Gather(sbuf, count, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD),
                 "MPI_Gather");
    } else {
        long n = (long)size * count;
        int *rbuf = newbuf(n), *exp = newbuf(n);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < count; i++)
                exp[(long)r * count + i] = val(tag, r, i);
        if (in_place) {
            memcpy(rbuf + (long)root * count, sbuf, (size_t)count * sizeof(int));
            check_rc(MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, count, MPI_INT, root,
                                MPI_COMM_WORLD),
                     "MPI_Gather");
        } else {
            check_rc(MPI_Gather(sbuf, count, MPI_INT, rbuf, count, MPI_INT, root, MPI_COMM_WORLD),
                     "MPI_Gather");
        }
        check("recvbuf", rbuf, exp, n);
        free(rbuf);
        free(exp);
    }
    free(sbuf);
}

static void test_gatherv(int count, int root, int in_place)
{
    int tag = ++tagseq;
    set_ctx("MPI_Gatherv", root, count, in_place);
    int *counts = xmalloc(size * sizeof(int)), *displs = xmalloc(size * sizeof(int));
    for (int r = 0; r < size; r++)
        counts[r] = vcount(count, r);
    long n = vdispls(counts, displs);
    int mine = counts[rank];
    int *sbuf = newbuf(mine);
    for (int i = 0; i < mine; i++)
        sbuf[i] = val(tag, rank, i);
    if (rank != root) {
        check_rc(MPI_Gatherv(sbuf, mine, MPI_INT, NULL, NULL, NULL, MPI_DATATYPE_NULL, root,
                             MPI_COMM_WORLD),
                 "MPI_Gatherv");
    } else {
        int *rbuf = newbuf(n), *exp = newbuf(n);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < counts[r]; i++)
                exp[displs[r] + i] = val(tag, r, i);
        if (in_place) {
            memcpy(rbuf + displs[root], sbuf, (size_t)mine * sizeof(int));
            check_rc(MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, counts, displs, MPI_INT,
                                 root, MPI_COMM_WORLD),
                     "MPI_Gatherv");
        } else {
            check_rc(MPI_Gatherv(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT, root,
                                 MPI_COMM_WORLD),
                     "MPI_Gatherv");
        }
        check("recvbuf", rbuf, exp, n);
        free(rbuf);
        free(exp);
    }
    free(sbuf);
    free(counts);
    free(displs);
}

static void test_scatter(int count, int root, int in_place)
{
    int tag = ++tagseq;
    set_ctx("MPI_Scatter", root, count, in_place);
    int *rbuf = newbuf(count), *exp = newbuf(count);
    for (int i = 0; i < count; i++)
        exp[i] = val(tag, rank, i);
    if (rank != root) {
        check_rc(
            MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, rbuf, count, MPI_INT, root, MPI_COMM_WORLD),
            "MPI_Scatter");
        check("recvbuf", rbuf, exp, count);
    } else {
        long n = (long)size * count;
        int *sbuf = newbuf(n), *sexp = newbuf(n);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < count; i++)
                sbuf[(long)r * count + i] = sexp[(long)r * count + i] = val(tag, r, i);
        if (in_place) {
            check_rc(MPI_Scatter(sbuf, count, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root,
                                 MPI_COMM_WORLD),
                     "MPI_Scatter");
        } else {
            check_rc(MPI_Scatter(sbuf, count, MPI_INT, rbuf, count, MPI_INT, root, MPI_COMM_WORLD),
                     "MPI_Scatter");
            check("recvbuf", rbuf, exp, count);
        }
        check("sendbuf (must not change)", sbuf, sexp, n);
        free(sbuf);
        free(sexp);
    }
    free(rbuf);
    free(exp);
}

static void test_scatterv(int count, int root, int in_place)
{
    int tag = ++tagseq;
    set_ctx("MPI_Scatterv", root, count, in_place);
    int *counts = xmalloc(size * sizeof(int)), *displs = xmalloc(size * sizeof(int));
    for (int r = 0; r < size; r++)
        counts[r] = vcount(count, r);
    long n = vdispls(counts, displs);
    int mine = counts[rank];
    int *rbuf = newbuf(mine), *exp = newbuf(mine);
    for (int i = 0; i < mine; i++)
        exp[i] = val(tag, rank, i);
    if (rank != root) {
        check_rc(MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, rbuf, mine, MPI_INT, root,
                              MPI_COMM_WORLD),
                 "MPI_Scatterv");
        check("recvbuf", rbuf, exp, mine);
    } else {
        int *sbuf = newbuf(n), *sexp = newbuf(n);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < counts[r]; i++)
                sbuf[displs[r] + i] = sexp[displs[r] + i] = val(tag, r, i);
        if (in_place) {
            check_rc(MPI_Scatterv(sbuf, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL,
                                  root, MPI_COMM_WORLD),
                     "MPI_Scatterv");
        } else {
            check_rc(MPI_Scatterv(sbuf, counts, displs, MPI_INT, rbuf, mine, MPI_INT, root,
                                  MPI_COMM_WORLD),
                     "MPI_Scatterv");
            check("recvbuf", rbuf, exp, mine);
        }
        check("sendbuf (must not change)", sbuf, sexp, n);
        free(sbuf);
        free(sexp);
    }
    free(rbuf);
    free(exp);
    free(counts);
    free(displs);
}

static void test_allgather(int count, int in_place)
{
    int tag = ++tagseq;
    set_ctx("MPI_Allgather", -1, count, in_place);
    long n = (long)size * count;
    int *sbuf = newbuf(count), *rbuf = newbuf(n), *exp = newbuf(n);
    for (int i = 0; i < count; i++)
        sbuf[i] = val(tag, rank, i);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < count; i++)
            exp[(long)r * count + i] = val(tag, r, i);
    if (in_place) {
        memcpy(rbuf + (long)rank * count, sbuf, (size_t)count * sizeof(int));
        check_rc(
            MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, count, MPI_INT, MPI_COMM_WORLD),
            "MPI_Allgather");
    } else {
        check_rc(MPI_Allgather(sbuf, count, MPI_INT, rbuf, count, MPI_INT, MPI_COMM_WORLD),
                 "MPI_Allgather");
    }
    check("recvbuf", rbuf, exp, n);
    free(sbuf);
    free(rbuf);
    free(exp);
}

static void test_allgatherv(int count, int in_place)
{
    int tag = ++tagseq;
    set_ctx("MPI_Allgatherv", -1, count, in_place);
    int *counts = xmalloc(size * sizeof(int)), *displs = xmalloc(size * sizeof(int));
    for (int r = 0; r < size; r++)
        counts[r] = vcount(count, r);
    long n = vdispls(counts, displs);
    int mine = counts[rank];
    int *sbuf = newbuf(mine), *rbuf = newbuf(n), *exp = newbuf(n);
    for (int i = 0; i < mine; i++)
        sbuf[i] = val(tag, rank, i);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++)
            exp[displs[r] + i] = val(tag, r, i);
    if (in_place) {
        memcpy(rbuf + displs[rank], sbuf, (size_t)mine * sizeof(int));
        check_rc(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, counts, displs, MPI_INT,
                                MPI_COMM_WORLD),
                 "MPI_Allgatherv");
    } else {
        check_rc(MPI_Allgatherv(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT, MPI_COMM_WORLD),
                 "MPI_Allgatherv");
    }
    check("recvbuf", rbuf, exp, n);
    free(sbuf);
    free(rbuf);
    free(exp);
    free(counts);
    free(displs);
}

static void test_alltoall(int count, int in_place)
{
    int tag = ++tagseq;
    set_ctx("MPI_Alltoall", -1, count, in_place);
    long n = (long)size * count;
    int *sbuf = newbuf(n), *rbuf = newbuf(n), *exp = newbuf(n);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < count; i++) {
            sbuf[(long)r * count + i] = val3(tag, rank, r, i);
            exp[(long)r * count + i] = val3(tag, r, rank, i);
        }
    if (in_place) {
        memcpy(rbuf, sbuf, (size_t)n * sizeof(int));
        check_rc(
            MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, count, MPI_INT, MPI_COMM_WORLD),
            "MPI_Alltoall");
    } else {
        check_rc(MPI_Alltoall(sbuf, count, MPI_INT, rbuf, count, MPI_INT, MPI_COMM_WORLD),
                 "MPI_Alltoall");
    }
    check("recvbuf", rbuf, exp, n);
    free(sbuf);
    free(rbuf);
    free(exp);
}

/* Alltoallv/w count from src to dst; symmetric for the in-place variant
 * (there a rank sends to j what recvcounts[j] says). */
static int acount(int count, int src, int dst, int sym)
{
    if (count == 0)
        return 0;
    if (sym)
        return (src + dst) % 4 == 3 ? 0 : count + (src + dst) % 3 - 1;
    return (src + 2 * dst) % 4 == 3 ? 0 : count + (src * 3 + dst) % 3 - 1;
}

/* Alltoallv (w = 0) or Alltoallw with MPI_INT everywhere and byte
 * displacements (w = 1). Send blocks in reverse peer order, receive blocks
 * in rotated order, both with gaps. */
static void test_alltoallvw(int count, int in_place, int w)
{
    int tag = ++tagseq;
    set_ctx(w ? "MPI_Alltoallw" : "MPI_Alltoallv", -1, count, in_place);
    int *sc = xmalloc(size * sizeof(int)), *sd = xmalloc(size * sizeof(int));
    int *rc = xmalloc(size * sizeof(int)), *rd = xmalloc(size * sizeof(int));
    MPI_Datatype *types = xmalloc(size * sizeof(MPI_Datatype));
    long sn = 0, rn = 0;
    for (int j = size - 1; j >= 0; j--) {
        sc[j] = acount(count, rank, j, in_place);
        sd[j] = (int)sn;
        sn += sc[j] + 2;
    }
    for (int k = 0; k < size; k++) {
        int j = (rank + k) % size;
        rc[j] = acount(count, j, rank, in_place);
        rd[j] = (int)rn;
        rn += rc[j] + 1;
        types[j] = MPI_INT;
    }
    int *sbuf = newbuf(sn), *rbuf = newbuf(rn), *exp = newbuf(rn);
    for (int j = 0; j < size; j++) {
        for (int i = 0; i < sc[j]; i++)
            sbuf[sd[j] + i] = val3(tag, rank, j, i);
        for (int i = 0; i < rc[j]; i++)
            exp[rd[j] + i] = val3(tag, j, rank, i);
        if (in_place)
            for (int i = 0; i < rc[j]; i++)
                rbuf[rd[j] + i] = val3(tag, rank, j, i);
    }
    if (w) {
        int *sdb = xmalloc(size * sizeof(int)), *rdb = xmalloc(size * sizeof(int));
        for (int j = 0; j < size; j++) {
            sdb[j] = sd[j] * (int)sizeof(int);
            rdb[j] = rd[j] * (int)sizeof(int);
        }
        if (in_place)
            check_rc(
                MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rbuf, rc, rdb, types, MPI_COMM_WORLD),
                "MPI_Alltoallw");
        else
            check_rc(MPI_Alltoallw(sbuf, sc, sdb, types, rbuf, rc, rdb, types, MPI_COMM_WORLD),
                     "MPI_Alltoallw");
        free(sdb);
        free(rdb);
    } else {
        if (in_place)
            check_rc(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rbuf, rc, rd,
                                   MPI_INT, MPI_COMM_WORLD),
                     "MPI_Alltoallv");
        else
            check_rc(MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD),
                     "MPI_Alltoallv");
    }
    check("recvbuf", rbuf, exp, rn);
    free(sbuf);
    free(rbuf);
    free(exp);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(types);
}

/* Sum over ranks lo..hi-1 of sval(tag, r, off + i) for i < n. */
static void sums(int *exp, int tag, int lo, int hi, int off, int n)
{
    int k = hi - lo, s = (hi * (hi + 1) - lo * (lo + 1)) / 2; /* sum of r + 1 */
    for (int i = 0; i < n; i++)
        exp[i] = coef_a(tag, off + i) * s + coef_b(tag, off + i) * k;
}

static void test_reduce(int count, int root, int in_place)
{
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40200000
    /* MPICH before 4.2 crashes on MPI_IN_PLACE at a non-zero root
     * (pmodels/mpich#6540): skip that case when validating with it. */
    if (in_place && root != 0)
        return;
#endif
    int tag = ++tagseq;
    set_ctx("MPI_Reduce SUM", root, count, in_place);
    int *sbuf = newbuf(count);
    for (int i = 0; i < count; i++)
        sbuf[i] = sval(tag, rank, i);
    if (rank != root) {
        check_rc(MPI_Reduce(sbuf, NULL, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
                 "MPI_Reduce");
    } else {
        int *rbuf = newbuf(count), *exp = newbuf(count);
        sums(exp, tag, 0, size, 0, count);
        if (in_place) {
            memcpy(rbuf, sbuf, (size_t)count * sizeof(int));
            check_rc(MPI_Reduce(MPI_IN_PLACE, rbuf, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
                     "MPI_Reduce");
        } else {
            check_rc(MPI_Reduce(sbuf, rbuf, count, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
                     "MPI_Reduce");
        }
        check("recvbuf", rbuf, exp, count);
        free(rbuf);
        free(exp);
    }
    int *sexp = newbuf(count);
    for (int i = 0; i < count; i++)
        sexp[i] = sval(tag, rank, i);
    if (!(in_place && rank == root))
        check("sendbuf (must not change)", sbuf, sexp, count);
    free(sexp);
    free(sbuf);
}

static void test_allreduce(int count, int in_place, MPI_Op op)
{
    int tag = ++tagseq;
    set_ctx(op == MPI_SUM ? "MPI_Allreduce SUM" : "MPI_Allreduce MAX", -1, count, in_place);
    int *sbuf = newbuf(count), *rbuf = newbuf(count), *exp = newbuf(count);
    for (int i = 0; i < count; i++)
        sbuf[i] = op == MPI_SUM ? sval(tag, rank, i) : val(tag, rank, i);
    if (op == MPI_SUM) {
        sums(exp, tag, 0, size, 0, count);
    } else {
        for (int i = 0; i < count; i++) {
            exp[i] = val(tag, 0, i);
            for (int r = 1; r < size; r++)
                if (val(tag, r, i) > exp[i])
                    exp[i] = val(tag, r, i);
        }
    }
    if (in_place) {
        memcpy(rbuf, sbuf, (size_t)count * sizeof(int));
        check_rc(MPI_Allreduce(MPI_IN_PLACE, rbuf, count, MPI_INT, op, MPI_COMM_WORLD),
                 "MPI_Allreduce");
    } else {
        check_rc(MPI_Allreduce(sbuf, rbuf, count, MPI_INT, op, MPI_COMM_WORLD), "MPI_Allreduce");
    }
    check("recvbuf", rbuf, exp, count);
    free(sbuf);
    free(rbuf);
    free(exp);
}

static void test_reduce_scatter(int count, int in_place)
{
    int tag = ++tagseq;
    set_ctx("MPI_Reduce_scatter SUM", -1, count, in_place);
    int *counts = xmalloc(size * sizeof(int));
    long total = 0, off = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = vcount(count, (r + 1) % size);
        if (r < rank)
            off += counts[r];
        total += counts[r];
    }
    int mine = counts[rank];
    int *sbuf = newbuf(total), *exp = newbuf(in_place ? total : mine);
    for (long i = 0; i < total; i++)
        sbuf[i] = sval(tag, rank, (int)i);
    sums(exp, tag, 0, size, (int)off, mine);
    if (in_place) {
        /* The rest of the buffer is undefined afterwards: compare the result
         * and the guard zone only. */
        check_rc(MPI_Reduce_scatter(MPI_IN_PLACE, sbuf, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                 "MPI_Reduce_scatter");
        for (long i = mine; i < total; i++)
            exp[i] = sbuf[i];
        check("recvbuf", sbuf, exp, total);
    } else {
        int *rbuf = newbuf(mine);
        check_rc(MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                 "MPI_Reduce_scatter");
        check("recvbuf", rbuf, exp, mine);
        free(rbuf);
    }
    free(sbuf);
    free(exp);
    free(counts);
}

static void test_reduce_scatter_block(int count, int in_place)
{
    int tag = ++tagseq;
    set_ctx("MPI_Reduce_scatter_block SUM", -1, count, in_place);
    long total = (long)size * count;
    int *sbuf = newbuf(total), *exp = newbuf(in_place ? total : count);
    for (long i = 0; i < total; i++)
        sbuf[i] = sval(tag, rank, (int)i);
    sums(exp, tag, 0, size, rank * count, count);
    if (in_place) {
        check_rc(
            MPI_Reduce_scatter_block(MPI_IN_PLACE, sbuf, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
            "MPI_Reduce_scatter_block");
        for (long i = count; i < total; i++)
            exp[i] = sbuf[i];
        check("recvbuf", sbuf, exp, total);
    } else {
        int *rbuf = newbuf(count);
        check_rc(MPI_Reduce_scatter_block(sbuf, rbuf, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                 "MPI_Reduce_scatter_block");
        check("recvbuf", rbuf, exp, count);
        free(rbuf);
    }
    free(sbuf);
    free(exp);
}

static void test_scan(int count, int in_place, int ex)
{
    int tag = ++tagseq;
    set_ctx(ex ? "MPI_Exscan SUM" : "MPI_Scan SUM", -1, count, in_place);
    int *sbuf = newbuf(count), *rbuf = newbuf(count), *exp = newbuf(count);
    for (int i = 0; i < count; i++)
        sbuf[i] = sval(tag, rank, i);
    sums(exp, tag, 0, ex ? rank : rank + 1, 0, count);
    if (in_place)
        memcpy(rbuf, sbuf, (size_t)count * sizeof(int));
    const void *s = in_place ? MPI_IN_PLACE : sbuf;
    if (ex)
        check_rc(MPI_Exscan(s, rbuf, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Exscan");
    else
        check_rc(MPI_Scan(s, rbuf, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Scan");
    if (ex && rank == 0) /* undefined on rank 0: only the guard zone */
        memcpy(exp, rbuf, (size_t)count * sizeof(int));
    check("recvbuf", rbuf, exp, count);
    free(sbuf);
    free(rbuf);
    free(exp);
}

static void test_reduce_local(int count)
{
    int tag = ++tagseq;
    set_ctx("MPI_Reduce_local", -1, count, 0);
    int *in = newbuf(count), *inout = newbuf(count), *exp = newbuf(count);
    for (int i = 0; i < count; i++) {
        in[i] = val(tag, rank, i);
        inout[i] = val(tag, rank + 1, i);
        exp[i] = in[i] + inout[i];
    }
    check_rc(MPI_Reduce_local(in, inout, count, MPI_INT, MPI_SUM), "MPI_Reduce_local");
    check("inoutbuf SUM", inout, exp, count);
    for (int i = 0; i < count; i++) {
        in[i] = val(tag, rank + 2, i);
        exp[i] = in[i] > inout[i] ? in[i] : inout[i];
    }
    check_rc(MPI_Reduce_local(in, inout, count, MPI_INT, MPI_MAX), "MPI_Reduce_local");
    check("inoutbuf MAX", inout, exp, count);
    free(in);
    free(inout);
    free(exp);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int quick = argc > 1 && strcmp(argv[1], "quick") == 0;

    ncounts = 0;
    for (unsigned k = 0; k < sizeof all_counts / sizeof all_counts[0]; k++)
        if (!quick || all_counts[k] <= 1000)
            ncounts++;
    int cand[3] = {0, size - 1, size / 2};
    for (int k = 0; k < 3; k++) {
        int dup = 0;
        for (int j = 0; j < nfew; j++)
            dup |= few[j] == cand[k];
        if (!dup)
            few[nfew++] = cand[k];
    }
    if (quick || size > (int)(sizeof roots / sizeof roots[0])) {
        memcpy(roots, few, sizeof few);
        nroots = nfew;
    } else {
        for (int r = 0; r < size; r++)
            roots[nroots++] = r;
    }

    test_barrier();
    for (int c = 0; c < ncounts; c++) {
        int count = all_counts[c];
        /* every root for the small counts, three for the large ones */
        int nr = count <= 1000 ? nroots : nfew;
        for (int k = 0; k < nr; k++) {
            int root = count <= 1000 ? roots[k] : few[k];
            test_bcast(count, root);
            for (int ip = 0; ip < 2; ip++) {
                test_gather(count, root, ip);
                test_gatherv(count, root, ip);
                test_scatter(count, root, ip);
                test_scatterv(count, root, ip);
                test_reduce(count, root, ip);
            }
        }
        for (int ip = 0; ip < 2; ip++) {
            test_allreduce(count, ip, MPI_SUM);
            test_allreduce(count, ip, MPI_MAX);
            test_scan(count, ip, 0);
            test_scan(count, ip, 1);
            if (fits(count)) {
                test_reduce_scatter(count, ip);
                test_allgather(count, ip);
                test_allgatherv(count, ip);
                test_alltoall(count, ip);
                test_alltoallvw(count, ip, 0);
                test_alltoallvw(count, ip, 1);
                test_reduce_scatter_block(count, ip);
            }
        }
        test_reduce_local(count);
        set_ctx("MPI_Barrier after", -1, count, 0);
        check_rc(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    }

    MPI_Finalize();
    if (rank == 0)
        printf("coll_basic: %d ranks ok\n", size);
    return 0;
}
