/*
 * Tuning: the machine's tuning table and the hooks loom-tune's benchmark
 * (tools/loom_tune_bench.c) uses to measure every algorithm and compare
 * with the cost model. The hooks are exported from libloom but are not MPI
 * and not in mpi.h; a tool includes this header (it needs only mpi.h).
 *
 * The tuning table (JSON, written by tools/loom-tune, format in
 * docs/collectives.md) maps (collective, rank count[, workers], byte range)
 * to the algorithm measured fastest there. select.c consults it after
 * LOOM_COLL_<COLLECTIVE> and before the cost model. It is read once per
 * process, at the first collective call, from LOOM_COLL_TUNING (a path, or
 * "none") or else $XDG_CACHE_HOME/loom/tuning.json (~/.cache/loom/...) when
 * that file exists; a table with any problem is ignored with one warning
 * naming the file, line and column.
 */
#ifndef LOOM_COLL_TUNE_H
#define LOOM_COLL_TUNE_H

#include <mpi.h>
#include <stddef.h>

/* ---- hooks for tools (exported) ---- */

/* Forces `algorithm` for every later call of `collective` ("bcast",
 * "Allreduce": case does not matter) in this process, over
 * LOOM_COLL_<COLLECTIVE> and the tuning table; "" or NULL clears it. Every
 * member of a communicator must select the same algorithm, so all ranks set
 * the same value between two barriers (each rank before its own next call of
 * that collective). Returns 0, or -1 for an unknown collective or
 * algorithm. */
int loom_coll_force(const char *collective, const char *algorithm);

/* The cost model's prediction in seconds for one call of `collective` with
 * `algorithm` on comm moving nbytes per rank (reductions: MPI_DOUBLE with
 * MPI_SUM; root 0). -1 when the algorithm does not apply to such a call; -2
 * for an unknown name or communicator, or when comm has not made a
 * collective call yet (its topology groups are made then). */
double loom_coll_predict(MPI_Comm comm, const char *collective, const char *algorithm,
                         size_t nbytes);

/* Names of the algorithms of `collective`, in algorithms.def order: up to
 * max of them into names[]; returns how many there are (-1: unknown
 * collective). */
int loom_coll_algorithms(const char *collective, const char **names, int max);

/* Workers comm's members run on (tuning table entries may name it); -1
 * under the same conditions as loom_coll_predict's -2. */
int loom_coll_workers(MPI_Comm comm);

/* ---- inside the collective layer ---- */

struct coll_algorithm;
struct coll_ctx;

/* select.c: the algorithm table (algorithms.def order), and the run-time
 * choice of loom_coll_force for collective kind (NULL clears). */
const struct coll_algorithm *coll_algorithm_list(size_t *count_p);
void coll_select_override(int kind, const struct coll_algorithm *alg);

/* tune.c: loads and validates the tuning table (once, from select.c's
 * configure()); the table's algorithm for call x of nbytes, or NULL (no
 * entry matches, or the matching one does not apply to the call); prints
 * the table in use (loom-info). */
void coll_tuning_load(void);
const struct coll_algorithm *coll_tuning_lookup(const struct coll_ctx *x, size_t nbytes);
void coll_tuning_describe(void *file);

#endif
