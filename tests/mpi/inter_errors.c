/* Intercommunicator error classes under MPI_ERRORS_RETURN: intercommunicator
 * calls on an intracommunicator and intracommunicator-only calls on an
 * intercommunicator (MPI_ERR_COMM), bad leaders, ranks and roots
 * (MPI_ERR_RANK, MPI_ERR_ROOT), bad tags (MPI_ERR_TAG), and a communicator
 * still usable after each error. At 1 rank only the calls that need no
 * intercommunicator. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "inter_util.h"

/* The test programs are validated under Open MPI 4.1 and MPICH 4.0 too.
 * STRICT marks the checks they fail: erroneous calls the standard lets an
 * implementation leave undetected or report with another class (Open MPI:
 * MPI_ERR_TOPOLOGY for neighbourhood collectives, no persistent
 * collectives; MPICH: split_type and create_group accept an
 * intercommunicator, Scan reports MPI_ERR_OTHER) or crash on (both: the
 * intercommunicator calls on an intracommunicator, which they either take
 * (MPI_Comm_remote_size gives 0) or fail an assertion in (MPICH's
 * MPI_Intercomm_merge); Open MPI reports a bad local_leader as
 * MPI_ERR_ARG). */
#ifdef LOOM_MPI_H
#define STRICT 1
#else
#define STRICT 0
#endif

static int eclass(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

#define CHECK_CLASS(call, cls) CHECK_EQ(eclass(call), cls)

static void intra_errors(void)
{
    int n = 0;
    MPI_Group g;
    MPI_Comm c;
    if (!STRICT)
        return;
    CHECK_CLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_remote_group(MPI_COMM_WORLD, &g), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &c), MPI_ERR_COMM);
    /* local_leader out of local_comm, a negative tag: raised on every rank
     * before anyone waits */
    CHECK_CLASS(MPI_Intercomm_create(MPI_COMM_SELF, 1, MPI_COMM_WORLD, 0, 0, &c), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Intercomm_create(MPI_COMM_SELF, -1, MPI_COMM_WORLD, 0, 0, &c), MPI_ERR_RANK);
    {
        CHECK_CLASS(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, 0, -3, &c), MPI_ERR_TAG);
        /* remote_leader not in peer_comm, or the caller itself */
        CHECK_CLASS(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, wsize, 0, &c),
                    MPI_ERR_RANK);
        CHECK_CLASS(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, wrank, 0, &c),
                    MPI_ERR_RANK);
    }
#if MPI_VERSION >= 4
    if (STRICT) {
        MPI_Group self, world;
        MPI_Comm_group(MPI_COMM_SELF, &self);
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        /* overlapping groups, a leader out of range */
        CHECK_CLASS(MPI_Intercomm_create_from_groups(self, 0, world, 0, "x", MPI_INFO_NULL,
                                                     MPI_ERRORS_RETURN, &c),
                    MPI_ERR_GROUP);
        CHECK_CLASS(MPI_Intercomm_create_from_groups(self, 1, world, 0, "x", MPI_INFO_NULL,
                                                     MPI_ERRORS_RETURN, &c),
                    MPI_ERR_RANK);
        CHECK_CLASS(MPI_Intercomm_create_from_groups(self, 0, MPI_GROUP_NULL, 0, "x", MPI_INFO_NULL,
                                                     MPI_ERRORS_RETURN, &c),
                    MPI_ERR_GROUP);
        MPI_Group_free(&self);
        MPI_Group_free(&world);
    }
#endif
}

static void inter_errors(void)
{
    MPI_Comm local, inter = inter_make(&local, 31), c;
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int v = 0, w = 0, rn = RSIZE;
    MPI_Request req;
    /* an intercommunicator where an intracommunicator is needed */
    CHECK_CLASS(MPI_Intercomm_create(inter, 0, MPI_COMM_WORLD, 0, 0, &c), MPI_ERR_COMM);
    if (STRICT) { /* Open MPI 4.1 crashes in Exscan on an intercommunicator */
        CHECK_CLASS(MPI_Scan(&v, &w, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);
        CHECK_CLASS(MPI_Exscan(&v, &w, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM);
        CHECK_CLASS(MPI_Iscan(&v, &w, 1, MPI_INT, MPI_SUM, inter, &req), MPI_ERR_COMM);
        CHECK_CLASS(MPI_Iexscan(&v, &w, 1, MPI_INT, MPI_SUM, inter, &req), MPI_ERR_COMM);
    }
    int dims[1] = {LSIZE}, periods[1] = {0};
    CHECK_CLASS(MPI_Cart_create(inter, 1, dims, periods, 0, &c), MPI_ERR_COMM);
    int index[1] = {0}, edges[1] = {0};
    CHECK_CLASS(MPI_Graph_create(inter, 1, index, edges, 0, &c), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(inter, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
                                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c),
                MPI_ERR_COMM);
    if (STRICT) {
        MPI_Win win; /* MPICH 4.0.2 crashes in MPI_Win_create */
        CHECK_CLASS(MPI_Win_create(&v, sizeof v, 1, MPI_INFO_NULL, inter, &win), MPI_ERR_COMM);
        CHECK_CLASS(MPI_Neighbor_allgather(&v, 1, MPI_INT, &w, 1, MPI_INT, inter), MPI_ERR_COMM);
        CHECK_CLASS(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c),
                    MPI_ERR_COMM);
        MPI_Group g;
        MPI_Comm_group(inter, &g);
        CHECK_CLASS(MPI_Comm_create_group(inter, g, 0, &c), MPI_ERR_COMM);
        MPI_Group_free(&g);
#if MPI_VERSION >= 4
        CHECK_CLASS(MPI_Barrier_init(inter, MPI_INFO_NULL, &req), MPI_ERR_COMM);
#endif
    }
    /* ranks name the remote group */
    CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, rn, 0, inter), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Recv(&v, 1, MPI_INT, rn, 0, inter, MPI_STATUS_IGNORE), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, 0, -2, inter), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Bcast(&v, 1, MPI_INT, rn, inter), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Bcast(&v, 1, MPI_INT, -7, inter), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Reduce(&v, &w, 1, MPI_INT, MPI_SUM, rn, inter), MPI_ERR_ROOT);
    if (STRICT) /* no MPI_IN_PLACE on an intercommunicator */
        CHECK(eclass(MPI_Allreduce(MPI_IN_PLACE, &w, 1, MPI_INT, MPI_SUM, inter)) != MPI_SUCCESS);
    /* still usable */
    int flag = 0;
    MPI_Comm_test_inter(inter, &flag);
    CHECK_EQ(flag, 1);
    w = -1;
    CHECK_CLASS(MPI_Allreduce(&wrank, &w, 1, MPI_INT, MPI_MIN, inter), MPI_SUCCESS);
    CHECK_EQ(w, REMOTE(0));
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    inter_sides();
    intra_errors();
    if (wsize >= 2)
        inter_errors();
    return inter_finish("inter_errors");
}
