/*
 * Collectives on communicators other than MPI_COMM_WORLD: MPI_Comm_split
 * into odd/even and by rank/3 (reversed keys), a split leaving every 4th
 * rank out (MPI_UNDEFINED), MPI_Comm_dup, MPI_Comm_create with a reordered
 * subgroup, and a split of a split. Barrier, Bcast, Allreduce, Allgather and
 * Alltoall run on all of them interleaved (every rank goes through the
 * communicators in the same order, so disjoint ones run concurrently), with
 * MPI_COMM_WORLD collectives in between; the membership (and its order) of
 * every communicator is computed independently and checked through the
 * results. Then every collective on MPI_COMM_SELF.
 *
 * Usage: coll_comms [rounds | quick]   (default 20 rounds, quick: 10)
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static char ctx[200];

#define NCOMMS 6
static const char *names[NCOMMS] = {
    "split odd/even",         "split rank/3 reversed",     "dup",
    "create r%3!=1 reversed", "split undefined every 4th", "split of odd/even by half"};

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "coll_comms: rank %d of %d: %s: ", rank, size, ctx);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check_rc(int rc, const char *call)
{
    if (rc != MPI_SUCCESS)
        fail("%s returned %d", call, rc);
}

/* The world ranks of communicator c in its rank order, for the world rank
 * me; returns the size (0 when me is not a member). */
static int members(int c, int me, int *out)
{
    int n = 0;
    switch (c) {
    case 0:
        for (int r = 0; r < size; r++)
            if (r % 2 == me % 2)
                out[n++] = r;
        break;
    case 1:
        for (int r = size - 1; r >= 0; r--)
            if (r / 3 == me / 3)
                out[n++] = r;
        break;
    case 2:
        for (int r = 0; r < size; r++)
            out[n++] = r;
        break;
    case 3:
        if (me % 3 == 1)
            return 0;
        for (int r = size - 1; r >= 0; r--)
            if (r % 3 != 1)
                out[n++] = r;
        break;
    case 4:
        if (me % 4 == 3)
            return 0;
        for (int r = 0; r < size; r++)
            if (r % 4 != 3)
                out[n++] = r;
        break;
    case 5: { /* odd/even, then split by the position in the lower/upper half */
        int half = ((size - me % 2) + 1) / 2; /* members of my parity class */
        int pos = me / 2;
        for (int r = me % 2; r < size; r += 2)
            if ((r / 2 < half / 2) == (pos < half / 2))
                out[n++] = r;
        break;
    }
    }
    return n;
}

static int val(int a, int b, int c, int d)
{
    unsigned h = (unsigned)a * 2654435761u ^ ((unsigned)b * 0x9e3779b9u + (unsigned)c * 40503u) ^
                 ((unsigned)d * 0x85ebca6bu);
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return (int)(h % 2000001) - 1000000;
}

/* One collective of kind k on communicator comm (index c), round it. */
static void run(int k, MPI_Comm comm, int c, int it, const int *mem, int n)
{
    int crank, csize;
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &csize);
    const char *kinds[5] = {"MPI_Barrier", "MPI_Bcast", "MPI_Allreduce", "MPI_Allgather",
                            "MPI_Alltoall"};
    snprintf(ctx, sizeof ctx, "round %d %s on %s (size %d)", it, kinds[k], names[c], csize);
    if (csize != n || mem[crank] != rank)
        fail("communicator rank %d size %d, expected size %d and my world rank at my rank", crank,
             csize, n);
    int count = it % 5 == 0 ? 1000 : 3;
    switch (k) {
    case 0:
        check_rc(MPI_Barrier(comm), "MPI_Barrier");
        break;
    case 1: {
        int root = (it + c) % csize, buf[1000];
        for (int i = 0; i < count; i++)
            buf[i] = crank == root ? val(1, it, c, i) : -1;
        check_rc(MPI_Bcast(buf, count, MPI_INT, root, comm), "MPI_Bcast");
        for (int i = 0; i < count; i++)
            if (buf[i] != val(1, it, c, i))
                fail("root %d: [%d] expected %d got %d", root, i, val(1, it, c, i), buf[i]);
        break;
    }
    case 2: {
        static int in[1000], out[1000];
        for (int i = 0; i < count; i++)
            in[i] = val(2, it, rank, i) / 128;
        check_rc(MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, comm), "MPI_Allreduce");
        for (int i = 0; i < count; i++) {
            int s = 0;
            for (int j = 0; j < n; j++)
                s += val(2, it, mem[j], i) / 128;
            if (out[i] != s)
                fail("[%d] expected %d got %d", i, s, out[i]);
        }
        break;
    }
    case 3: {
        int mine[2] = {rank, it}, *all = malloc(2 * csize * sizeof(int));
        check_rc(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm), "MPI_Allgather");
        for (int j = 0; j < csize; j++)
            if (all[2 * j] != mem[j] || all[2 * j + 1] != it)
                fail("comm rank %d is world rank %d round %d, expected world rank %d", j,
                     all[2 * j], all[2 * j + 1], mem[j]);
        free(all);
        break;
    }
    case 4: {
        int *s = malloc(csize * sizeof(int)), *r = malloc(csize * sizeof(int));
        for (int j = 0; j < csize; j++)
            s[j] = val(4, it, rank, mem[j]);
        check_rc(MPI_Alltoall(s, 1, MPI_INT, r, 1, MPI_INT, comm), "MPI_Alltoall");
        for (int j = 0; j < csize; j++)
            if (r[j] != val(4, it, mem[j], rank))
                fail("from comm rank %d (world %d): expected %d got %d", j, mem[j],
                     val(4, it, mem[j], rank), r[j]);
        free(s);
        free(r);
        break;
    }
    }
}

static void test_self(void)
{
    MPI_Comm s = MPI_COMM_SELF;
    int a[5] = {rank, 1, 2, 3, 4}, b[5], one = 1;
    snprintf(ctx, sizeof ctx, "MPI_COMM_SELF");
    check_rc(MPI_Barrier(s), "MPI_Barrier");
    memcpy(b, a, sizeof b);
    check_rc(MPI_Bcast(b, 5, MPI_INT, 0, s), "MPI_Bcast");
    if (memcmp(a, b, sizeof a))
        fail("MPI_Bcast changed the buffer");
#define SELF_CHECK(call, what)                                                                     \
    do {                                                                                           \
        memset(b, 0x7f, sizeof b);                                                                 \
        check_rc(call, #call);                                                                     \
        if (memcmp(a, b, sizeof a))                                                                \
            fail(what " gave {%d %d %d %d %d}, expected {%d 1 2 3 4}", b[0], b[1], b[2], b[3],     \
                 b[4], a[0]);                                                                      \
    } while (0)
    SELF_CHECK(MPI_Allreduce(a, b, 5, MPI_INT, MPI_SUM, s), "MPI_Allreduce");
    SELF_CHECK(MPI_Reduce(a, b, 5, MPI_INT, MPI_MAX, 0, s), "MPI_Reduce");
    SELF_CHECK(MPI_Scan(a, b, 5, MPI_INT, MPI_PROD, s), "MPI_Scan");
    SELF_CHECK(MPI_Allgather(a, 5, MPI_INT, b, 5, MPI_INT, s), "MPI_Allgather");
    SELF_CHECK(MPI_Gather(a, 5, MPI_INT, b, 5, MPI_INT, 0, s), "MPI_Gather");
    SELF_CHECK(MPI_Scatter(a, 5, MPI_INT, b, 5, MPI_INT, 0, s), "MPI_Scatter");
    SELF_CHECK(MPI_Alltoall(a, 5, MPI_INT, b, 5, MPI_INT, s), "MPI_Alltoall");
    SELF_CHECK(MPI_Reduce_scatter_block(a, b, 5, MPI_INT, MPI_MIN, s), "MPI_Reduce_scatter_block");
    int cnt = 5, disp = 0;
    MPI_Datatype t = MPI_INT;
    SELF_CHECK(MPI_Reduce_scatter(a, b, &cnt, MPI_INT, MPI_SUM, s), "MPI_Reduce_scatter");
    SELF_CHECK(MPI_Gatherv(a, 5, MPI_INT, b, &cnt, &disp, MPI_INT, 0, s), "MPI_Gatherv");
    SELF_CHECK(MPI_Scatterv(a, &cnt, &disp, MPI_INT, b, 5, MPI_INT, 0, s), "MPI_Scatterv");
    SELF_CHECK(MPI_Allgatherv(a, 5, MPI_INT, b, &cnt, &disp, MPI_INT, s), "MPI_Allgatherv");
    SELF_CHECK(MPI_Alltoallv(a, &cnt, &disp, MPI_INT, b, &cnt, &disp, MPI_INT, s), "MPI_Alltoallv");
    SELF_CHECK(MPI_Alltoallw(a, &cnt, &disp, &t, b, &cnt, &disp, &t, s), "MPI_Alltoallw");
    /* In place */
    memcpy(b, a, sizeof b);
    check_rc(MPI_Allreduce(MPI_IN_PLACE, b, 5, MPI_INT, MPI_SUM, s), "MPI_Allreduce");
    if (memcmp(a, b, sizeof a))
        fail("MPI_Allreduce MPI_IN_PLACE changed the buffer");
    /* Exscan on one rank: recvbuf undefined; it must just succeed. */
    check_rc(MPI_Exscan(a, b, 5, MPI_INT, MPI_SUM, s), "MPI_Exscan");
    int sz = 0;
    check_rc(MPI_Allreduce(&one, &sz, 1, MPI_INT, MPI_SUM, s), "MPI_Allreduce");
    if (sz != 1)
        fail("MPI_Allreduce of 1 gave %d", sz);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = 20;
    if (argc > 1)
        rounds = strcmp(argv[1], "quick") == 0 ? 10 : atoi(argv[1]);

    MPI_Comm comms[NCOMMS];
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comms[0]);
    MPI_Comm_split(MPI_COMM_WORLD, rank / 3, -rank, &comms[1]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[2]);
    MPI_Group wg, sub;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int *list = malloc(size * sizeof(int)), nl = 0;
    for (int r = size - 1; r >= 0; r--)
        if (r % 3 != 1)
            list[nl++] = r;
    MPI_Group_incl(wg, nl, list, &sub);
    MPI_Comm_create(MPI_COMM_WORLD, sub, &comms[3]);
    MPI_Group_free(&sub);
    MPI_Group_free(&wg);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 4 == 3 ? MPI_UNDEFINED : 7, rank, &comms[4]);
    int half = ((size - rank % 2) + 1) / 2;
    MPI_Comm_split(comms[0], rank / 2 < half / 2, 0, &comms[5]);

    int *mem[NCOMMS], n[NCOMMS];
    for (int c = 0; c < NCOMMS; c++) {
        mem[c] = malloc(size * sizeof(int));
        n[c] = members(c, rank, mem[c]);
        snprintf(ctx, sizeof ctx, "creating %s", names[c]);
        if ((n[c] == 0) != (comms[c] == MPI_COMM_NULL))
            fail("expected %d members, got %s", n[c],
                 comms[c] == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
    }

    for (int it = 0; it < rounds; it++) {
        for (int k = 0; k < 5; k++) {
            for (int c = 0; c < NCOMMS; c++)
                if (comms[c] != MPI_COMM_NULL)
                    run(k, comms[c], c, it, mem[c], n[c]);
            /* world in between, sometimes */
            if ((it + k) % 3 == 0) {
                int one = 1, s = 0;
                snprintf(ctx, sizeof ctx, "round %d MPI_Allreduce on MPI_COMM_WORLD", it);
                check_rc(MPI_Allreduce(&one, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                         "MPI_Allreduce");
                if (s != size)
                    fail("sum of ones %d, expected %d", s, size);
            }
        }
    }
    test_self();

    for (int c = 0; c < NCOMMS; c++) {
        if (comms[c] != MPI_COMM_NULL)
            MPI_Comm_free(&comms[c]);
        free(mem[c]);
    }
    free(list);
    MPI_Finalize();
    if (rank == 0)
        printf("coll_comms: %d ranks ok\n", size);
    return 0;
}
