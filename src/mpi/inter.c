/*
 * Intercommunicator entry points (MPI-4.1 7.6): MPI_Intercomm_create,
 * MPI_Intercomm_create_from_groups, MPI_Intercomm_merge,
 * MPI_Comm_remote_size, MPI_Comm_remote_group. The objects and the
 * agreement are in src/comm/inter.c (docs/intercomm.md).
 *
 * MPI_Intercomm_create: the two leaders swap their groups' member lists by
 * point-to-point on peer_comm with the call's tag (as the standard
 * describes it), each leader broadcasts the other group's list on its
 * local_comm, and then every member of both groups knows both lists and
 * meets the others in the comm layer's rendezvous, keyed by peer_comm's
 * context id, the tag and the two lists, where the last to arrive makes the
 * new communicator. A leader that finds a bad argument broadcasts the
 * error class instead, so its whole group raises it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm_impl.h"
#include "mpi/mpi_impl.h"
#include "util/handle.h"

int loom_mpi_intra_only(MPI_Comm comm, const char *fn)
{
    return loom_mpi_err(comm, MPI_ERR_COMM, fn,
                        "the communicator is an intercommunicator; %s takes an intracommunicator",
                        fn);
}

/* Declares c as the caller's communicator behind comm, or returns the error. */
#define COMM_ARG(c, comm, fn)                                                                      \
    struct loom_comm *c = NULL;                                                                    \
    do {                                                                                           \
        int rc_ = loom_mpi_comm_enter(fn, comm, &c);                                               \
        if (rc_)                                                                                   \
            return rc_;                                                                            \
    } while (0)

static int inter_only(MPI_Comm comm, const char *fn)
{
    return loom_mpi_err(comm, MPI_ERR_COMM, fn,
                        "the communicator is an intracommunicator; %s takes an intercommunicator",
                        fn);
}

/* The union of the two groups, side A (the leader with the lower world
 * rank) first; *me_p: the caller's index, *na_p: A's size. NULL: no memory. */
static int *union_of(const int *local, int n, const int *remote, int rn, bool low, int my_rank,
                     int *me_p, int *na_p)
{
    int *u = malloc((size_t)(n + rn) * sizeof *u);
    if (!u)
        return NULL;
    memcpy(u + (low ? 0 : rn), local, (size_t)n * sizeof *u);
    memcpy(u + (low ? n : 0), remote, (size_t)rn * sizeof *u);
    *me_p = (low ? 0 : rn) + my_rank;
    *na_p = low ? n : rn;
    return u;
}

/* At the local leader: checks peer_comm and remote_leader and swaps the
 * groups with the remote leader. Returns MPI_SUCCESS or an error class
 * (raised here); hdr = {class, remote size, peer context id, low}. */
static int leader_exchange(struct loom_comm *c, MPI_Comm local_comm, MPI_Comm peer_comm,
                           int remote_leader, int tag, int hdr[4], int **remote_p)
{
    static const char fn[] = "MPI_Intercomm_create";
    struct loom_comm *peer = loom_comm_lookup(peer_comm);
    if (!peer)
        return loom_mpi_bad_comm(peer_comm, fn);
    if (remote_leader < 0 || remote_leader >= loom_comm_peer_size(peer))
        return loom_mpi_err(local_comm, MPI_ERR_RANK, fn,
                            "remote_leader %d is not a rank of peer_comm (size %d)", remote_leader,
                            loom_comm_peer_size(peer));
    int rw = loom_comm_peer_world(peer, remote_leader);
    for (int i = 0; i < c->sh->size; i++)
        if (c->sh->world_of[i] == rw)
            return loom_mpi_err(local_comm, MPI_ERR_RANK, fn,
                                "remote_leader %d of peer_comm is rank %d of local_comm: the "
                                "groups must be disjoint",
                                remote_leader, i);
    int n = c->sh->size, rn = 0;
    int rc = PMPI_Sendrecv(&n, 1, MPI_INT, remote_leader, tag, &rn, 1, MPI_INT, remote_leader, tag,
                           peer_comm, MPI_STATUS_IGNORE);
    if (rc)
        return rc;
    int *remote = malloc((size_t)(rn > 0 ? rn : 1) * sizeof *remote);
    if (!remote)
        return loom_mpi_err(local_comm, MPI_ERR_NO_MEM, fn, "out of memory");
    rc = PMPI_Sendrecv(c->sh->world_of, n, MPI_INT, remote_leader, tag, remote, rn, MPI_INT,
                       remote_leader, tag, peer_comm, MPI_STATUS_IGNORE);
    if (rc) {
        free(remote);
        return rc;
    }
    hdr[1] = rn;
    hdr[2] = (int)peer->sh->context_id;
    hdr[3] = c->owner < rw;
    *remote_p = remote;
    return MPI_SUCCESS;
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create";
    COMM_ARG(c, local_comm, fn);
    LOOM_MPI_INTRA_ONLY(c, local_comm, fn);
    if (!newintercomm)
        return loom_mpi_err(local_comm, MPI_ERR_ARG, fn, "newintercomm is NULL");
    if (local_leader < 0 || local_leader >= c->sh->size)
        return loom_mpi_err(local_comm, MPI_ERR_RANK, fn,
                            "local_leader %d is not a rank of local_comm (size %d)", local_leader,
                            c->sh->size);
    if (tag < 0)
        return loom_mpi_err(local_comm, MPI_ERR_TAG, fn, "tag %d is negative", tag);
    int hdr[4] = {MPI_SUCCESS, 0, 0, 0};
    int *remote = NULL;
    if (c->rank == local_leader)
        hdr[0] = leader_exchange(c, local_comm, peer_comm, remote_leader, tag, hdr, &remote);
    int rc = PMPI_Bcast(hdr, 4, MPI_INT, local_leader, local_comm);
    if (rc || hdr[0]) {
        free(remote);
        if (rc || c->rank == local_leader)
            return rc ? rc : hdr[0]; /* raised already */
        return loom_mpi_err(local_comm, hdr[0], fn,
                            "the local leader (rank %d) found an error in peer_comm or "
                            "remote_leader",
                            local_leader);
    }
    int rn = hdr[1];
    if (!remote && !(remote = malloc((size_t)(rn > 0 ? rn : 1) * sizeof *remote)))
        return loom_mpi_err(local_comm, MPI_ERR_NO_MEM, fn, "out of memory");
    rc = PMPI_Bcast(remote, rn, MPI_INT, local_leader, local_comm);
    if (rc) {
        free(remote);
        return rc;
    }
    int me, na;
    int *u = union_of(c->sh->world_of, c->sh->size, remote, rn, hdr[3], c->rank, &me, &na);
    free(remote);
    if (!u)
        return loom_mpi_err(local_comm, MPI_ERR_NO_MEM, fn, "out of memory");
    struct loom_rdv_key key = {.context_id = (uint32_t)hdr[2],
                               .kind = LOOM_RDV_INTER,
                               .seq_or_tag = tag,
                               .n = c->sh->size + rn,
                               .members = u};
    struct loom_comm *newc = NULL;
    rc = loom_comm_inter_create(&key, me, na, c->errhandler, &newc);
    free(u);
    if (rc != LOOM_OK)
        return loom_mpi_err(local_comm, MPI_ERR_NO_MEM, fn, "out of memory");
    *newintercomm = newc->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Intercomm_create);

/* 64-bit FNV-1a of s. */
static uint64_t hash_string(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static struct loom_group *group_arg(const char *fn, MPI_Group group, const char *what, int *rc_p)
{
    struct loom_group *g = loom_group_lookup(group);
    if (!g)
        *rc_p = loom_mpi_err(MPI_COMM_SELF, MPI_ERR_GROUP, fn, "%s is %s", what,
                             group == MPI_GROUP_NULL ? "MPI_GROUP_NULL" : "not a valid group");
    else if (g->size == 0)
        *rc_p = loom_mpi_err(MPI_COMM_SELF, MPI_ERR_GROUP, fn, "%s is empty", what);
    return g && g->size ? g : NULL;
}

int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group, int remote_leader,
                                      const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create_from_groups";
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    struct loom_group *lg = group_arg(fn, local_group, "local_group", &rc);
    if (!lg)
        return rc;
    struct loom_group *rg = group_arg(fn, remote_group, "remote_group", &rc);
    if (!rg)
        return rc;
    if (!stringtag || !newintercomm)
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_ARG, fn, "%s is NULL",
                            stringtag ? "newintercomm" : "stringtag");
    if (info != MPI_INFO_NULL && !loom_info_lookup(info))
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_INFO, fn, "0x%x is not a valid info object",
                            (unsigned)info);
    struct loom_errhandler *ueh = loom_errhandler_lookup(errhandler);
    if (!loom_errhandler_is_predefined(errhandler) && (!ueh || ueh->win))
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_ARG, fn,
                            "0x%x is not a communicator error handler", (unsigned)errhandler);
    if (local_leader < 0 || local_leader >= lg->size)
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_RANK, fn,
                            "local_leader %d is not a rank of local_group (size %d)", local_leader,
                            lg->size);
    if (remote_leader < 0 || remote_leader >= rg->size)
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_RANK, fn,
                            "remote_leader %d is not a rank of remote_group (size %d)",
                            remote_leader, rg->size);
    int my = loom_group_rank_of(lg, loom_rank_self()->rank);
    if (my == MPI_UNDEFINED)
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_GROUP, fn,
                            "the calling process is not a member of local_group");
    for (int i = 0; i < rg->size; i++)
        if (loom_group_rank_of(lg, rg->world[i]) != MPI_UNDEFINED)
            return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_GROUP, fn,
                                "rank %d of remote_group is in local_group too: the groups must "
                                "be disjoint",
                                i);
    int me, na;
    bool low = lg->world[local_leader] < rg->world[remote_leader];
    int *u = union_of(lg->world, lg->size, rg->world, rg->size, low, my, &me, &na);
    if (!u)
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_NO_MEM, fn, "out of memory");
    uint64_t h = hash_string(stringtag);
    struct loom_rdv_key key = {.context_id = (uint32_t)h,
                               .kind = LOOM_RDV_INTER_GROUPS,
                               .seq_or_tag = (int)(h >> 32),
                               .n = lg->size + rg->size,
                               .members = u};
    struct loom_comm *newc = NULL;
    rc = loom_comm_inter_create(&key, me, na, errhandler, &newc);
    free(u);
    if (rc != LOOM_OK)
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_NO_MEM, fn, "out of memory");
    if (info != MPI_INFO_NULL && loom_info_lookup(info)->n) {
        struct loom_info *copy = loom_info_dup(loom_info_lookup(info));
        if (!copy) {
            (void)loom_comm_free(newc, false);
            return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_NO_MEM, fn, "out of memory");
        }
        loom_comm_priv(newc)->info = copy;
    }
    *newintercomm = newc->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Intercomm_create_from_groups);

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char fn[] = "MPI_Intercomm_merge";
    COMM_ARG(c, intercomm, fn);
    if (!loom_comm_is_inter(c))
        return inter_only(intercomm, fn);
    if (!newintracomm)
        return loom_mpi_err(intercomm, MPI_ERR_ARG, fn, "newintracomm is NULL");
    struct loom_comm *newc = NULL;
    if (loom_comm_inter_merge(c, high != 0, &newc) != LOOM_OK)
        return loom_mpi_err(intercomm, MPI_ERR_NO_MEM, fn, "out of memory");
    *newintracomm = newc->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Intercomm_merge);

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    static const char fn[] = "MPI_Comm_remote_size";
    COMM_ARG(c, comm, fn);
    if (!loom_comm_is_inter(c))
        return inter_only(comm, fn);
    if (!size)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "size is NULL");
    *size = loom_comm_peer_size(c);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_remote_size);

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    static const char fn[] = "MPI_Comm_remote_group";
    COMM_ARG(c, comm, fn);
    if (!loom_comm_is_inter(c))
        return inter_only(comm, fn);
    if (!group)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "group is NULL");
    int n = loom_comm_peer_size(c);
    struct loom_group *g = loom_group_new(n);
    if (!g)
        return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
    memcpy(g->world, c->sh->peer_of, (size_t)n * sizeof *g->world);
    *group = g->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_remote_group);
