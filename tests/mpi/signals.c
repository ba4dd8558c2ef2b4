/*
 * Each rank's signal handlers, timers, pid and working directory are its own,
 * as in a process (src/runtime/signal.c, src/runtime/rankfs.c). Every mode
 * also runs as a plain process (the program run directly, a singleton, where
 * the calls are libc's): the expected values are what a process sees.
 *   signals MODE     MODE: alarm itimer timer oldact raise kill external
 *                          pidfile chdir segv mpiwait sigwait
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <setjmp.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"

static int rank, size;
static volatile sig_atomic_t hits, hits2, seen_rank = -1, seen_code, seen_value, seen_pid;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void on_sig(int sig)
{
    (void)sig;
    hits++;
    seen_rank = rank;
}

static void on_info(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)uc;
    hits2++;
    seen_code = si->si_code;
    seen_value = si->si_value.sival_int;
    seen_pid = si->si_pid;
}

/* Spins until *flag reaches n or 10 s pass; with yield, calling
 * sched_yield (a rank that waits for another rank of its worker must let it
 * run), else calling nothing that could switch. */
static bool spin_until(volatile sig_atomic_t *flag, int n, bool yield)
{
    double t0 = now();
    while (*flag < n) {
        if (now() - t0 > 10)
            return false;
        if (yield)
            sched_yield();
    }
    return true;
}

/* alarm() in every rank: its own handler runs once per alarm, for itself,
 * whether the rank sleeps (sleep returns what is left, nanosleep EINTR and
 * the rest), pauses or spins (a 20 ms timer: a spinning rank holds its
 * worker, and every rank of it spins in turn). */
static void mode_alarm(void)
{
    signal(SIGALRM, on_sig);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(alarm(1), 0);
    /* Whole seconds left (glibc: 8 after 1.003 s). */
    double t0 = now();
    unsigned left = sleep(10), floor_left = (unsigned)(10 - (now() - t0));
    CHECK(left < 10 && (left == floor_left || left == floor_left + 1));
    CHECK_EQ(hits, 1);
    CHECK_EQ(seen_rank, rank);
    CHECK_EQ(alarm(0), 0);
    /* A second alarm, cancelled: alarm returns the seconds left, rounded. */
    alarm(5);
    CHECK_EQ(alarm(0), 5);
    MPI_Barrier(MPI_COMM_WORLD);

    struct timespec rem = {0, 0};
    alarm(1);
    t0 = now();
    CHECK_EQ(nanosleep(&(struct timespec){5, 0}, &rem), -1);
    CHECK_EQ(errno, EINTR);
    double off = (double)rem.tv_sec + (double)rem.tv_nsec * 1e-9 - (5 - (now() - t0));
    CHECK(off > -0.05 && off < 0.05);
    CHECK_EQ(hits, 2);
    MPI_Barrier(MPI_COMM_WORLD);

    alarm(1);
    errno = 0;
    CHECK_EQ(pause(), -1);
    CHECK_EQ(errno, EINTR);
    CHECK_EQ(hits, 3);
    MPI_Barrier(MPI_COMM_WORLD);

    struct itimerval once = {{0, 0}, {0, 20000}};
    CHECK_EQ(setitimer(ITIMER_REAL, &once, NULL), 0);
    CHECK(spin_until(&hits, 4, false));
    CHECK_EQ(seen_rank, rank);
    nanosleep(&(struct timespec){0, 100000000}, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(hits, 4);
}

/* A periodic ITIMER_REAL per rank, each with its own period. */
static void mode_itimer(void)
{
    signal(SIGALRM, on_sig);
    MPI_Barrier(MPI_COMM_WORLD);
    long period_us = 5000 * (rank % 4 + 1);
    struct itimerval v = {{0, period_us}, {0, period_us}}, g;
    double t0 = now();
    CHECK_EQ(setitimer(ITIMER_REAL, &v, NULL), 0);
    CHECK_EQ(getitimer(ITIMER_REAL, &g), 0);
    CHECK_EQ(g.it_interval.tv_usec, period_us);
    CHECK(g.it_value.tv_usec > 0 && g.it_value.tv_usec <= period_us);
    while (hits < 6)
        if (rank % 2)
            pause();
        else if (now() - t0 > 20)
            break;
    double took = now() - t0;
    struct itimerval off = {{0, 0}, {0, 0}};
    CHECK_EQ(setitimer(ITIMER_REAL, &off, &g), 0);
    CHECK_EQ(g.it_interval.tv_usec, period_us);
    CHECK(hits >= 6);
    /* 6 periods of its own: at least 5.5 of them (another rank's period
     * would be shorter or longer). */
    CHECK(took >= 5.5 * period_us * 1e-6);
    CHECK_EQ(getitimer(ITIMER_REAL, &g), 0);
    CHECK(g.it_value.tv_sec == 0 && g.it_value.tv_usec == 0);
    int n = hits;
    usleep(50000);
    CHECK_EQ(hits, n);
    CHECK_EQ(seen_rank, rank);
}

/* timer_create with SIGEV_SIGNAL: the rank's siginfo carries its value. */
static void mode_timer(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_info;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR2, &sa, NULL), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = SIGUSR2;
    sev.sigev_value.sival_int = 1000 + rank;
    timer_t id;
    CHECK_EQ(timer_create(CLOCK_MONOTONIC, &sev, &id), 0);
    struct itimerspec v = {{0, 0}, {0, 20000000 + 5000000 * (rank % 4)}}, g;
    CHECK_EQ(timer_settime(id, 0, &v, NULL), 0);
    CHECK_EQ(timer_gettime(id, &g), 0);
    CHECK(g.it_value.tv_sec == 0 && g.it_value.tv_nsec > 0 &&
          g.it_value.tv_nsec <= v.it_value.tv_nsec);
    if (rank % 2)
        CHECK(spin_until(&hits2, 1, false));
    else
        while (!hits2)
            pause();
    CHECK_EQ(hits2, 1);
    CHECK_EQ(seen_code, SI_TIMER);
    CHECK_EQ(seen_value, 1000 + rank);
    CHECK_EQ(timer_getoverrun(id), 0);
    CHECK_EQ(timer_gettime(id, &g), 0);
    CHECK(g.it_value.tv_sec == 0 && g.it_value.tv_nsec == 0);
    CHECK_EQ(timer_delete(id), 0);
    errno = 0;
    CHECK_EQ(timer_delete(id), -1);
    CHECK_EQ(errno, EINVAL);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void handler_a(int sig)
{
    (void)sig;
}

static void handler_b(int sig)
{
    (void)sig;
}

/* sigaction's oldact is what this rank installed, whatever the others did. */
static void mode_oldact(void)
{
    struct sigaction a, b, old;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.sa_handler = handler_a;
    b.sa_handler = handler_b;
    sigemptyset(&a.sa_mask);
    sigemptyset(&b.sa_mask);
    sigaddset(&a.sa_mask, SIGUSR2);
    a.sa_flags = SA_RESTART;
    CHECK_EQ(sigaction(SIGUSR1, NULL, &old), 0);
    CHECK(old.sa_handler == SIG_DFL);
    CHECK_EQ(sigaction(SIGUSR1, &a, NULL), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(sigaction(SIGUSR1, &b, &old), 0);
    CHECK(old.sa_handler == handler_a);
    CHECK(old.sa_flags & SA_RESTART);
    CHECK_EQ(sigismember(&old.sa_mask, SIGUSR2), 1);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(signal(SIGUSR1, SIG_IGN) == handler_b);
    CHECK(signal(SIGUSR1, SIG_DFL) == SIG_IGN);
    errno = 0;
    CHECK(signal(SIGKILL, handler_a) == SIG_ERR);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(sigaction(SIGKILL, NULL, &old), 0);
    CHECK(old.sa_handler == SIG_DFL);
}

/* raise() in one rank runs only that rank's handler; a blocked signal
 * waits in sigpending and runs when sigprocmask unblocks it. */
static void mode_raise(void)
{
    signal(SIGUSR1, on_sig);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1) {
        CHECK_EQ(raise(SIGUSR1), 0);
        CHECK_EQ(hits, 1); /* before raise returned */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    usleep(20000);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(hits, rank == size - 1);
    sigset_t s, p, old;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &s, &old), 0);
    CHECK_EQ(sigismember(&old, SIGUSR1), 0);
    int before = hits;
    raise(SIGUSR1);
    CHECK_EQ(hits, before);
    CHECK_EQ(sigpending(&p), 0);
    CHECK_EQ(sigismember(&p, SIGUSR1), 1);
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
    CHECK_EQ(hits, before + 1);
    CHECK_EQ(sigpending(&p), 0);
    CHECK_EQ(sigismember(&p, SIGUSR1), 0);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* kill(getpid()) reaches this rank; kill of another rank's pid, that rank. */
static void mode_kill(void)
{
    signal(SIGUSR1, on_sig);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_info;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, NULL);
    int *pids = malloc(sizeof(int) * (size_t)size);
    int me = (int)getpid();
    MPI_Allgather(&me, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
    CHECK_EQ(kill(getpid(), SIGUSR1), 0);
    CHECK_EQ(hits, 1);
    CHECK_EQ(kill(getpid(), 0), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(hits, 1);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    CHECK_EQ(kill(pids[to], SIGUSR2), 0);
    if (rank % 2)
        CHECK(spin_until(&hits2, 1, true));
    else
        while (!hits2)
            pause();
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(hits2, 1);
    CHECK_EQ(seen_code, SI_USER);
    CHECK_EQ(seen_pid, pids[from]);
    CHECK_EQ(hits, 1);
    free(pids);
}

/* sigwait, sigwaitinfo and sigtimedwait take the rank's own blocked signals:
 * each rank blocks SIGUSR1, sends it to the next rank's pid and waits for
 * the one from the previous rank; an empty wait times out. */
static void mode_sigwait(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    CHECK_EQ(sigprocmask(SIG_BLOCK, &set, NULL), 0);
    int *pids = malloc(sizeof(int) * (size_t)size);
    int me = (int)getpid();
    MPI_Allgather(&me, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    /* Nothing pending yet for this rank's own signal: times out. */
    siginfo_t si;
    struct timespec ten_ms = {0, 10000000};
    errno = 0;
    CHECK_EQ(sigtimedwait(&set, &si, &ten_ms), -1);
    CHECK_EQ(errno, EAGAIN);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(kill(pids[to], SIGUSR1), 0);
    memset(&si, 0, sizeof si);
    CHECK_EQ(sigwaitinfo(&set, &si), SIGUSR1);
    CHECK_EQ(si.si_signo, SIGUSR1);
    CHECK_EQ(si.si_code, SI_USER);
    CHECK_EQ((int)si.si_pid, pids[from]);
    sigset_t pend;
    CHECK_EQ(sigpending(&pend), 0);
    CHECK(!sigismember(&pend, SIGUSR1));
    MPI_Barrier(MPI_COMM_WORLD);
    /* sigwait: a signal raised by the rank itself, already pending. */
    CHECK_EQ(raise(SIGUSR2), 0);
    int sig = 0;
    CHECK_EQ(sigwait(&set, &sig), 0);
    CHECK_EQ(sig, SIGUSR2);
    CHECK_EQ(sigprocmask(SIG_UNBLOCK, &set, NULL), 0);
    free(pids);
}

/* A signal from outside to the job's process: every rank's handler runs. */
static void mode_external(void)
{
    signal(SIGUSR1, on_sig);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        /* The shell's parent is the process that runs the ranks. */
        CHECK_EQ(system("kill -USR1 $PPID"), 0);
    }
    if (rank % 2)
        CHECK(spin_until(&hits, 1, true));
    else
        while (!hits)
            pause();
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(hits, 1);
    CHECK_EQ(seen_rank, rank);
}

/* Each rank's pid is its own: scratch files named by it do not collide. */
static void mode_pidfile(void)
{
    int *pids = malloc(sizeof(int) * (size_t)size);
    int me = (int)getpid();
    MPI_Allgather(&me, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++) {
        CHECK(pids[i] > 0);
        CHECK(pids[i] != (int)getppid() || size == 1);
        for (int j = 0; j < i; j++)
            CHECK(pids[i] != pids[j]);
    }
    char path[64];
    snprintf(path, sizeof path, "/tmp/loom_signals_%d.tmp", me);
    int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK_EQ(write(fd, &rank, sizeof rank), (long)sizeof rank);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int got = -1;
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK_EQ(read(fd, &got, sizeof got), (long)sizeof got);
        close(fd);
    }
    CHECK_EQ(got, rank);
    MPI_Barrier(MPI_COMM_WORLD);
    unlink(path);
    free(pids);
}

/* chdir and umask in one rank do not move another. */
static void mode_chdir(void)
{
    char base[64] = "/tmp/loom_cwd_XXXXXX", orig[PATH_MAX], cwd[PATH_MAX], dir[128];
    if (rank == 0)
        CHECK(mkdtemp(base) != NULL);
    MPI_Bcast(base, sizeof base, MPI_CHAR, 0, MPI_COMM_WORLD);
    CHECK(getcwd(orig, sizeof orig) != NULL);
    snprintf(dir, sizeof dir, "%s/r%d", base, rank);
    CHECK_EQ(mkdir(dir, 0700), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Odd ranks move; even ranks stay, and must still be in orig. */
    if (rank % 2)
        CHECK_EQ(chdir(dir), 0);
    mode_t mask = rank % 2 ? 077 : 022;
    umask(mask);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK_EQ(strcmp(cwd, rank % 2 ? dir : orig), 0);
    char name[160];
    snprintf(name, sizeof name, rank % 2 ? "mine" : "%s/mine", dir);
    FILE *f = fopen(name, "w");
    CHECK(f != NULL);
    if (f) {
        fprintf(f, "%d\n", rank);
        fclose(f);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(name, sizeof name, "%s/mine", dir);
    int got = -1;
    f = fopen(name, "r");
    CHECK(f != NULL);
    if (f) {
        CHECK_EQ(fscanf(f, "%d", &got), 1);
        fclose(f);
    }
    CHECK_EQ(got, rank);
    struct stat st;
    CHECK_EQ(stat(name, &st), 0);
    CHECK_EQ(st.st_mode & 0777, 0666 & ~mask);
    CHECK_EQ(umask(022), mask);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(chdir(orig), 0);
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK_EQ(strcmp(cwd, orig), 0);
    unlink(name);
    rmdir(dir);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        rmdir(base);
}

static volatile double handler_time;

static void on_alarm_time(int sig)
{
    (void)sig;
    hits++;
    handler_time = MPI_Wtime();
}

/* A rank blocked in MPI_Recv runs its handler when its alarm fires, and the
 * receive goes on (the message comes 2 s later). */
static void mode_mpiwait(void)
{
    signal(SIGALRM, on_alarm_time);
    MPI_Barrier(MPI_COMM_WORLD);
    if (size < 2)
        return;
    int v = 0;
    if (rank == 0) {
        alarm(1);
        MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double done = MPI_Wtime();
        CHECK_EQ(v, 42);
        CHECK_EQ(hits, 1);
        CHECK(done - handler_time > 0.5);
    } else if (rank == 1) {
        sleep(2);
        v = 42;
        MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(hits, rank == 0 && size > 1);
}

static sigjmp_buf env;

static void on_segv(int sig)
{
    hits++;
    siglongjmp(env, sig);
}

/* A rank's own SIGSEGV handler catches its fault (a store to a PROT_NONE page); the others never
 * see it. */
static void mode_segv(void)
{
    if (rank % 2 == 0)
        signal(SIGSEGV, on_segv);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank % 2 == 0) {
        for (int i = 0; i < 2; i++) {
            int got = sigsetjmp(env, 1);
            if (got == 0) {
                /* A page nobody may touch (a NULL store is UB that UBSAN
                 * reports before it faults). */
                volatile int *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                *p = 1;
            }
            CHECK_EQ(got, SIGSEGV);
        }
        CHECK_EQ(hits, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(hits, rank % 2 == 0 ? 2 : 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    static const struct {
        const char *name;
        void (*fn)(void);
    } modes[] = {{"alarm", mode_alarm},       {"itimer", mode_itimer},   {"timer", mode_timer},
                 {"oldact", mode_oldact},     {"raise", mode_raise},     {"kill", mode_kill},
                 {"external", mode_external}, {"pidfile", mode_pidfile}, {"chdir", mode_chdir},
                 {"segv", mode_segv},         {"mpiwait", mode_mpiwait}, {"sigwait", mode_sigwait}};
    bool found = false;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(mode, modes[i].name) == 0) {
            modes[i].fn();
            found = true;
        }
    REQUIRE(found);
    int failed = check_failures_ != 0, total = 0;
    MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf("signals: %s %d ranks ok\n", mode, size);
    MPI_Finalize();
    return check_summary();
}
