/*
 * The job: the ranks of this Loom process and their life cycle.
 *
 * mpiexec fills a loom_job_spec from its command line and calls
 * loom_job_run(), which loads one private copy of the program per rank
 * (image.c), starts one ULT per rank on its worker, and returns the job's exit
 * status once every rank has ended. A program run directly (./app) has no job
 * until MPI_Init makes it a singleton of one rank on the calling thread.
 *
 * Depends on: util, runtime/ult, runtime/topo.
 */
#ifndef LOOM_RUNTIME_JOB_H
#define LOOM_RUNTIME_JOB_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>

#include "runtime/ult.h"
#include "util/common.h"

struct loom_comm;

struct loom_ult;

enum loom_bind { LOOM_BIND_CORE, LOOM_BIND_NONE };
enum loom_map { LOOM_MAP_CORE, LOOM_MAP_L3, LOOM_MAP_NUMA, LOOM_MAP_PACKAGE };

struct loom_job_spec {
    int nranks;
    int nworkers;      /* 0: one per core of the allowed cpuset */
    size_t stack_size; /* per rank */
    enum loom_bind bind;
    enum loom_map map;
    bool tag_output;
    bool report_bindings; /* print where each rank runs */
    double timeout_s;     /* 0: none */
    const char *program;  /* path of the Loom program */
    int argc;             /* argv[0] is the program as typed */
    char **argv;
};

/* A rank's line buffer for one output stream (stdio.c). */
struct loom_outbuf {
    char *data;
    size_t len, cap;
};

enum loom_rank_state { LOOM_RANK_NEW, LOOM_RANK_RUNNING, LOOM_RANK_DONE };
enum loom_mpi_state { LOOM_MPI_NONE, LOOM_MPI_INITIALIZED, LOOM_MPI_FINALIZED };

struct loom_rank {
    int rank; /* in MPI_COMM_WORLD */
    int worker;
    struct loom_ult *ult; /* NULL for a singleton */
    void *dl;             /* this rank's copy of the program (NULL: a clone) */
    uintptr_t image_base; /* the copy's load bias */
    int argc;
    char **argv; /* private copy */
    int exit_status;
    enum loom_rank_state state;
    enum loom_mpi_state mpi_state;
    jmp_buf exit_jb;             /* where exit() in the rank lands */
    bool run_atexit;             /* exit() (true) or _exit() (false) */
    bool in_fini;                /* running its atexit handlers */
    struct loom_outbuf out, err; /* partial output lines */
    void *mpi;                   /* the MPI layer's per-rank state */
    /* The rank's MPI_COMM_WORLD while MPI is initialized (the comm layer
     * sets it), for one-look lookups on the hot paths. */
    struct loom_comm *comm_world;
    /* The MPI wait it is in (deadlock.c): the outermost one while depth > 0;
     * seq counts entries and exits (odd: inside one). */
    const struct loom_mpi_wait *_Atomic mpi_wait;
    _Atomic uint32_t mpi_wait_seq;
    _Atomic bool mpi_wait_external; /* mpi_wait->external, read without it */
    int mpi_wait_depth;
} LOOM_ALIGNED_CL;

struct loom_job {
    int nranks;
    int nworkers;
    bool singleton; /* ./app run directly */
    bool tag_output;
    size_t stack_size;
    struct loom_rank *ranks;
    int *worker_of_rank;
    int **worker_domain; /* [level][worker]: the worker's core, L3, NUMA node,
                            package, machine (enum loom_level of topo.h);
                            NULL for a singleton */
    const char *program;
};

/* The job of this process; nranks == 0 until a job or singleton exists. */
extern struct loom_job loom_job;

/* ---- deadlock detection (deadlock.c) ---------------------------------------
 *
 * The layers above tell the runtime when a rank waits in MPI and what for;
 * a thread of Loom's checks, while every worker sleeps, whether every rank
 * that has not ended is parked in such a wait with none completing, and
 * then reports the waits and ends the job with LOOM_EXIT_DEADLOCK. */
#define LOOM_EXIT_DEADLOCK 85

struct loom_mpi_wait {
    /* Writes what the rank waits for, in MPI terms, into buf. */
    void (*describe)(const struct loom_mpi_wait *w, char *buf, size_t n);
    /* The world ranks it waits for (up to max; -1: unknown or any). */
    int (*peers)(const struct loom_mpi_wait *w, int *world, int max);
    const void *arg;
    /* Ranks whose waits have the same nonzero group are in the same
     * collective call; its peers are every member. */
    uint64_t group;
    /* It may complete by something outside MPI (a generalized request):
     * never part of a deadlock. */
    bool external;
};

/* The calling rank starts (ends) waiting as w describes; w stays valid
 * until the matching leave. Nested waits keep the outermost. No-ops
 * outside ranks. */
void loom_mpi_wait_enter(const struct loom_mpi_wait *w);
void loom_mpi_wait_leave(void);
/* While a signal handler of r runs on r's ULT (inside an MPI wait, maybe),
 * r is not in an MPI wait: suspend returns what resume restores. */
int loom_mpi_wait_suspend(struct loom_rank *r);
void loom_mpi_wait_resume(struct loom_rank *r, int depth);

/* Set by the point-to-point layer once its ranks' state exists: writes
 * into buf the messages sent to world rank r that it has not received (none:
 * buf empty), under r's matching lock. Called by the deadlock report and the
 * state view. */
typedef void (*loom_unreceived_fn)(int r, char *buf, size_t n);
extern _Atomic(loom_unreceived_fn) loom_deadlock_unreceived;

/* Starts the detector (LOOM_DEADLOCK, default on) for a job of ranks. */
void loom_deadlock_start(void);

/* ---- the job's state (state.c, backtrace.c) ---------------------------------- */

/* Writes rank r's backtrace to buf, a frame a line ("#0 MPI_Recv+0x1c
 * (libloom.so.0)"), from the MPI (or libc) call it waits in to its main;
 * returns the number of frames, 0 when none can be taken. Only for a rank
 * that loom_ult_held() reports, during a hold. */
int loom_rank_backtrace(const struct loom_rank *r, char *buf, size_t n);
/* Prints every rank's state (what it waits for, its backtrace) without
 * stopping the job; why goes in the first line. */
void loom_state_print(const char *why);
/* Whether SIGQUIT from outside is Loom's (the state view), not the ranks'. */
bool loom_state_sigquit_taken(void);
/* The state view into buf (NUL-terminated, cut at n), for a debugger's
 * inferior call; false when a report is being printed. */
bool loom_state_snapshot_to(char *buf, size_t n, bool backtraces);

/* ---- debugger support (debug.c) -------------------------------------------- */

/* Called by each rank as MPI_Init starts: a rank named by LOOM_DEBUG_RANK
 * (mpiexec --debug-rank) waits there until a debugger lets it go. */
void loom_debug_rank_init(int rank);
/* Called after each state view: a breakpoint target for gdb. */
void loom_debug_state_printed(void);

/* Runs the job described by spec; returns the exit status for mpiexec. */
int loom_job_run(const struct loom_job_spec *spec) LOOM_MUST_CHECK;

/* Makes the calling thread rank 0 of a one-rank job (MPI_Init without
 * mpiexec). Idempotent. */
void loom_job_singleton(void);

/* The calling rank, or NULL when the caller is not a rank. */
struct loom_rank *loom_rank_self_slow(void);
static inline struct loom_rank *loom_rank_self(void)
{
    /* Rank ULTs carry their rank as data (job.c). */
    struct loom_rank *r = loom_ult_tls_data;
    return LOOM_LIKELY(r != NULL) ? r : loom_rank_self_slow();
}

/* Ends the calling rank with status (exit() in a rank lands here). */
LOOM_NORETURN void loom_rank_exit(int status, bool run_atexit);

/* Ends the whole job at once with status after a message (MPI_Abort, a
 * fatal MPI error). Flushes the caller's partial output first. */
LOOM_NORETURN void loom_job_abort(int status);

/* reap.c: the processes that ranks start. loom_reap_init makes mpiexec
 * their subreaper; loom_job_end kills every descendant, then _exits with
 * status (async-signal-safe; every abnormal end of a job goes through it). */
void loom_reap_init(void);
void loom_job_kill_descendants(void);
LOOM_NORETURN void loom_job_end(int status);

/* exit.c: the rank that started the calling thread (through pthread_create,
 * also via that thread's own threads); -1 on threads no rank started. */
int loom_thread_rank(void);

/* signal.c: each rank's signal handlers, mask, pending signals, timers and
 * pid. loom_sig_fault runs the running rank's own handler of a fault from
 * the crash handler (false: it has none; report it). The sleep family asks
 * loom_sig_may_park (false inside a handler that interrupted the rank
 * anywhere) and whether a handler ran since (interrupted). */
int loom_sig_init(int nranks, int nworkers) LOOM_MUST_CHECK;
void loom_sig_worker_start(int worker);
void loom_sig_rank_end(struct loom_rank *r);
bool loom_sig_fault(int sig, void *siginfo, void *ucontext);
bool loom_sig_may_park(void);
struct loom_sig_since {
    const _Atomic unsigned *count; /* the rank's count of handlers run */
    unsigned start;
};
void loom_sig_since_now(struct loom_sig_since *s);
bool loom_sig_handled_since(const void *since); /* a loom_cond_fn */
void loom_sig_poll(void);

/* rankfs.c: a working directory and umask per rank. */
int loom_fs_init(int nranks) LOOM_MUST_CHECK;
void loom_fs_worker_start(int worker);

/* stdio.c: per-rank stdout/stderr streams and stdin for rank 0. */
int loom_stdio_init(bool tag_output) LOOM_MUST_CHECK;
void loom_stdio_flush_rank(struct loom_rank *r);

/* image.c */
/* True when path is a program linked by Loom's mpicc. */
bool loom_image_is_loom_program(const char *path, char *why, size_t whylen);
int loom_image_prepare(const char *path) LOOM_MUST_CHECK;
int loom_image_load(struct loom_rank *r) LOOM_MUST_CHECK;
/* A symbol of r's copy of the program (dlsym). */
void *loom_image_sym(const struct loom_rank *r, const char *name);
/* The executable pages of r's copy. */
bool loom_image_text(const struct loom_rank *r, uintptr_t *lo_p, uintptr_t *hi_p);
/* addr, or where addr of rank r's clone lies in the template (the copy
 * glibc loaded, which dladdr and debuggers know). */
uintptr_t loom_image_unclone(const struct loom_rank *r, uintptr_t addr);
/* The memory mappings (vm.max_map_count) each rank's copy costs. */
int loom_image_maps_per_rank(void);
void loom_image_release(void);

#endif
