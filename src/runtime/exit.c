/*
 * Every way out of the process, from anywhere. mpicc links a program's own
 * calls to exit, _exit and _Exit to Loom (--wrap, job.c), but a shared
 * library the program uses (libstdc++'s std::exit, a Fortran runtime's STOP,
 * a user's .so) or a thread the rank started called libc's and ended the
 * whole job at once with that status and no message. libloom precedes libc
 * in the global lookup order, so defining the names here catches them all:
 *  - on a rank's ULT: the rank ends as if its main had called it (its
 *    handlers run for exit, not for _exit and _Exit);
 *  - on a thread that a rank started (pthread_create is wrapped to
 *    remember the starting rank, inherited by the thread's own threads):
 *    the rank's ULT cannot be unwound from another thread, so the job ends,
 *    reported by rank: with the status when it is not 0, and with 1 when it
 *    is 0 while some rank has not finished (a process MPI would report that
 *    rank's process gone before MPI_Finalize); a 0 after that rank's
 *    MPI_Finalize (whose barrier means every rank has called it) ends the
 *    job with 0, cutting short what ranks do after MPI_Finalize;
 *  - anywhere else (mpiexec itself, Loom's threads, a program run
 *    directly): libc's own.
 * The crash handler names the rank of such a thread too (loom_thread_rank).
 * Under ASAN and TSAN threads are not tagged (their interceptor's start
 * routine must run first in a new thread): exit there is libc's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/job.h"
#include "runtime/ult.h"
#include "util/log.h"

LOOM_EXPORT LOOM_NORETURN void exit(int status);
LOOM_EXPORT LOOM_NORETURN void _exit(int status);
LOOM_EXPORT LOOM_NORETURN void _Exit(int status);
LOOM_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                               void *(*start)(void *), void *arg);

typedef void (*exit_fn)(int);
typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static exit_fn libc_exit, libc__exit, libc__Exit;
/* pthread_create: the first definition in the global order (a sanitizer's
 * interceptor, which must see Loom's own threads too: calls inside libloom
 * bind to the definition below) and libc's (the next after libloom). */
static create_fn first_create, libc_create;

/* A process forked by a rank (or a rank's thread): a plain process, whose
 * exit is libc's (it has no job to end and no rank to return to). */
static bool forked;

static void after_fork_child(void)
{
    forked = true;
}

__attribute__((constructor)) static void find_libc(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
    libc_exit = (exit_fn)dlsym(RTLD_NEXT, "exit");
    libc__exit = (exit_fn)dlsym(RTLD_NEXT, "_exit");
    libc__Exit = (exit_fn)dlsym(RTLD_NEXT, "_Exit");
    libc_create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    first_create = (create_fn)dlsym(RTLD_DEFAULT, "pthread_create");
    if (!first_create || first_create == pthread_create)
        first_create = libc_create;
}

/* The rank that started this thread (directly or through its threads);
 * -1 on threads no rank started. */
static __thread int thread_rank = -1;

int loom_thread_rank(void)
{
    return thread_rank;
}

/* The rank the caller acts for: its ULT's, or its thread's starter's. */
static int acting_rank(void)
{
    if (!loom_job.nranks || loom_job.singleton)
        return -1;
    struct loom_ult *u = loom_ult_self();
    if (u) {
        struct loom_rank *r = loom_ult_get_data(u);
        return r ? r->rank : -1;
    }
    return thread_rank;
}

struct start {
    void *(*fn)(void *);
    void *arg;
    int rank;
};

/* Nothing before s->fn may call into a sanitizer's runtime: its own start
 * routine (s->fn under a sanitizer) sets the thread up. The record is freed
 * after (it stays, 24 bytes, if the thread ends by pthread_exit). */
static void *start_thread(void *p)
{
    struct start *s = p;
    thread_rank = s->rank;
    void *ret = s->fn(s->arg);
    free(s);
    return ret;
}

/* Whether the code at pc is libloom's own. */
static bool in_libloom(const void *pc)
{
    Dl_info self, caller;
    return dladdr((const void *)pthread_create, &self) && dladdr(pc, &caller) &&
           self.dli_fbase == caller.dli_fbase;
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    /* Loom's own threads go through the first definition, a sanitizer's
     * interceptor if any, which comes back here as its "real" one. Others
     * reach here directly or from that interceptor: libc's creates them. */
    if (in_libloom(__builtin_return_address(0)))
        return first_create(thread, attr, start, arg);
    /* Under a sanitizer (its interceptor calls us), a rank's threads are
     * not tagged: its own start routine must run first in the new thread,
     * and under TSAN ours ahead of it crashed. */
    int rank = first_create == libc_create ? acting_rank() : -1;
    if (rank < 0)
        return libc_create(thread, attr, start, arg);
    struct start *s = malloc(sizeof *s);
    if (!s)
        return EAGAIN;
    *s = (struct start){start, arg, rank};
    int rc = libc_create(thread, attr, start_thread, s);
    if (rc != 0)
        free(s);
    return rc;
}

/* Whether every rank has called MPI_Finalize: rank has completed it, and
 * its barrier over all ranks let it through. */
static bool all_finalized(int rank)
{
    return __atomic_load_n(&loom_job.ranks[rank].mpi_state, __ATOMIC_ACQUIRE) == LOOM_MPI_FINALIZED;
}

/* exit-like call with status on a thread that rank started: ends the job. */
static LOOM_NORETURN void thread_exit(const char *how, int rank, int status)
{
    if (status != 0) {
        loom_log_error("rank %d exited with status %d (%s called in a thread the rank started); "
                       "ending the job",
                       rank, status, how);
        loom_job_end(status & 0xff ? status & 0xff : 1);
    }
    if (all_finalized(rank))
        loom_job_end(0);
    loom_log_error("rank %d called %s(0) in a thread it started before every rank finished; "
                   "ending the job",
                   rank, how);
    loom_job_end(1);
}

/* The three calls: the rank ends (running its handlers for exit only), or
 * the job ends for a rank's thread, or libc's own. */
static LOOM_NORETURN void leave(const char *how, int status, bool handlers, exit_fn libc)
{
    if (loom_job.nranks && !loom_job.singleton && !forked) {
        if (loom_ult_self())
            loom_rank_exit(status, handlers);
        if (thread_rank >= 0)
            thread_exit(how, thread_rank, status);
    }
    libc(status);
    __builtin_unreachable();
}

void exit(int status)
{
    leave("exit", status, true, libc_exit);
}

void _exit(int status)
{
    leave("_exit", status, false, libc__exit);
}

void _Exit(int status)
{
    leave("_Exit", status, false, libc__Exit);
}
