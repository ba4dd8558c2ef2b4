/*
 * Collectives among the ranks of a communicator, working directly on the
 * ranks' buffers: a rank publishes its arguments (buffer addresses, counts,
 * types) in the communicator's shared collective state, and peers read from
 * or write into those buffers with the datatype engine. No point-to-point
 * messages, no intermediate shared segment (except small copy-in cells).
 *
 * Every algorithm is one file (src/coll/<collective>_<algorithm>.c) with its
 * cost in its header comment, listed once in algorithms.def; select.c picks
 * one per call from a cost model (overridable by LOOM_COLL_<COLLECTIVE>=name,
 * and LOOM_COLL_VERBOSE=1 prints the candidates and the choice).
 *
 * The MPI layer checks the arguments (src/mpi/coll.c) and calls
 * loom_coll_run(); errors found only while running (truncation, mismatched
 * calls) come back as MPI error classes.
 *
 * Depends on: util, runtime, datatype, comm.
 */
#ifndef LOOM_COLL_H
#define LOOM_COLL_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comm/comm.h"
#include "datatype/datatype.h"

struct loom_op;

#define LOOM_COLL_KINDS(X)                                                                         \
    X(BARRIER, Barrier)                                                                            \
    X(BCAST, Bcast)                                                                                \
    X(GATHER, Gather)                                                                              \
    X(GATHERV, Gatherv)                                                                            \
    X(SCATTER, Scatter)                                                                            \
    X(SCATTERV, Scatterv)                                                                          \
    X(ALLGATHER, Allgather)                                                                        \
    X(ALLGATHERV, Allgatherv)                                                                      \
    X(ALLTOALL, Alltoall)                                                                          \
    X(ALLTOALLV, Alltoallv)                                                                        \
    X(ALLTOALLW, Alltoallw)                                                                        \
    X(REDUCE, Reduce)                                                                              \
    X(ALLREDUCE, Allreduce)                                                                        \
    X(REDUCE_SCATTER, Reduce_scatter)                                                              \
    X(REDUCE_SCATTER_BLOCK, Reduce_scatter_block)                                                  \
    X(SCAN, Scan)                                                                                  \
    X(EXSCAN, Exscan)

enum loom_coll_kind {
#define LOOM_COLL_ENUM(K, N) LOOM_COLL_##K,
    LOOM_COLL_KINDS(LOOM_COLL_ENUM)
#undef LOOM_COLL_ENUM
        LOOM_COLL_NKINDS
};

/* One call's arguments, as the MPI function got them (MPI_IN_PLACE turned
 * into in_place; counts of the v/w variants point into the caller's arrays).
 * Unused fields are zero. For Bcast the buffer is rbuf/rcount/rtype. */
struct loom_coll_args {
    const void *sbuf;
    void *rbuf;
    size_t scount, rcount;
    struct loom_type *stype, *rtype;
    const int *scounts, *sdispls; /* v/w variants; w: displs in bytes */
    const int *rcounts, *rdispls;
    struct loom_type *const *stypes, *const *rtypes; /* Alltoallw */
    struct loom_op *op;
    int root;
    bool in_place;
    /* Intercommunicator calls (on the bridge, c->bridge; src/coll/inter.c):
     * root is LOOM_COLL_INTER_ROOT - (the root's side: 0 for A, 1 for B),
     * the same on every member, and inter_root the root's bridge rank where
     * the caller knows it (the root and the other group), else -1
     * (MPI_PROC_NULL: the caller takes no part). The count, displacement
     * and type arrays are indexed by remote rank (Reduce_scatter's by local
     * rank), as the caller passed them. */
    int inter_root;
};

#define LOOM_COLL_INTER_ROOT (-2)

/* Runs collective `kind` on c for the calling rank. Returns MPI_SUCCESS or
 * an MPI error class; *why is set to a message for the error. */
int loom_coll_run(struct loom_comm *c, enum loom_coll_kind kind, const struct loom_coll_args *a,
                  const char **why);

/* What loom_coll_small() returns for a call it does not take. */
#define LOOM_COLL_GENERAL (-1)
/* The most bytes a call loom_coll_small() takes may carry. */
#define LOOM_COLL_SMALL_BYTES 32

/* Blocking Bcast, Reduce or Allreduce of count x t (t predefined; op
 * predefined, NULL for Bcast; in: the input, out: the result or Bcast's
 * buffer; root 0 for Allreduce) by the small-message path (small.c), when
 * the call is a small one of a shape whose copy-in algorithm is chosen;
 * else LOOM_COLL_GENERAL, before anything is done (run loom_coll_run()).
 * The caller has checked the arguments. */
int loom_coll_small(struct loom_comm *c, enum loom_coll_kind kind, const void *in, void *out,
                    size_t count, struct loom_type *t, struct loom_op *op, int root,
                    const char **why);

/* Blocking Gather or Scatter by the small-message path (small.c), as
 * loom_coll_small(): sbuf/scount/stype the send side (stype NULL where it is
 * not significant), rbuf/rcount/rtype the receive side (rtype NULL where not
 * significant), in_place as MPI_IN_PLACE at the root. Types predefined where
 * given; the caller has checked the arguments. */
int loom_coll_small_blocks(struct loom_comm *c, enum loom_coll_kind kind, const void *sbuf,
                           size_t scount, struct loom_type *stype, void *rbuf, size_t rcount,
                           struct loom_type *rtype, int root, bool in_place, const char **why);

/* Starts collective `kind` on c without waiting (MPI_I<coll>): req, a
 * request of the caller (kind LOOM_REQ_GENERIC, active), completes when the
 * call is done, with status_error set. a's count and displacement arrays
 * must stay valid until then (as MPI requires); types and op are retained. */
int loom_coll_start(struct loom_comm *c, enum loom_coll_kind kind, const struct loom_coll_args *a,
                    struct LMPI_Request_s *req, const char **why);

/* A persistent collective's call (MPI_<Coll>_init): kind and arguments kept
 * with their own copies of the count, displacement and type arrays, and
 * references on the types and the op, so that each start runs the same call
 * as MPI_I<coll> would. */
struct loom_coll_call;
/* Saves a call on c (arguments checked); *call_p set on success. Returns
 * MPI_SUCCESS or MPI_ERR_NO_MEM. */
int loom_coll_save(struct loom_comm *c, enum loom_coll_kind kind, const struct loom_coll_args *a,
                   struct loom_coll_call **call_p) LOOM_MUST_CHECK;
/* Starts a saved call as loom_coll_start() does (its next place in the
 * communicator's order). */
int loom_coll_start_saved(struct loom_coll_call *call, struct LMPI_Request_s *req,
                          const char **why);
void loom_coll_call_free(struct loom_coll_call *call);

/* Ends the rank's runners (MPI_Finalize; every request is complete). */
void loom_coll_rank_fini(int world_rank);

/* "Bcast" for LOOM_COLL_BCAST. */
const char *loom_coll_name(enum loom_coll_kind kind);

/* The tools interface (src/mpi/mpit.c): the algorithms, numbered in
 * algorithms.def's order, each one's name, collective and summary; the
 * algorithm forced for a collective (-1: none, the tuning table or the model
 * chooses), which loom_coll_choice_set changes for every rank of the process
 * (-1: none, also over LOOM_COLL_<COLLECTIVE>; LOOM_ERR_INVALID for an
 * algorithm of another collective); and the calls world rank `rank` made
 * with algorithm `id` (read by the rank itself). */
int loom_coll_nalgorithms(void);
const char *loom_coll_algorithm_name(int id);
enum loom_coll_kind loom_coll_algorithm_kind(int id);
const char *loom_coll_algorithm_summary(int id);
int loom_coll_choice_get(enum loom_coll_kind kind);
int loom_coll_choice_set(enum loom_coll_kind kind, int id);
uint64_t loom_coll_uses(int rank, int id);

/* Describes the algorithms, the model parameters and the forced choices to
 * f (loom-info). */
void loom_coll_describe(void *file);

/* Loads this machine's cost model parameters from the cache file, or
 * calibrates them and writes the file (model.c); once per process, and
 * before the job's scheduler starts (the calibration runs its own). mpiexec
 * calls it; otherwise the first collective call or description does. */
void loom_coll_model_init(void);

#endif
