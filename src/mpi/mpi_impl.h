/*
 * Internal interface of the MPI layer: per-rank MPI state, error raising,
 * and the macro that makes MPI_x a weak alias of PMPI_x (the profiling
 * interface). Entry points are written as PMPI_x (renamed LPMPI_x by mpi.h).
 *
 * Depends on: comm, runtime, util.
 */
#ifndef LOOM_MPI_IMPL_H
#define LOOM_MPI_IMPL_H

#include <mpi.h>
#include <stdbool.h>

#include "comm/comm.h"
#include "runtime/job.h"
#include "runtime/ult.h"
#include "util/common.h"

/* MPI_x is a weak alias of PMPI_x, so a profiling library can define MPI_x.
 * The standard names are symbols too (MPI_x weak, PMPI_x), for code that
 * calls them without mpi.h: configure probes (AC_CHECK_FUNC, CMake's
 * check_function_exists) link `char MPI_x();` and must find what Loom has. */
#define LOOM_MPI_ALIAS(name)                                                                       \
    extern __typeof__(LPMPI_##name) LMPI_##name __attribute__((weak, alias("LPMPI_" #name)));      \
    extern __typeof__(LPMPI_##name) loom_plain_MPI_##name __asm__("MPI_" #name)                    \
        __attribute__((weak, alias("LPMPI_" #name)));                                              \
    extern __typeof__(LPMPI_##name) loom_plain_PMPI_##name __asm__("PMPI_" #name)                  \
        __attribute__((alias("LPMPI_" #name)))

struct loom_mpi_pair;
struct loom_mpi_type_attr;

/* The world model (MPI_Init ... MPI_Finalize) of a rank; its MPI state
 * (loom_rank.mpi_state) is up while the world model or a session is. */
enum loom_mpi_world { LOOM_WORLD_NONE, LOOM_WORLD_UP, LOOM_WORLD_DONE };

struct loom_mpi_rank {
    int thread_level;
    enum loom_mpi_world world;
    int sessions;                          /* MPI_Session_init calls not yet finalized */
    struct loom_mpi_type_attr *type_attrs; /* attributes this rank set on datatypes (type_attr.c) */
    struct loom_mpi_pair *freed_pairs; /* MPI_Isendrecv_replace requests freed before their send was
                          done (pt2pt.c) */
};

/* The calling rank's MPI state; NULL before MPI_Init. */
static inline struct loom_mpi_rank *loom_mpi_self(void)
{
    struct loom_rank *r = loom_rank_self();
    return r ? (struct loom_mpi_rank *)r->mpi : NULL;
}

/* Raises errclass on comm's error handler with a message saying what was
 * wrong; returns the code to hand back when the handler returns. */
int loom_mpi_err(MPI_Comm comm, int errclass, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* loom_mpi_err for a window: its error handler, or MPI_COMM_WORLD's when
 * win is not a window of the caller. */
int loom_mpi_win_err(MPI_Win win, int errclass, const char *fn, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* An attribute callback's return code as the error class to raise: its
 * own when it is one, else MPI_ERR_OTHER. */
static inline int loom_mpi_callback_class(int rc)
{
    return rc > 0 && rc <= MPI_ERR_SESSION ? rc : MPI_ERR_OTHER;
}

/* The committed datatype behind `type`, or MPI_ERR_TYPE raised on comm by
 * fn with a message naming the argument (`what`) and why it is unusable. */
struct loom_type;
int loom_mpi_type_arg(MPI_Comm comm, const char *fn, MPI_Datatype type, const char *what,
                      struct loom_type **t_p);

/* Makes the caller a rank: a program run directly becomes a singleton job
 * (what MPI_Init does first; the info calls need it before MPI_Init). */
int loom_mpi_rank_enter(const char *fn);

/* Brings the caller's MPI state up for MPI_Init or MPI_Session_init (fn) if
 * it is not up: a singleton job for a program run directly, the rank's
 * communicators and message state, thread level `required` (at most
 * MPI_THREAD_FUNNELED). Raises the error and returns it when it fails. */
int loom_mpi_instance_up(const char *fn, int required);

/* Raises errclass through error handler eh for the object `handle` (a
 * session's: MPI_Session_call_errhandler and the session calls). */
int loom_mpi_handler_err(MPI_Errhandler eh, int handle, int errclass, const char *fn,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Checks that MPI is initialized and not finalized for the caller; raises
 * MPI_ERR_OTHER otherwise. Returns MPI_SUCCESS or the error code. */
int loom_mpi_check_init(const char *fn);

const char *loom_mpi_class_name(int errclass);

/* True for a communicator handle this rank may use. */
bool loom_mpi_comm_valid(MPI_Comm comm);
int loom_mpi_comm_size(MPI_Comm comm);
/* Raises MPI_ERR_COMM for a handle that is not a usable communicator. */
int loom_mpi_bad_comm(MPI_Comm comm, const char *fn);

/* The communicator comm of the calling rank, between MPI_Init and
 * MPI_Finalize; else raises the error that says why (not initialized,
 * finalized, or not a usable communicator). Inline: every point-to-point
 * and collective call starts here. */
static inline int loom_mpi_comm_enter(const char *fn, MPI_Comm comm, struct loom_comm **c_p)
{
    /* The lookup finds the caller (one look at the ULT's thread-local
     * state); a communicator exists only between MPI_Init and MPI_Finalize,
     * and the rank's comm_world is set only then. */
    if (comm == MPI_COMM_WORLD) {
        struct loom_rank *r = loom_rank_self();
        if (LOOM_LIKELY(r && r->comm_world)) {
            *c_p = r->comm_world;
            return MPI_SUCCESS;
        }
    }
    struct loom_comm *c = loom_comm_lookup_slow(comm);
    if (LOOM_UNLIKELY(!c || loom_job.ranks[c->owner].mpi_state != LOOM_MPI_INITIALIZED)) {
        int rc = loom_mpi_check_init(fn);
        return rc ? rc : loom_mpi_bad_comm(comm, fn);
    }
    *c_p = c;
    return MPI_SUCCESS;
}

/* Raises MPI_ERR_COMM on comm for calling fn, which takes an
 * intracommunicator, with an intercommunicator (inter.c). */
int loom_mpi_intra_only(MPI_Comm comm, const char *fn);
/* The same check in one line: returns the error when c is an intercommunicator. */
#define LOOM_MPI_INTRA_ONLY(c, comm, fn)                                                           \
    do {                                                                                           \
        if (LOOM_UNLIKELY(loom_comm_is_inter(c)))                                                  \
            return loom_mpi_intra_only(comm, fn);                                                  \
    } while (0)

/* A persistent collective request (MPI_<Coll>_init; coll.c): MPI_Start runs
 * its saved call (raises the error on its communicator if it cannot start);
 * MPI_Request_free of the inactive request frees the call. */
int loom_mpi_coll_start_persistent(MPI_Request r, const char *fn);
void loom_mpi_coll_free_persistent(MPI_Request r);

/* A persistent neighbourhood collective (MPI_Neighbor_<coll>_init;
 * neighbor.c): MPI_Start posts its messages (raises the error on its
 * communicator if it cannot); MPI_Request_free of the inactive request
 * frees the saved call. */
int loom_mpi_nbr_start(MPI_Request r, const char *fn);
void loom_mpi_nbr_free(MPI_Request r);

/* Datatype attributes (type_attr.c): MPI_Type_dup copies old's to new
 * through the copy callbacks, MPI_Type_free deletes t's through the delete
 * callbacks; MPI_SUCCESS or the first callback's error code (the rest are
 * left undone). */
int loom_mpi_type_attrs_copy(MPI_Datatype old, MPI_Datatype new_type);
int loom_mpi_type_attrs_delete(MPI_Datatype t);

/* The world barrier's job-wide state (barrier.c): MPI_Finalize's. */
int loom_mpi_barrier_init(int nranks) LOOM_MUST_CHECK;
void loom_mpi_barrier_world(int rank);

#endif
