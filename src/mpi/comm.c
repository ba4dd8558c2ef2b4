/*
 * Communicator entry points (MPI-3.1 chapter 6, intracommunicators only):
 * argument checks and error classes here, objects and the collective
 * agreement in src/comm/. MPI_Comm_idup is here too: its request comes
 * from src/pt2pt and completes through the comm layer's callback.
 * On an intercommunicator (src/mpi/inter.c, src/comm/inter.c) dup, idup,
 * split and create make intercommunicators; split_type and create_group
 * take intracommunicators only.
 */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_impl.h"
#include "mpi/mpi_impl.h"
#include "mpi/topo.h"
#include "pt2pt/p2p.h"
#include "util/handle.h"

bool loom_mpi_comm_valid(MPI_Comm comm)
{
    return loom_comm_lookup(comm) != NULL;
}

int loom_mpi_comm_size(MPI_Comm comm)
{
    struct loom_comm *c = loom_comm_lookup(comm);
    return c ? c->sh->size : 0;
}

int loom_mpi_bad_comm(MPI_Comm comm, const char *fn)
{
    if (comm == MPI_COMM_NULL)
        return loom_mpi_err(comm, MPI_ERR_COMM, fn, "the communicator is MPI_COMM_NULL");
    if (LOOM_HANDLE_KIND(comm) == LOOM_KIND_COMM &&
        LOOM_HANDLE_STORAGE(comm) == LOOM_HANDLE_TABLE) {
        struct loom_comm *c = loom_handle_get(LOOM_KIND_COMM, comm);
        if (c)
            return loom_mpi_err(comm, MPI_ERR_COMM, fn,
                                "communicator 0x%x belongs to rank %d, not to this rank",
                                (unsigned)comm, c->owner);
        return loom_mpi_err(comm, MPI_ERR_COMM, fn, "communicator 0x%x was freed (or is stale)",
                            (unsigned)comm);
    }
    if (comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF)
        return loom_mpi_err(comm, MPI_ERR_COMM, fn, "MPI is not initialized on this rank");
    return loom_mpi_err(comm, MPI_ERR_COMM, fn, "0x%x is not a communicator handle",
                        (unsigned)comm);
}

/* Declares c as the caller's communicator behind comm, or returns the error. */
#define COMM_ARG(c, comm, fn)                                                                      \
    struct loom_comm *c;                                                                           \
    do {                                                                                           \
        int rc_ = loom_mpi_check_init(fn);                                                         \
        if (rc_)                                                                                   \
            return rc_;                                                                            \
        c = loom_comm_lookup(comm);                                                                \
        if (!c)                                                                                    \
            return loom_mpi_bad_comm(comm, fn);                                                    \
    } while (0)

#define NULL_ARG(comm, p, fn)                                                                      \
    do {                                                                                           \
        if (!(p))                                                                                  \
            return loom_mpi_err(comm, MPI_ERR_ARG, fn, "%s is NULL", #p);                          \
    } while (0)

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    COMM_ARG(c, comm, "MPI_Comm_rank");
    NULL_ARG(comm, rank, "MPI_Comm_rank");
    *rank = c->rank;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_rank);

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    COMM_ARG(c, comm, "MPI_Comm_size");
    NULL_ARG(comm, size, "MPI_Comm_size");
    *size = c->sh->size;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_size);

/* Hands the new communicator to the user after copying what a duplicate
 * inherits: its topology, attributes (copy callbacks) and info hints. */
static int finish_dup(MPI_Comm comm, struct loom_comm *c, struct loom_comm *newc,
                      const struct loom_info *info, MPI_Comm *newcomm, const char *fn)
{
    if (c->topo && !(newc->topo = loom_topo_dup(c->topo))) {
        (void)loom_comm_free(newc, true);
        return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    int rc = loom_attr_copy_all(c, newc);
    if (rc != MPI_SUCCESS) {
        (void)loom_comm_free(newc, true);
        return loom_mpi_err(comm, rc > 0 && rc <= MPI_T_ERR_MEMORY ? rc : MPI_ERR_OTHER, fn,
                            "an attribute copy callback returned %d", rc);
    }
    if (info && info->n) {
        loom_comm_priv(newc)->info = loom_info_dup(info);
        if (!loom_comm_priv(newc)->info) {
            (void)loom_comm_free(newc, true);
            return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
        }
    }
    *newcomm = newc->handle;
    return MPI_SUCCESS;
}

static int nomem(MPI_Comm comm, const char *fn)
{
    return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
}

/* A duplicate of c, intra- or intercommunicator. */
static int dup_of(struct loom_comm *c, struct loom_comm **newc_p)
{
    if (loom_comm_is_inter(c))
        return loom_comm_inter_split(c, 0, c->rank, newc_p);
    return loom_comm_dup(c, newc_p);
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    COMM_ARG(c, comm, "MPI_Comm_dup");
    NULL_ARG(comm, newcomm, "MPI_Comm_dup");
    struct loom_comm *newc;
    if (dup_of(c, &newc) != LOOM_OK)
        return nomem(comm, "MPI_Comm_dup");
    return finish_dup(comm, c, newc, loom_comm_priv(c)->info, newcomm, "MPI_Comm_dup");
}
LOOM_MPI_ALIAS(Comm_dup);

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    COMM_ARG(c, comm, "MPI_Comm_dup_with_info");
    NULL_ARG(comm, newcomm, "MPI_Comm_dup_with_info");
    struct loom_info *in = NULL;
    if (info != MPI_INFO_NULL && !(in = loom_info_lookup(info)))
        return loom_mpi_err(comm, MPI_ERR_INFO, "MPI_Comm_dup_with_info",
                            "0x%x is not a valid info object", (unsigned)info);
    struct loom_comm *newc;
    if (dup_of(c, &newc) != LOOM_OK)
        return nomem(comm, "MPI_Comm_dup_with_info");
    return finish_dup(comm, c, newc, in, newcomm, "MPI_Comm_dup_with_info");
}
LOOM_MPI_ALIAS(Comm_dup_with_info);

/* Completes an idup request: called by the last member to arrive. */
static void idup_done(void *req)
{
    /* An empty status (MPI_ANY_SOURCE, MPI_ANY_TAG) from the allocation. */
    loom_req_complete_async(req);
}

/*
 * MPI_Comm_idup registers the caller's arrival in the parent's creation
 * sequence (the same one as MPI_Comm_dup, split and create, separate from
 * the collectives' sequence; each is in the same order on every member)
 * and returns at once with a request that completes when every member has
 * arrived. The handle is set here (MPI allows it; MPICH does the same): the
 * new communicator exists from the call on, and its attributes are copied
 * by their callbacks and its info inherited now, but the program must not
 * use it before the request completes. Freeing the request is allowed; the
 * communicator still becomes usable once every member has called. An error
 * after the arrival (an attribute copy callback failing) is returned here
 * and the request is dropped; the other members still complete.
 */
static int idup(const char *fn, MPI_Comm comm, struct loom_comm *c, struct loom_info *in,
                MPI_Comm *newcomm, MPI_Request *request)
{
    if (!newcomm || !request)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "newcomm or request is NULL");
    loom_req *r = loom_req_alloc_generic(c);
    if (!r)
        return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory for requests");
    struct loom_comm *newc;
    int irc = loom_comm_is_inter(c) ? loom_comm_inter_idup(c, idup_done, r, &newc)
                                    : loom_comm_idup(c, idup_done, r, &newc);
    if (irc != LOOM_OK) {
        loom_req_free(r); /* recycled once the last member completes it */
        return nomem(comm, fn);
    }
    int rc = finish_dup(comm, c, newc, in, newcomm, fn);
    if (rc != MPI_SUCCESS) {
        loom_req_free(r);
        return rc;
    }
    *request = r;
    return MPI_SUCCESS;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    COMM_ARG(c, comm, "MPI_Comm_idup");
    return idup("MPI_Comm_idup", comm, c, loom_comm_priv(c)->info, newcomm, request);
}
LOOM_MPI_ALIAS(Comm_idup);

/* MPI_Comm_idup with the new communicator's hints from info instead of the
 * parent's (MPI-4.1 7.4.2). */
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    COMM_ARG(c, comm, "MPI_Comm_idup_with_info");
    struct loom_info *in = NULL;
    if (info != MPI_INFO_NULL && !(in = loom_info_lookup(info)))
        return loom_mpi_err(comm, MPI_ERR_INFO, "MPI_Comm_idup_with_info",
                            "0x%x is not a valid info object", (unsigned)info);
    return idup("MPI_Comm_idup_with_info", comm, c, in, newcomm, request);
}
LOOM_MPI_ALIAS(Comm_idup_with_info);

static int finish_new(MPI_Comm comm, int rc, struct loom_comm *newc, MPI_Comm *newcomm,
                      const char *fn)
{
    if (rc != LOOM_OK)
        return nomem(comm, fn);
    *newcomm = newc ? newc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    COMM_ARG(c, comm, "MPI_Comm_split");
    NULL_ARG(comm, newcomm, "MPI_Comm_split");
    if (color < 0 && color != MPI_UNDEFINED)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_split",
                            "color %d is negative (and not MPI_UNDEFINED)", color);
    struct loom_comm *newc = NULL;
    int rc = loom_comm_is_inter(c) ? loom_comm_inter_split(c, color, key, &newc)
                                   : loom_comm_split(c, color, key, &newc);
    return finish_new(comm, rc, newc, newcomm, "MPI_Comm_split");
}
LOOM_MPI_ALIAS(Comm_split);

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    COMM_ARG(c, comm, "MPI_Comm_split_type");
    LOOM_MPI_INTRA_ONLY(c, comm, "MPI_Comm_split_type");
    NULL_ARG(comm, newcomm, "MPI_Comm_split_type");
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_split_type",
                            "split_type %d is neither MPI_COMM_TYPE_SHARED nor MPI_UNDEFINED",
                            split_type);
    if (info != MPI_INFO_NULL && !loom_info_lookup(info))
        return loom_mpi_err(comm, MPI_ERR_INFO, "MPI_Comm_split_type",
                            "0x%x is not a valid info object", (unsigned)info);
    /* The whole job is one shared-memory node: one color for everyone. */
    struct loom_comm *newc = NULL;
    int rc = loom_comm_split(c, split_type == MPI_UNDEFINED ? MPI_UNDEFINED : 0, key, &newc);
    return finish_new(comm, rc, newc, newcomm, "MPI_Comm_split_type");
}
LOOM_MPI_ALIAS(Comm_split_type);

/* Checks that every member of g is a member of c; raises MPI_ERR_GROUP. */
static int check_subgroup(MPI_Comm comm, const struct loom_comm *c, const struct loom_group *g,
                          const char *fn)
{
    unsigned char *in = calloc((size_t)loom_job.nranks, 1);
    if (!in)
        return nomem(comm, fn);
    for (int i = 0; i < c->sh->size; i++)
        in[c->sh->world_of[i]] = 1;
    int bad = -1;
    for (int i = 0; i < g->size && bad < 0; i++)
        if (!in[g->world[i]])
            bad = i;
    free(in);
    if (bad >= 0)
        return loom_mpi_err(comm, MPI_ERR_GROUP, fn,
                            "rank %d of the group (world rank %d) is not in the communicator", bad,
                            g->world[bad]);
    return MPI_SUCCESS;
}

static struct loom_group *group_arg(MPI_Comm comm, MPI_Group group, const char *fn, int *rc_p)
{
    struct loom_group *g = loom_group_lookup(group);
    if (!g)
        *rc_p = loom_mpi_err(comm, MPI_ERR_GROUP, fn,
                             group == MPI_GROUP_NULL ? "the group is MPI_GROUP_NULL"
                                                     : "invalid group handle");
    return g;
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    COMM_ARG(c, comm, "MPI_Comm_create");
    NULL_ARG(comm, newcomm, "MPI_Comm_create");
    int rc;
    struct loom_group *g = group_arg(comm, group, "MPI_Comm_create", &rc);
    if (!g)
        return rc;
    if ((rc = check_subgroup(comm, c, g, "MPI_Comm_create")) != MPI_SUCCESS)
        return rc;
    struct loom_comm *newc = NULL;
    if (loom_comm_is_inter(c)) {
        /* g: part of the local group; the new intercommunicator joins it
         * with the part the remote group's members gave. */
        int in_g = loom_group_rank_of(g, c->owner);
        rc = loom_comm_inter_split(c, in_g == MPI_UNDEFINED ? MPI_UNDEFINED : 0, in_g, &newc);
    } else {
        rc = loom_comm_create(c, g, &newc);
    }
    return finish_new(comm, rc, newc, newcomm, "MPI_Comm_create");
}
LOOM_MPI_ALIAS(Comm_create);

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    COMM_ARG(c, comm, "MPI_Comm_create_group");
    LOOM_MPI_INTRA_ONLY(c, comm, "MPI_Comm_create_group");
    NULL_ARG(comm, newcomm, "MPI_Comm_create_group");
    int rc;
    struct loom_group *g = group_arg(comm, group, "MPI_Comm_create_group", &rc);
    if (!g)
        return rc;
    if (tag < 0)
        return loom_mpi_err(comm, MPI_ERR_TAG, "MPI_Comm_create_group", "tag %d is negative", tag);
    if ((rc = check_subgroup(comm, c, g, "MPI_Comm_create_group")) != MPI_SUCCESS)
        return rc;
    struct loom_comm *newc = NULL;
    rc = loom_comm_create_group(c, g, tag, &newc);
    return finish_new(comm, rc, newc, newcomm, "MPI_Comm_create_group");
}
LOOM_MPI_ALIAS(Comm_create_group);

int PMPI_Comm_free(MPI_Comm *comm)
{
    int rc = loom_mpi_check_init("MPI_Comm_free");
    if (rc)
        return rc;
    if (!comm)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_free", "comm is NULL");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return loom_mpi_err(*comm, MPI_ERR_COMM, "MPI_Comm_free", "%s cannot be freed",
                            *comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
    struct loom_comm *c = loom_comm_lookup(*comm);
    if (!c)
        return loom_mpi_bad_comm(*comm, "MPI_Comm_free");
    rc = loom_comm_free(c, true);
    if (rc != MPI_SUCCESS)
        return loom_mpi_err(*comm, rc > 0 && rc <= MPI_T_ERR_MEMORY ? rc : MPI_ERR_OTHER,
                            "MPI_Comm_free", "an attribute delete callback returned %d", rc);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_free);

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    COMM_ARG(c1, comm1, "MPI_Comm_compare");
    COMM_ARG(c2, comm2, "MPI_Comm_compare");
    NULL_ARG(comm1, result, "MPI_Comm_compare");
    if (c1 == c2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    int r = MPI_UNEQUAL;
    if (loom_comm_is_inter(c1) == loom_comm_is_inter(c2)) {
        r = loom_members_compare(c1->sh->size, c1->sh->world_of, c2->sh->size, c2->sh->world_of);
        /* Intercommunicators: both the local and the remote groups. */
        if (r != MPI_UNEQUAL && loom_comm_is_inter(c1)) {
            int rr = loom_members_compare(loom_comm_peer_size(c1), c1->sh->peer_of,
                                          loom_comm_peer_size(c2), c2->sh->peer_of);
            r = rr == MPI_UNEQUAL                   ? MPI_UNEQUAL
                : r == MPI_IDENT && rr == MPI_IDENT ? r
                                                    : MPI_SIMILAR;
        }
    }
    *result = r == MPI_IDENT ? MPI_CONGRUENT : r;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_compare);

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    COMM_ARG(c, comm, "MPI_Comm_test_inter");
    NULL_ARG(comm, flag, "MPI_Comm_test_inter");
    *flag = loom_comm_is_inter(c);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_test_inter);

int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    COMM_ARG(c, comm, "MPI_Comm_set_name");
    NULL_ARG(comm, comm_name, "MPI_Comm_set_name");
    /* Longer names are truncated (MPI-3.1 6.8). */
    char *name = loom_comm_priv(c)->name;
    strncpy(name, comm_name, MPI_MAX_OBJECT_NAME - 1);
    name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_set_name);

int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    COMM_ARG(c, comm, "MPI_Comm_get_name");
    NULL_ARG(comm, comm_name, "MPI_Comm_get_name");
    NULL_ARG(comm, resultlen, "MPI_Comm_get_name");
    strcpy(comm_name, loom_comm_priv(c)->name);
    *resultlen = (int)strlen(comm_name);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_get_name);

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    COMM_ARG(c, comm, "MPI_Comm_group");
    NULL_ARG(comm, group, "MPI_Comm_group");
    struct loom_group *g = loom_group_new(c->sh->size);
    if (!g)
        return nomem(comm, "MPI_Comm_group");
    memcpy(g->world, c->sh->world_of, (size_t)c->sh->size * sizeof *g->world);
    *group = g->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_group);

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    COMM_ARG(c, comm, "MPI_Comm_set_info");
    struct loom_info *in = loom_info_lookup(info);
    if (!in)
        return loom_mpi_err(comm, MPI_ERR_INFO, "MPI_Comm_set_info",
                            info == MPI_INFO_NULL ? "the info is MPI_INFO_NULL"
                                                  : "invalid info handle");
    /* No hint changes Loom's behaviour; they are kept for MPI_Comm_get_info. */
    struct loom_info *copy = loom_info_dup(in);
    if (!copy)
        return nomem(comm, "MPI_Comm_set_info");
    struct loom_comm_priv *p = loom_comm_priv(c);
    if (p->info)
        loom_info_free(p->info);
    p->info = copy;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_set_info);

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    COMM_ARG(c, comm, "MPI_Comm_get_info");
    NULL_ARG(comm, info_used, "MPI_Comm_get_info");
    struct loom_comm_priv *p = loom_comm_priv(c);
    struct loom_info *copy = p->info ? loom_info_dup(p->info) : loom_info_new();
    if (!copy)
        return nomem(comm, "MPI_Comm_get_info");
    *info_used = copy->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_get_info);
