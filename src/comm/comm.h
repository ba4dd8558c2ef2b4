/*
 * Communicators and groups as the other layers see them.
 *
 * A communicator has a part shared by its members (struct loom_comm_shared:
 * context id, members, collective state) and a part per member rank
 * (struct loom_comm: the member's rank, error handler, attributes, name).
 * MPI_COMM_WORLD and MPI_COMM_SELF are predefined handles that resolve to the
 * calling rank's own objects; every other communicator handle is a job-wide
 * table entry owned by one rank, and using another rank's handle is an error
 * (MPI_ERR_COMM), as it would be in another process.
 *
 * Context ids: each communicator gets two consecutive ids, context_id for
 * point-to-point and context_id + 1 for collective traffic, so the two never
 * match each other.
 *
 * Depends on: util, runtime.
 */
#ifndef LOOM_COMM_H
#define LOOM_COMM_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/job.h"
#include "util/common.h"

struct loom_group {
    _Atomic int refs;
    int handle;
    int owner; /* world rank that may use the handle (-1: any) */
    int size;
    int *world; /* [size] world rank of each member, in group order */
};

struct loom_topo;

struct loom_comm_shared {
    _Atomic int refs;    /* members that still hold the communicator */
    uint32_t context_id; /* point-to-point; context_id + 1: collectives */
    int size;
    int *world_of; /* [size] local rank -> world rank */
    void *coll;    /* the collective layer's state, created lazily */
    /* The ranks a send or receive names: world_of (size) for an
     * intracommunicator, the remote group for an intercommunicator. */
    int peer_size;
    int *peer_of;
    /* An intercommunicator's side: the bridge, an internal communicator over
     * both groups (side A's members, then side B's) that carries its
     * collectives and creation calls; NULL for an intracommunicator. Not a
     * reference: each member's bridge object (loom_comm.bridge) holds one. */
    struct loom_comm_shared *bridge;
    int bridge_base; /* side A: 0; side B: A's size (its members' first bridge rank) */
    /* A bridge: members [0, inter_a) are side A, the rest side B; else 0. */
    int inter_a;
};

struct loom_comm {
    struct loom_comm_shared *sh;
    int rank;   /* the owner's rank in this communicator */
    int owner;  /* the owner's world rank */
    int handle; /* MPI_Comm of this object */
    MPI_Errhandler errhandler;
    void *priv; /* attributes, name, info, creation sequence: comm's own */
    /* The member's process topology (src/mpi/topo.c), one malloc'd block
     * freed with the communicator, or NULL. */
    struct loom_topo *topo;
    /* An intercommunicator: the owner's object on the bridge (no handle,
     * not in the rank's list), freed with this one; NULL otherwise. */
    struct loom_comm *bridge;
};

/* The calling rank's communicator behind h, or NULL when h is not a valid
 * communicator of the caller (null, freed, stale, another rank's). */
struct loom_comm *loom_comm_lookup_slow(MPI_Comm h);
static inline struct loom_comm *loom_comm_lookup(MPI_Comm h)
{
    if (h == MPI_COMM_WORLD) {
        struct loom_rank *r = loom_rank_self();
        if (LOOM_LIKELY(r && r->comm_world))
            return r->comm_world;
    }
    return loom_comm_lookup_slow(h);
}

/* World rank of rank `rank` of comm. */
static inline int loom_comm_world_rank(const struct loom_comm *c, int rank)
{
    return c->sh->world_of[rank];
}

/* True for an intercommunicator. */
static inline bool loom_comm_is_inter(const struct loom_comm *c)
{
    return c->bridge != NULL;
}

/* World rank of rank `rank` as a point-to-point peer: of the remote group
 * on an intercommunicator. */
static inline int loom_comm_peer_world(const struct loom_comm *c, int rank)
{
    return c->sh->peer_of[rank];
}

/* Names c for messages: its name (MPI_COMM_WORLD, or one MPI_Comm_set_name
 * gave) and context id, as `"name" (context N)`. Any thread may call it. */
void loom_comm_describe(const struct loom_comm *c, char *buf, size_t n);

/* Number of ranks a send or receive may name (the remote group's size on an
 * intercommunicator). */
static inline int loom_comm_peer_size(const struct loom_comm *c)
{
    return c->sh->peer_size;
}

/* Sets up MPI_COMM_WORLD and MPI_COMM_SELF for the calling rank (MPI_Init)
 * and releases them (MPI_Finalize). */
int loom_comm_rank_init(void) LOOM_MUST_CHECK;
void loom_comm_rank_fini(void);
/* MPI_Finalize's first step (MPI-2.2 and later): deletes the calling rank's
 * attributes on MPI_COMM_SELF, running their delete callbacks in the reverse
 * order of setting, while MPI is still usable. Returns the first callback's
 * error, if any (its attribute stays). */
int loom_comm_finalize_self_attrs(void) LOOM_MUST_CHECK;

/* Called on a shared part just before it is freed (its last member freed the
 * communicator); the collective layer sets it to release sh->coll. */
extern void (*loom_comm_shared_fini_hook)(struct loom_comm_shared *sh);

/* The error handler of the communicator behind h for raising an error on
 * it: MPI_COMM_WORLD's when h is not a valid communicator of the caller,
 * MPI_ERRORS_ARE_FATAL outside MPI_Init..MPI_Finalize. */
MPI_Errhandler loom_comm_errhandler_for(MPI_Comm h);

#endif
