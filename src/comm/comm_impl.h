/*
 * The comm layer's interface to the MPI entry points (src/mpi/comm.c,
 * group.c, attr.c, info.c, errors.c): objects behind communicator, group,
 * keyval, info and error handler handles, and the collective agreement that
 * creates communicators. Arguments are checked by the caller (the MPI layer
 * raises the error classes); functions here return LOOM_OK or a loom_status.
 *
 * Other layers use comm.h only.
 */
#ifndef LOOM_COMM_IMPL_H
#define LOOM_COMM_IMPL_H

#include "comm/comm.h"

struct loom_info;
struct loom_attr;

/* ---- per-rank state (comm.c) ---- */

struct loom_user_code {
    int errclass; /* the class of this code (itself for a class); -1: removed */
    char *string; /* MPI_Add_error_string, or NULL */
};

struct loom_comm_rank {
    struct loom_comm *world, *self;
    struct loom_comm *all; /* every communicator of the rank (list by priv) */
    /* predefined attribute values (MPI_Comm_get_attr returns pointers) */
    int tag_ub, host, io, wtime_is_global, universe_size, appnum, lastusedcode;
    int ncodes, capcodes; /* user error classes and codes: LOOM_FIRST_USER_CODE + i */
    struct loom_user_code *codes;
};

#define LOOM_FIRST_USER_CODE (MPI_ERR_LASTCODE + 1)

/* The calling rank's comm state, or NULL outside MPI_Init..MPI_Finalize. */
struct loom_comm_rank *loom_comm_rank_self(void);

/* The per-rank, comm-private part of a communicator (loom_comm.priv). */
struct loom_comm_priv {
    struct loom_comm *prev, *next; /* in loom_comm_rank.all */
    unsigned seq;                  /* collective creation calls made on it */
    char name[MPI_MAX_OBJECT_NAME];
    struct loom_attr *attrs; /* newest first */
    struct loom_info *info;  /* hints set on it, or NULL */
};

static inline struct loom_comm_priv *loom_comm_priv(const struct loom_comm *c)
{
    return (struct loom_comm_priv *)c->priv;
}

/* A new context id pair (job-wide, never reused). */
uint32_t loom_comm_new_context_id(void);

/* A shared part for size members with a new context id; world_of is
 * uninitialized; refs = size. NULL when out of memory. */
struct loom_comm_shared *loom_comm_shared_new(int size);
/* Drops one member's reference; the last frees the shared part. */
void loom_comm_shared_release(struct loom_comm_shared *sh);

/* The calling rank's communicator object on sh as rank `rank`, with error
 * handler eh (a reference is taken) and a new table handle. Takes over the
 * caller's reference to sh. */
int loom_comm_new(struct loom_comm_shared *sh, int rank, MPI_Errhandler eh,
                  struct loom_comm **c_p) LOOM_MUST_CHECK;
/* Frees the calling rank's communicator c (not WORLD/SELF unless finalizing):
 * runs the attribute delete callbacks (when run_callbacks), drops its
 * references. Returns the first callback error (MPI code) or MPI_SUCCESS;
 * when a callback fails the communicator is not freed. */
int loom_comm_free(struct loom_comm *c, bool run_callbacks);

/* ---- creation by collective agreement (create.c) ---- */

/* Every function returns LOOM_OK with *newc_p set (NULL where the caller gets
 * MPI_COMM_NULL), or LOOM_ERR_NOMEM. The new communicator inherits the
 * parent's error handler; attributes are not copied here. */
int loom_comm_dup(struct loom_comm *parent, struct loom_comm **newc_p) LOOM_MUST_CHECK;
int loom_comm_split(struct loom_comm *parent, int color, int key,
                    struct loom_comm **newc_p) LOOM_MUST_CHECK;
/* Collective over parent; g must be a subgroup of parent's members. */
int loom_comm_create(struct loom_comm *parent, const struct loom_group *g,
                     struct loom_comm **newc_p) LOOM_MUST_CHECK;
/* Collective over g's members only (g a subgroup of parent), keyed by tag. */
int loom_comm_create_group(struct loom_comm *parent, const struct loom_group *g, int tag,
                           struct loom_comm **newc_p) LOOM_MUST_CHECK;
/* Collective over g's members (the caller among them: else
 * LOOM_ERR_INVALID), with no parent: calls meet by tag_hash and member list. */
int loom_comm_create_from_group(const struct loom_group *g, uint32_t tag_hash, MPI_Errhandler eh,
                                struct loom_comm **newc_p) LOOM_MUST_CHECK;

/* Called once per member of a nonblocking agreement, with the member's
 * done_arg, when the last member has arrived; runs on the last member's ULT
 * (any worker), so it must only publish a completion. */
typedef void (*loom_rdv_done_fn)(void *done_arg);

/* Nonblocking duplicate (MPI_Comm_idup): takes the next place in parent's
 * creation sequence, as loom_comm_dup, but returns at once with the caller's
 * object on the new communicator. done(done_arg) is called once when every
 * member has called this function (before this returns on the last member);
 * until then the new communicator must not be used. After an error return
 * done is called too (at once, or later when the arrival was recorded). */
int loom_comm_idup(struct loom_comm *parent, loom_rdv_done_fn done, void *done_arg,
                   struct loom_comm **newc_p) LOOM_MUST_CHECK;

/* ---- intercommunicators (inter.c) ---- */

struct loom_rdv_key;

/* The calling rank's object on a bridge (an intercommunicator's internal
 * communicator over both groups): no handle, not in the rank's list, freed
 * with the intercommunicator; takes over the caller's reference to sh. */
int loom_comm_new_bridge(struct loom_comm_shared *sh, int rank,
                         struct loom_comm **c_p) LOOM_MUST_CHECK;
/* A new intercommunicator between world[0..na) (side A) and world[na..n)
 * (side B), each in its group's order, agreed by the n members meeting
 * under key (kind INTER or INTER_GROUPS, members = world); the caller is
 * world[me]. The new communicator gets error handler eh. */
int loom_comm_inter_create(const struct loom_rdv_key *key, int me, int na, MPI_Errhandler eh,
                           struct loom_comm **newc_p) LOOM_MUST_CHECK;
/* Collective over both groups of intercommunicator c: MPI_Comm_split
 * (MPI_Comm_dup: color 0, key the rank; MPI_Comm_create: color 0 for the
 * group's members, key their rank in it, else MPI_UNDEFINED). A color gives
 * an intercommunicator between its members of each side, ordered by (key,
 * rank); MPI_COMM_NULL (NULL) where one side has none. */
int loom_comm_inter_split(struct loom_comm *c, int color, int key,
                          struct loom_comm **newc_p) LOOM_MUST_CHECK;
/* MPI_Intercomm_merge: an intracommunicator over both groups, the group
 * whose members gave high = false first (side A first when both agree). */
int loom_comm_inter_merge(struct loom_comm *c, bool high,
                          struct loom_comm **newc_p) LOOM_MUST_CHECK;
/* MPI_Comm_idup of intercommunicator c: as loom_comm_idup. */
int loom_comm_inter_idup(struct loom_comm *c, loom_rdv_done_fn done, void *done_arg,
                         struct loom_comm **newc_p) LOOM_MUST_CHECK;
/* The three shared parts of an intercommunicator between world[0..na) and
 * world[na..n): side A's (*a_p), side B's (*b_p) with one context id, and
 * their bridge (*bridge_p), each with one reference per member; LOOM_OK or
 * LOOM_ERR_NOMEM (nothing made). */
int loom_comm_inter_shared(int n, int na, const int *world, struct loom_comm_shared **a_p,
                           struct loom_comm_shared **b_p,
                           struct loom_comm_shared **bridge_p) LOOM_MUST_CHECK;

/* ---- rendezvous: agreement among the members of a call (rendezvous.c) ---- */

struct loom_rdv_in {
    int color, key, rank, world;
    int side; /* intercommunicator creation: 0 (side A) or 1 (side B) */
};
struct loom_rdv_out {
    struct loom_comm_shared *sh; /* NULL: MPI_COMM_NULL */
    int rank;
    /* An intercommunicator: the bridge and the member's rank in it. */
    struct loom_comm_shared *bridge;
    int bridge_rank;
};
/* Runs on the last member to arrive with every member's contribution; fills
 * out[0..n-1]; returns LOOM_OK or an error every member gets. */
typedef int (*loom_rdv_compute_fn)(int n, const struct loom_rdv_in *in, struct loom_rdv_out *out,
                                   const void *arg);

struct loom_rdv_key {
    uint32_t context_id; /* the parent's */
    int kind;            /* LOOM_RDV_WHOLE, LOOM_RDV_CREATE or LOOM_RDV_GROUP */
    int seq_or_tag;      /* WHOLE, CREATE: the parent's creation sequence; GROUP: tag */
    int n;               /* members taking part */
    const int *members;  /* CREATE, GROUP: their world ranks, in group order */
};
/* CREATE is Comm_create: ranks may pass disjoint groups (MPI-2.2), whose
 * calls share the parent's sequence number and may have the same size, so
 * the member list tells them apart. */
/* INTER: MPI_Intercomm_create (context id: peer_comm's, tag: the call's;
 * members: both groups, side A first); INTER_GROUPS:
 * MPI_Intercomm_create_from_groups (context id and tag: a hash of the string
 * tag). */
enum {
    LOOM_RDV_WHOLE = 1,
    LOOM_RDV_GROUP = 2,
    LOOM_RDV_CREATE = 3,
    LOOM_RDV_INTER = 4,
    LOOM_RDV_INTER_GROUPS = 5
};
/* The context of a meeting with no parent communicator
 * (MPI_Comm_create_from_group): no communicator gets it (ids count up). */
#define LOOM_RDV_NO_PARENT 0xfffffff0u

/* Meets the other n - 1 members of the call identified by key; `me` is the
 * caller's index in [0, n). Parks until all arrived. */
int loom_rdv_run(const struct loom_rdv_key *key, int me, const struct loom_rdv_in *in,
                 loom_rdv_compute_fn compute, const void *arg,
                 struct loom_rdv_out *out_p) LOOM_MUST_CHECK;
/* Registers the caller's arrival at the duplication identified by key
 * without waiting: *sh_p is the new shared part over world[0..n-1] (made by
 * the first to arrive; the caller owns one of its n references). The last
 * to arrive calls every member's done(done_arg) (NULL done: none). Only
 * LOOM_ERR_NOMEM fails, and then the other members never complete. */
int loom_rdv_arrive(const struct loom_rdv_key *key, int me, const int *world, loom_rdv_done_fn done,
                    void *done_arg, struct loom_comm_shared **sh_p) LOOM_MUST_CHECK;
/* The same for an intercommunicator's duplicate: key's n members are the
 * bridge's (world[0..na) side A, the rest side B); *out_p gets the caller's
 * side, rank, bridge and bridge rank (me). */
int loom_rdv_arrive_inter(const struct loom_rdv_key *key, int me, const int *world, int na,
                          loom_rdv_done_fn done, void *done_arg,
                          struct loom_rdv_out *out_p) LOOM_MUST_CHECK;

/* ---- groups (group.c) ---- */

/* The group behind h for the calling rank (MPI_GROUP_EMPTY included), or
 * NULL. */
struct loom_group *loom_group_lookup(MPI_Group h);
/* A new group of size members (world[] uninitialized) with a handle owned
 * by the caller; size 0 gives MPI_GROUP_EMPTY's object. */
struct loom_group *loom_group_new(int size);
void loom_group_release(struct loom_group *g);
/* Rank of world rank w in g, or MPI_UNDEFINED. */
int loom_group_rank_of(const struct loom_group *g, int w);
/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL for two member lists. */
int loom_members_compare(int n1, const int *w1, int n2, const int *w2);

/* ---- attributes and keyvals (attr.c) ---- */

struct loom_keyval {
    int handle;
    int owner;
    bool win;  /* made by MPI_Win_create_keyval (callbacks take an MPI_Win) */
    bool type; /* made by MPI_Type_create_keyval (callbacks take an MPI_Datatype) */
    int refs;  /* the handle (until freed) + one per attribute */
    MPI_Comm_copy_attr_function *copy_fn;
    MPI_Comm_delete_attr_function *delete_fn;
    void *extra_state;
};

struct loom_keyval *loom_keyval_lookup(int keyval);
int loom_keyval_create(MPI_Comm_copy_attr_function *copy_fn,
                       MPI_Comm_delete_attr_function *delete_fn, void *extra_state,
                       int *keyval_p) LOOM_MUST_CHECK;
void loom_keyval_free(struct loom_keyval *kv);
/* References held by attributes (windows keep their own lists). */
void loom_keyval_ref(struct loom_keyval *kv);
void loom_keyval_unref(struct loom_keyval *kv);
/* True when keyval is one of the predefined attribute keys. */
bool loom_keyval_is_predefined(int keyval);

/* Attribute operations; return an MPI code (a callback's or MPI_ERR_NO_MEM). */
int loom_attr_set(struct loom_comm *c, struct loom_keyval *kv, void *val);
/* *found = false when not set. */
int loom_attr_get(struct loom_comm *c, int keyval, void **val_p, bool *found);
int loom_attr_delete(struct loom_comm *c, struct loom_keyval *kv, bool *found);
/* Copies oldc's attributes to newc through the copy callbacks. */
int loom_attr_copy_all(struct loom_comm *oldc, struct loom_comm *newc);
/* Deletes every attribute of c; returns the first callback error, leaving
 * the attributes after it in place, unless force. */
int loom_attr_delete_all(struct loom_comm *c, bool run_callbacks);

/* ---- info objects (info.c) ---- */

struct loom_info {
    int handle;
    int owner; /* -1: MPI_INFO_ENV */
    int n, cap;
    char **keys, **vals;
};

/* The info behind h for the caller (MPI_INFO_ENV included), or NULL. */
struct loom_info *loom_info_lookup(MPI_Info h);
/* A new empty info with a handle owned by the caller; NULL: out of memory. */
struct loom_info *loom_info_new(void);
/* A copy of src with a new handle; NULL: out of memory. */
struct loom_info *loom_info_dup(const struct loom_info *src);
void loom_info_free(struct loom_info *info);
/* Index of key in info, or -1. */
int loom_info_find(const struct loom_info *info, const char *key);
int loom_info_set(struct loom_info *info, const char *key, const char *val) LOOM_MUST_CHECK;
void loom_info_delete_at(struct loom_info *info, int i);

/* ---- error handlers and user error codes (errhandler.c) ---- */

struct loom_errhandler {
    int handle;
    _Atomic int refs;                 /* the user's handle + every communicator using it */
    MPI_Comm_errhandler_function *fn; /* an MPI_Win_errhandler_function when win */
    bool win;
};

/* True for the three predefined handlers. */
bool loom_errhandler_is_predefined(MPI_Errhandler eh);
/* The user handler behind eh, or NULL (predefined, null or invalid). */
struct loom_errhandler *loom_errhandler_lookup(MPI_Errhandler eh);
int loom_errhandler_create(MPI_Comm_errhandler_function *fn, MPI_Errhandler *eh_p) LOOM_MUST_CHECK;
/* Takes and drops references (no-ops for predefined handlers). */
void loom_errhandler_ref(MPI_Errhandler eh);
void loom_errhandler_unref(MPI_Errhandler eh);

/* The calling rank's user code entry for code, or NULL. */
struct loom_user_code *loom_user_code(int code);
/* Adds a class (errclass < 0) or a code of errclass; returns the new code or
 * a negative loom_status. */
int loom_user_code_add(int errclass);

#endif
