/*
 * Persistent neighbourhood collectives (MPI-4.1 8.7): the five
 * MPI_Neighbor_<coll>_init calls on a periodic 2-D Cartesian grid and on a
 * distributed graph (a ring with a repeated edge and an extra edge),
 * started several times with new data each round (MPI_Start and
 * MPI_Startall), each round's result compared with the blocking call's;
 * MPI_Request_free of an inactive request, and the error of freeing an
 * active one.
 *
 * Validated with MPICH 4.0.2 (which has the persistent neighbourhood
 * collectives): it passes, but for the Loom-only error check.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

#define K 3 /* ints per block */

static int rank, size;

static void fill(int *buf, int n, int round, int salt)
{
    for (int i = 0; i < n; i++)
        buf[i] = round * 100000 + rank * 1000 + salt * 100 + i;
}

static void run(MPI_Comm comm)
{
    int indeg, outdeg, weighted;
    int topo;
    MPI_Topo_test(comm, &topo);
    if (topo == MPI_CART) {
        int nd;
        MPI_Cartdim_get(comm, &nd);
        indeg = outdeg = 2 * nd;
    } else {
        MPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &weighted);
    }
    int sn = outdeg * K + 1, rn = indeg * K + 1;
    int *sbuf = calloc((size_t)sn, sizeof(int)), *rbuf[5], *want = calloc((size_t)rn, sizeof(int));
    for (int c = 0; c < 5; c++)
        rbuf[c] = calloc((size_t)rn, sizeof(int));
    int *scounts = malloc((size_t)(outdeg + 1) * sizeof(int)),
        *sdispls = malloc((size_t)(outdeg + 1) * sizeof(int)),
        *rcounts = malloc((size_t)(indeg + 1) * sizeof(int)),
        *rdispls = malloc((size_t)(indeg + 1) * sizeof(int));
    MPI_Aint *sdw = malloc((size_t)(outdeg + 1) * sizeof(MPI_Aint)),
             *rdw = malloc((size_t)(indeg + 1) * sizeof(MPI_Aint));
    MPI_Datatype *stw = malloc((size_t)(outdeg + 1) * sizeof(MPI_Datatype)),
                 *rtw = malloc((size_t)(indeg + 1) * sizeof(MPI_Datatype));
    /* v and w: blocks in reverse order, to exercise the displacements. */
    for (int j = 0; j < outdeg; j++) {
        scounts[j] = K;
        sdispls[j] = (outdeg - 1 - j) * K;
        sdw[j] = (MPI_Aint)sdispls[j] * (MPI_Aint)sizeof(int);
        stw[j] = MPI_INT;
    }
    for (int i = 0; i < indeg; i++) {
        rcounts[i] = K;
        rdispls[i] = (indeg - 1 - i) * K;
        rdw[i] = (MPI_Aint)rdispls[i] * (MPI_Aint)sizeof(int);
        rtw[i] = MPI_INT;
    }
    MPI_Request q[5];
    CHECK(MPI_Neighbor_allgather_init(sbuf, K, MPI_INT, rbuf[0], K, MPI_INT, comm, MPI_INFO_NULL,
                                      &q[0]) == MPI_SUCCESS);
    CHECK(MPI_Neighbor_allgatherv_init(sbuf, K, MPI_INT, rbuf[1], rcounts, rdispls, MPI_INT, comm,
                                       MPI_INFO_NULL, &q[1]) == MPI_SUCCESS);
    CHECK(MPI_Neighbor_alltoall_init(sbuf, K, MPI_INT, rbuf[2], K, MPI_INT, comm, MPI_INFO_NULL,
                                     &q[2]) == MPI_SUCCESS);
    CHECK(MPI_Neighbor_alltoallv_init(sbuf, scounts, sdispls, MPI_INT, rbuf[3], rcounts, rdispls,
                                      MPI_INT, comm, MPI_INFO_NULL, &q[3]) == MPI_SUCCESS);
    CHECK(MPI_Neighbor_alltoallw_init(sbuf, scounts, sdw, stw, rbuf[4], rcounts, rdw, rtw, comm,
                                      MPI_INFO_NULL, &q[4]) == MPI_SUCCESS);
    for (int round = 0; round < 4; round++) {
        fill(sbuf, sn, round, 0);
        for (int c = 0; c < 5; c++)
            memset(rbuf[c], 0xff, (size_t)rn * sizeof(int));
        if (round % 2) {
            CHECK(MPI_Startall(5, q) == MPI_SUCCESS);
            CHECK(MPI_Waitall(5, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
        } else {
            for (int c = 0; c < 5; c++) {
                CHECK(MPI_Start(&q[c]) == MPI_SUCCESS);
                CHECK(MPI_Wait(&q[c], MPI_STATUS_IGNORE) == MPI_SUCCESS);
            }
        }
        for (int c = 0; c < 5; c++)
            CHECK(q[c] != MPI_REQUEST_NULL);
        /* The blocking calls give what each round must have. */
        memset(want, 0xff, (size_t)rn * sizeof(int));
        MPI_Neighbor_allgather(sbuf, K, MPI_INT, want, K, MPI_INT, comm);
        CHECK(memcmp(want, rbuf[0], (size_t)indeg * K * sizeof(int)) == 0);
        MPI_Neighbor_allgatherv(sbuf, K, MPI_INT, want, rcounts, rdispls, MPI_INT, comm);
        CHECK(memcmp(want, rbuf[1], (size_t)indeg * K * sizeof(int)) == 0);
        MPI_Neighbor_alltoall(sbuf, K, MPI_INT, want, K, MPI_INT, comm);
        CHECK(memcmp(want, rbuf[2], (size_t)indeg * K * sizeof(int)) == 0);
        MPI_Neighbor_alltoallv(sbuf, scounts, sdispls, MPI_INT, want, rcounts, rdispls, MPI_INT,
                               comm);
        CHECK(memcmp(want, rbuf[3], (size_t)indeg * K * sizeof(int)) == 0);
        MPI_Neighbor_alltoallw(sbuf, scounts, sdw, stw, want, rcounts, rdw, rtw, comm);
        CHECK(memcmp(want, rbuf[4], (size_t)indeg * K * sizeof(int)) == 0);
    }
#ifdef LOOM_MPI_H
    /* Freeing an active persistent collective request is erroneous; Loom
     * reports it. */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Start(&q[2]);
    int cls = -1;
    MPI_Error_class(MPI_Request_free(&q[2]), &cls);
    CHECK_EQ(cls, MPI_ERR_REQUEST);
    MPI_Wait(&q[2], MPI_STATUS_IGNORE);
#endif
    for (int c = 0; c < 5; c++) {
        CHECK(MPI_Request_free(&q[c]) == MPI_SUCCESS);
        CHECK(q[c] == MPI_REQUEST_NULL);
        free(rbuf[c]);
    }
    free(sbuf);
    free(want);
    free(scounts);
    free(sdispls);
    free(rcounts);
    free(rdispls);
    free(sdw);
    free(rdw);
    free(stw);
    free(rtw);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    run(cart);
    MPI_Comm_free(&cart);

    /* A ring with the edge to the next rank twice, and an edge from every
     * rank to rank 0. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int dsts[3] = {next, next, 0}, nout = 3, nin = 0;
    int *in = malloc((size_t)(size + 2) * sizeof(int));
    in[nin++] = prev;
    in[nin++] = prev;
    if (rank == 0)
        for (int r = 0; r < size; r++)
            in[nin++] = r;
    MPI_Comm graph;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, in, MPI_UNWEIGHTED, nout, dsts,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
    run(graph);
    MPI_Comm_free(&graph);
    free(in);

    int failed = check_failures_ != 0, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("nbr_init: %d ranks ok\n", size);
    MPI_Finalize();
    return check_summary();
}
