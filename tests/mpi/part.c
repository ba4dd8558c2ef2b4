/*
 * Partitioned point-to-point (MPI-4.1 chapter 4): every rank sends to the
 * next and receives from the previous one in a ring, over several rounds of
 * one pair of persistent requests, with send and receive cut into different
 * partition counts, partitions readied in scrambled order by MPI_Pready,
 * MPI_Pready_range and MPI_Pready_list, and the receiver polling
 * MPI_Parrived. Then: a receive initialized only after the sender has
 * readied everything; two operations with the same envelope, matched in the
 * order of their initialization; a vector type on one side; a large
 * message; MPI_PROC_NULL; MPI_Waitall/Testall over partitioned and ordinary
 * requests; and the error classes of bad calls (MPI_ERRORS_RETURN).
 *
 * Validated with MPICH 4.0.2 (ch4:ucx), which implements partitioned
 * communication: the data tests pass there. MPICH checks fewer errors than
 * Loom (a partition readied twice, MPI_Pready on an inactive request, and
 * MPI_Parrived on a send request are not reported), so those checks run only
 * when MPI_Get_library_version names Loom (loom_only below).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

static int rank, size;

/* Whether the errors that MPICH does not detect are checked. */
static int loom_only(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(v, &len);
    return strstr(v, "Loom") != NULL;
}

static int value(int round, int from, int i)
{
    return round * 1000003 + from * 10007 + i;
}

/* Ring: sends SP partitions of SC ints to the next rank, receives RP of RC
 * from the previous one (SP * SC == RP * RC), for several rounds. */
static void ring(int sp, int sc, int rp, int rc, int rounds, int how)
{
    int n = sp * sc, next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int *sbuf = malloc((size_t)n * sizeof *sbuf), *rbuf = malloc((size_t)n * sizeof *rbuf);
    MPI_Request sreq, rreq;
    CHECK(MPI_Precv_init(rbuf, rp, rc, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &rreq) ==
          MPI_SUCCESS);
    CHECK(MPI_Psend_init(sbuf, sp, sc, MPI_INT, next, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &sreq) ==
          MPI_SUCCESS);
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < n; i++)
            rbuf[i] = -1;
        MPI_Request both[2] = {rreq, sreq};
        if (round % 2)
            MPI_Startall(2, both);
        else {
            MPI_Start(&sreq);
            MPI_Start(&rreq);
        }
        /* Fill and ready the partitions, last first (or by pairs). */
        if (how == 0) {
            for (int p = sp - 1; p >= 0; p--) {
                for (int i = p * sc; i < (p + 1) * sc; i++)
                    sbuf[i] = value(round, rank, i);
                CHECK(MPI_Pready(p, sreq) == MPI_SUCCESS);
            }
        } else if (how == 1) {
            for (int i = 0; i < n; i++)
                sbuf[i] = value(round, rank, i);
            int half = sp / 2;
            if (half > 0)
                CHECK(MPI_Pready_range(half, sp - 1, sreq) == MPI_SUCCESS);
            CHECK(MPI_Pready_range(0, half > 0 ? half - 1 : 0, sreq) == MPI_SUCCESS);
        } else {
            for (int i = 0; i < n; i++)
                sbuf[i] = value(round, rank, i);
            int *list = malloc((size_t)sp * sizeof *list), m = 0;
            for (int p = 0; p < sp; p += 2)
                list[m++] = p;
            CHECK(MPI_Pready_list(m, list, sreq) == MPI_SUCCESS);
            m = 0;
            for (int p = 1; p < sp; p += 2)
                list[m++] = p;
            CHECK(MPI_Pready_list(m, list, sreq) == MPI_SUCCESS);
            free(list);
        }
        /* Each receive partition, once arrived, holds its data. */
        int left = rp;
        char *seen = calloc((size_t)rp, 1);
        while (left > 0) {
            for (int p = 0; p < rp; p++) {
                int flag = 0;
                if (seen[p])
                    continue;
                CHECK(MPI_Parrived(rreq, p, &flag) == MPI_SUCCESS);
                if (!flag)
                    continue;
                seen[p] = 1;
                left--;
                for (int i = p * rc; i < (p + 1) * rc; i++)
                    if (rbuf[i] != value(round, prev, i)) {
                        CHECK_EQ(rbuf[i], value(round, prev, i));
                        break;
                    }
            }
        }
        free(seen);
        MPI_Status st[2];
        MPI_Request pair[2] = {sreq, rreq};
        CHECK(MPI_Waitall(2, pair, st) == MPI_SUCCESS);
        CHECK(pair[0] == sreq && pair[1] == rreq); /* persistent: kept */
        CHECK_EQ(st[1].MPI_SOURCE, prev);
        CHECK_EQ(st[1].MPI_TAG, 7);
        int cnt = -1;
        MPI_Get_count(&st[1], MPI_INT, &cnt);
        CHECK_EQ(cnt, n);
        int flag = 0;
        /* Inactive: flag = true (MPI-4.1 4.2.4); MPICH 4.0.2 raises an error. */
        if (loom_only())
            CHECK(MPI_Parrived(rreq, 0, &flag) == MPI_SUCCESS && flag);
    }
    MPI_Request_free(&sreq);
    MPI_Request_free(&rreq);
    CHECK(sreq == MPI_REQUEST_NULL && rreq == MPI_REQUEST_NULL);
    free(sbuf);
    free(rbuf);
}

/* The sender readies everything before the receiver initializes: the
 * initialization calls are local (MPI-4.1 4.2.2). */
static void late_receiver(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int sbuf[40] = {0}, rbuf[40];
    MPI_Request sreq, rreq;
    MPI_Psend_init(sbuf, 8, 5, MPI_INT, next, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &sreq);
    MPI_Start(&sreq);
    for (int i = 0; i < 40; i++)
        sbuf[i] = value(9, rank, i);
    for (int p = 0; p < 8; p++)
        MPI_Pready(p, sreq);
    MPI_Barrier(MPI_COMM_WORLD);
    memset(rbuf, 0, sizeof rbuf);
    MPI_Precv_init(rbuf, 2, 20, MPI_INT, prev, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &rreq);
    MPI_Start(&rreq);
    MPI_Wait(&rreq, MPI_STATUS_IGNORE);
    int flag = 0;
    while (!flag)
        MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE);
    for (int i = 0; i < 40; i++)
        if (rbuf[i] != value(9, prev, i)) {
            CHECK_EQ(rbuf[i], value(9, prev, i));
            break;
        }
    MPI_Request_free(&sreq);
    MPI_Request_free(&rreq);
}

/* Two operations with one envelope match in initialization order; a vector
 * type on the sending side (every other int of 2 * 24) meets contiguous ints. */
static void order_and_types(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int s1[48], s2[24], r1[24], r2[24];
    MPI_Datatype vec;
    MPI_Type_vector(24, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int i = 0; i < 48; i++)
        s1[i] = i % 2 ? -5 : value(1, rank, i / 2);
    for (int i = 0; i < 24; i++)
        s2[i] = value(2, rank, i);
    MPI_Request q[4];
    MPI_Psend_init(s1, 1, 1, vec, next, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]);
    MPI_Psend_init(s2, 3, 8, MPI_INT, next, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]);
    MPI_Type_free(&vec); /* the request keeps it */
    MPI_Precv_init(r1, 4, 6, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &q[2]);
    MPI_Precv_init(r2, 24, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &q[3]);
    /* Started in the other order: matching was fixed by the inits. */
    MPI_Startall(4, (MPI_Request[]){q[3], q[2], q[1], q[0]});
    MPI_Pready_range(0, 2, q[1]);
    MPI_Pready(0, q[0]);
    /* MPICH 4.0.2's MPI_Testall fails here with MPI_ERR_IN_STATUS and
     * statuses that hold no error: MPI_Waitall there. */
    int flag = 0;
    while (!flag && loom_only())
        MPI_Testall(4, q, &flag, MPI_STATUSES_IGNORE);
    MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 24; i++) {
        CHECK_EQ(r1[i], value(1, prev, i));
        CHECK_EQ(r2[i], value(2, prev, i));
    }
    for (int k = 0; k < 4; k++)
        MPI_Request_free(&q[k]);
}

/* 1 MiB in 16 send partitions against 4 receive partitions. */
static void large(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    const int n = 1 << 18;
    int *sbuf = malloc(n * sizeof(int)), *rbuf = malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        sbuf[i] = value(3, rank, i);
    MPI_Request s, r;
    MPI_Psend_init(sbuf, 16, n / 16, MPI_INT, next, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
    MPI_Precv_init(rbuf, 4, n / 4, MPI_INT, prev, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    MPI_Start(&s);
    for (int p = 0; p < 16; p++)
        MPI_Pready(p, s);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += rbuf[i] != value(3, prev, i);
    CHECK_EQ(bad, 0);
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    free(sbuf);
    free(rbuf);
}

static void proc_null(void)
{
    int buf[8] = {0};
    MPI_Request s, r;
    MPI_Psend_init(buf, 2, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
    MPI_Precv_init(buf, 2, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    for (int round = 0; round < 2; round++) {
        MPI_Start(&s);
        MPI_Start(&r);
        MPI_Pready_range(0, 1, s);
        MPI_Status st;
        MPI_Wait(&r, &st);
        CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
        int cnt = -1;
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK_EQ(cnt, 0);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int buf[8], cls;
    MPI_Request s, r;
    CHECK(MPI_Precv_init(buf, 2, 4, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                         &r) != MPI_SUCCESS);
    CHECK(MPI_Psend_init(buf, 2, 4, MPI_INT, size, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s) !=
          MPI_SUCCESS);
    CHECK(MPI_Psend_init(buf, 2, -1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s) !=
          MPI_SUCCESS);
    int loom = loom_only();
    if (loom) {
        MPI_Error_class(MPI_Precv_init(buf, 2, 4, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD,
                                       MPI_INFO_NULL, &r),
                        &cls);
        CHECK_EQ(cls, MPI_ERR_RANK);
        MPI_Error_class(
            MPI_Precv_init(buf, 2, 4, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
            &cls);
        CHECK_EQ(cls, MPI_ERR_TAG);
        MPI_Error_class(MPI_Psend_init(buf, 0, 4, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
                        &cls);
        CHECK_EQ(cls, MPI_ERR_ARG);
    }
    /* A self pair with one partition less on the receiving side: truncated. */
    int big[8], small[6];
    for (int i = 0; i < 8; i++)
        big[i] = i;
    MPI_Psend_init(big, 4, 2, MPI_INT, rank, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
    MPI_Precv_init(small, 3, 2, MPI_INT, rank, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    if (loom) {
        MPI_Error_class(MPI_Pready(0, s), &cls); /* inactive */
        CHECK_EQ(cls, MPI_ERR_REQUEST);
    }
    MPI_Start(&s);
    MPI_Start(&r);
    if (loom) {
        MPI_Error_class(MPI_Pready(4, s), &cls);
        CHECK_EQ(cls, MPI_ERR_ARG);
        MPI_Error_class(MPI_Pready(-1, s), &cls);
        CHECK_EQ(cls, MPI_ERR_ARG);
        MPI_Error_class(MPI_Pready_range(2, 1, s), &cls);
        CHECK_EQ(cls, MPI_ERR_ARG);
        MPI_Error_class(MPI_Pready_list(1, (int[]){7}, s), &cls);
        CHECK_EQ(cls, MPI_ERR_ARG);
        int flag;
        MPI_Error_class(MPI_Parrived(s, 0, &flag), &cls); /* a send request */
        CHECK_EQ(cls, MPI_ERR_REQUEST);
        MPI_Error_class(MPI_Parrived(r, 3, &flag), &cls);
        CHECK_EQ(cls, MPI_ERR_ARG);
        MPI_Error_class(MPI_Pready(0, r), &cls); /* a receive request */
        CHECK_EQ(cls, MPI_ERR_REQUEST);
        MPI_Error_class(MPI_Request_free(&s), &cls); /* active */
        CHECK_EQ(cls, MPI_ERR_REQUEST);
    }
    CHECK(MPI_Pready_range(0, 3, s) == MPI_SUCCESS);
    if (loom) {
        MPI_Error_class(MPI_Pready(1, s), &cls); /* twice */
        CHECK_EQ(cls, MPI_ERR_ARG);
    }
    MPI_Status st;
    int rc = MPI_Wait(&r, &st);
    MPI_Error_class(rc, &cls);
    /* MPICH 4.0.2 raises MPI_ERR_OTHER. */
    CHECK(cls == MPI_ERR_TRUNCATE || (!loom && cls != MPI_SUCCESS));
    for (int i = 0; i < 6; i++)
        CHECK_EQ(small[i], i);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int flag = 0;
    /* MPICH 4.0.2 crashes here (the standard says flag = true). */
    if (loom_only())
        CHECK(MPI_Parrived(MPI_REQUEST_NULL, 0, &flag) == MPI_SUCCESS && flag);

    ring(8, 6, 4, 12, 5, 0); /* more send partitions */
    ring(3, 16, 8, 6, 4, 1); /* more receive partitions, not aligned */
    ring(5, 7, 5, 7, 3, 2);  /* the same */
    ring(1, 0, 3, 0, 2, 0);  /* empty */
    late_receiver();
    order_and_types();
    large();
    if (loom_only()) /* MPICH 4.0.2 crashes in MPI_Psend_init to MPI_PROC_NULL */
        proc_null();
    errors();

    int failed = check_failures_ != 0, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("part: %d ranks ok\n", size);
    MPI_Finalize();
    return check_summary();
}
