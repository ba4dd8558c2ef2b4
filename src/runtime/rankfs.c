/*
 * A working directory and a umask per rank. In a process, chdir moves the
 * process; under Loom all ranks share one, so a rank's chdir moved every
 * rank, and relative paths of the others resolved elsewhere. Linux keeps the
 * working directory, root and umask in a structure that threads share
 * unless one calls unshare(CLONE_FS): every worker does at its start, so its
 * directory is its own; libloom defines chdir, fchdir and umask (it precedes
 * libc in the global lookup order), and a rank that calls them gets a record
 * of its own (an O_PATH descriptor of its directory, its umask). A switch to
 * a rank whose record is not the one installed on the worker installs it
 * (fchdir, umask: ult.c's fs hook); ranks that never call them share the
 * job's start record, so their switches cost one compare.
 *
 * A switch between ranks of different directories costs an fchdir (~1 us
 * here): LOOM_RANK_CWD=0 keeps one directory for the process, as before.
 * Where unshare is refused (a seccomp filter), the directory stays the
 * process's: the first chdir of a rank warns. Threads that a rank starts
 * share their worker's record (the directory of whichever rank runs there).
 * docs/adr/0002-rank-pid-and-cwd.md has the decision and its numbers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/job.h"
#include "runtime/ult.h"
#include "util/log.h"
#include "util/options.h"

/* Under TSAN the sanitizer's interceptors keep one handler table for the
 * process and crashed at start when they called ours: there these calls stay
 * inside libloom (hidden), and libloom's own calls reach the first global
 * definition, as before (docs/architecture.md). */
#if defined(LOOM_SANITIZE_thread)
#define LOOM_INTERPOSE __attribute__((visibility("hidden")))
#define LOOM_NEXT      RTLD_DEFAULT
#else
#define LOOM_INTERPOSE LOOM_EXPORT
#define LOOM_NEXT      RTLD_NEXT
#endif

LOOM_INTERPOSE int chdir(const char *path);
LOOM_INTERPOSE int fchdir(int fd);
LOOM_INTERPOSE mode_t umask(mode_t mask);

/* A rank's directory and umask; one per rank that changed either, changed
 * in place (only while the rank runs, so the worker's copy stays true). */
struct rank_fs {
    int dir; /* O_PATH descriptor */
    mode_t mask;
};

static struct {
    int (*chdir)(const char *);
    int (*fchdir)(int);
    mode_t (*umask)(mode_t);
    struct rank_fs start; /* the job's own, for ranks without a record */
    struct rank_fs **of_rank;
    int nranks;
    bool off;            /* LOOM_RANK_CWD=0: the process's, as before */
    atomic_int unshared; /* workers that have a record of their own */
} F;

/* What is installed on this worker (install skips what is already there). */
static __thread int worker_dir = -1;
static __thread mode_t worker_mask;

/* libc's name, found on first use (a sanitizer's runtime may call it before
 * libloom's constructors run). */
#define LIBC(name)                                                                                 \
    ({                                                                                             \
        if (!F.name)                                                                               \
            F.name = (__typeof__(F.name))dlsym(LOOM_NEXT, #name);                                  \
        F.name;                                                                                    \
    })

/* ult.c's hook: installs fs (NULL: the job's) on the calling worker. */
static void install(void *p)
{
    const struct rank_fs *fs = p ? p : &F.start;
    if (fs->dir != worker_dir) {
        LIBC(fchdir)(fs->dir);
        worker_dir = fs->dir;
    }
    if (fs->mask != worker_mask) {
        LIBC(umask)(fs->mask);
        worker_mask = fs->mask;
    }
}

int loom_fs_init(int nranks)
{
    F.of_rank = calloc((size_t)nranks, sizeof *F.of_rank);
    if (!F.of_rank)
        return LOOM_ERR_NOMEM;
    F.nranks = nranks;
    F.off = !loom_opt_flag(LOOM_OPT_RANK_CWD);
    if (F.off)
        return LOOM_OK;
    F.start.dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    F.start.mask = LIBC(umask)(022);
    LIBC(umask)(F.start.mask);
    atomic_store(&F.unshared, 0);
    loom_ult_set_fs_hook(install);
    return LOOM_OK;
}

void loom_fs_worker_start(int w)
{
    (void)w;
    if (!F.off && F.start.dir >= 0 && unshare(CLONE_FS) == 0) {
        worker_dir = F.start.dir;
        worker_mask = F.start.mask;
        atomic_fetch_add(&F.unshared, 1);
    }
}

/* The calling rank's own record, made on first use; NULL where the
 * directory cannot be per rank (not on a rank's ULT, no unshare). */
static struct rank_fs *own(void)
{
    if (!F.of_rank || F.off || !loom_ult_self())
        return NULL;
    struct loom_rank *r = loom_rank_self();
    if (!r || r->rank >= F.nranks)
        return NULL;
    if (atomic_load(&F.unshared) < loom_job.nworkers) {
        static atomic_flag warned;
        if (!atomic_flag_test_and_set(&warned))
            loom_log_warn("the working directory cannot be per rank here (unshare(CLONE_FS) "
                          "refused): chdir in one rank moves every rank");
        return NULL;
    }
    struct rank_fs *fs = F.of_rank[r->rank];
    if (!fs) {
        fs = malloc(sizeof *fs);
        if (!fs)
            return NULL;
        fs->dir = -1;
        fs->mask = F.start.mask;
        F.of_rank[r->rank] = fs;
    }
    return fs;
}

/* After the worker's directory changed for the calling rank: record it. */
static int took(struct rank_fs *fs, const struct rank_fs *prev_src)
{
    int dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        int e = errno;
        worker_dir = -1;           /* moved: install for real */
        install((void *)prev_src); /* back where the rank was */
        errno = e;
        return -1;
    }
    if (fs->dir >= 0)
        close(fs->dir);
    fs->dir = dir;
    worker_dir = dir;
    loom_ult_set_fs(fs);
    return 0;
}

int chdir(const char *path)
{
    struct rank_fs *fs = own();
    if (!fs)
        return LIBC(chdir)(path);
    const struct rank_fs *prev = fs->dir >= 0 ? fs : &F.start;
    if (LIBC(chdir)(path) != 0)
        return -1;
    return took(fs, prev);
}

int fchdir(int fd)
{
    struct rank_fs *fs = own();
    if (!fs)
        return LIBC(fchdir)(fd);
    const struct rank_fs *prev = fs->dir >= 0 ? fs : &F.start;
    if (LIBC(fchdir)(fd) != 0)
        return -1;
    return took(fs, prev);
}

mode_t umask(mode_t mask)
{
    struct rank_fs *fs = own();
    if (!fs)
        return LIBC(umask)(mask);
    mode_t old = LIBC(umask)(mask);
    if (fs->dir < 0) {
        fs->dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fs->dir < 0) {
            LIBC(umask)(old);
            return old;
        }
    }
    fs->mask = mask & 0777;
    worker_mask = fs->mask;
    /* The worker's directory is the rank's (the start one if it had none). */
    worker_dir = fs->dir;
    loom_ult_set_fs(fs);
    return old;
}
