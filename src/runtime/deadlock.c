/*
 * Deadlock detection (issue 24). All ranks of a node are ULTs of this
 * process, so Loom can see that a job can no longer move and say why, where
 * a process MPI waits until someone kills it.
 *
 * The layers above bracket every wait of a rank in MPI with
 * loom_mpi_wait_enter/leave and a description (what it waits for, which
 * ranks, which collective call). A thread of Loom's ("loom-watch")
 * samples the job every SAMPLE_NS and declares a deadlock when, in every
 * sample over at least STABLE_NS:
 *   - every worker sleeps on its futex (no ULT runs, none is ready, none
 *     polls), and
 *   - every rank that has not ended is parked inside an MPI wait, in the
 *     same one as at the first sample (its entry count unchanged, so none
 *     of its waits completed meanwhile), on nothing that can complete from
 *     outside MPI (generalized requests).
 * Why that is a deadlock: a rank's MPI wait completes only through another
 * rank's MPI call (a send, a receive that copies, a collective's step, an
 * RMA synchronization) or through that rank's own progress inside its wait,
 * and a parked rank makes none; threads that are not ranks do not call MPI
 * (Loom grants MPI_THREAD_FUNNELED at most), and a worker wakes for any
 * wake-up, so a job in which all of the above held across a whole sample
 * interval had nothing running that could wake anyone. The stability
 * interval only adds margin: a wake-up racing with a sample shows as a
 * worker awake or a changed count at the next one. What is not seen:
 * signal handlers and timers of ranks (a rank parked in MPI with an alarm
 * armed still counts: its handler cannot call MPI), ranks blocked in the
 * kernel outside Loom's parking (then their worker is awake: no report).
 *
 * The report lists each rank's wait (consecutive ranks with the same text
 * grouped), and a cycle of the wait-for graph when there is one; the job
 * then ends with LOOM_EXIT_DEADLOCK. docs/deadlock.md has the formats.
 *
 * The same thread prints the job's state on request (SIGQUIT to the process,
 * LOOM_REPORT_STATE_AFTER, and --timeout from job.c) while the job goes on.
 * A rank's wait record lives on its stack, so the printer reads it only for
 * ranks it holds in their park (loom_ult_hold_begin: a rank woken meanwhile
 * stays inside its park until the hold ends) and says of the others only
 * what their own atomics tell (running, in an MPI call or not). The deadlock
 * report is the same snapshot, in which every rank is held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/job.h"
#include "runtime/ult.h"
#include "util/log.h"
#include "util/options.h"

#define SAMPLE_NS   (100 * 1000 * 1000ull)
#define STABLE_NS   (500 * 1000 * 1000ull)
#define MAX_PEERS   16
#define DESCRIPTION 256
#define VIEW_GAP_NS (250 * 1000 * 1000ull)

/* Where say() writes instead of stderr (loom_state_snapshot_to). */
static struct {
    char *buf;
    size_t cap, len;
} sink;

/* Prints one line of the report (stderr, whole). */
__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (!sink.buf) {
        loom_log_raw(line);
        return;
    }
    size_t n = strlen(line);
    if (sink.len + n < sink.cap) {
        memcpy(sink.buf + sink.len, line, n + 1);
        sink.len += n;
    }
}

/* The rank's wait count goes up by one (only the rank writes it: a load and
 * a release store, no read-modify-write on the waiting path). */
static inline void bump(struct loom_rank *r)
{
    uint32_t s = atomic_load_explicit(&r->mpi_wait_seq, memory_order_relaxed);
    atomic_store_explicit(&r->mpi_wait_seq, s + 1, memory_order_release);
}

void loom_mpi_wait_enter(const struct loom_mpi_wait *w)
{
    struct loom_rank *r = loom_rank_self();
    if (!r || r->mpi_wait_depth++ > 0)
        return;
    atomic_store_explicit(&r->mpi_wait, w, memory_order_relaxed);
    atomic_store_explicit(&r->mpi_wait_external, w->external, memory_order_relaxed);
    bump(r);
}

void loom_mpi_wait_leave(void)
{
    struct loom_rank *r = loom_rank_self();
    if (!r || --r->mpi_wait_depth > 0)
        return;
    bump(r);
    atomic_store_explicit(&r->mpi_wait, NULL, memory_order_relaxed);
}

int loom_mpi_wait_suspend(struct loom_rank *r)
{
    int depth = r->mpi_wait_depth;
    if (depth > 0) {
        r->mpi_wait_depth = 0;
        bump(r);
    }
    return depth;
}

void loom_mpi_wait_resume(struct loom_rank *r, int depth)
{
    if (depth > 0) {
        r->mpi_wait_depth = depth;
        bump(r);
    }
}

/* ---- sampling ---------------------------------------------------------------- */

/* Whether the job is stuck now; seq[i]: rank i's wait entry count (0 for
 * a rank that ended). */
static bool stuck_now(uint32_t *seq)
{
    if (!loom_sched_all_asleep())
        return false;
    bool waiting = false;
    for (int i = 0; i < loom_job.nranks; i++) {
        struct loom_rank *r = &loom_job.ranks[i];
        if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == LOOM_RANK_DONE) {
            seq[i] = 0;
            continue;
        }
        /* Only the rank's own atomics: its wait record lives on its stack,
         * which it may reuse as soon as it runs again. */
        uint32_t s = atomic_load_explicit(&r->mpi_wait_seq, memory_order_acquire);
        if (!(s & 1) || atomic_load_explicit(&r->mpi_wait_external, memory_order_relaxed) ||
            !r->ult || !loom_ult_parked(r->ult))
            return false;
        seq[i] = s;
        waiting = true;
    }
    return waiting && loom_sched_all_asleep();
}

_Atomic(loom_unreceived_fn) loom_deadlock_unreceived;

/* ---- the report -------------------------------------------------------------- */

/* The snapshot being printed: which ranks are held in their park (only
 * their wait records may be read), and whether the job is live (the state
 * view) or deadlocked. */
static struct {
    bool *held;
    bool live;
} snap;

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct loom_mpi_wait *wait_of(int i)
{
    struct loom_rank *r = &loom_job.ranks[i];
    if (!snap.held[i] || __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == LOOM_RANK_DONE)
        return NULL;
    if (!(atomic_load_explicit(&r->mpi_wait_seq, memory_order_acquire) & 1))
        return NULL;
    return atomic_load_explicit(&r->mpi_wait, memory_order_relaxed);
}
/* The ranks that rank i waits for (up to MAX_PEERS): for a collective,
 * the members not in the same call. */
static int edges(int i, int *out)
{
    const struct loom_mpi_wait *w = wait_of(i);
    if (!w || !w->peers)
        return 0;
    int peers[4096];
    int n = w->peers(w, peers, (int)LOOM_ARRAY_SIZE(peers));
    int k = 0;
    for (int j = 0; j < n && k < MAX_PEERS; j++) {
        int p = peers[j];
        if (p < 0 || p >= loom_job.nranks || p == i)
            continue;
        if (w->group) {
            const struct loom_mpi_wait *pw = wait_of(p);
            if (pw && pw->group == w->group)
                continue; /* in the same call */
        }
        out[k++] = p;
    }
    return k;
}

/* Prints a cycle of the wait-for graph, if it finds one. */
static void print_cycle(void)
{
    int n = loom_job.nranks;
    /* color 0: unseen, 1: on the current path, 2: done */
    unsigned char *color = calloc((size_t)n, 1);
    int *path = malloc((size_t)n * sizeof *path);
    int *next_edge = calloc((size_t)n, sizeof *next_edge);
    int(*adj)[MAX_PEERS] = malloc((size_t)n * sizeof *adj);
    int *nadj = calloc((size_t)n, sizeof *nadj);
    if (!color || !path || !next_edge || !adj || !nadj)
        goto out;
    for (int i = 0; i < n; i++)
        nadj[i] = edges(i, adj[i]);
    for (int s = 0; s < n; s++) {
        if (color[s])
            continue;
        int depth = 0;
        path[depth++] = s;
        color[s] = 1;
        while (depth) {
            int v = path[depth - 1];
            if (next_edge[v] == nadj[v]) {
                color[v] = 2;
                depth--;
                continue;
            }
            int u = adj[v][next_edge[v]++];
            if (color[u] == 1) {
                char buf[1024];
                int len = snprintf(buf, sizeof buf, "loom: wait-for cycle:");
                int from = depth - 1;
                while (path[from] != u)
                    from--;
                /* A long cycle shows its first and last 8 ranks and its length. */
                int cyc = depth - from;
                for (int j = from; j < depth; j++) {
                    if (cyc > 20 && j == from + 8) {
                        len += snprintf(buf + len, sizeof buf - (size_t)len, " ... (%d more) ->",
                                        cyc - 16);
                        j = depth - 8;
                    }
                    len += snprintf(buf + len, sizeof buf - (size_t)len, " %d ->", path[j]);
                }
                snprintf(buf + len, sizeof buf - (size_t)len, " %d", u);
                if (cyc > 20)
                    say("%s (%d ranks)\n", buf, cyc);
                else
                    say("%s\n", buf);
                goto out;
            }
            if (!color[u]) {
                color[u] = 1;
                path[depth++] = u;
            }
        }
    }
    say("loom: no wait-for cycle: the ranks wait for ranks that have ended or for "
        "calls that are never made\n");
out:
    free(color);
    free(path);
    free(next_edge);
    free(adj);
    free(nadj);
}

/* Appends to buf the members of collective wait w (rank i's) that are not
 * in the same call, as ranges ("; not in this call: ranks 3, 5-7"). */
static void append_absent(int i, const struct loom_mpi_wait *w, char *buf)
{
    static int peers[65536];
    int n = w->peers(w, peers, (int)LOOM_ARRAY_SIZE(peers));
    size_t len = strlen(buf);
    if (n <= 0)
        return;
    const char *sep =
        snap.live ? "; members not parked in this call: " : "; members not in this call: ";
    int first = -1, last = -1;
    for (int j = 0; j <= n; j++) {
        int p = j < n ? peers[j] : -1;
        bool absent = false;
        if (p >= 0 && p < loom_job.nranks && p != i) {
            const struct loom_mpi_wait *pw = wait_of(p);
            absent = !pw || pw->group != w->group;
        }
        if (absent && first >= 0 && p == last + 1) {
            last = p;
            continue;
        }
        if (first >= 0 && len + 32 < DESCRIPTION) {
            len +=
                (size_t)(first == last
                             ? snprintf(buf + len, DESCRIPTION - len, "%s%d", sep, first)
                             : snprintf(buf + len, DESCRIPTION - len, "%s%d-%d", sep, first, last));
            sep = ", ";
        } else if (first >= 0 && len + 8 < DESCRIPTION) {
            len += (size_t)snprintf(buf + len, DESCRIPTION - len, ", ...");
            break;
        }
        first = last = absent ? p : -1;
    }
}

static void describe(int i, char *buf)
{
    struct loom_rank *r = &loom_job.ranks[i];
    const struct loom_mpi_wait *w = wait_of(i);
    int state = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
    if (state == LOOM_RANK_DONE)
        snprintf(buf, DESCRIPTION, "has ended");
    else if (state == LOOM_RANK_NEW)
        snprintf(buf, DESCRIPTION, "has not started");
    else if (!snap.held[i])
        snprintf(buf, DESCRIPTION, "%s",
                 atomic_load_explicit(&r->mpi_wait_seq, memory_order_relaxed) & 1
                     ? "runs in an MPI call (not parked: it polls, or was just woken)"
                     : "runs (computes, or is in a system call that does not park)");
    else if (!w)
        snprintf(buf, DESCRIPTION,
                 "is parked outside MPI (a sleep, a lock, a condition variable, "
                 "a semaphore, or a blocking call that parks)");
    else if (w->describe)
        w->describe(w, buf, DESCRIPTION);
    else
        snprintf(buf, DESCRIPTION, "waits in MPI");
    if (w && w->group && w->peers) {
        /* The members of one call usually come in a row: once per call. */
        static uint64_t group;
        static char suffix[DESCRIPTION];
        size_t len = strlen(buf);
        if (w->group != group) {
            group = w->group;
            suffix[0] = 0;
            append_absent(i, w, suffix);
        }
        snprintf(buf + len, DESCRIPTION - len, "%s", suffix);
    }
}

#define BT_TEXT 4096

/* Rank i's description and, if asked for, its backtrace. */
static void look(int i, bool backtraces, char *desc, char *bt)
{
    describe(i, desc);
    bt[0] = 0;
    if (backtraces && snap.held[i])
        (void)loom_rank_backtrace(&loom_job.ranks[i], bt, BT_TEXT);
}

/* Prints a line per rank, consecutive ranks with the same text (and the
 * same backtrace) grouped, each followed by its backtrace. */
static void print_ranks(bool backtraces)
{
    int n = loom_job.nranks;
    char cur[DESCRIPTION], next[DESCRIPTION];
    char *cbt = malloc(BT_TEXT), *nbt = malloc(BT_TEXT);
    if (!cbt || !nbt) {
        free(cbt);
        free(nbt);
        return;
    }
    int first = 0;
    look(0, backtraces, cur, cbt);
    for (int i = 1; i <= n; i++) {
        if (i < n) {
            look(i, backtraces, next, nbt);
            if (strcmp(next, cur) == 0 && strcmp(nbt, cbt) == 0)
                continue;
        }
        if (i - 1 == first)
            say("loom: rank %d: %s\n", first, cur);
        else
            say("loom: ranks %d-%d: %s\n", first, i - 1, cur);
        for (char *line = cbt, *end; *line; line = end) {
            end = strchr(line, '\n');
            int len = end ? (int)(end - line) : (int)strlen(line);
            say("loom:     %.*s\n", len, line);
            end = end ? end + 1 : line + len;
        }
        first = i;
        memcpy(cur, next, sizeof cur);
        char *t = cbt;
        cbt = nbt;
        nbt = t;
    }
    free(cbt);
    free(nbt);
    /* Acquire: pairs with the point-to-point layer's release once its
     * per-rank state exists (the first MPI_Init; a view may come before). */
    loom_unreceived_fn unreceived =
        atomic_load_explicit(&loom_deadlock_unreceived, memory_order_acquire);
    if (unreceived)
        for (int i = 0; i < n; i++) {
            char buf[512];
            buf[0] = 0;
            unreceived(i, buf, sizeof buf);
            if (buf[0])
                say("loom: rank %d has not received %s\n", i, buf);
        }
}

/* Takes the snapshot (holds the parked ranks where they are), prints it
 * with head first, and lets the ranks go on. */
static void snapshot_locked(bool live, const char *head, bool backtraces)
{
    int n = loom_job.nranks;
    static bool *held;
    if (!held)
        held = calloc((size_t)n, sizeof *held);
    if (!held)
        return;
    snap.held = held;
    snap.live = live;
    loom_ult_hold_begin();
    /* A rank in an MPI wait that runs now (woken by its wait's own timeout,
     * or still polling before it parks) parks again in a moment and then
     * stays: give such ranks a little time, all of them together (5 ms
     * in a live view, which holds the job still meanwhile). */
    uint64_t until = loom_time_ns() + (live ? 5 : 100) * 1000 * 1000ull;
    for (int i = 0; i < n; i++) {
        struct loom_rank *r = &loom_job.ranks[i];
        snap.held[i] = r->ult && loom_ult_held(r->ult);
        while (!snap.held[i] && r->ult &&
               __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == LOOM_RANK_RUNNING &&
               (atomic_load_explicit(&r->mpi_wait_seq, memory_order_relaxed) & 1) &&
               loom_time_ns() < until) {
            sched_yield();
            snap.held[i] = loom_ult_held(r->ult);
        }
    }
    say("%s", head);
    print_ranks(backtraces);
    if (!live)
        print_cycle();
    loom_ult_hold_end();
    snap.held = NULL;
}

static void print_snapshot(bool live, const char *head)
{
    pthread_mutex_lock(&report_lock);
    snapshot_locked(live, head, loom_opt_flag(LOOM_OPT_BACKTRACE));
    pthread_mutex_unlock(&report_lock);
}

static void report(double seconds)
{
    char head[256];
    snprintf(head, sizeof head,
             "loom: deadlock: every rank that has not ended waits in MPI, and none of "
             "their waits can complete (nothing changed for %.1f s); ending the job\n",
             seconds);
    print_snapshot(false, head);
}

/* ---- the job's state, on request ------------------------------------------------ */

static sem_t wake;
static bool wake_ready;
static _Atomic int quit_requests;
static uint64_t started_ns;

static void state_head(const char *why, char *head, size_t len)
{
    int n = loom_job.nranks, ended = 0, parked_in_mpi = 0;
    for (int i = 0; i < n; i++) {
        struct loom_rank *r = &loom_job.ranks[i];
        ended += __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == LOOM_RANK_DONE;
        parked_in_mpi += (atomic_load_explicit(&r->mpi_wait_seq, memory_order_relaxed) & 1) != 0;
    }
    snprintf(head, len,
             "loom: state of the job after %.1f s (%s): %d rank%s on %d worker%s, %d ended, %d "
             "in an MPI wait\n",
             (double)(loom_time_ns() - started_ns) / 1e9, why, n, n == 1 ? "" : "s",
             loom_job.nworkers, loom_job.nworkers == 1 ? "" : "s", ended, parked_in_mpi);
}

void loom_state_print(const char *why)
{
    if (!loom_job.ranks || loom_job.singleton)
        return;
    char head[256];
    state_head(why, head, sizeof head);
    print_snapshot(true, head);
    loom_debug_state_printed();
}

bool loom_state_snapshot_to(char *buf, size_t n, bool backtraces)
{
    if (!loom_job.ranks || loom_job.singleton || n == 0)
        return false;
    /* Called by a debugger into a stopped process: no waiting for a lock
     * that a stopped thread may hold. */
    if (pthread_mutex_trylock(&report_lock) != 0)
        return false;
    char head[256];
    state_head("asked by a debugger", head, sizeof head);
    sink.buf = buf;
    sink.cap = n;
    sink.len = 0;
    buf[0] = 0;
    snapshot_locked(true, head, backtraces);
    sink.buf = NULL;
    pthread_mutex_unlock(&report_lock);
    return true;
}

/* SIGQUIT to the process (kill -QUIT <mpiexec's pid>): async-signal-safe. */
static void quit_handler(int sig)
{
    (void)sig;
    int e = errno;
    atomic_fetch_add_explicit(&quit_requests, 1, memory_order_relaxed);
    if (wake_ready)
        sem_post(&wake);
    errno = e;
}

bool loom_state_sigquit_taken(void)
{
    return wake_ready && loom_opt_flag(LOOM_OPT_SIGQUIT_STATE);
}

/* ---- the watcher's thread ----------------------------------------------------- */

static void *watcher(void *arg)
{
    (void)arg;
    int n = loom_job.nranks;
    uint32_t *seq = calloc((size_t)n, sizeof *seq), *first = calloc((size_t)n, sizeof *first);
    if (!seq || !first)
        return NULL;
    bool deadlock = loom_opt_flag(LOOM_OPT_DEADLOCK);
    uint64_t state_after = loom_opt_size(LOOM_OPT_REPORT_STATE_AFTER);
    bool have = false;
    uint64_t since = 0, last_view = 0;
    for (;;) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)SAMPLE_NS;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        while (sem_timedwait(&wake, &ts) != 0 && errno == EINTR)
            ;
        /* At most one view every VIEW_GAP_NS: the ranks run between views
         * (a storm of SIGQUITs must not hold the job still). */
        if (atomic_load_explicit(&quit_requests, memory_order_relaxed) &&
            loom_time_ns() - last_view >= VIEW_GAP_NS) {
            atomic_store_explicit(&quit_requests, 0, memory_order_relaxed);
            loom_state_print("mpiexec received SIGQUIT");
            last_view = loom_time_ns();
        }
        if (state_after && loom_time_ns() - started_ns >= state_after * 1000000000ull) {
            state_after = 0;
            loom_state_print("--report-state-after");
        }
        if (!deadlock)
            continue;
        if (!stuck_now(seq)) {
            have = false;
            continue;
        }
        /* A wait that completed changed its rank's count (left, or left
         * and entered another): the counts alone tell. */
        uint64_t now = loom_time_ns();
        if (!have || memcmp(seq, first, (size_t)n * sizeof *seq) != 0) {
            have = true;
            since = now;
            memcpy(first, seq, (size_t)n * sizeof *seq);
            continue;
        }
        if (now - since >= STABLE_NS) {
            report((double)(now - since) / 1e9);
            loom_job_end(LOOM_EXIT_DEADLOCK);
        }
    }
}

void loom_deadlock_start(void)
{
    if (loom_job.singleton || loom_job.nranks < 1)
        return;
    started_ns = loom_time_ns();
    if (sem_init(&wake, 0, 0) != 0)
        return;
    wake_ready = true;
    if (loom_opt_flag(LOOM_OPT_SIGQUIT_STATE)) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = quit_handler;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGQUIT, &sa, NULL);
    }
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, watcher, NULL) == 0)
        pthread_setname_np(t, "loom-watch");
    pthread_attr_destroy(&a);
}
