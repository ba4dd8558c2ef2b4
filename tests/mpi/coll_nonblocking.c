/*
 * Nonblocking collectives: every MPI_I<coll> checked against exact values,
 * several in flight at once on different communicators started in opposite
 * orders by odd and even ranks, overlapped with point-to-point traffic,
 * completed by MPI_Wait, MPI_Test polling, MPI_Waitall over mixed requests,
 * and followed by blocking collectives on the same communicator; 20 calls
 * in flight on one communicator completed out of order.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "coll_nonblocking: rank %d: ", rank);                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static void every_collective(MPI_Comm comm, int n)
{
    int me, np;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    MPI_Request rq[16];
    int *a = malloc(sizeof(int) * (size_t)n), *b = malloc(sizeof(int) * (size_t)n);
    int *all = malloc(sizeof(int) * (size_t)n * (size_t)np);
    int *all2 = malloc(sizeof(int) * (size_t)n * (size_t)np);
    int *cnt = malloc(sizeof(int) * (size_t)np), *dsp = malloc(sizeof(int) * (size_t)np);
    for (int i = 0; i < np; i++) {
        cnt[i] = n;
        dsp[i] = i * n;
    }
    int root = np - 1;

    /* Ibarrier, Ibcast */
    MPI_Ibarrier(comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        a[i] = me == root ? 7 * i + 1 : -1;
    MPI_Ibcast(a, n, MPI_INT, root, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        CHECK(a[i] == 7 * i + 1, "Ibcast [%d] = %d", i, a[i]);

    /* Ireduce, Iallreduce, Iscan, Iexscan */
    for (int i = 0; i < n; i++)
        a[i] = me + i;
    MPI_Ireduce(a, b, n, MPI_INT, MPI_SUM, 0, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    if (me == 0)
        for (int i = 0; i < n; i++)
            CHECK(b[i] == np * (np - 1) / 2 + np * i, "Ireduce [%d] = %d", i, b[i]);
    MPI_Iallreduce(a, b, n, MPI_INT, MPI_MAX, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        CHECK(b[i] == np - 1 + i, "Iallreduce [%d] = %d", i, b[i]);
    MPI_Iscan(a, b, n, MPI_INT, MPI_SUM, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        CHECK(b[i] == me * (me + 1) / 2 + (me + 1) * i, "Iscan [%d] = %d", i, b[i]);
    MPI_Iexscan(a, b, n, MPI_INT, MPI_SUM, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    if (me > 0)
        for (int i = 0; i < n; i++)
            CHECK(b[i] == (me - 1) * me / 2 + me * i, "Iexscan [%d] = %d", i, b[i]);

    /* Igather(v), Iscatter(v), Iallgather(v), Ialltoall(v,w) */
    for (int i = 0; i < n; i++)
        a[i] = 1000 * me + i;
    MPI_Igather(a, n, MPI_INT, all, n, MPI_INT, root, comm, &rq[0]);
    MPI_Igatherv(a, n, MPI_INT, all2, cnt, dsp, MPI_INT, root, comm, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    if (me == root)
        for (int r = 0; r < np; r++)
            for (int i = 0; i < n; i++) {
                CHECK(all[r * n + i] == 1000 * r + i, "Igather [%d][%d]", r, i);
                CHECK(all2[r * n + i] == 1000 * r + i, "Igatherv [%d][%d]", r, i);
            }
    if (me == root)
        for (int j = 0; j < n * np; j++)
            all[j] = j;
    MPI_Iscatter(all, n, MPI_INT, b, n, MPI_INT, root, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        CHECK(b[i] == me * n + i, "Iscatter [%d] = %d", i, b[i]);
    MPI_Iscatterv(all, cnt, dsp, MPI_INT, b, n, MPI_INT, root, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        CHECK(b[i] == me * n + i, "Iscatterv [%d] = %d", i, b[i]);
    MPI_Iallgather(a, n, MPI_INT, all, n, MPI_INT, comm, &rq[0]);
    MPI_Iallgatherv(a, n, MPI_INT, all2, cnt, dsp, MPI_INT, comm, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    for (int r = 0; r < np; r++)
        for (int i = 0; i < n; i++) {
            CHECK(all[r * n + i] == 1000 * r + i, "Iallgather [%d][%d]", r, i);
            CHECK(all2[r * n + i] == 1000 * r + i, "Iallgatherv [%d][%d]", r, i);
        }
    for (int r = 0; r < np; r++)
        for (int i = 0; i < n; i++)
            all[r * n + i] = 100000 * me + 100 * r + i % 100;
    MPI_Ialltoall(all, n, MPI_INT, all2, n, MPI_INT, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    for (int r = 0; r < np; r++)
        for (int i = 0; i < n; i++)
            CHECK(all2[r * n + i] == 100000 * r + 100 * me + i % 100, "Ialltoall [%d][%d]", r, i);
    memset(all2, 0, sizeof(int) * (size_t)n * (size_t)np);
    MPI_Ialltoallv(all, cnt, dsp, MPI_INT, all2, cnt, dsp, MPI_INT, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    for (int r = 0; r < np; r++)
        for (int i = 0; i < n; i++)
            CHECK(all2[r * n + i] == 100000 * r + 100 * me + i % 100, "Ialltoallv [%d][%d]", r, i);
    {
        MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)np);
        int *bd = malloc(sizeof(int) * (size_t)np);
        for (int r = 0; r < np; r++) {
            ty[r] = MPI_INT;
            bd[r] = r * n * (int)sizeof(int);
        }
        memset(all2, 0, sizeof(int) * (size_t)n * (size_t)np);
        MPI_Ialltoallw(all, cnt, bd, ty, all2, cnt, bd, ty, comm, &rq[0]);
        MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        for (int r = 0; r < np; r++)
            for (int i = 0; i < n; i++)
                CHECK(all2[r * n + i] == 100000 * r + 100 * me + i % 100, "Ialltoallw [%d][%d]", r,
                      i);
        free(ty);
        free(bd);
    }
    /* Ireduce_scatter(_block) */
    for (int j = 0; j < n * np; j++)
        all[j] = me + j;
    MPI_Ireduce_scatter_block(all, b, n, MPI_INT, MPI_SUM, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        CHECK(b[i] == np * (np - 1) / 2 + np * (me * n + i), "Ireduce_scatter_block [%d]", i);
    MPI_Ireduce_scatter(all, b, cnt, MPI_INT, MPI_SUM, comm, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        CHECK(b[i] == np * (np - 1) / 2 + np * (me * n + i), "Ireduce_scatter [%d]", i);
    free(a);
    free(b);
    free(all);
    free(all2);
    free(cnt);
    free(dsp);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* "quick": fewer sizes and rounds, for many ranks on few cores. */
    int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    int sizes[] = {0, 1, 300, 5, 40000};
    size_t nsizes = quick ? 3 : sizeof sizes / sizeof sizes[0];
    int rounds = quick ? 40 : 200;
    for (size_t s = 0; s < nsizes; s++)
        every_collective(MPI_COMM_WORLD, sizes[s]);

    /* Two communicators, their calls started in opposite orders by odd and
     * even ranks (legal for nonblocking calls), with a ring of point-to-point
     * messages in between, completed together. */
    MPI_Comm c1, c2;
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    MPI_Comm_dup(MPI_COMM_WORLD, &c2);
    for (int round = 0; round < rounds; round++) {
        int v1 = rank + round, v2 = 2 * rank, s1 = -1, s2 = -1, in = -1;
        MPI_Request rq[4];
        if (rank % 2 == 0) {
            MPI_Iallreduce(&v1, &s1, 1, MPI_INT, MPI_SUM, c1, &rq[0]);
            MPI_Iallreduce(&v2, &s2, 1, MPI_INT, MPI_SUM, c2, &rq[1]);
        } else {
            MPI_Iallreduce(&v2, &s2, 1, MPI_INT, MPI_SUM, c2, &rq[1]);
            MPI_Iallreduce(&v1, &s1, 1, MPI_INT, MPI_SUM, c1, &rq[0]);
        }
        MPI_Irecv(&in, 1, MPI_INT, (rank + size - 1) % size, round, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(&rank, 1, MPI_INT, (rank + 1) % size, round, MPI_COMM_WORLD, &rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        CHECK(s1 == size * (size - 1) / 2 + size * round, "round %d: c1 sum %d", round, s1);
        CHECK(s2 == size * (size - 1), "round %d: c2 sum %d", round, s2);
        CHECK(in == (rank + size - 1) % size, "round %d: ring got %d", round, in);
    }

    /* Many calls in flight on one communicator, more than a member has posts
     * (the later ones wait for the earlier ones), of several kinds (copy-in,
     * large, barriers), completed in reverse order and by MPI_Waitany. */
    enum { INFLIGHT = 20, BIGN = 5000 };
    int *big = malloc(sizeof(int) * BIGN * INFLIGHT), val[INFLIGHT], sum[INFLIGHT];
    int *gat = malloc(sizeof(int) * (size_t)size * INFLIGHT);
    if (!big || !gat)
        abort();
    for (int round = 0; round < rounds / 20 + 1; round++) {
        MPI_Request rq[INFLIGHT];
        for (int k = 0; k < INFLIGHT; k++) {
            int root = (k + round) % size;
            val[k] = rank * k + round;
            sum[k] = gat[k * size] = -1;
            switch (k % 4) {
            case 0:
                MPI_Iallreduce(&val[k], &sum[k], 1, MPI_INT, MPI_SUM, c2, &rq[k]);
                break;
            case 1:
                for (int i = 0; i < BIGN; i++)
                    big[k * BIGN + i] = rank == root ? i + k + round : -1;
                MPI_Ibcast(big + k * BIGN, BIGN, MPI_INT, root, c2, &rq[k]);
                break;
            case 2:
                MPI_Ibarrier(c2, &rq[k]);
                break;
            default:
                MPI_Igather(&val[k], 1, MPI_INT, gat + k * size, 1, MPI_INT, root, c2, &rq[k]);
            }
        }
        if (round % 2 == 0)
            for (int k = INFLIGHT - 1; k >= 0; k--)
                MPI_Wait(&rq[k], MPI_STATUS_IGNORE);
        else
            for (int k = 0, idx; k < INFLIGHT; k++)
                MPI_Waitany(INFLIGHT, rq, &idx, MPI_STATUS_IGNORE);
        for (int k = 0; k < INFLIGHT; k++) {
            int root = (k + round) % size;
            if (k % 4 == 0)
                CHECK(sum[k] == k * size * (size - 1) / 2 + size * round, "in flight %d: sum %d", k,
                      sum[k]);
            else if (k % 4 == 1)
                for (int i = 0; i < BIGN; i += 999)
                    CHECK(big[k * BIGN + i] == i + k + round, "in flight %d: [%d] = %d", k, i,
                          big[k * BIGN + i]);
            else if (k % 4 == 3 && rank == root)
                for (int r = 0; r < size; r++)
                    CHECK(gat[k * size + r] == r * k + round, "in flight %d: from %d got %d", k, r,
                          gat[k * size + r]);
        }
    }
    free(big);
    free(gat);

    /* Polling with MPI_Test while computing, then a blocking collective on
     * the same communicator right after a nonblocking one. */
    for (int round = 0; round < rounds / 4; round++) {
        int v = rank, s = 0, flag = 0, polls = 0;
        MPI_Request r;
        MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_SUM, c1, &r);
        volatile double x = 0;
        while (!flag) {
            for (int i = 0; i < 1000; i++)
                x += i * 0.5;
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            polls++;
        }
        CHECK(s == size * (size - 1) / 2, "polled Iallreduce got %d", s);
        int b = round;
        MPI_Request r2;
        MPI_Ibcast(&b, 1, MPI_INT, round % size, c1, &r2);
        int t = 0;
        MPI_Allreduce(&v, &t, 1, MPI_INT, MPI_SUM, c1); /* after the Ibcast, in order */
        MPI_Wait(&r2, MPI_STATUS_IGNORE);
        CHECK(b == round && t == size * (size - 1) / 2, "Ibcast then Allreduce");
    }
    MPI_Comm_free(&c1);
    MPI_Comm_free(&c2);
    if (rank == 0)
        printf("coll_nonblocking: %d ranks ok\n", size);
    MPI_Finalize();
    return 0;
}
