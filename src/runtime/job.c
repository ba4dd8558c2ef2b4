/*
 * The life of a job: placement, loading, one ULT per rank, exit statuses,
 * crashes, signals and the time limit (see job.h and docs/architecture.md).
 *
 * A rank ends when its main returns or it calls exit(), _exit() or _Exit():
 * mpicc links programs with --wrap for those, and the wrappers below land in
 * the rank's own start frame with longjmp, so the rank's atexit handlers and
 * C++ static destructors run (exit only) and only that rank ends. A rank that
 * ends with a non-zero status, or without MPI_Finalize after MPI_Init, ends
 * the job with a message naming it, as Open MPI and MPICH do; the job's exit
 * status is then that rank's status. A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGABRT) is reported by rank and signal, a stack overflow as such, and the
 * job exits with 128 + signal.
 */
#define _GNU_SOURCE
#include "runtime/job.h"

#include <dlfcn.h>
#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/topo.h"
#include "runtime/ult.h"
#include "util/log.h"
#include "util/options.h"

extern char **environ;

struct loom_job loom_job;
static struct loom_placement placement;
static double timeout_s;

/* ---- signals ---------------------------------------------------------- */

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};

static const char *sig_name(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "Segmentation fault";
    case SIGBUS:
        return "Bus error";
    case SIGFPE:
        return "Floating point exception";
    case SIGILL:
        return "Illegal instruction";
    case SIGABRT:
        return "Aborted";
    case SIGTRAP:
        return "Trace/breakpoint trap";
    case SIGINT:
        return "Interrupt";
    case SIGTERM:
        return "Terminated";
    case SIGHUP:
        return "Hangup";
    default:
        return "signal";
    }
}

/* Async-signal-safe: "loom: rank R terminated by signal S (name)". */
static void crash_handler(int sig, siginfo_t *si, void *uc)
{
    /* A rank's own handler of a fault it caused runs first (signal.c). */
    if (loom_sig_fault(sig, si, uc))
        return;
    char msg[512], *p = msg;
    struct loom_ult *u = loom_ult_self();
    struct loom_rank *r = u ? loom_ult_get_data(u) : NULL;
    p = stpcpy(p, "loom: ");
    if (r) {
        p = stpcpy(p, "rank ");
        p = loom_fmt_long(p, r->rank);
    } else if (loom_thread_rank() >= 0) {
        p = stpcpy(p, "rank ");
        p = loom_fmt_long(p, loom_thread_rank());
        p = stpcpy(p, " (in a thread it started)");
    } else {
        p = stpcpy(p, "mpiexec");
    }
    void *lo, *hi, *guard;
    bool overflow = false;
    if (u && (sig == SIGSEGV || sig == SIGBUS)) {
        loom_ult_stack_bounds(u, &lo, &hi, &guard);
        char *a = si->si_addr;
        overflow = a >= (char *)guard - 65536 && a < (char *)lo;
    }
    if (overflow) {
        p = stpcpy(p, " overflowed its stack of ");
        p = loom_fmt_long(p, (long)(loom_job.stack_size >> 10));
        p = stpcpy(p, " KiB (signal ");
        p = loom_fmt_long(p, sig);
        p = stpcpy(p, "); raise it with --stack-size or LOOM_STACK_SIZE\n");
    } else {
        p = stpcpy(p, " terminated by signal ");
        p = loom_fmt_long(p, sig);
        p = stpcpy(p, " (");
        p = stpcpy(p, sig_name(sig));
        p = stpcpy(p, "); ending the job\n");
    }
    loom_log_raw(msg);
    loom_job_end(128 + sig);
}

static void term_handler(int sig)
{
    char msg[128], *p = msg;
    p = stpcpy(p, "loom: mpiexec received signal ");
    p = loom_fmt_long(p, sig);
    p = stpcpy(p, " (");
    p = stpcpy(p, sig_name(sig));
    p = stpcpy(p, "); ending the job\n");
    loom_log_raw(msg);
    loom_job_end(128 + sig);
}

static void install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = crash_handler;
    /* No SA_RESETHAND: a rank's handler may return. A fault inside this
     * handler, where the signal is blocked, is the kernel's to end. */
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < LOOM_ARRAY_SIZE(crash_signals); i++)
        sigaction(crash_signals[i], &sa, NULL);
    struct sigaction st;
    memset(&st, 0, sizeof st);
    st.sa_handler = term_handler;
    sigemptyset(&st.sa_mask);
    sigaction(SIGINT, &st, NULL);
    sigaction(SIGTERM, &st, NULL);
    sigaction(SIGHUP, &st, NULL);
}

/* Each worker gets its own signal stack: a crash may be a stack overflow. */
static void worker_start(int w)
{
    /* A sanitizer runtime may already have given the thread a signal stack
     * that it unmaps itself at thread exit: keep that one. */
    stack_t ss;
    if (sigaltstack(NULL, &ss) != 0 || (ss.ss_flags & SS_DISABLE)) {
        ss.ss_size = 64 * 1024;
        ss.ss_sp = malloc(ss.ss_size);
        ss.ss_flags = 0;
        if (ss.ss_sp)
            sigaltstack(&ss, NULL);
    }
    loom_sig_worker_start(w);
    loom_fs_worker_start(w);
    char name[16];
    snprintf(name, sizeof name, "loom-w%d", w);
    pthread_setname_np(pthread_self(), name);
}

static void *timeout_thread(void *arg)
{
    struct timespec ts = {(time_t)timeout_s, (long)((timeout_s - (double)(time_t)timeout_s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    loom_log_error("the job reached its time limit of %g s (--timeout); ending it", timeout_s);
    loom_state_print("--timeout");
    loom_job_end(124);
    return NULL;
}

/* ---- ranks ------------------------------------------------------------- */

struct loom_rank *loom_rank_self_slow(void)
{
    struct loom_ult *u = loom_ult_self();
    if (u)
        return loom_ult_get_data(u);
    return loom_job.singleton ? &loom_job.ranks[0] : NULL;
}

void loom_rank_exit(int status, bool run_atexit)
{
    struct loom_rank *r = loom_rank_self();
    r->exit_status = status;
    r->run_atexit = run_atexit && !r->in_fini;
    longjmp(r->exit_jb, 1);
}

void loom_job_abort(int status)
{
    struct loom_rank *r = loom_rank_self();
    if (r && !loom_job.singleton)
        loom_stdio_flush_rank(r);
    loom_job_end(status);
}

/* The rank's ULT: load its copy, run main, end. */
static void rank_main(void *arg)
{
    struct loom_rank *r = arg;
    if (loom_image_load(r) != LOOM_OK)
        loom_job_abort(1);
    int (*mainfn)(int, char **, char **) =
        (int (*)(int, char **, char **))loom_image_sym(r, "main");
    void (*fini)(void) = (void (*)(void))loom_image_sym(r, "loom_app_fini");
    if (!mainfn) {
        loom_log_error("%s has no main function", loom_job.program);
        loom_job_abort(1);
    }
    __atomic_store_n(&r->state, LOOM_RANK_RUNNING, __ATOMIC_RELEASE); /* others look (deadlock.c) */
    r->run_atexit = true;
    if (setjmp(r->exit_jb) == 0)
        r->exit_status = mainfn(r->argc, r->argv, environ);
    if (r->run_atexit && fini && !r->in_fini) {
        r->in_fini = true;
        if (setjmp(r->exit_jb) == 0)
            fini();
    }
    loom_sig_rank_end(r);
    loom_stdio_flush_rank(r);
    int st = r->exit_status;
    if (st != 0) {
        loom_log_error("rank %d exited with status %d; ending the job", r->rank, st);
        loom_job_end(st & 0xff ? st & 0xff : 1);
    }
    if (r->mpi_state == LOOM_MPI_INITIALIZED) {
        loom_log_error("rank %d exited without calling MPI_Finalize; ending the job", r->rank);
        loom_job_end(1);
    }
    __atomic_store_n(&r->state, LOOM_RANK_DONE, __ATOMIC_RELEASE);
}

static char **copy_argv(int argc, char **argv)
{
    char **a = calloc((size_t)argc + 1, sizeof(char *));
    if (!a)
        return NULL;
    for (int i = 0; i < argc; i++)
        if (!(a[i] = strdup(argv[i])))
            return NULL;
    return a;
}

/* The lines of /proc/self/maps: the mappings the process has now. */
static long count_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 0;
    long n = 0;
    int c;
    while ((c = getc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

/* Refuses a job whose ranks cannot fit in the kernel's limit on memory
 * mappings (vm.max_map_count), naming it and how to raise it, instead of a
 * loader error halfway through the start. LOOM_MAX_MAP_COUNT stands in for
 * the limit (tests). */
static int check_map_count(int nranks)
{
    long limit = (long)loom_opt_size(LOOM_OPT_MAX_MAP_COUNT);
    if (limit == 0) {
        FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
        if (!f || fscanf(f, "%ld", &limit) != 1)
            limit = 0;
        if (f)
            fclose(f);
        if (limit <= 0)
            return LOOM_OK;
    }
    /* A rank's copy of the program, its stack (0 when guard pages are guard
     * regions: neighbouring stacks merge), and room for what ranks map
     * while they run (large allocations, MPI's windows...). */
    long per_rank = loom_image_maps_per_rank() + (loom_ult_guard_splits() ? 2 : 0);
    long now = count_maps(), slack = 1000;
    long need = now + (long)nranks * per_rank + slack;
    if (need <= limit)
        return LOOM_OK;
    long fit = (limit - now - slack) / per_rank;
    loom_log_error("%d ranks need about %ld memory mappings (%ld per rank), more than this "
                   "system's limit vm.max_map_count = %ld, which fits about %ld ranks; raise it "
                   "(as root: sysctl -w vm.max_map_count=%ld) or run fewer ranks",
                   nranks, need, per_rank, limit, fit > 0 ? fit : 0, need + need / 4);
    return LOOM_ERR_NOMEM;
}

int loom_job_run(const struct loom_job_spec *spec)
{
    int rc = loom_topo_init();
    if (rc != LOOM_OK)
        return 1;
    rc = loom_topo_place(spec->nranks, spec->nworkers, spec->map, spec->bind, &placement);
    if (rc != LOOM_OK)
        return 1;
    if (spec->report_bindings) {
        char topo_desc[256];
        loom_topo_describe(topo_desc, sizeof topo_desc);
        fprintf(stderr, "loom: topology: %s; %d worker(s)\n", topo_desc, placement.nworkers);
        for (int i = 0; i < spec->nranks; i++) {
            int w = placement.worker_of_rank[i];
            fprintf(stderr,
                    "loom: rank %d on worker %d: core %d, l3 %d, numa %d, package %d, cpu %d\n", i,
                    w, placement.domain[LOOM_LEVEL_CORE][w], placement.domain[LOOM_LEVEL_L3][w],
                    placement.domain[LOOM_LEVEL_NUMA][w], placement.domain[LOOM_LEVEL_PACKAGE][w],
                    placement.cpu_of_worker[w]);
        }
    }
    loom_job.nranks = spec->nranks;
    loom_job.nworkers = placement.nworkers;
    loom_job.tag_output = spec->tag_output;
    loom_job.stack_size = spec->stack_size;
    loom_job.program = spec->program;
    loom_job.worker_of_rank = placement.worker_of_rank;
    loom_job.worker_domain = placement.domain;
    loom_job.ranks =
        aligned_alloc(LOOM_CACHE_LINE, (size_t)spec->nranks * sizeof(struct loom_rank));
    if (!loom_job.ranks)
        return 1;
    memset(loom_job.ranks, 0, (size_t)spec->nranks * sizeof(struct loom_rank));
    if (loom_stdio_init(spec->tag_output) != LOOM_OK ||
        loom_image_prepare(spec->program) != LOOM_OK || check_map_count(spec->nranks) != LOOM_OK)
        return 1;
    install_signal_handlers();
    loom_reap_init();
    if (loom_sig_init(spec->nranks, placement.nworkers) != LOOM_OK ||
        loom_fs_init(spec->nranks) != LOOM_OK)
        return 1;
    struct loom_sched_params sp = {
        .nworkers = placement.nworkers,
        .cpus = placement.cpu_of_worker[0] >= 0 ? placement.cpu_of_worker : NULL,
        .spin_ns = -1,
        .idle_spin_ns = -1,
        .on_worker_start = worker_start,
    };
    if (loom_sched_init(&sp) != LOOM_OK) {
        loom_log_error("cannot start %d worker threads", placement.nworkers);
        return 1;
    }
    for (int i = 0; i < spec->nranks; i++) {
        struct loom_rank *r = &loom_job.ranks[i];
        r->rank = i;
        r->worker = placement.worker_of_rank[i];
        r->argc = spec->argc;
        r->argv = copy_argv(spec->argc, spec->argv);
        if (!r->argv)
            return 1;
        if (loom_ult_create(rank_main, r, r->worker, spec->stack_size, &r->ult) != LOOM_OK) {
            loom_log_error("cannot create rank %d (stack of %zu bytes)", i, spec->stack_size);
            return 1;
        }
        loom_ult_set_data(r->ult, r);
    }
    if (spec->timeout_s > 0) {
        timeout_s = spec->timeout_s;
        pthread_t t;
        if (pthread_create(&t, NULL, timeout_thread, NULL) == 0)
            pthread_detach(t);
    }
    loom_deadlock_start();
    loom_sched_run();
    return 0;
}

void loom_job_singleton(void)
{
    if (loom_job.nranks)
        return;
    static struct loom_rank self LOOM_ALIGNED_CL;
    self.rank = 0;
    self.state = LOOM_RANK_RUNNING;
    loom_job.ranks = &self;
    loom_job.singleton = true;
    loom_job.nworkers = 1;
    loom_job.nranks = 1;
}

/* ---- hooks for the per-rank C library (src/rankc/rankc.h) -------------- */

LOOM_EXPORT int loom_rankc_hosted(void);
LOOM_EXPORT int loom_rankc_exit_status(void);
LOOM_EXPORT int loom_rankc_handlers_may_run(void);
LOOM_EXPORT void loom_rankc_lock(void);
LOOM_EXPORT void loom_rankc_unlock(void);
LOOM_EXPORT void loom_rankc_use_locale(locale_t loc);

/* Whether the caller is a rank of a job that mpiexec started: 0 in a program
 * run directly, 2 on a rank's ULT, 1 on another thread (one that a rank
 * started: its copy's state is the rank's, but it has no ULT). */
int loom_rankc_hosted(void)
{
    if (!loom_job.nranks || loom_job.singleton)
        return 0;
    return loom_ult_self() ? 2 : 1;
}

/* The status the calling rank ends with (valid while its exit handlers run). */
int loom_rankc_exit_status(void)
{
    struct loom_rank *r = loom_rank_self();
    return r ? r->exit_status : 0;
}

/* Whether an exit handler of a program's copy may run now: always in a
 * program run directly; under mpiexec only in a rank (at its end), never at
 * the end of the process, where the copies of ranks that ended by _exit or
 * quick_exit would otherwise run theirs after all. */
int loom_rankc_handlers_may_run(void)
{
    return !loom_job.nranks || loom_job.singleton || loom_ult_self();
}

/* A lock for the whole process, for libc state that the per-rank C library
 * reads on behalf of a rank (getpwent's snapshot). Its holder never switches:
 * a pthread mutex. */
static pthread_mutex_t rankc_lock = PTHREAD_MUTEX_INITIALIZER;

void loom_rankc_lock(void)
{
    pthread_mutex_lock(&rankc_lock);
}

void loom_rankc_unlock(void)
{
    pthread_mutex_unlock(&rankc_lock);
}

/* The calling rank's own locale (NULL: back to the global one). */
void loom_rankc_use_locale(locale_t loc)
{
    loom_ult_set_locale(loc);
}

/* ---- exit wrappers (mpicc links programs with --wrap=exit,_exit,_Exit) -- */

LOOM_EXPORT LOOM_NORETURN void __wrap_exit(int status);
LOOM_EXPORT LOOM_NORETURN void __wrap__exit(int status);
LOOM_EXPORT LOOM_NORETURN void __wrap__Exit(int status);

void __wrap_exit(int status)
{
    if (loom_ult_self() && !loom_job.singleton)
        loom_rank_exit(status, true);
    exit(status);
}

void __wrap__exit(int status)
{
    if (loom_ult_self() && !loom_job.singleton)
        loom_rank_exit(status, false);
    _exit(status);
}

void __wrap__Exit(int status)
{
    __wrap__exit(status);
}
