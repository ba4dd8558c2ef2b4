/*
 * mpiexec (also installed as mpirun): starts a Loom job.
 *
 * A program linked by Loom's mpicc runs as ONE process: this one. Its ranks
 * are user-level threads on one worker thread per core, each rank with its
 * own copy of the program (runtime/job.c, runtime/image.c). Any other
 * program (`mpiexec -n 2 hostname`) runs as N ordinary processes, with
 * LOOM_RANK and LOOM_SIZE in their environment; an MPI program built with
 * another MPI's mpicc then runs as N singletons of that MPI.
 *
 * Options follow Open MPI and MPICH usage; see usage() and docs/mpiexec.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coll/coll.h"
#include "runtime/job.h"
#include "util/log.h"
#include "util/options.h"

static void usage(FILE *f)
{
    fprintf(
        f,
        "Usage: mpiexec [options] PROGRAM [ARGS...]\n"
        "Runs PROGRAM as an MPI job. A program built with Loom's mpicc runs as one process whose\n"
        "ranks are user-level threads; any other program runs as N ordinary processes.\n"
        "\n"
        "  -n, -np N               number of ranks (default 1)\n"
        "  --bind-to core|none     pin each worker thread to a core (default core)\n"
        "  --map-by core|l3|numa|package\n"
        "                          place consecutive ranks on workers: in blocks on consecutive\n"
        "                          cores (core, default), or round-robin over L3 caches, NUMA\n"
        "                          nodes or packages\n"
        "  -x VAR[=VALUE]          set VAR (to VALUE, or to its value here) for the job\n"
        "  -genv VAR VALUE         set VAR to VALUE for the job (also -env)\n"
        "  --report-bindings       print the topology and where each rank runs\n"
        "  --tag-output            prefix each output line with [1,RANK]<stdout>: or <stderr>:\n"
        "  --timeout SECONDS       end the job after SECONDS (exit status 124; also "
        "MPIEXEC_TIMEOUT)\n"
        "  --debug-rank R          rank R (a list 0,5-7, or all) waits in MPI_Init for gdb and\n"
        "                          prints how to attach (also LOOM_DEBUG_RANK)\n"
        "  --report-state-after SECONDS\n"
        "                          print what every rank does, once, after SECONDS (the job goes\n"
        "                          on; kill -QUIT <mpiexec's pid> prints it at any time)\n"
        "  --workers W             worker threads (default: one per core; also LOOM_WORKERS)\n"
        "  --stack-size BYTES      stack of each rank, with k/m/g suffix (default 8m; also\n"
        "                          LOOM_STACK_SIZE)\n"
        "  --oversubscribe, --allow-run-as-root\n"
        "                          accepted for Open MPI compatibility (Loom needs neither)\n"
        "  --version               print the version and exit\n"
        "  -h, --help              print this help and exit\n"
        "\n"
        "Exit status: 0 when every rank exits 0; else the status of the first rank that failed,\n"
        "128+N when a rank is killed by signal N, or 85 when the job deadlocks (every rank waits\n"
        "in MPI and none can go on; LOOM_DEADLOCK=0 turns the check off). stdin goes to rank 0.\n");
}

static LOOM_NORETURN void die_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "mpiexec: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nRun 'mpiexec --help' for the options.\n");
    exit(1);
}

static long parse_long(const char *opt, const char *v, long min)
{
    char *end;
    errno = 0;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || errno || end == v || *end || n < min) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s needs an integer >= %ld, not '%%s'", opt, min);
        die_usage(msg, v ? v : "");
    }
    return n;
}

static size_t parse_size(const char *opt, const char *v)
{
    char *end;
    errno = 0;
    unsigned long long n = v ? strtoull(v, &end, 10) : 0;
    if (!v || errno || end == v)
        die_usage("--stack-size needs a size such as 8m, not '%s'", v ? v : "");
    switch (*end) {
    case 'k':
    case 'K':
        n <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        n <<= 20;
        end++;
        break;
    case 'g':
    case 'G':
        n <<= 30;
        end++;
        break;
    default:
        break;
    }
    if (*end || n < 65536)
        die_usage("--stack-size needs a size of at least 64k, such as 8m, not '%s'", v);
    (void)opt;
    return (size_t)n;
}

/* Finds prog in PATH as execvp would; returns a malloc'ed path or NULL. */
static char *find_program(const char *prog)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0 ? strdup(prog) : NULL;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char buf[PATH_MAX];
    for (const char *p = path; *p;) {
        const char *c = strchr(p, ':');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        snprintf(buf, sizeof buf, "%.*s/%s", (int)n, n ? p : ".", prog);
        struct stat st;
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return strdup(buf);
        if (!c)
            break;
        p = c + 1;
    }
    return NULL;
}

/* ---- ordinary programs: N processes ----------------------------------- */

static pid_t *children;
static int nchildren;

static void forward_signal(int sig)
{
    for (int i = 0; i < nchildren; i++)
        if (children[i] > 0)
            kill(children[i], sig);
}

static void proc_timeout(int sig)
{
    loom_log_raw("loom: the job reached its time limit (--timeout); ending it\n");
    forward_signal(SIGKILL);
    _exit(124);
}

struct relay {
    int fd;
    int rank;
    const char *stream;
    char buf[4096];
    size_t len;
};

/* Writes the complete lines in r->buf (all of it at EOF) with their tags. */
static void relay_flush(struct relay *r, bool eof)
{
    size_t start = 0;
    for (size_t i = 0; i < r->len; i++) {
        if (r->buf[i] == '\n' || (eof && i + 1 == r->len) ||
            (i + 1 == r->len && r->len == sizeof r->buf)) {
            dprintf(strcmp(r->stream, "stdout") == 0 ? 1 : 2, "[1,%d]<%s>:%.*s", r->rank, r->stream,
                    (int)(i + 1 - start), r->buf + start);
            start = i + 1;
        }
    }
    memmove(r->buf, r->buf + start, r->len - start);
    r->len -= start;
}

static int run_processes(int n, char *path, char **argv, bool tag, double timeout)
{
    children = calloc((size_t)n, sizeof(pid_t));
    struct relay *relays = tag ? calloc((size_t)n * 2, sizeof(struct relay)) : NULL;
    if (!children || (tag && !relays))
        loom_fatal("out of memory");
    nchildren = n;
    signal(SIGINT, forward_signal);
    signal(SIGTERM, forward_signal);
    signal(SIGHUP, forward_signal);
    if (timeout > 0) {
        signal(SIGALRM, proc_timeout);
        alarm((unsigned)(timeout + 0.999));
    }
    char nbuf[16];
    snprintf(nbuf, sizeof nbuf, "%d", n);
    setenv("LOOM_SIZE", nbuf, 1);
    for (int i = 0; i < n; i++) {
        int pout[2] = {-1, -1}, perr[2] = {-1, -1};
        if (tag && (pipe2(pout, O_CLOEXEC) != 0 || pipe2(perr, O_CLOEXEC) != 0))
            loom_fatal("pipe: %s", strerror(errno));
        pid_t pid = fork();
        if (pid < 0)
            loom_fatal("fork: %s", strerror(errno));
        if (pid == 0) {
            char rbuf[16];
            snprintf(rbuf, sizeof rbuf, "%d", i);
            setenv("LOOM_RANK", rbuf, 1);
            if (i != 0) {
                int nul = open("/dev/null", O_RDONLY);
                if (nul >= 0)
                    dup2(nul, 0);
            }
            if (tag) {
                dup2(pout[1], 1);
                dup2(perr[1], 2);
            }
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            execv(path, argv);
            fprintf(stderr, "mpiexec: cannot run %s: %s\n", path, strerror(errno));
            _exit(127);
        }
        children[i] = pid;
        if (tag) {
            close(pout[1]);
            close(perr[1]);
            relays[2 * i] = (struct relay){.fd = pout[0], .rank = i, .stream = "stdout"};
            relays[2 * i + 1] = (struct relay){.fd = perr[0], .rank = i, .stream = "stderr"};
        }
    }
    if (tag) {
        struct pollfd *pfd = calloc((size_t)n * 2, sizeof *pfd);
        int open_fds = 2 * n;
        while (open_fds > 0) {
            for (int i = 0; i < 2 * n; i++)
                pfd[i] = (struct pollfd){.fd = relays[i].fd, .events = POLLIN};
            if (poll(pfd, (nfds_t)(2 * n), -1) < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            for (int i = 0; i < 2 * n; i++) {
                if (relays[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                struct relay *r = &relays[i];
                ssize_t got = read(r->fd, r->buf + r->len, sizeof r->buf - r->len);
                if (got > 0) {
                    r->len += (size_t)got;
                    relay_flush(r, false);
                } else if (got == 0 || errno != EINTR) {
                    relay_flush(r, true);
                    close(r->fd);
                    r->fd = -1;
                    open_fds--;
                }
            }
        }
        free(pfd);
    }
    int status = 0;
    for (int left = n; left > 0;) {
        int ws;
        pid_t pid = wait(&ws);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        left--;
        int rank = -1;
        for (int i = 0; i < n; i++)
            if (children[i] == pid) {
                rank = i;
                children[i] = 0;
            }
        if (status)
            continue;
        if (WIFEXITED(ws) && WEXITSTATUS(ws) != 0) {
            status = WEXITSTATUS(ws);
            loom_log_error("rank %d exited with status %d; ending the job", rank, status);
            forward_signal(SIGTERM);
        } else if (WIFSIGNALED(ws)) {
            status = 128 + WTERMSIG(ws);
            loom_log_error("rank %d terminated by signal %d (%s); ending the job", rank,
                           WTERMSIG(ws), strsignal(WTERMSIG(ws)));
            forward_signal(SIGTERM);
        }
    }
    free(relays);
    return status;
}

/* ---- main ------------------------------------------------------------- */

/* Matches "--name" and "-name" (Open MPI and MPICH spellings). */
static bool is_opt(const char *arg, const char *name)
{
    if (arg[0] != '-')
        return false;
    arg += arg[1] == '-' ? 2 : 1;
    return strcmp(arg, name) == 0;
}

int main(int argc, char **argv)
{
    struct loom_job_spec spec = {
        .nranks = 1,
        .nworkers = (int)loom_opt_size(LOOM_OPT_WORKERS),
        .stack_size = (size_t)loom_opt_size(LOOM_OPT_STACK_SIZE),
        .bind = LOOM_BIND_CORE,
        .map = LOOM_MAP_CORE,
    };
    const char *t = getenv("MPIEXEC_TIMEOUT");
    if (t && *t)
        spec.timeout_s = (double)parse_long("MPIEXEC_TIMEOUT", t, 0);
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (is_opt(a, "n") || is_opt(a, "np") || is_opt(a, "c")) {
            spec.nranks = (int)parse_long(a, v, 1), i++;
        } else if (is_opt(a, "bind-to")) {
            if (v && strcmp(v, "core") == 0)
                spec.bind = LOOM_BIND_CORE;
            else if (v && strcmp(v, "none") == 0)
                spec.bind = LOOM_BIND_NONE;
            else
                die_usage("--bind-to takes core or none, not '%s'", v ? v : "");
            i++;
        } else if (is_opt(a, "map-by")) {
            if (v && strcmp(v, "core") == 0)
                spec.map = LOOM_MAP_CORE;
            else if (v && (strcmp(v, "l3") == 0 || strcmp(v, "l3cache") == 0))
                spec.map = LOOM_MAP_L3;
            else if (v && strcmp(v, "numa") == 0)
                spec.map = LOOM_MAP_NUMA;
            else if (v && (strcmp(v, "package") == 0 || strcmp(v, "socket") == 0))
                spec.map = LOOM_MAP_PACKAGE;
            else
                die_usage("--map-by takes core, l3, numa or package, not '%s'", v ? v : "");
            i++;
        } else if (strcmp(a, "-x") == 0) {
            if (!v)
                die_usage("%s needs VAR or VAR=VALUE", a);
            const char *eq = strchr(v, '=');
            if (eq) {
                char *name = strndup(v, (size_t)(eq - v));
                setenv(name, eq + 1, 1);
                free(name);
            } else if (!getenv(v)) {
                fprintf(stderr, "mpiexec: warning: -x %s: %s is not set here\n", v, v);
            }
            i++;
        } else if (is_opt(a, "genv") || is_opt(a, "env")) {
            if (!v || i + 2 >= argc)
                die_usage("%s needs VAR VALUE", a);
            setenv(v, argv[i + 2], 1);
            i += 2;
        } else if (is_opt(a, "report-bindings")) {
            spec.report_bindings = true;
        } else if (is_opt(a, "tag-output")) {
            spec.tag_output = true;
        } else if (is_opt(a, "timeout")) {
            spec.timeout_s = (double)parse_long(a, v, 1), i++;
        } else if (is_opt(a, "debug-rank")) {
            if (!v)
                die_usage("%s needs a rank, a list (0,5-7) or all", a);
            setenv("LOOM_DEBUG_RANK", v, 1), i++;
        } else if (is_opt(a, "report-state-after")) {
            char secs[32];
            snprintf(secs, sizeof secs, "%ld", parse_long(a, v, 1)), i++;
            setenv("LOOM_REPORT_STATE_AFTER", secs, 1);
        } else if (is_opt(a, "workers")) {
            spec.nworkers = (int)parse_long(a, v, 1), i++;
        } else if (is_opt(a, "stack-size")) {
            spec.stack_size = parse_size(a, v), i++;
        } else if (is_opt(a, "oversubscribe") || is_opt(a, "allow-run-as-root") ||
                   is_opt(a, "envall")) {
            /* nothing to do: Loom never refuses more ranks than cores */
        } else if (is_opt(a, "version") || is_opt(a, "V")) {
            printf("mpiexec (Loom) %s\n", LOOM_VERSION);
            return 0;
        } else if (is_opt(a, "help") || is_opt(a, "h")) {
            usage(stdout);
            return 0;
        } else {
            die_usage("unknown option '%s'", a);
        }
    }
    if (i >= argc)
        die_usage("%s", "no program to run");
    char *path = find_program(argv[i]);
    if (!path) {
        fprintf(stderr, "mpiexec: cannot find the program '%s' (not found, or not executable)\n",
                argv[i]);
        return 127;
    }
    char why[512];
    if (!loom_image_is_loom_program(path, why, sizeof why)) {
        int rc = run_processes(spec.nranks, path, argv + i, spec.tag_output, spec.timeout_s);
        free(path);
        return rc;
    }
    spec.program = path;
    spec.argc = argc - i;
    spec.argv = argv + i;
    /* Before the ranks exist: the calibration, when the machine has no
     * valid cache file yet, needs the cores to itself. */
    loom_coll_model_init();
    int rc = loom_job_run(&spec);
    fflush(stdout);
    return rc;
}
