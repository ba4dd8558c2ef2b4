/*
 * The job's descendants: the processes that ranks start (system, popen,
 * fork and exec) and theirs. A process MPI kills them when a job ends
 * abnormally; Loom's ranks share one process, so Loom does it for them:
 * mpiexec makes itself the descendants' subreaper (PR_SET_CHILD_SUBREAPER),
 * so that one whose parent exits is re-parented to mpiexec instead of init
 * and stays in the tree, and an abnormal end (a rank that failed, crashed or
 * called MPI_Abort, --timeout, a signal to mpiexec) sends SIGTERM to every
 * descendant, waits up to 100 ms, then SIGKILLs what is left until nothing
 * is. A normal end leaves them alone, as a process's children outlive it.
 *
 * Called from signal handlers: async-signal-safe (raw getdents64 over /proc,
 * static tables, no malloc, no stdio).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runtime/job.h"
#include "util/log.h"

#define MAX_PROCS 65536

static pid_t pid_of[MAX_PROCS], ppid_of[MAX_PROCS];
static bool mine[MAX_PROCS];

void loom_reap_init(void)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
}

/* Parses the ppid and state out of /proc/PID/stat; false if gone. */
static bool read_stat(pid_t pid, pid_t *ppid_p, char *state_p)
{
    char path[64], *p = path, buf[512];
    p = stpcpy(p, "/proc/");
    p = loom_fmt_long(p, pid);
    stpcpy(p, "/stat");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    /* "pid (comm) S ppid ...": comm may hold anything, so from the last ')'. */
    char *q = NULL;
    for (char *s = buf; *s; s++)
        if (*s == ')')
            q = s;
    if (!q || q[1] != ' ' || !q[2] || q[3] != ' ')
        return false;
    *state_p = q[2];
    long v = 0;
    for (q += 4; *q >= '0' && *q <= '9'; q++)
        v = v * 10 + (*q - '0');
    *ppid_p = (pid_t)v;
    return true;
}

/* Sends sig to every live descendant of this process; returns how many. */
static int signal_descendants(int sig)
{
    int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int n = 0;
    char buf[8192];
    long got;
    while (n < MAX_PROCS && (got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < got && n < MAX_PROCS;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            long pid = 0;
            const char *s = d->d_name;
            for (; *s >= '0' && *s <= '9'; s++)
                pid = pid * 10 + (*s - '0');
            char state;
            pid_t ppid;
            if (*s || pid <= 0 || !read_stat((pid_t)pid, &ppid, &state) || state == 'Z' ||
                state == 'X')
                continue;
            pid_of[n] = (pid_t)pid;
            ppid_of[n] = ppid;
            mine[n] = false;
            n++;
        }
    }
    close(fd);
    /* Mark descendants until nothing changes (a chain in any order). */
    /* The real pid: a rank's getpid is its own (signal.c). */
    pid_t self = (pid_t)syscall(SYS_getpid);
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < n; i++) {
            if (mine[i])
                continue;
            bool child = ppid_of[i] == self;
            for (int j = 0; j < n && !child; j++)
                child = mine[j] && pid_of[j] == ppid_of[i];
            if (child)
                mine[i] = changed = true;
        }
    }
    int count = 0;
    for (int i = 0; i < n; i++)
        if (mine[i] && pid_of[i] != self) {
            kill(pid_of[i], sig);
            count++;
        }
    return count;
}

/* 10 ms through the system call itself: libloom's nanosleep would park the
 * ULT that a crash handler interrupted (sleep.c). */
static void pause_10ms(void)
{
    struct timespec tick = {0, 10 * 1000 * 1000};
    syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &tick, NULL);
}

void loom_job_kill_descendants(void)
{
    if (signal_descendants(SIGTERM) == 0)
        return;
    for (int i = 0; i < 10 && signal_descendants(0) > 0; i++)
        pause_10ms();
    for (int i = 0; i < 100 && signal_descendants(SIGKILL) > 0; i++)
        pause_10ms();
}

void loom_job_end(int status)
{
    /* The first to end the job kills the descendants; a second (a crash
     * while the time limit strikes) waits for it to exit the process. */
    static atomic_int ending;
    if (atomic_exchange(&ending, 1))
        for (;;)
            pause();
    loom_job_kill_descendants();
    /* The system call itself: libloom's _exit ends only the calling rank
     * (exit.c), and this may run on a rank's ULT (MPI_Abort, a crash). */
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}
