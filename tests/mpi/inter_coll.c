/* Every collective on an intercommunicator, blocking and nonblocking, with
 * the root on either side (its first and its last member): Barrier, Bcast,
 * Gather(v), Scatter(v), Reduce (MPI_SUM, and a non-commutative user op that
 * keeps its left operand, so the result tells the order), Allgather(v),
 * Alltoall(v, w), Allreduce, Reduce_scatter(_block). Blocks of 2 and of 600
 * ints (past the copy-in cell). MPI_PROC_NULL members' buffers stay as they
 * were. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "inter_util.h"

static MPI_Comm inter;
static int nbc; /* 1: the I-forms */
static MPI_Op first_op;

static void done(MPI_Request *r)
{
    if (nbc)
        MPI_Wait(r, MPI_STATUS_IGNORE);
}
#define CALL(blocking, nonblocking, ...)                                                           \
    do {                                                                                           \
        MPI_Request req_;                                                                          \
        if (nbc)                                                                                   \
            MPI_##nonblocking(__VA_ARGS__, &req_);                                                 \
        else                                                                                       \
            MPI_##blocking(__VA_ARGS__);                                                           \
        done(&req_);                                                                               \
    } while (0)

/* MPICH 4.0.2 fails an assertion in MPI_Ibcast on an intercommunicator
 * (mpir_localproc.c: r < comm_ptr->remote_size) at 7 ranks: its
 * nonblocking Bcast is replaced by the blocking one there. */
#if defined(MPICH_VERSION) && !defined(LOOM_MPI_H)
#define MPI_Ibcast(b, c, t, r, comm, req) (*(req) = MPI_REQUEST_NULL, MPI_Bcast(b, c, t, r, comm))
#endif

static void keep_first(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    memcpy(inout, in, (size_t)*len * sizeof(int));
}

/* The root argument of the caller for a root at local rank r of side rs. */
static int root_arg(int rs, int r)
{
    if (rs != side)
        return r;
    return lrank == r ? MPI_ROOT : MPI_PROC_NULL;
}

static void rooted(int rs, int r, int m)
{
    int root = root_arg(rs, r);
    int rootw = members[rs][r];
    int n = RSIZE;
    size_t cap = (size_t)(m + wsize) * (size_t)(wsize + 1);
    int *buf = malloc(cap * sizeof(int));
    int *big = malloc(cap * sizeof(int));
    const int SENT = -77;

    /* Bcast */
    for (int i = 0; i < m; i++)
        buf[i] = root == MPI_ROOT ? wrank * 100 + i : SENT;
    CALL(Bcast, Ibcast, buf, m, MPI_INT, root, inter);
    for (int i = 0; i < m; i++)
        CHECK_EQ(buf[i], root == MPI_PROC_NULL ? SENT : rootw * 100 + i);

    /* Gather: m ints of wrank + i from each member of the other group */
    for (int i = 0; i < m; i++)
        buf[i] = wrank * 1000 + i;
    for (int i = 0; i < n * m; i++)
        big[i] = SENT;
    CALL(Gather, Igather, buf, m, MPI_INT, big, m, MPI_INT, root, inter);
    if (root == MPI_ROOT)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++)
                CHECK_EQ(big[j * m + i], REMOTE(j) * 1000 + i);
    else
        CHECK_EQ(big[0], SENT);

    /* Gatherv: remote j sends m + j ints, placed in reverse order */
    int *counts = malloc((size_t)(n + 1) * sizeof *counts),
        *displs = malloc((size_t)(n + 1) * sizeof *displs);
    int total = 0;
    for (int j = n - 1; j >= 0; j--) {
        counts[j] = m + j;
        displs[j] = total;
        total += counts[j];
    }
    for (int i = 0; i < m + lrank; i++)
        buf[i] = wrank + i;
    for (int i = 0; i < total; i++)
        big[i] = SENT;
    CALL(Gatherv, Igatherv, buf, m + lrank, MPI_INT, big, counts, displs, MPI_INT, root, inter);
    if (root == MPI_ROOT)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < counts[j]; i++)
                CHECK_EQ(big[displs[j] + i], REMOTE(j) + i);

    /* Scatter: block j for remote j */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            big[j * m + i] = root == MPI_ROOT ? wrank * 7 + j * 100 + i : SENT;
    for (int i = 0; i < m; i++)
        buf[i] = SENT;
    CALL(Scatter, Iscatter, big, m, MPI_INT, buf, m, MPI_INT, root, inter);
    for (int i = 0; i < m; i++)
        CHECK_EQ(buf[i], root >= 0 ? rootw * 7 + lrank * 100 + i : SENT);

    /* Scatterv with the Gatherv layout */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < counts[j]; i++)
            big[displs[j] + i] = wrank + j * 10 + i;
    for (int i = 0; i < m + lrank; i++)
        buf[i] = SENT;
    CALL(Scatterv, Iscatterv, big, counts, displs, MPI_INT, buf, m + lrank, MPI_INT, root, inter);
    if (root >= 0)
        for (int i = 0; i < m + lrank; i++)
            CHECK_EQ(buf[i], rootw + lrank * 10 + i);

    /* Reduce: the sum of the other group's world ranks (+ i), and the first
     * member's values under a non-commutative op */
    for (int i = 0; i < m; i++) {
        buf[i] = wrank + i;
        big[i] = SENT;
    }
    CALL(Reduce, Ireduce, buf, big, m, MPI_INT, MPI_SUM, root, inter);
    if (root == MPI_ROOT) {
        int s = 0;
        for (int j = 0; j < n; j++)
            s += REMOTE(j);
        for (int i = 0; i < m; i++)
            CHECK_EQ(big[i], s + n * i);
    } else {
        CHECK_EQ(big[0], SENT);
    }
    CALL(Reduce, Ireduce, buf, big, m, MPI_INT, first_op, root, inter);
    if (root == MPI_ROOT)
        for (int i = 0; i < m; i++)
            CHECK_EQ(big[i], REMOTE(0) + i);
    free(counts);
    free(displs);
    free(buf);
    free(big);
}

static void unrooted(int m)
{
    int n = RSIZE, ln = LSIZE;
    size_t cap = (size_t)(m + 3) * (size_t)(n + ln + 1) * (size_t)(ln + n);
    int *sbuf = malloc(cap * sizeof(int)), *rbuf = malloc(cap * sizeof(int));
    int *sc = malloc(4 * (size_t)(n + ln) * sizeof(int));
    int *sd = sc + (n + ln), *rc = sd + (n + ln), *rd = rc + (n + ln);

    CALL(Barrier, Ibarrier, inter);

    /* Allgather */
    for (int i = 0; i < m; i++)
        sbuf[i] = wrank * 10 + i;
    CALL(Allgather, Iallgather, sbuf, m, MPI_INT, rbuf, m, MPI_INT, inter);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            CHECK_EQ(rbuf[j * m + i], REMOTE(j) * 10 + i);

    /* Allgatherv: remote j sends m + j % 3 ints, packed in order */
    int t = 0;
    for (int j = 0; j < n; j++) {
        rc[j] = m + j % 3;
        rd[j] = t;
        t += rc[j];
    }
    for (int i = 0; i < m + lrank % 3; i++)
        sbuf[i] = wrank + i;
    CALL(Allgatherv, Iallgatherv, sbuf, m + lrank % 3, MPI_INT, rbuf, rc, rd, MPI_INT, inter);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < rc[j]; i++)
            CHECK_EQ(rbuf[rd[j] + i], REMOTE(j) + i);

    /* Alltoall: block j to remote j */
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            sbuf[j * m + i] = wrank * 1000 + j * 10 + i;
    CALL(Alltoall, Ialltoall, sbuf, m, MPI_INT, rbuf, m, MPI_INT, inter);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++)
            CHECK_EQ(rbuf[j * m + i], REMOTE(j) * 1000 + lrank * 10 + i);

    /* Alltoallv: m + (sender + receiver) % 3 ints per pair, blocks reversed */
    int st = 0, rt = 0;
    for (int j = n - 1; j >= 0; j--) {
        sc[j] = rc[j] = m + (lrank + j) % 3;
        sd[j] = st;
        rd[j] = rt;
        st += sc[j];
        rt += rc[j];
    }
    for (int j = 0; j < n; j++)
        for (int i = 0; i < sc[j]; i++)
            sbuf[sd[j] + i] = wrank * 1000 + j * 10 + i;
    CALL(Alltoallv, Ialltoallv, sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, inter);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < rc[j]; i++)
            CHECK_EQ(rbuf[rd[j] + i], REMOTE(j) * 1000 + lrank * 10 + i);

    /* Alltoallw: the same in bytes, one type per peer */
    MPI_Datatype *types = malloc((size_t)n * sizeof *types);
    for (int j = 0; j < n; j++) {
        types[j] = MPI_INT;
        sd[j] *= (int)sizeof(int);
        rd[j] *= (int)sizeof(int);
    }
    memset(rbuf, 0, cap * sizeof(int));
    CALL(Alltoallw, Ialltoallw, sbuf, sc, sd, types, rbuf, rc, rd, types, inter);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < rc[j]; i++)
            CHECK_EQ(rbuf[rd[j] / (int)sizeof(int) + i], REMOTE(j) * 1000 + lrank * 10 + i);
    free(types);

    /* Allreduce: the other group's sum */
    long long s = 0;
    for (int j = 0; j < n; j++)
        s += REMOTE(j);
    for (int i = 0; i < m; i++)
        sbuf[i] = wrank + i;
    CALL(Allreduce, Iallreduce, sbuf, rbuf, m, MPI_INT, MPI_SUM, inter);
    for (int i = 0; i < m; i++)
        CHECK_EQ(rbuf[i], s + (long long)n * i);

    /* Reduce_scatter_block: T = m * n * ln elements on both sides; each
     * member gets T / (its group's size) */
    int per = m * n, total = per * ln; /* == (m * ln) * n on the other side */
    for (int e = 0; e < total; e++)
        sbuf[e] = wrank + e;
    CALL(Reduce_scatter_block, Ireduce_scatter_block, sbuf, rbuf, per, MPI_INT, MPI_SUM, inter);
    for (int i = 0; i < per; i++)
        CHECK_EQ(rbuf[i], s + (long long)n * (lrank * per + i));

    /* Reduce_scatter: uneven counts, all of the last member's share moved to
     * local rank 0 */
    for (int k = 0; k < ln; k++)
        rc[k] = per;
    if (ln > 1) {
        rc[0] += per;
        rc[ln - 1] = 0;
    }
    int e0 = 0;
    for (int k = 0; k < lrank; k++)
        e0 += rc[k];
    CALL(Reduce_scatter, Ireduce_scatter, sbuf, rbuf, rc, MPI_INT, MPI_SUM, inter);
    for (int i = 0; i < rc[lrank]; i++)
        CHECK_EQ(rbuf[i], s + (long long)n * (e0 + i));

    free(sbuf);
    free(rbuf);
    free(sc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    inter_sides();
    if (wsize < 2) {
        if (wrank == 0)
            printf("inter_coll: %d ranks ok\n", wsize); /* an intercommunicator needs two */
        MPI_Finalize();
        return 0;
    }
    MPI_Op_create(keep_first, 0, &first_op);
    inter = inter_make(NULL, 21);
    int ms[] = {2, 600};
    for (nbc = 0; nbc < 2; nbc++)
        for (int k = 0; k < 2; k++) {
            for (int rs = 0; rs < 2; rs++) {
                rooted(rs, 0, ms[k]);
                if (nside[rs] > 1)
                    rooted(rs, nside[rs] - 1, ms[k]);
            }
            unrooted(ms[k]);
        }
    /* Several nonblocking calls in flight at once. */
    {
        int a = wrank, b = -1, c = side == 0 && lrank == 0 ? 5 : -1;
        MPI_Request r[3];
        MPI_Ibarrier(inter, &r[0]);
        MPI_Iallreduce(&a, &b, 1, MPI_INT, MPI_MAX, inter, &r[1]);
        MPI_Ibcast(&c, 1, MPI_INT, root_arg(0, 0), inter, &r[2]);
        MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
        CHECK_EQ(b, REMOTE(RSIZE - 1));
        CHECK_EQ(c, side == 1 || lrank == 0 ? 5 : -1);
    }
    /* A nonblocking call does not wait for the other group: side 0's local
     * rank 0 starts an Ibarrier and then receives what side 1's local rank
     * 0 sends synchronously before it enters the barrier. */
    if (lrank == 0) {
        int v = wrank, got = -1;
        MPI_Request r;
        if (side == 0) {
            MPI_Ibarrier(inter, &r);
            MPI_Recv(&got, 1, MPI_INT, 0, 77, inter, MPI_STATUS_IGNORE);
            CHECK_EQ(got, REMOTE(0));
        } else {
            MPI_Ssend(&v, 1, MPI_INT, 0, 77, inter);
            MPI_Ibarrier(inter, &r);
        }
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else { /* the same call everywhere: Ibarrier (a blocking one would not match) */
        MPI_Request r;
        MPI_Ibarrier(inter, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Op_free(&first_op);
    MPI_Comm_free(&inter);
    return inter_finish("inter_coll");
}
