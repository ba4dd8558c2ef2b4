/* Persistent collectives (MPI-4.1 6.13): every MPI_<Coll>_init, each
 * request started many times with new buffer contents and completed by
 * MPI_Wait, MPI_Test polling or MPI_Waitall, its results equal to the
 * blocking collective's on the same input; several started together with
 * MPI_Startall, interleaved with blocking collectives; inactive requests
 * complete at once and free; bad arguments fail at init (MPI_ERRORS_RETURN). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

#define ROUNDS 12
#define NCOLL  17

static int rank, size, count, root, total;
static int *sb, *rb, *ref;
static int *scounts, *sdispls, *rcounts, *rdispls, *wsdispls, *wrdispls;
static MPI_Datatype *types;

static const char *const names[NCOLL] = {
    "Barrier",   "Bcast",     "Gather",     "Gatherv",        "Scatter",
    "Scatterv",  "Allgather", "Allgatherv", "Alltoall",       "Alltoallv",
    "Alltoallw", "Reduce",    "Allreduce",  "Reduce_scatter", "Reduce_scatter_block",
    "Scan",      "Exscan"};

/* Sizes of the v variants: rank a sends vcount(a, b) to rank b. */
static int vcount(int a, int b)
{
    return count + (a + 2 * b) % 3;
}

static void setup(void)
{
    total = size * (count + 3);
    sb = malloc(sizeof(int) * (size_t)total);
    rb = malloc(sizeof(int) * (size_t)total);
    ref = malloc(sizeof(int) * (size_t)total);
    int *arrays = malloc(sizeof(int) * 6 * (size_t)size);
    scounts = arrays;
    sdispls = arrays + size;
    rcounts = arrays + 2 * size;
    rdispls = arrays + 3 * size;
    wsdispls = arrays + 4 * size;
    wrdispls = arrays + 5 * size;
    types = malloc(sizeof *types * (size_t)size);
    int so = 0, ro = 0;
    for (int j = 0; j < size; j++) {
        scounts[j] = vcount(rank, j);
        rcounts[j] = vcount(j, rank);
        sdispls[j] = so;
        rdispls[j] = ro;
        wsdispls[j] = so * (int)sizeof(int);
        wrdispls[j] = ro * (int)sizeof(int);
        so += scounts[j];
        ro += rcounts[j];
        types[j] = MPI_INT;
    }
}

/* New contents for round r: input in sb (and a Bcast root's rb), -1 where
 * results go. */
static void fill(int k, int r)
{
    for (int i = 0; i < total; i++) {
        sb[i] = (rank + 1) * 1000 + r * 37 + i;
        rb[i] = ref[i] = -1;
    }
    if (k == 1 && rank == root)
        for (int i = 0; i < total; i++)
            rb[i] = ref[i] = sb[i];
}

/* The v variants' counts as gathered or scattered by the root: rank i's
 * count is vcount(i, root). */
static void root_counts(int *counts, int *displs)
{
    for (int i = 0, o = 0; i < size; i++) {
        counts[i] = vcount(i, root);
        displs[i] = o;
        o += counts[i];
    }
}

/* Collective k on buffers (in, out): persistent (req != NULL) or blocking. */
static int call(int k, int *in, int *out, MPI_Comm comm, MPI_Request *req)
{
    static int gcounts[4096], gdispls[4096];
    root_counts(gcounts, gdispls);
    MPI_Info info = MPI_INFO_NULL;
    int mine = vcount(rank, root);
    switch (k) {
    case 0:
        return req ? MPI_Barrier_init(comm, info, req) : MPI_Barrier(comm);
    case 1:
        return req ? MPI_Bcast_init(out, total, MPI_INT, root, comm, info, req)
                   : MPI_Bcast(out, total, MPI_INT, root, comm);
    case 2:
        return req ? MPI_Gather_init(in, count, MPI_INT, out, count, MPI_INT, root, comm, info, req)
                   : MPI_Gather(in, count, MPI_INT, out, count, MPI_INT, root, comm);
    case 3:
        return req ? MPI_Gatherv_init(in, mine, MPI_INT, out, gcounts, gdispls, MPI_INT, root, comm,
                                      info, req)
                   : MPI_Gatherv(in, mine, MPI_INT, out, gcounts, gdispls, MPI_INT, root, comm);
    case 4:
        return req ? MPI_Scatter_init(in, count, MPI_INT, out, count, MPI_INT, root, comm, info,
                                      req)
                   : MPI_Scatter(in, count, MPI_INT, out, count, MPI_INT, root, comm);
    case 5:
        return req ? MPI_Scatterv_init(in, gcounts, gdispls, MPI_INT, out, mine, MPI_INT, root,
                                       comm, info, req)
                   : MPI_Scatterv(in, gcounts, gdispls, MPI_INT, out, mine, MPI_INT, root, comm);
    case 6:
        return req ? MPI_Allgather_init(in, count, MPI_INT, out, count, MPI_INT, comm, info, req)
                   : MPI_Allgather(in, count, MPI_INT, out, count, MPI_INT, comm);
    case 7: {
        /* Rank i contributes vcount(i, 0). */
        int ac[4096], ad[4096];
        for (int i = 0, o = 0; i < size; i++) {
            ac[i] = vcount(i, 0);
            ad[i] = o;
            o += ac[i];
        }
        return req ? MPI_Allgatherv_init(in, vcount(rank, 0), MPI_INT, out, ac, ad, MPI_INT, comm,
                                         info, req)
                   : MPI_Allgatherv(in, vcount(rank, 0), MPI_INT, out, ac, ad, MPI_INT, comm);
    }
    case 8:
        return req ? MPI_Alltoall_init(in, count, MPI_INT, out, count, MPI_INT, comm, info, req)
                   : MPI_Alltoall(in, count, MPI_INT, out, count, MPI_INT, comm);
    case 9:
        return req ? MPI_Alltoallv_init(in, scounts, sdispls, MPI_INT, out, rcounts, rdispls,
                                        MPI_INT, comm, info, req)
                   : MPI_Alltoallv(in, scounts, sdispls, MPI_INT, out, rcounts, rdispls, MPI_INT,
                                   comm);
    case 10:
        return req ? MPI_Alltoallw_init(in, scounts, wsdispls, types, out, rcounts, wrdispls, types,
                                        comm, info, req)
                   : MPI_Alltoallw(in, scounts, wsdispls, types, out, rcounts, wrdispls, types,
                                   comm);
    case 11:
        /* The reference by Allreduce: a blocking MPI_Reduce of 700 ints
         * right after an MPI_Ireduce hangs at 8+ ranks (a bug of the
         * collectives layer, MPI_Ireduce + MPI_Reduce alone show it). */
        return req ? MPI_Reduce_init(in, out, count, MPI_INT, MPI_SUM, root, comm, info, req)
                   : MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, comm);
    case 12:
        return req ? MPI_Allreduce_init(in, out, count, MPI_INT, MPI_MAX, comm, info, req)
                   : MPI_Allreduce(in, out, count, MPI_INT, MPI_MAX, comm);
    case 13:
        return req ? MPI_Reduce_scatter_init(in, out, gcounts, MPI_INT, MPI_SUM, comm, info, req)
                   : MPI_Reduce_scatter(in, out, gcounts, MPI_INT, MPI_SUM, comm);
    case 14:
        return req ? MPI_Reduce_scatter_block_init(in, out, count, MPI_INT, MPI_SUM, comm, info,
                                                   req)
                   : MPI_Reduce_scatter_block(in, out, count, MPI_INT, MPI_SUM, comm);
    case 15:
        return req ? MPI_Scan_init(in, out, count, MPI_INT, MPI_SUM, comm, info, req)
                   : MPI_Scan(in, out, count, MPI_INT, MPI_SUM, comm);
    case 16:
        return req ? MPI_Exscan_init(in, out, count, MPI_INT, MPI_SUM, comm, info, req)
                   : MPI_Exscan(in, out, count, MPI_INT, MPI_SUM, comm);
    }
    return MPI_ERR_OTHER;
}

/* Completes req one of three ways, by round. */
static void complete(MPI_Request *req, int r)
{
    if (r % 3 == 0) {
        CHECK_EQ(MPI_Wait(req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    } else if (r % 3 == 1) {
        int flag = 0;
        while (!flag)
            CHECK_EQ(MPI_Test(req, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    } else {
        MPI_Status st[1];
        CHECK_EQ(MPI_Waitall(1, req, st), MPI_SUCCESS);
    }
    CHECK(*req != MPI_REQUEST_NULL); /* persistent: inactive, not freed */
}

/* Every collective: init once, ROUNDS starts, each checked against the
 * blocking call. */
static void every_collective(MPI_Comm comm)
{
    for (int k = 0; k < NCOLL; k++) {
        MPI_Request req = MPI_REQUEST_NULL;
        fill(k, 0);
        CHECK_EQ(call(k, sb, rb, comm, &req), MPI_SUCCESS);
        for (int r = 0; r < ROUNDS; r++) {
            fill(k, r);
            CHECK_EQ(MPI_Start(&req), MPI_SUCCESS);
            complete(&req, r);
            CHECK_EQ(call(k, sb, ref, comm, NULL), MPI_SUCCESS);
            if (k == 16 && rank == 0)
                continue; /* Exscan: undefined at rank 0 */
            if ((k == 2 || k == 3 || k == 11) && rank != root)
                continue; /* rooted: the receive buffer is not significant here */
            int bad = 0;
            for (int i = 0; i < total; i++)
                bad += rb[i] != ref[i];
            if (bad)
                fprintf(stderr, "rank %d: %s round %d (count %d): %d wrong\n", rank, names[k], r,
                        count, bad);
            CHECK_EQ(bad, 0);
        }
        CHECK_EQ(MPI_Request_free(&req), MPI_SUCCESS);
        CHECK(req == MPI_REQUEST_NULL);
    }
}

/* MPI_Startall of four persistent collectives on their own buffers,
 * interleaved with a blocking one. */
static void startall(MPI_Comm comm)
{
    enum { N = 8 };
    int a[N] = {0}, b[N] = {0}, g[N * 4096 / 64] = {0}, bc[N] = {0}, ra[N], rg[N * 4096 / 64],
        rbc[N];
    MPI_Request reqs[4];
    CHECK_EQ(MPI_Allreduce_init(a, b, N, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &reqs[0]),
             MPI_SUCCESS);
    CHECK_EQ(MPI_Barrier_init(comm, MPI_INFO_NULL, &reqs[1]), MPI_SUCCESS);
    CHECK_EQ(MPI_Allgather_init(a, 1, MPI_INT, g, 1, MPI_INT, comm, MPI_INFO_NULL, &reqs[2]),
             MPI_SUCCESS);
    CHECK_EQ(MPI_Bcast_init(bc, N, MPI_INT, 0, comm, MPI_INFO_NULL, &reqs[3]), MPI_SUCCESS);
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++) {
            a[i] = rank * 3 + r + i;
            bc[i] = rbc[i] = rank == 0 ? 100 * r + i : -1;
        }
        CHECK_EQ(MPI_Startall(4, reqs), MPI_SUCCESS);
        int x = rank, sum = -1;
        CHECK_EQ(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
        CHECK_EQ(sum, size * (size - 1) / 2);
        MPI_Status st[4];
        CHECK_EQ(MPI_Waitall(4, reqs, st), MPI_SUCCESS);
        CHECK_EQ(MPI_Allreduce(a, ra, N, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
        CHECK_EQ(MPI_Allgather(a, 1, MPI_INT, rg, 1, MPI_INT, comm), MPI_SUCCESS);
        CHECK_EQ(MPI_Bcast(rbc, N, MPI_INT, 0, comm), MPI_SUCCESS);
        CHECK_EQ(memcmp(b, ra, sizeof b), 0);
        CHECK_EQ(memcmp(g, rg, sizeof(int) * (size_t)size), 0);
        CHECK_EQ(memcmp(bc, rbc, sizeof bc), 0);
    }
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(MPI_Request_free(&reqs[i]), MPI_SUCCESS);
        CHECK(reqs[i] == MPI_REQUEST_NULL);
    }
}

/* Inactive requests: Wait and Test return at once with an empty status;
 * a request never started frees. */
static void inactive(MPI_Comm comm)
{
    int v = rank, w = -1;
    MPI_Request req;
    CHECK_EQ(MPI_Allreduce_init(&v, &w, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req),
             MPI_SUCCESS);
    MPI_Status st;
    st.MPI_TAG = 12345;
    CHECK_EQ(MPI_Wait(&req, &st), MPI_SUCCESS);
    CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
    CHECK(req != MPI_REQUEST_NULL);
    int flag = 0;
    CHECK_EQ(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(flag, 1);
    CHECK_EQ(w, -1); /* not run */
    CHECK_EQ(MPI_Request_free(&req), MPI_SUCCESS);
    CHECK(req == MPI_REQUEST_NULL);
}

/* Bad arguments fail at init with the standard's classes. */
static void errors(MPI_Comm comm)
{
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int v[4] = {0}, w[4] = {0}, cls = -1;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Bcast_init(v, 4, MPI_INT, size, comm, MPI_INFO_NULL, &req);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_ROOT);
    rc = MPI_Reduce_init(v, w, 4, MPI_INT, MPI_SUM, -1, comm, MPI_INFO_NULL, &req);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_ROOT);
    rc = MPI_Allreduce_init(v, w, 4, MPI_DATATYPE_NULL, MPI_SUM, comm, MPI_INFO_NULL, &req);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_TYPE);
    rc = MPI_Allgather_init(v, -1, MPI_INT, w, 1, MPI_INT, comm, MPI_INFO_NULL, &req);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_COUNT);
    rc = MPI_Scan_init(v, w, 4, MPI_INT, MPI_OP_NULL, comm, MPI_INFO_NULL, &req);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_OP);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &req);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_COMM);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    CHECK(req == MPI_REQUEST_NULL);
    /* The communicator still works after the errors. */
    MPI_Request ok;
    CHECK_EQ(MPI_Barrier_init(comm, MPI_INFO_NULL, &ok), MPI_SUCCESS);
    CHECK_EQ(MPI_Start(&ok), MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&ok, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(MPI_Request_free(&ok), MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(size <= 4096 / 64);
    root = size - 1;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    const int counts[] = {1, 5, 700};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        count = counts[c];
        setup();
        every_collective(c == 1 ? comm : MPI_COMM_WORLD);
        free(sb);
        free(rb);
        free(ref);
        free(scounts);
        free(types);
    }
    startall(comm);
    inactive(comm);
    errors(comm);
    MPI_Comm_free(&comm);
    int failed = check_failures_, all = 0;
    MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0)
        printf("mpi4_pcoll: %d ranks ok\n", size);
    MPI_Finalize();
    return check_summary();
}
