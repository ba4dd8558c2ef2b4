/*
 * Debugger support (issue 24, docs/debugging.md).
 *
 * Ranks are user-level threads: a debugger sees the workers' kernel threads,
 * each running one rank at a time, and not the stacks of the parked ranks,
 * nor the clones of the program (image.c), which glibc does not list. The
 * functions below are what the gdb extension (tools/loom-gdb.py) calls in a
 * stopped process to list the ranks, to find a parked rank's registers and
 * the base of its copy of the program, and to let ranks stopped by
 * --debug-rank go. They are exported under C names for gdb's inferior calls
 * and take no lock that a stopped thread could hold.
 *
 * mpiexec --debug-rank R (LOOM_DEBUG_RANK=R, a list "1,5-7", or "all"):
 * rank R, entering MPI_Init, prints how to attach and waits, parked (its
 * worker runs other ranks), until loom_debug_hold is 0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/job.h"
#include "runtime/ult.h"
#include "util/log.h"
#include "util/options.h"

/* For the debugger's inferior calls; no header declares them. */
LOOM_EXPORT void loom_debug_waiting(int rank);
LOOM_EXPORT void loom_debug_state_printed(void);
LOOM_EXPORT int loom_debug_nranks(void);
LOOM_EXPORT int loom_debug_current_rank(void);
LOOM_EXPORT const char *loom_debug_state(int backtraces);
LOOM_EXPORT unsigned long loom_debug_rank_sp(int rank);
LOOM_EXPORT int loom_debug_rank_worker(int rank);
LOOM_EXPORT unsigned long loom_debug_rank_base(int rank);
LOOM_EXPORT int loom_debug_rank_loaded(int rank);
LOOM_EXPORT const char *loom_debug_program(void);

/* 1 while ranks named by LOOM_DEBUG_RANK wait in MPI_Init (gdb: loom release). */
LOOM_EXPORT volatile int loom_debug_hold = 1;

/* Whether rank is in list ("all", or "1,5-7"). */
static bool listed(const char *list, int rank)
{
    if (strcmp(list, "all") == 0)
        return true;
    for (const char *p = list; *p;) {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p)
            return false;
        if (*end == '-') {
            p = end + 1;
            hi = strtol(p, &end, 10);
            if (end == p)
                return false;
        }
        if (rank >= lo && rank <= hi)
            return true;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return false;
    }
    return false;
}

/* The gdb extension: loom/loom-gdb.py beside libloom, in the build tree as
 * installed. */
static void gdb_script(char *buf, size_t n)
{
    Dl_info self;
    if (!dladdr((const void *)loom_debug_rank_init, &self) || !self.dli_fname) {
        snprintf(buf, n, "loom-gdb.py");
        return;
    }
    char *real = realpath(self.dli_fname, NULL);
    const char *lib = real ? real : self.dli_fname;
    const char *slash = strrchr(lib, '/');
    int dir = slash ? (int)(slash - lib) : 1;
    snprintf(buf, n, "%.*s/loom/loom-gdb.py", dir, slash ? lib : ".");
    free(real);
}

/* A breakpoint target: a rank stopped by --debug-rank calls it once. */
LOOM_EXPORT __attribute__((noinline)) void loom_debug_waiting(int rank)
{
    __asm__ volatile("" ::"r"(rank) : "memory");
}

/* A breakpoint target: called after each state view (kill -QUIT,
 * --report-state-after), so that gdb can stop the job as the view saw it. */
LOOM_EXPORT __attribute__((noinline)) void loom_debug_state_printed(void)
{
    __asm__ volatile("" ::: "memory");
}

void loom_debug_rank_init(int rank)
{
    const char *list = loom_opt_str(LOOM_OPT_DEBUG_RANK);
    if (!list || !*list || !listed(list, rank) || !loom_debug_hold)
        return;
    char script[4096], msg[4608];
    gdb_script(script, sizeof script);
    snprintf(msg, sizeof msg,
             "loom: rank %d waits in MPI_Init for a debugger: gdb -p %ld -x %s, then 'loom "
             "release' and 'continue' (or 'set var *(int *) &loom_debug_hold = 0')\n",
             rank, (long)syscall(SYS_getpid), script);
    loom_log_raw(msg);
    loom_debug_waiting(rank);
    while (loom_debug_hold)
        loom_ult_sleep(100 * 1000 * 1000ull);
}

/* ---- what the gdb extension calls ---------------------------------------------- */

LOOM_EXPORT int loom_debug_nranks(void)
{
    return loom_job.nranks;
}

/* The rank of the ULT on the calling thread, or -1 (gdb: $loom_rank()). */
LOOM_EXPORT int loom_debug_current_rank(void)
{
    struct loom_rank *r = loom_rank_self();
    return r ? r->rank : -1;
}

/* Every rank's state, as the state view prints it, or NULL when a report is
 * being printed. Backtraces only if asked: they run libgcc's unwinder,
 * whose lock a stopped thread may hold. */
LOOM_EXPORT const char *loom_debug_state(int backtraces)
{
    static char buf[1 << 20];
    return loom_state_snapshot_to(buf, sizeof buf, backtraces != 0) ? buf : NULL;
}

/* The stack pointer a parked rank was switched out at (0: it runs, or has
 * not started, or has ended). */
LOOM_EXPORT unsigned long loom_debug_rank_sp(int rank)
{
    if (rank < 0 || rank >= loom_job.nranks || !loom_job.ranks[rank].ult ||
        __atomic_load_n(&loom_job.ranks[rank].state, __ATOMIC_ACQUIRE) != LOOM_RANK_RUNNING)
        return 0;
    return (unsigned long)loom_ult_saved_sp(loom_job.ranks[rank].ult);
}

/* The worker that runs rank (its thread is named loom-wN). */
LOOM_EXPORT int loom_debug_rank_worker(int rank)
{
    return rank >= 0 && rank < loom_job.nranks ? loom_job.ranks[rank].worker : -1;
}

/* Where rank's copy of the program is loaded, and whether glibc knows it (1:
 * loaded by dlopen, a shared library to the debugger; 0: a clone, whose
 * symbols the debugger must be given: add-symbol-file PROGRAM -o BASE). */
LOOM_EXPORT unsigned long loom_debug_rank_base(int rank)
{
    return rank >= 0 && rank < loom_job.nranks ? loom_job.ranks[rank].image_base : 0;
}

LOOM_EXPORT int loom_debug_rank_loaded(int rank)
{
    return rank >= 0 && rank < loom_job.nranks && loom_job.ranks[rank].dl != NULL;
}

LOOM_EXPORT const char *loom_debug_program(void)
{
    static char path[4096];
    if (!path[0] && loom_job.program && !realpath(loom_job.program, path))
        snprintf(path, sizeof path, "%s", loom_job.program);
    return path;
}
