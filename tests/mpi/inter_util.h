/*
 * The intercommunicator the inter_* tests work on: MPI_COMM_WORLD split into
 * side 1 (world ranks r with r % 3 == 1) and side 0 (the others), joined by
 * MPI_Intercomm_create with side 0's leader its last member and side 1's its
 * first (world rank 1), so that the leaders are not both local rank 0 and
 * the groups interleave in MPI_COMM_WORLD. Needs 2 ranks or more.
 */
#ifndef INTER_UTIL_H
#define INTER_UTIL_H

#include <mpi.h>
#include <stdlib.h>

static int wrank, wsize; /* in MPI_COMM_WORLD */
static int side;         /* 0 or 1 */
static int lrank;        /* in the local group */
static int nside[2];     /* members of each side */
static int *members[2];  /* world ranks of each side's members, in local rank order */

static void inter_sides(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    members[0] = malloc((size_t)wsize * sizeof(int));
    members[1] = malloc((size_t)wsize * sizeof(int));
    nside[0] = nside[1] = 0;
    for (int r = 0; r < wsize; r++) {
        int s = r % 3 == 1;
        if (r == wrank)
            lrank = nside[s];
        members[s][nside[s]++] = r;
    }
    side = wrank % 3 == 1;
}

/* The local communicator of the caller's side and the intercommunicator. */
static MPI_Comm inter_make(MPI_Comm *local_p, int tag)
{
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, side, wrank, &local);
    int local_leader = side ? 0 : nside[0] - 1;
    int remote_leader = side ? members[0][nside[0] - 1] : members[1][0];
    MPI_Intercomm_create(local, local_leader, MPI_COMM_WORLD, remote_leader, tag, &inter);
    if (local_p)
        *local_p = local;
    else
        MPI_Comm_free(&local);
    return inter;
}

/* Local and remote group sizes and the world rank of remote rank i. */
#define LSIZE     (nside[side])
#define RSIZE     (nside[!side])
#define REMOTE(i) (members[!side][i])
#define LOCALW(i) (members[side][i])

/* "<name>: N ranks ok" on rank 0 when no rank failed a check. */
static int inter_finish(const char *name)
{
    int mine = check_failures_, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0 && all == 0)
        printf("%s: %d ranks ok\n", name, wsize);
    free(members[0]);
    free(members[1]);
    MPI_Finalize();
    return all ? 1 : check_summary();
}

#endif
