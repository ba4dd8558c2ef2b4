/*
 * Blocking system calls park only the calling rank (issue 18). A rank's
 * thread is its worker, so a rank blocked in read(2) on an empty pipe
 * stalled every rank of its worker, and two ranks of one worker that talk
 * through a pipe deadlocked. libloom therefore defines the blocking I/O
 * calls itself, as it does the sleep family (sleep.c): on a rank's ULT a
 * call first tries without blocking, and if it would block, the ULT
 * registers what it waits for with the poller (one epoll instance, watched
 * by a thread of Loom's own that wakes the ULT) and parks, and the worker
 * runs its other ranks; woken, it tries again. Anywhere else (a program run
 * outside a job, a thread a rank started, Loom's own threads, a forked
 * child) the calls are libc's.
 *
 * How each call tries without blocking:
 *  - read, write, readv, writev: by the kind of the descriptor, looked up
 *    once with fstat and cached per descriptor number (the cache entry is
 *    forgotten by close, dup2, dup3, closefrom and close_range). Regular
 *    files, directories and block devices never block: libc's call, at once.
 *    Pipes, FIFOs and sockets: preadv2/pwritev2 with RWF_NOWAIT, which for
 *    them is the same call without blocking (a blocking write that needs
 *    several rounds is done in several, and returns what libc's would).
 *    Anything else (terminals, character devices, eventfd...): poll with a
 *    zero timeout, then libc's call.
 *  - recv, recvfrom, recvmsg, send, sendto, sendmsg: MSG_DONTWAIT.
 *  - accept, accept4: poll, then libc's call. connect: on a socket made
 *    non-blocking for the call, then poll for its end (SO_ERROR).
 *  - poll, ppoll, select, pselect, epoll_wait, epoll_pwait: libc's with a
 *    zero timeout; a zero timeout goes straight to libc.
 *  - waitpid, wait, wait4, waitid: WNOHANG; the wait is on a pidfd for one
 *    child's exit, else a timer (retries 50 us to 10 ms apart).
 *  - flock: LOCK_NB, retried on the timer.
 * A descriptor the caller made non-blocking (O_NONBLOCK) gets libc's answer,
 * EAGAIN included; socket timeouts (SO_RCVTIMEO, SO_SNDTIMEO) end a parked
 * wait as they end a blocking one. errno is the call's own: unchanged on
 * success, as libc leaves it. A parked call is not interrupted by signals
 * (as a parked sleep: a rank's handlers do not run on its ULT), so it never
 * fails with EINTR, and ppoll's and pselect's signal masks are not applied
 * while it is parked.
 *
 * Still blocking the worker: another rank's or thread's data taken between
 * a ready poll and libc's call (accept, terminals), fcntl(F_SETLKW) and
 * lockf (record locks belong to the process, so ranks never contend for
 * them), and calls made inside libc (stdio's reads and writes,
 * getaddrinfo, system...). Mutexes, condition variables and semaphores:
 * lock.c.
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/ult.h"
#include "util/common.h"
#include "util/log.h"

LOOM_EXPORT ssize_t read(int fd, void *buf, size_t n);
LOOM_EXPORT ssize_t write(int fd, const void *buf, size_t n);
LOOM_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt);
LOOM_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt);
LOOM_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags);
LOOM_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr,
                             socklen_t *len);
LOOM_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags);
LOOM_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags);
LOOM_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags,
                           const struct sockaddr *addr, socklen_t len);
LOOM_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags);
LOOM_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len);
LOOM_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);
LOOM_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len);
LOOM_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout);
LOOM_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
                      const sigset_t *mask);
LOOM_EXPORT int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout);
LOOM_EXPORT int pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, const struct timespec *timeout,
                        const sigset_t *mask);
LOOM_EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout);
LOOM_EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
                            const sigset_t *mask);
LOOM_EXPORT pid_t waitpid(pid_t pid, int *status, int options);
LOOM_EXPORT pid_t wait(int *status);
LOOM_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru);
LOOM_EXPORT int waitid(idtype_t type, id_t id, siginfo_t *info, int options);
LOOM_EXPORT int flock(int fd, int op);
LOOM_EXPORT int close(int fd);
LOOM_EXPORT int dup2(int old, int new_fd);
LOOM_EXPORT int dup3(int old, int new_fd, int flags);
LOOM_EXPORT void closefrom(int low);
LOOM_EXPORT int close_range(unsigned first, unsigned last, int flags);

/* libc's definitions (the next ones after libloom: a sanitizer's
 * interceptor calls ours as its "real" one), found by a constructor or at
 * first use, whichever comes first (another library's constructor may
 * call read before ours runs). Ranks on several workers may resolve at
 * once, storing the same values: relaxed atomics, plain moves on x86. */
static struct {
    ssize_t (*read)(int, void *, size_t);
    ssize_t (*write)(int, const void *, size_t);
    ssize_t (*readv)(int, const struct iovec *, int);
    ssize_t (*writev)(int, const struct iovec *, int);
    ssize_t (*recv)(int, void *, size_t, int);
    ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
    ssize_t (*recvmsg)(int, struct msghdr *, int);
    ssize_t (*send)(int, const void *, size_t, int);
    ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
    ssize_t (*sendmsg)(int, const struct msghdr *, int);
    int (*accept)(int, struct sockaddr *, socklen_t *);
    int (*accept4)(int, struct sockaddr *, socklen_t *, int);
    int (*connect)(int, const struct sockaddr *, socklen_t);
    int (*poll)(struct pollfd *, nfds_t, int);
    int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
    int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
    int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *);
    int (*epoll_wait)(int, struct epoll_event *, int, int);
    int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
    pid_t (*waitpid)(pid_t, int *, int);
    pid_t (*wait4)(pid_t, int *, int, struct rusage *);
    int (*waitid)(idtype_t, id_t, siginfo_t *, int);
    int (*flock)(int, int);
    int (*close)(int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    void (*closefrom)(int);
    int (*close_range)(unsigned, unsigned, int);
} libc;

#define RESOLVE(fn) __atomic_store_n((void **)&libc.fn, dlsym(RTLD_NEXT, #fn), __ATOMIC_RELAXED)

__attribute__((constructor)) static void resolve(void)
{
    RESOLVE(read), RESOLVE(write), RESOLVE(readv), RESOLVE(writev);
    RESOLVE(recv), RESOLVE(recvfrom), RESOLVE(recvmsg);
    RESOLVE(send), RESOLVE(sendto), RESOLVE(sendmsg);
    RESOLVE(accept), RESOLVE(accept4), RESOLVE(connect);
    RESOLVE(poll), RESOLVE(ppoll), RESOLVE(select), RESOLVE(pselect);
    RESOLVE(epoll_wait), RESOLVE(epoll_pwait);
    RESOLVE(waitpid), RESOLVE(wait4), RESOLVE(waitid), RESOLVE(flock);
    RESOLVE(close), RESOLVE(dup2), RESOLVE(dup3), RESOLVE(closefrom), RESOLVE(close_range);
}

/* libc's fn, resolving all of them on first use. */
#define LIBC(fn)                                                                                   \
    (LOOM_LIKELY(__atomic_load_n(&libc.fn, __ATOMIC_RELAXED) != NULL) ? libc.fn                    \
                                                                      : (resolve(), libc.fn))

/* ---- where the calls park ------------------------------------------------ */

/* A forked child's copy of a ULT has no scheduler behind it. */
static bool forked;

static void after_fork_child(void)
{
    forked = true;
}

__attribute__((constructor)) static void watch_forks(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
}

static inline bool on_ult(void)
{
    return loom_ult_self() != NULL && !forked;
}

/* ---- kinds of descriptors ------------------------------------------------ */

enum kind {
    KIND_UNKNOWN, /* not looked up yet */
    KIND_PASS,    /* never blocks (regular file, directory, block device): libc's */
    KIND_NOWAIT,  /* pipe, FIFO, socket: RWF_NOWAIT tries without blocking */
    KIND_POLL,    /* anything else: poll first */
};

/* Per descriptor number below KINDS; larger ones are looked up each time.
 * Written by any thread, each store a whole answer: relaxed bytes. */
#define KINDS 4096
static unsigned char kinds[KINDS];

static enum kind kind_of(int fd)
{
    unsigned char k = KIND_UNKNOWN;
    if ((unsigned)fd < KINDS)
        k = __atomic_load_n(&kinds[fd], __ATOMIC_RELAXED);
    if (LOOM_LIKELY(k != KIND_UNKNOWN))
        return (enum kind)k;
    int saved = errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        errno = saved;
        return KIND_PASS; /* libc's call reports the error */
    }
    errno = saved;
    if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode))
        k = KIND_PASS;
    else if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
        k = KIND_NOWAIT;
    else
        k = KIND_POLL;
    if ((unsigned)fd < KINDS)
        __atomic_store_n(&kinds[fd], k, __ATOMIC_RELAXED);
    return (enum kind)k;
}

static void set_kind(int fd, enum kind k)
{
    if ((unsigned)fd < KINDS)
        __atomic_store_n(&kinds[fd], (unsigned char)k, __ATOMIC_RELAXED);
}

static void forget_range(unsigned first, unsigned last)
{
    for (unsigned fd = first; fd <= last && fd < KINDS; fd++)
        set_kind((int)fd, KIND_UNKNOWN);
}

/* Whether the caller made fd non-blocking (libc's EAGAIN is its answer). */
static bool nonblocking(int fd)
{
    int saved = errno;
    int fl = fcntl(fd, F_GETFL);
    errno = saved;
    return fl >= 0 && (fl & O_NONBLOCK);
}

/* ---- the poller ---------------------------------------------------------- */

static int poller_fd = -1;
static pthread_once_t poller_once = PTHREAD_ONCE_INIT;

/* Wakes the ULT each event names. An event may come after its ULT stopped
 * waiting (a timeout, another event first): a stale wake only leaves a
 * permit, and every park here re-tries its call. */
static void *poller_main(void *arg)
{
    (void)arg;
    struct epoll_event ev[64];
    for (;;) {
        int n = LIBC(epoll_wait)(poller_fd, ev, 64, -1);
        for (int i = 0; i < n; i++)
            loom_ult_wake(ev[i].data.ptr);
    }
    return NULL;
}

static void poller_start(void)
{
    int fd = epoll_create1(EPOLL_CLOEXEC);
    if (fd < 0) {
        loom_log_warn("blocking calls will block their worker: epoll_create1: %s", strerror(errno));
        return;
    }
    /* The poller takes no signals: they are for the job's own threads. */
    pthread_attr_t attr;
    sigset_t all;
    sigfillset(&all);
    pthread_attr_init(&attr);
    pthread_attr_setsigmask_np(&attr, &all);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    poller_fd = fd;
    pthread_t t;
    int rc = pthread_create(&t, &attr, poller_main, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        loom_log_warn("blocking calls will block their worker: no poller thread: %s", strerror(rc));
        LIBC(close)(fd);
        poller_fd = -1;
        return;
    }
    pthread_setname_np(t, "loom-poll");
}

/* What one wait registered: fd itself, or a duplicate of it when another
 * waiter already registered the same descriptor (epoll keys on both). */
struct reg {
    int fd;
    bool dup;
};

/* Arms a one-shot event for fd that wakes self; 0, or -1 with errno. */
static int arm(int fd, short events, struct loom_ult *self, struct reg *r)
{
    /* poll's event bits are epoll's. */
    struct epoll_event ev = {
        .events = (uint32_t)(events & (POLLIN | POLLPRI | POLLOUT | POLLRDNORM | POLLRDBAND |
                                       POLLWRNORM | POLLWRBAND | POLLRDHUP)) |
                  EPOLLONESHOT,
        .data.ptr = self};
    if (epoll_ctl(poller_fd, EPOLL_CTL_ADD, fd, &ev) == 0) {
        *r = (struct reg){fd, false};
        return 0;
    }
    if (errno != EEXIST)
        return -1;
    int d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (d < 0)
        return -1;
    if (epoll_ctl(poller_fd, EPOLL_CTL_ADD, d, &ev) != 0) {
        int e = errno;
        LIBC(close)(d);
        errno = e;
        return -1;
    }
    *r = (struct reg){d, true};
    return 0;
}

static void disarm(const struct reg *r)
{
    epoll_ctl(poller_fd, EPOLL_CTL_DEL, r->fd, NULL);
    if (r->dup)
        LIBC(close)(r->fd);
}

/* How long one call waits: its deadline (loom_time_ns(), 0: none), the
 * times it yielded instead of parking, and the timer's next step. */
struct waiter {
    uint64_t deadline;
    unsigned yields;
    uint64_t step_ns;
};

/* Yields to the worker's other ranks a few times before a call parks: the
 * rank that will make it ready is often one of them, and a switch costs far
 * less than arming the poller. */
#define YIELDS 4

/* Lets the caller wait for fds (or only for the deadline, n == 0):
 * returns 1 to try the call again, 0 once the deadline passed, -1 where
 * it cannot park (the caller then blocks in libc's call). */
static int park_fds(const struct pollfd *fds, nfds_t n, struct waiter *w)
{
    if (w->deadline && loom_time_ns() >= w->deadline)
        return 0;
    if (w->yields < YIELDS && loom_sched_others_ready()) {
        w->yields++;
        loom_ult_yield();
        return 1;
    }
    pthread_once(&poller_once, poller_start);
    if (poller_fd < 0)
        return -1;
    struct reg small[4], *regs = n <= 4 ? small : malloc(n * sizeof *regs);
    if (!regs)
        return -1;
    struct loom_ult *self = loom_ult_self();
    int saved = errno, rc = 1;
    bool park = true;
    nfds_t armed = 0;
    for (nfds_t i = 0; i < n; i++) {
        if (fds[i].fd < 0)
            continue;
        if (arm(fds[i].fd, fds[i].events, self, &regs[armed]) == 0) {
            armed++;
            continue;
        }
        if (errno == EPERM) /* cannot be polled: never reports anything */
            continue;
        park = false;
        rc = errno == EBADF ? 1 : -1; /* closed meanwhile: the call reports it */
        break;
    }
    if (park)
        loom_ult_park_until(w->deadline);
    for (nfds_t i = 0; i < armed; i++)
        disarm(&regs[i]);
    if (regs != small)
        free(regs);
    errno = saved;
    return rc;
}

/* park_fds for one descriptor. */
static int park_fd(int fd, short events, struct waiter *w)
{
    struct pollfd p = {.fd = fd, .events = events};
    return park_fds(&p, 1, w);
}

/* Parks on the timer, 50 us at first, twice as long each time up to 10 ms
 * (what cannot be polled: locks, children other than one's exit). */
static void park_timer(struct waiter *w)
{
    if (w->yields < YIELDS && loom_sched_others_ready()) {
        w->yields++;
        loom_ult_yield();
        return;
    }
    w->step_ns = w->step_ns ? w->step_ns * 2 : 50000;
    if (w->step_ns > 10000000)
        w->step_ns = 10000000;
    loom_ult_sleep(w->step_ns);
}

/* The deadline sec seconds and ns nanoseconds from now; 0 (none) for
 * more than a century, which no wait outlives. */
static uint64_t deadline_in(uint64_t sec, uint64_t ns)
{
    if (sec > 100ull * 365 * 86400)
        return 0;
    return loom_time_ns() + sec * 1000000000u + ns;
}

static uint64_t deadline_ms(int ms)
{
    return ms > 0 ? deadline_in((uint64_t)ms / 1000, (uint64_t)ms % 1000 * 1000000u) : 0;
}

static uint64_t deadline_ts(const struct timespec *t)
{
    return t ? deadline_in((uint64_t)t->tv_sec, (uint64_t)t->tv_nsec) : 0;
}

/* Milliseconds left to a deadline, for libc's poll (-1: none). */
static int ms_left(uint64_t deadline)
{
    if (!deadline)
        return -1;
    uint64_t now = loom_time_ns();
    return now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
}

/* The socket timeout of fd for receiving or sending, as a deadline from
 * now (0: none, or not a socket). */
static uint64_t sock_deadline(int fd, bool out)
{
    struct timeval tv;
    socklen_t len = sizeof tv;
    int saved = errno;
    int rc = getsockopt(fd, SOL_SOCKET, out ? SO_SNDTIMEO : SO_RCVTIMEO, &tv, &len);
    errno = saved;
    if (rc != 0 || (tv.tv_sec == 0 && tv.tv_usec == 0))
        return 0;
    return deadline_in((uint64_t)tv.tv_sec, (uint64_t)tv.tv_usec * 1000u);
}

/* Waits until fd polls ready for events, then returns true: the caller
 * makes libc's call (at once, too, when the program made fd non-blocking
 * or there is no poller). False when the socket timeout passed (errno
 * EAGAIN). */
static bool wait_ready(int fd, short events, bool out)
{
    struct waiter w = {0};
    bool first = true;
    int saved = errno;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        if (LIBC(poll)(&p, 1, 0) != 0) {
            errno = saved;
            return true;
        }
        if (first) {
            if (nonblocking(fd))
                return true;
            w.deadline = sock_deadline(fd, out);
            first = false;
        }
        int rc = park_fds(&p, 1, &w);
        if (rc < 0) {
            errno = saved;
            return true;
        }
        if (rc == 0) {
            errno = EAGAIN;
            return false;
        }
    }
}

/* ---- read, write, readv, writev ------------------------------------------ */

/* Advances *iov_p and *cnt_p past n bytes, copying the vector into *copy_p
 * (malloc'ed once) the first time; false if out of memory. */
static bool iov_advance(const struct iovec **iov_p, int *cnt_p, size_t n, struct iovec **copy_p)
{
    if (!*copy_p) {
        *copy_p = malloc(sizeof **copy_p * (size_t)*cnt_p);
        if (!*copy_p)
            return false;
        memcpy(*copy_p, *iov_p, sizeof **copy_p * (size_t)*cnt_p);
        *iov_p = *copy_p;
    }
    struct iovec *v = (struct iovec *)*iov_p;
    while (*cnt_p > 0 && n >= v->iov_len) {
        n -= v->iov_len;
        v++;
        (*cnt_p)--;
    }
    if (*cnt_p > 0) {
        v->iov_base = (char *)v->iov_base + n;
        v->iov_len -= n;
    }
    *iov_p = v;
    return true;
}

static size_t iov_total(const struct iovec *iov, int cnt)
{
    size_t t = 0;
    for (int i = 0; i < cnt; i++)
        t += iov[i].iov_len;
    return t;
}

/* read/readv (out false) or write/writev on a pipe, FIFO or socket: as
 * libc's blocking call returns, parking while it would block. */
static ssize_t stream_io(int fd, const struct iovec *iov, int cnt, bool out)
{
    int saved = errno;
    size_t total = out ? iov_total(iov, cnt) : 0, done = 0;
    struct iovec *copy = NULL;
    struct waiter w = {0};
    bool first = true;
    ssize_t ret;
    for (;;) {
        ssize_t r =
            out ? pwritev2(fd, iov, cnt, -1, RWF_NOWAIT) : preadv2(fd, iov, cnt, -1, RWF_NOWAIT);
        if (r >= 0) {
            done += (size_t)r;
            if (!out || done >= total || r == 0 || !iov_advance(&iov, &cnt, (size_t)r, &copy)) {
                errno = saved;
                ret = (ssize_t)done;
                break;
            }
        } else if (errno == EOPNOTSUPP && done == 0) {
            /* RWF_NOWAIT is not for this one: poll, then libc's call. */
            set_kind(fd, KIND_POLL);
            errno = saved;
            ret = wait_ready(fd, out ? POLLOUT : POLLIN, out)
                      ? (out ? LIBC(writev)(fd, iov, cnt) : LIBC(readv)(fd, iov, cnt))
                      : -1;
            break;
        } else if (errno != EAGAIN) {
            ret = done ? (ssize_t)done : -1;
            if (done)
                errno = saved;
            break;
        }
        if (first) {
            first = false;
            if (nonblocking(fd)) {
                ret = done ? (ssize_t)done : -1;
                errno = done ? saved : EAGAIN;
                break;
            }
            w.deadline = sock_deadline(fd, out);
        }
        int rc = park_fd(fd, out ? POLLOUT : POLLIN, &w);
        if (rc <= 0) {
            if (rc < 0) { /* no poller: block in libc's call */
                errno = saved;
                ssize_t b = out ? LIBC(writev)(fd, iov, cnt) : LIBC(readv)(fd, iov, cnt);
                ret = b < 0 ? (done ? (ssize_t)done : -1) : (ssize_t)done + b;
            } else { /* the socket timeout passed */
                ret = done ? (ssize_t)done : -1;
                errno = done ? saved : EAGAIN;
            }
            break;
        }
    }
    free(copy);
    return ret;
}

/* A descriptor of KIND_POLL: poll, then libc's call. */
static ssize_t polled_io(int fd, const struct iovec *iov, int cnt, bool out)
{
    if (!wait_ready(fd, out ? POLLOUT : POLLIN, out))
        return -1;
    return out ? LIBC(writev)(fd, iov, cnt) : LIBC(readv)(fd, iov, cnt);
}

ssize_t read(int fd, void *buf, size_t n)
{
    if (LOOM_LIKELY(!on_ult()) || n == 0)
        return LIBC(read)(fd, buf, n);
    enum kind k = kind_of(fd);
    if (k == KIND_PASS)
        return LIBC(read)(fd, buf, n);
    struct iovec iov = {buf, n};
    if (k == KIND_POLL)
        return polled_io(fd, &iov, 1, false);
    /* Data ready: one system call (stream_io tries again otherwise). */
    int saved = errno;
    ssize_t r = preadv2(fd, &iov, 1, -1, RWF_NOWAIT);
    if (LOOM_LIKELY(r >= 0))
        return r;
    if (errno != EAGAIN && errno != EOPNOTSUPP)
        return -1;
    errno = saved;
    return stream_io(fd, &iov, 1, false);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    if (LOOM_LIKELY(!on_ult()) || n == 0)
        return LIBC(write)(fd, buf, n);
    enum kind k = kind_of(fd);
    if (k == KIND_PASS)
        return LIBC(write)(fd, buf, n);
    struct iovec iov = {(void *)buf, n};
    if (k == KIND_POLL)
        return polled_io(fd, &iov, 1, true);
    /* Room for all of it: one system call. */
    int saved = errno;
    ssize_t r = pwritev2(fd, &iov, 1, -1, RWF_NOWAIT);
    if (LOOM_LIKELY(r == (ssize_t)n))
        return r;
    if (r < 0 && errno != EAGAIN && errno != EOPNOTSUPP)
        return -1;
    errno = saved;
    if (r > 0) { /* the rest, as a blocking write would */
        iov.iov_base = (char *)buf + r;
        iov.iov_len = n - (size_t)r;
        ssize_t more = stream_io(fd, &iov, 1, true);
        if (more < 0)
            errno = saved;
        return more < 0 ? r : r + more;
    }
    return stream_io(fd, &iov, 1, true);
}

ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    if (LOOM_LIKELY(!on_ult()) || cnt <= 0)
        return LIBC(readv)(fd, iov, cnt);
    enum kind k = kind_of(fd);
    if (k == KIND_PASS)
        return LIBC(readv)(fd, iov, cnt);
    return k == KIND_NOWAIT ? stream_io(fd, iov, cnt, false) : polled_io(fd, iov, cnt, false);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    if (LOOM_LIKELY(!on_ult()) || cnt <= 0)
        return LIBC(writev)(fd, iov, cnt);
    enum kind k = kind_of(fd);
    if (k == KIND_PASS)
        return LIBC(writev)(fd, iov, cnt);
    return k == KIND_NOWAIT ? stream_io(fd, iov, cnt, true) : polled_io(fd, iov, cnt, true);
}

/* ---- sockets ------------------------------------------------------------- */

enum sock_op { OP_RECV, OP_RECVFROM, OP_RECVMSG, OP_SEND, OP_SENDTO, OP_SENDMSG };

/* One socket call's arguments. */
struct sock_call {
    enum sock_op op;
    int fd;
    void *buf;
    size_t n;
    int flags;
    struct sockaddr *from;
    socklen_t *fromlen;
    const struct sockaddr *to;
    socklen_t tolen;
    struct msghdr *msg;
};

static ssize_t sock_try(const struct sock_call *c, int flags)
{
    switch (c->op) {
    case OP_RECV:
        return LIBC(recv)(c->fd, c->buf, c->n, flags);
    case OP_RECVFROM:
        return LIBC(recvfrom)(c->fd, c->buf, c->n, flags, c->from, c->fromlen);
    case OP_RECVMSG:
        return LIBC(recvmsg)(c->fd, c->msg, flags);
    case OP_SEND:
        return LIBC(send)(c->fd, c->buf, c->n, flags);
    case OP_SENDTO:
        return LIBC(sendto)(c->fd, c->buf, c->n, flags, c->to, c->tolen);
    default:
        return LIBC(sendmsg)(c->fd, c->msg, flags);
    }
}

/* A socket call as libc's blocking one returns: the whole of a send (a
 * stream socket's blocking send waits until all is sent), all n bytes of
 * a recv or recvfrom with MSG_WAITALL; parked while it would block. */
static ssize_t sock_call(struct sock_call *c)
{
    bool out = c->op >= OP_SEND;
    int saved = errno;
    struct waiter w = {0};
    bool first = true;
    size_t done = 0;
    struct msghdr m;
    struct iovec *copy = NULL;
    size_t total = c->n;
    if (c->op == OP_SENDMSG) {
        m = *c->msg;
        c->msg = &m;
        total = iov_total(m.msg_iov, (int)m.msg_iovlen);
    }
    bool whole = out || ((c->flags & MSG_WAITALL) && c->op != OP_RECVMSG);
    ssize_t ret;
    for (;;) {
        ssize_t r = sock_try(c, c->flags | MSG_DONTWAIT);
        if (r >= 0) {
            done += (size_t)r;
            if (!whole || done >= total || (r == 0 && !out)) {
                errno = saved;
                ret = (ssize_t)done;
                break;
            }
            if (c->op == OP_SENDMSG) {
                const struct iovec *v = m.msg_iov;
                int cnt = (int)m.msg_iovlen;
                if (!iov_advance(&v, &cnt, (size_t)r, &copy)) {
                    errno = saved;
                    ret = (ssize_t)done;
                    break;
                }
                m.msg_iov = (struct iovec *)v;
                m.msg_iovlen = (size_t)cnt;
                m.msg_control = NULL; /* sent with the first part */
                m.msg_controllen = 0;
            } else {
                c->buf = (char *)c->buf + r;
                c->n -= (size_t)r;
            }
        } else if (errno != EAGAIN) {
            ret = done ? (ssize_t)done : -1;
            if (done)
                errno = saved;
            break;
        }
        if (first) {
            first = false;
            if (nonblocking(c->fd)) {
                ret = done ? (ssize_t)done : -1;
                errno = done ? saved : EAGAIN;
                break;
            }
            w.deadline = sock_deadline(c->fd, out);
        }
        int rc = park_fd(c->fd, out ? POLLOUT : POLLIN, &w);
        if (rc < 0) { /* no poller: block in libc's call */
            errno = saved;
            ssize_t b = sock_try(c, c->flags);
            ret = b < 0 ? (done ? (ssize_t)done : -1) : (ssize_t)done + b;
            break;
        }
        if (rc == 0) {
            ret = done ? (ssize_t)done : -1;
            errno = done ? saved : EAGAIN;
            break;
        }
    }
    free(copy);
    return ret;
}

ssize_t recv(int fd, void *buf, size_t n, int flags)
{
    if (LOOM_LIKELY(!on_ult()) || (flags & MSG_DONTWAIT))
        return LIBC(recv)(fd, buf, n, flags);
    struct sock_call c = {.op = OP_RECV, .fd = fd, .buf = buf, .n = n, .flags = flags};
    return sock_call(&c);
}

ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr, socklen_t *len)
{
    if (LOOM_LIKELY(!on_ult()) || (flags & MSG_DONTWAIT))
        return LIBC(recvfrom)(fd, buf, n, flags, addr, len);
    struct sock_call c = {.op = OP_RECVFROM,
                          .fd = fd,
                          .buf = buf,
                          .n = n,
                          .flags = flags,
                          .from = addr,
                          .fromlen = len};
    return sock_call(&c);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    if (LOOM_LIKELY(!on_ult()) || (flags & MSG_DONTWAIT))
        return LIBC(recvmsg)(fd, msg, flags);
    struct sock_call c = {.op = OP_RECVMSG, .fd = fd, .flags = flags, .msg = msg};
    return sock_call(&c);
}

ssize_t send(int fd, const void *buf, size_t n, int flags)
{
    if (LOOM_LIKELY(!on_ult()) || (flags & MSG_DONTWAIT))
        return LIBC(send)(fd, buf, n, flags);
    struct sock_call c = {.op = OP_SEND, .fd = fd, .buf = (void *)buf, .n = n, .flags = flags};
    return sock_call(&c);
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *addr,
               socklen_t len)
{
    if (LOOM_LIKELY(!on_ult()) || (flags & MSG_DONTWAIT))
        return LIBC(sendto)(fd, buf, n, flags, addr, len);
    struct sock_call c = {.op = OP_SENDTO,
                          .fd = fd,
                          .buf = (void *)buf,
                          .n = n,
                          .flags = flags,
                          .to = addr,
                          .tolen = len};
    return sock_call(&c);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    if (LOOM_LIKELY(!on_ult()) || (flags & MSG_DONTWAIT))
        return LIBC(sendmsg)(fd, msg, flags);
    struct sock_call c = {.op = OP_SENDMSG, .fd = fd, .flags = flags, .msg = (struct msghdr *)msg};
    return sock_call(&c);
}

int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    if (LOOM_LIKELY(!on_ult()))
        return LIBC(accept)(fd, addr, len);
    if (!wait_ready(fd, POLLIN, false))
        return -1;
    return LIBC(accept)(fd, addr, len);
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    if (LOOM_LIKELY(!on_ult()))
        return LIBC(accept4)(fd, addr, len, flags);
    if (!wait_ready(fd, POLLIN, false))
        return -1;
    return LIBC(accept4)(fd, addr, len, flags);
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    if (LOOM_LIKELY(!on_ult()))
        return LIBC(connect)(fd, addr, len);
    int saved = errno;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & O_NONBLOCK)) {
        errno = saved;
        return LIBC(connect)(fd, addr, len);
    }
    /* Non-blocking for the call only: a socket being connected is not in
     * use elsewhere. */
    if (fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        errno = saved;
        return LIBC(connect)(fd, addr, len);
    }
    struct waiter w = {.deadline = sock_deadline(fd, true)};
    int rc;
    for (;;) {
        rc = LIBC(connect)(fd, addr, len);
        /* A Unix socket whose peer's backlog is full: retry on the timer. */
        if (rc == 0 || errno != EAGAIN || (w.deadline && loom_time_ns() >= w.deadline))
            break;
        park_timer(&w);
    }
    int e = errno;
    fcntl(fd, F_SETFL, fl);
    if (rc == 0 || e != EINPROGRESS) {
        errno = rc == 0 ? saved : e;
        return rc;
    }
    if (!wait_ready(fd, POLLOUT, true)) {
        errno = ETIMEDOUT;
        return -1;
    }
    int err = 0;
    socklen_t elen = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0)
        return -1;
    if (err) {
        errno = err;
        return -1;
    }
    errno = saved;
    return 0;
}

/* ---- poll, select, epoll ------------------------------------------------- */

/* poll's wait with a deadline (0: none). */
static int poll_until(struct pollfd *fds, nfds_t n, uint64_t deadline)
{
    struct waiter w = {.deadline = deadline};
    for (;;) {
        int r = LIBC(poll)(fds, n, 0);
        if (r != 0)
            return r;
        int rc = park_fds(fds, n, &w);
        if (rc == 0)
            return 0;
        if (rc < 0)
            return LIBC(poll)(fds, n, ms_left(w.deadline));
    }
}

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
    if (LOOM_LIKELY(!on_ult()) || timeout == 0)
        return LIBC(poll)(fds, n, timeout);
    return poll_until(fds, n, deadline_ms(timeout));
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask)
{
    if (LOOM_LIKELY(!on_ult()) || (timeout && timeout->tv_sec == 0 && timeout->tv_nsec == 0))
        return LIBC(ppoll)(fds, n, timeout, mask);
    if (timeout && (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= 1000000000L))
        return LIBC(ppoll)(fds, n, timeout, mask); /* EINVAL */
    return poll_until(fds, n, deadline_ts(timeout));
}

/* The descriptors of select's sets as pollfds (*n_p of them, malloc'ed);
 * NULL if out of memory. */
static struct pollfd *sets_to_poll(int nfds, const fd_set *r, const fd_set *w, const fd_set *e,
                                   nfds_t *n_p)
{
    struct pollfd *p = malloc(sizeof *p * (size_t)(nfds > 0 ? nfds : 1));
    if (!p)
        return NULL;
    nfds_t n = 0;
    for (int fd = 0; fd < nfds; fd++) {
        short ev =
            (short)((r && FD_ISSET(fd, r) ? POLLIN : 0) | (w && FD_ISSET(fd, w) ? POLLOUT : 0) |
                    (e && FD_ISSET(fd, e) ? POLLPRI : 0));
        if (ev)
            p[n++] = (struct pollfd){.fd = fd, .events = ev};
    }
    *n_p = n;
    return p;
}

/* select and pselect: libc's with a zero timeout, parked in between;
 * returns with *left_ns what remained of the timeout. */
static int select_until(int nfds, fd_set *r, fd_set *w, fd_set *e, uint64_t deadline,
                        uint64_t *left_ns)
{
    fd_set r0, w0, e0;
    if (r)
        r0 = *r;
    if (w)
        w0 = *w;
    if (e)
        e0 = *e;
    struct pollfd *p = NULL;
    nfds_t n = 0;
    struct waiter wt = {.deadline = deadline};
    int ret;
    for (;;) {
        struct timeval zero = {0, 0};
        ret = LIBC(select)(nfds, r, w, e, &zero);
        if (ret != 0)
            break;
        if (!p && !(p = sets_to_poll(nfds, r ? &r0 : NULL, w ? &w0 : NULL, e ? &e0 : NULL, &n))) {
            errno = ENOMEM;
            ret = -1;
            break;
        }
        int rc = park_fds(p, n, &wt);
        if (rc == 0)
            break;
        if (r)
            *r = r0;
        if (w)
            *w = w0;
        if (e)
            *e = e0;
        if (rc < 0) {
            int ms = ms_left(deadline);
            struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
            ret = LIBC(select)(nfds, r, w, e, ms < 0 ? NULL : &tv);
            break;
        }
    }
    free(p);
    uint64_t now = loom_time_ns();
    *left_ns = deadline > now ? deadline - now : 0;
    return ret;
}

int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout)
{
    if (LOOM_LIKELY(!on_ult()) || nfds < 0 || nfds > FD_SETSIZE ||
        (timeout && timeout->tv_sec == 0 && timeout->tv_usec == 0))
        return LIBC(select)(nfds, r, w, e, timeout);
    if (timeout && (timeout->tv_sec < 0 || timeout->tv_usec < 0))
        return LIBC(select)(nfds, r, w, e, timeout); /* EINVAL */
    uint64_t deadline =
        timeout ? deadline_in((uint64_t)timeout->tv_sec, (uint64_t)timeout->tv_usec * 1000u) : 0;
    uint64_t left;
    int ret = select_until(nfds, r, w, e, deadline, &left);
    if (timeout) { /* Linux's select reports the time not slept */
        timeout->tv_sec = (time_t)(left / 1000000000u);
        timeout->tv_usec = (suseconds_t)(left % 1000000000u / 1000u);
    }
    return ret;
}

int pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, const struct timespec *timeout,
            const sigset_t *mask)
{
    if (LOOM_LIKELY(!on_ult()) || nfds < 0 || nfds > FD_SETSIZE ||
        (timeout && timeout->tv_sec == 0 && timeout->tv_nsec == 0))
        return LIBC(pselect)(nfds, r, w, e, timeout, mask);
    if (timeout && (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= 1000000000L))
        return LIBC(pselect)(nfds, r, w, e, timeout, mask); /* EINVAL */
    uint64_t left;
    return select_until(nfds, r, w, e, deadline_ts(timeout), &left);
}

/* epoll_wait and epoll_pwait: the epoll descriptor itself polls readable
 * while it has events. */
static int epoll_until(int epfd, struct epoll_event *ev, int max, int timeout)
{
    struct waiter w = {.deadline = deadline_ms(timeout)};
    for (;;) {
        int r = LIBC(epoll_wait)(epfd, ev, max, 0);
        if (r != 0)
            return r;
        int rc = park_fd(epfd, POLLIN, &w);
        if (rc == 0)
            return 0;
        if (rc < 0)
            return LIBC(epoll_wait)(epfd, ev, max, ms_left(w.deadline));
    }
}

int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
    if (LOOM_LIKELY(!on_ult()) || timeout == 0)
        return LIBC(epoll_wait)(epfd, ev, max, timeout);
    return epoll_until(epfd, ev, max, timeout);
}

int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout, const sigset_t *mask)
{
    if (LOOM_LIKELY(!on_ult()) || timeout == 0)
        return LIBC(epoll_pwait)(epfd, ev, max, timeout, mask);
    return epoll_until(epfd, ev, max, timeout);
}

/* ---- children ------------------------------------------------------------ */

/* Parks until child pid may have changed state: on a pidfd when the wait is
 * for that one child's exit only, else on the timer. */
static void park_child(pid_t pid, bool exit_only, int *pidfd_p, struct waiter *w)
{
    if (pid > 0 && exit_only && *pidfd_p == -1) {
        *pidfd_p = (int)syscall(SYS_pidfd_open, pid, 0);
        if (*pidfd_p < 0)
            *pidfd_p = -2; /* no pidfds: the timer */
    }
    if (*pidfd_p >= 0 && park_fd(*pidfd_p, POLLIN, w) >= 0)
        return;
    park_timer(w);
}

static void close_pidfd(int pidfd)
{
    if (pidfd >= 0)
        LIBC(close)(pidfd);
}

pid_t waitpid(pid_t pid, int *status, int options)
{
    return wait4(pid, status, options, NULL);
}

pid_t wait(int *status)
{
    return wait4(-1, status, 0, NULL);
}

pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
    if (LOOM_LIKELY(!on_ult()) || (options & WNOHANG))
        return ru ? LIBC(wait4)(pid, status, options, ru) : LIBC(waitpid)(pid, status, options);
    int saved = errno, pidfd = -1;
    struct waiter w = {0};
    bool exit_only = !(options & (WUNTRACED | WCONTINUED));
    pid_t r;
    while ((r = LIBC(wait4)(pid, status, options | WNOHANG, ru)) == 0)
        park_child(pid, exit_only, &pidfd, &w);
    int e = errno;
    close_pidfd(pidfd);
    errno = r < 0 ? e : saved;
    return r;
}

int waitid(idtype_t type, id_t id, siginfo_t *info, int options)
{
    if (LOOM_LIKELY(!on_ult()) || (options & WNOHANG))
        return LIBC(waitid)(type, id, info, options);
    siginfo_t own;
    if (!info)
        info = &own;
    int saved = errno, pidfd = -1, r;
    struct waiter w = {0};
    bool exit_only = (options & (WEXITED | WSTOPPED | WCONTINUED)) == WEXITED;
    for (;;) {
        info->si_pid = 0;
        r = LIBC(waitid)(type, id, info, options | WNOHANG);
        if (r != 0 || info->si_pid != 0)
            break;
        if (type == P_PIDFD && exit_only) {
            if (park_fd((int)id, POLLIN, &w) < 0)
                park_timer(&w);
        } else {
            park_child(type == P_PID ? (pid_t)id : -1, exit_only, &pidfd, &w);
        }
    }
    int e = errno;
    close_pidfd(pidfd);
    errno = r < 0 ? e : saved;
    return r;
}

/* ---- locks --------------------------------------------------------------- */

int flock(int fd, int op)
{
    if (LOOM_LIKELY(!on_ult()) || (op & LOCK_NB) || !(op & (LOCK_SH | LOCK_EX)))
        return LIBC(flock)(fd, op);
    int saved = errno, r;
    struct waiter w = {0};
    while ((r = LIBC(flock)(fd, op | LOCK_NB)) != 0 && errno == EWOULDBLOCK)
        park_timer(&w);
    if (r == 0)
        errno = saved;
    return r;
}

/* ---- descriptors that go away -------------------------------------------- */

/* Forgets each number's kind after the call (before it, a lookup on
 * another thread could cache the old file's). */
int close(int fd)
{
    int r = LIBC(close)(fd);
    set_kind(fd, KIND_UNKNOWN);
    return r;
}

int dup2(int old, int new_fd)
{
    int r = LIBC(dup2)(old, new_fd);
    set_kind(new_fd, KIND_UNKNOWN);
    return r;
}

int dup3(int old, int new_fd, int flags)
{
    int r = LIBC(dup3)(old, new_fd, flags);
    set_kind(new_fd, KIND_UNKNOWN);
    return r;
}

void closefrom(int low)
{
    LIBC(closefrom)(low);
    if (low >= 0)
        forget_range((unsigned)low, KINDS - 1);
}

int close_range(unsigned first, unsigned last, int flags)
{
    int r = LIBC(close_range)(first, last, flags);
    if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
        forget_range(first, last);
    return r;
}
