/*
 * MPI_Init and friends, MPI_Abort, time, versions.
 *
 * In a job started by mpiexec each rank is already a rank of the job; MPI_Init
 * only sets up its MPI state. A program run directly becomes a singleton job
 * of one rank here. Thread support: up to MPI_THREAD_FUNNELED (the rank's own
 * ULT makes the MPI calls), reported honestly in `provided`.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm/comm.h"
#include "coll/coll.h"
#include "mpi/mpi_impl.h"
#include "pt2pt/p2p.h"
#include "util/log.h"

static pthread_once_t job_once = PTHREAD_ONCE_INIT;
static int job_rc;
static pthread_t singleton_thread;

static void job_init(void)
{
    job_rc = loom_mpi_barrier_init(loom_job.nranks);
    if (job_rc == LOOM_OK)
        job_rc = loom_p2p_job_init(loom_job.nranks);
}

int loom_mpi_rank_enter(const char *fn)
{
    if (loom_rank_self())
        return MPI_SUCCESS;
    if (loom_job.nranks)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_OTHER, fn,
                            "called from a thread that is not an MPI rank");
    loom_job_singleton();
    singleton_thread = pthread_self();
    return MPI_SUCCESS;
}

int loom_mpi_instance_up(const char *fn, int required)
{
    int rc = loom_mpi_rank_enter(fn);
    if (rc)
        return rc;
    struct loom_rank *r = loom_rank_self();
    if (r->mpi_state == LOOM_MPI_INITIALIZED)
        return MPI_SUCCESS;
    struct loom_mpi_rank *old = r->mpi;
    if (r->mpi_state == LOOM_MPI_FINALIZED && old && old->world != LOOM_WORLD_DONE) {
        /* Stopped by its last MPI_Session_finalize, nothing torn down: up again. */
        __atomic_store_n(&r->mpi_state, LOOM_MPI_INITIALIZED, __ATOMIC_RELEASE);
        return MPI_SUCCESS;
    }
    if (r->mpi_state == LOOM_MPI_FINALIZED)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_OTHER, fn,
                            "called after MPI_Finalize (Loom does not start MPI again)");
    loom_debug_rank_init(r->rank);
    pthread_once(&job_once, job_init);
    if (job_rc != LOOM_OK)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    struct loom_mpi_rank *m = calloc(1, sizeof *m);
    if (!m)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    m->thread_level = required < MPI_THREAD_FUNNELED ? required : MPI_THREAD_FUNNELED;
    if (m->thread_level < MPI_THREAD_SINGLE)
        m->thread_level = MPI_THREAD_SINGLE;
    r->mpi = m;
    if (loom_comm_rank_init() != LOOM_OK) {
        r->mpi = NULL;
        free(m);
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    r->mpi_state = LOOM_MPI_INITIALIZED;
    return MPI_SUCCESS;
}

static int init_common(const char *fn, int required, int *provided)
{
    struct loom_rank *r = loom_rank_self();
    struct loom_mpi_rank *m = r ? r->mpi : NULL;
    if (m && m->world != LOOM_WORLD_NONE)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_OTHER, fn,
                            m->world == LOOM_WORLD_UP ? "MPI is already initialized"
                                                      : "called after MPI_Finalize");
    int rc = loom_mpi_instance_up(fn, required);
    if (rc)
        return rc;
    m = loom_mpi_self();
    m->world = LOOM_WORLD_UP;
    if (provided)
        *provided = m->thread_level;
    return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv)
{
    return init_common("MPI_Init", MPI_THREAD_SINGLE, NULL);
}
LOOM_MPI_ALIAS(Init);

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!provided)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Init_thread", "provided is NULL");
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Init_thread",
                            "required = %d is not a thread level", required);
    return init_common("MPI_Init_thread", required, provided);
}
LOOM_MPI_ALIAS(Init_thread);

int PMPI_Finalize(void)
{
    int rc = loom_mpi_check_init("MPI_Finalize");
    if (rc)
        return rc;
    struct loom_mpi_rank *m = loom_mpi_self();
    if (m->world != LOOM_WORLD_UP)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI_Finalize",
                            "MPI_Init was not called (only sessions are open)");
    /* First, as if MPI_COMM_SELF were freed: its attributes' delete
     * callbacks, newest first, with MPI still usable. */
    rc = loom_comm_finalize_self_attrs();
    if (rc != MPI_SUCCESS)
        return loom_mpi_err(MPI_COMM_SELF, rc, "MPI_Finalize",
                            "a delete callback of an attribute on MPI_COMM_SELF returned %d", rc);
    struct loom_rank *r = loom_rank_self();
    /* Every rank's buffers stay valid until all have finalized. */
    loom_mpi_barrier_world(r->rank);
    m->world = LOOM_WORLD_DONE;
    if (m->sessions == 0) {
        /* Open sessions keep the rank's communicators (and MPI) up. */
        loom_coll_rank_fini(r->rank);
        loom_comm_rank_fini();
        r->mpi_state = LOOM_MPI_FINALIZED;
    }
    fflush(stdout);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Finalize);

int PMPI_Initialized(int *flag)
{
    if (!flag)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Initialized", "flag is NULL");
    /* The world model only (MPI-4.1 11.2.1): sessions do not count. */
    struct loom_rank *r = loom_rank_self();
    struct loom_mpi_rank *m = r ? r->mpi : NULL;
    *flag = m && m->world != LOOM_WORLD_NONE;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Initialized);

int PMPI_Finalized(int *flag)
{
    if (!flag)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Finalized", "flag is NULL");
    struct loom_rank *r = loom_rank_self();
    struct loom_mpi_rank *m = r ? r->mpi : NULL;
    *flag = m && m->world == LOOM_WORLD_DONE;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Finalized);

int PMPI_Query_thread(int *provided)
{
    int rc = loom_mpi_check_init("MPI_Query_thread");
    if (rc)
        return rc;
    if (!provided)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Query_thread", "provided is NULL");
    *provided = loom_mpi_self()->thread_level;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Query_thread);

int PMPI_Is_thread_main(int *flag)
{
    int rc = loom_mpi_check_init("MPI_Is_thread_main");
    if (rc)
        return rc;
    if (!flag)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Is_thread_main", "flag is NULL");
    /* A rank's main thread is its ULT (or, for a singleton, the thread that
     * called MPI_Init). */
    if (loom_job.singleton)
        *flag = pthread_equal(pthread_self(), singleton_thread);
    else
        *flag = loom_ult_self() != NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Is_thread_main);

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    struct loom_rank *r = loom_rank_self();
    loom_log_error("rank %d called MPI_Abort(%s, %d); ending the job", r ? r->rank : 0,
                   comm == MPI_COMM_WORLD  ? "MPI_COMM_WORLD"
                   : comm == MPI_COMM_SELF ? "MPI_COMM_SELF"
                                           : "comm",
                   errorcode);
    loom_job_abort(errorcode & 0xff);
}
LOOM_MPI_ALIAS(Abort);

double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
LOOM_MPI_ALIAS(Wtime);

double PMPI_Wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
LOOM_MPI_ALIAS(Wtick);

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    if (!name || !resultlen)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_processor_name",
                            "name or resultlen is NULL");
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Get_processor_name);

int PMPI_Get_version(int *version, int *subversion)
{
    if (!version || !subversion)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_version",
                            "version or subversion is NULL");
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Get_version);

int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (!version || !resultlen)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_library_version",
                            "version or resultlen is NULL");
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "Loom %s (MPI %d.%d; ranks are user-level threads of one process)",
                     LOOM_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION);
    *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Get_library_version);
