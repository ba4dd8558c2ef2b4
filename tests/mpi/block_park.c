/*
 * A rank blocked in a system call parks only itself (issue 18). Ranks pair
 * up (2k, 2k+1); in each pair one rank blocks in a call that only its
 * partner can end, having told the partner to go just before, so on a
 * shared worker (--workers 1) a call that blocks the worker deadlocks the
 * job, which --timeout then ends:
 *  - read of an empty pipe, readv, a 1 MiB write and writev into a pipe
 *    (the writer parks when the pipe is full and returns the whole count);
 *  - recv with MSG_WAITALL, recvmsg and a 1 MiB send on a socketpair, and
 *    accept until the partner connects;
 *  - poll, select and epoll_wait without a timeout, woken by the partner,
 *    and with a timeout that passes while the partner runs;
 *  - flock held by the partner;
 *  - waitpid, wait4 and waitid for a child (and waitpid for its process
 *    group) while the partner keeps computing and communicating.
 * Every rank also reads back a regular file it wrote, checks that a
 * non-blocking descriptor still fails with EAGAIN, a zero timeout returns
 * at once, and that errno survives a call that parked.
 *   block_park            (run with --workers 1 to share one worker)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <poll.h>
#include <spawn.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"

extern char **environ;

#define BIG (1 << 20)

static int rank, size, partner;
static bool waiter; /* the pair's rank that blocks */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The waiter tells its partner to go, right before it blocks. */
static void go(void)
{
    int x = 1;
    MPI_Send(&x, 1, MPI_INT, partner, 99, MPI_COMM_WORLD);
}

/* The partner waits for go, then lets the waiter block for a while. */
static void wait_go(void)
{
    int x;
    MPI_Recv(&x, 1, MPI_INT, partner, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    usleep(20000);
}

/* The waiter's pair of descriptors (pipe or socketpair), shared with the
 * partner through a message (one process). */
static void share(int fds[2], bool sock)
{
    if (waiter) {
        if (sock)
            REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
        else
            REQUIRE(pipe2(fds, O_CLOEXEC) == 0);
        MPI_Send(fds, 2, MPI_INT, partner, 98, MPI_COMM_WORLD);
    } else {
        MPI_Recv(fds, 2, MPI_INT, partner, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static void closing(int fds[2])
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (waiter) {
        close(fds[0]);
        close(fds[1]);
    }
}

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 7 + i / 4096);
}

static void pipes(void)
{
    int p[2];
    share(p, false);
    if (waiter) {
        char b[8] = {0};
        go();
        errno = 4242;
        CHECK_EQ(read(p[0], b, sizeof b), 5);
        CHECK_EQ(errno, 4242);
        CHECK(memcmp(b, "hello", 5) == 0);
        char x[3], y[4];
        struct iovec v[2] = {{x, 3}, {y, 4}};
        go();
        CHECK_EQ(readv(p[0], v, 2), 7);
        CHECK(memcmp(x, "abc", 3) == 0 && memcmp(y, "defg", 4) == 0);
        /* The partner writes 1 MiB with one write and one writev; read in
         * 64 KiB pieces after it filled the pipe. */
        unsigned char *buf = malloc(BIG);
        for (int round = 0; round < 2; round++) {
            go();
            usleep(20000);
            size_t got = 0;
            while (got < BIG) {
                ssize_t n = read(p[0], buf + got, BIG - got < 65536 ? BIG - got : 65536);
                if (n <= 0)
                    break;
                got += (size_t)n;
            }
            CHECK_EQ(got, BIG);
            size_t bad = 0;
            for (size_t i = 0; i < got; i++)
                bad += buf[i] != pattern(i);
            CHECK_EQ(bad, 0);
        }
        free(buf);
    } else {
        wait_go();
        CHECK_EQ(write(p[1], "hello", 5), 5);
        wait_go();
        CHECK_EQ(write(p[1], "abcdefg", 7), 7);
        unsigned char *buf = malloc(BIG);
        for (size_t i = 0; i < BIG; i++)
            buf[i] = pattern(i);
        wait_go();
        errno = 4243;
        CHECK_EQ(write(p[1], buf, BIG), BIG);
        CHECK_EQ(errno, 4243);
        wait_go();
        struct iovec v[2] = {{buf, BIG / 2 + 1}, {buf + BIG / 2 + 1, BIG / 2 - 1}};
        CHECK_EQ(writev(p[1], v, 2), BIG);
        free(buf);
    }
    closing(p);
}

static void sockets(void)
{
    int s[2];
    share(s, true);
    if (waiter) {
        char b[1000];
        go();
        CHECK_EQ(recv(s[0], b, sizeof b, MSG_WAITALL), 1000);
        size_t bad = 0;
        for (int i = 0; i < 1000; i++)
            bad += b[i] != (char)(i % 3);
        CHECK_EQ(bad, 0);
        char x[4];
        struct iovec v = {x, 4};
        struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
        go();
        CHECK_EQ(recvmsg(s[0], &m, 0), 4);
        CHECK(memcmp(x, "ping", 4) == 0);
        unsigned char *buf = malloc(BIG);
        go();
        size_t got = 0;
        while (got < BIG) {
            ssize_t n = recvfrom(s[0], buf + got, BIG - got, 0, NULL, NULL);
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        CHECK_EQ(got, BIG);
        size_t bad2 = 0;
        for (size_t i = 0; i < got; i++)
            bad2 += buf[i] != pattern(i);
        CHECK_EQ(bad2, 0);
        free(buf);
    } else {
        char b[1000];
        for (int i = 0; i < 1000; i++)
            b[i] = (char)(i % 3);
        wait_go();
        for (int part = 0; part < 4; part++) {
            CHECK_EQ(send(s[1], b + part * 250, 250, 0), 250);
            usleep(5000);
        }
        wait_go();
        struct iovec v = {"ping", 4};
        struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
        CHECK_EQ(sendmsg(s[1], &m, 0), 4);
        unsigned char *buf = malloc(BIG);
        for (size_t i = 0; i < BIG; i++)
            buf[i] = pattern(i);
        wait_go();
        CHECK_EQ(sendto(s[1], buf, BIG, 0, NULL, 0), BIG);
        free(buf);
    }
    closing(s);

    /* accept waits for the partner's connect (an abstract Unix address,
     * named by the job's process: each rank has a getpid() of its own). */
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "loom_block_park_%d_%d", (int)getppid(),
             waiter ? rank : partner);
    socklen_t alen =
        (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1));
    if (waiter) {
        int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        REQUIRE(l >= 0 && bind(l, (struct sockaddr *)&a, alen) == 0 && listen(l, 1) == 0);
        go();
        int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        CHECK(c >= 0);
        char b[3] = {0};
        CHECK_EQ(recv(c, b, 2, MSG_WAITALL), 2);
        CHECK(strcmp(b, "hi") == 0);
        close(c);
        close(l);
    } else {
        wait_go();
        int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CHECK(connect(c, (struct sockaddr *)&a, alen) == 0);
        CHECK_EQ(send(c, "hi", 2, 0), 2);
        close(c);
    }
}

/* The partner's work while the waiter waits with a timeout: it must end
 * before the waiter wakes. */
static void keep_busy(double *done_p)
{
    for (int i = 0; i < 5; i++)
        usleep(10000);
    *done_p = now();
}

/* The waiter's check that its partner finished meanwhile. */
static void busy_before(double woke, double partner_done)
{
    if (!(partner_done < woke))
        printf("rank %d: partner held up (done %.3f, woke %.3f)\n", rank, partner_done, woke);
    CHECK(partner_done < woke);
}

static void polls(void)
{
    int p[2];
    share(p, false);
    double t;
    if (waiter) {
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        /* Woken by the partner. */
        go();
        CHECK_EQ(poll(&pf, 1, -1), 1);
        CHECK(pf.revents & POLLIN);
        char c;
        CHECK_EQ(read(p[0], &c, 1), 1);
        fd_set r;
        FD_ZERO(&r);
        FD_SET(p[0], &r);
        go();
        CHECK_EQ(select(p[0] + 1, &r, NULL, NULL, NULL), 1);
        CHECK(FD_ISSET(p[0], &r));
        CHECK_EQ(read(p[0], &c, 1), 1);
        int ep = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ev = {.events = EPOLLIN}, out;
        CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) == 0);
        go();
        CHECK_EQ(epoll_wait(ep, &out, 1, -1), 1);
        CHECK_EQ(read(p[0], &c, 1), 1);
        /* Timeouts that pass while the partner runs. */
        double other, t0 = now();
        go();
        CHECK_EQ(poll(&pf, 1, 150), 0);
        t = now();
        CHECK(t - t0 >= 0.15);
        MPI_Recv(&other, 1, MPI_DOUBLE, partner, 97, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        busy_before(t, other);
        FD_ZERO(&r);
        FD_SET(p[0], &r);
        struct timeval tv = {0, 150000};
        t0 = now();
        go();
        CHECK_EQ(select(p[0] + 1, &r, NULL, NULL, &tv), 0);
        t = now();
        CHECK(t - t0 >= 0.15);
        CHECK(!FD_ISSET(p[0], &r));
        CHECK(tv.tv_sec == 0 && tv.tv_usec < 150000);
        MPI_Recv(&other, 1, MPI_DOUBLE, partner, 97, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        busy_before(t, other);
        t0 = now();
        go();
        CHECK_EQ(epoll_wait(ep, &out, 1, 150), 0);
        t = now();
        CHECK(t - t0 >= 0.15);
        MPI_Recv(&other, 1, MPI_DOUBLE, partner, 97, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        busy_before(t, other);
        close(ep);
    } else {
        for (int i = 0; i < 3; i++) {
            wait_go();
            CHECK_EQ(write(p[1], "x", 1), 1);
        }
        for (int i = 0; i < 3; i++) {
            int x;
            MPI_Recv(&x, 1, MPI_INT, partner, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            keep_busy(&t);
            MPI_Send(&t, 1, MPI_DOUBLE, partner, 97, MPI_COMM_WORLD);
        }
    }
    closing(p);
}

static void locks(void)
{
    char path[64];
    if (waiter) {
        snprintf(path, sizeof path, "/tmp/loom_block_park_%d_XXXXXX", (int)getpid());
        int fd = mkostemp(path, O_CLOEXEC);
        REQUIRE(fd >= 0);
        close(fd);
        MPI_Send(path, sizeof path, MPI_CHAR, partner, 96, MPI_COMM_WORLD);
        int x;
        MPI_Recv(&x, 1, MPI_INT, partner, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fd = open(path, O_RDWR | O_CLOEXEC);
        double t0 = now();
        CHECK(flock(fd, LOCK_EX) == 0);
        CHECK(now() - t0 >= 0.05);
        CHECK(flock(fd, LOCK_UN) == 0);
        close(fd);
        MPI_Barrier(MPI_COMM_WORLD);
        unlink(path);
    } else {
        MPI_Recv(path, sizeof path, MPI_CHAR, partner, 96, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int fd = open(path, O_RDWR | O_CLOEXEC);
        CHECK(flock(fd, LOCK_EX) == 0);
        int x = 1;
        MPI_Send(&x, 1, MPI_INT, partner, 99, MPI_COMM_WORLD);
        usleep(100000);
        CHECK(flock(fd, LOCK_UN) == 0);
        close(fd);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* Starts `sh -c "sleep 0.2; exit CODE"`, in its own process group when
 * group is set. */
static pid_t spawn(int code, bool group)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "sleep 0.2; exit %d", code);
    char *argv[] = {"sh", "-c", cmd, NULL};
    posix_spawnattr_t a;
    posix_spawnattr_init(&a);
    if (group) {
        posix_spawnattr_setflags(&a, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&a, 0);
    }
    pid_t pid;
    int rc = posix_spawn(&pid, "/bin/sh", NULL, &a, argv, environ);
    posix_spawnattr_destroy(&a);
    return rc == 0 ? pid : -1;
}

static void children(void)
{
    double t = 0;
    for (int how = 0; how < 4; how++) {
        if (waiter) {
            pid_t pid = spawn(10 + how, how == 3);
            REQUIRE(pid > 0);
            int st = 0;
            go();
            if (how == 0) {
                CHECK_EQ(waitpid(pid, &st, 0), pid);
            } else if (how == 1) {
                struct rusage ru;
                CHECK_EQ(wait4(pid, &st, 0, &ru), pid);
            } else if (how == 2) {
                siginfo_t si;
                CHECK_EQ(waitid(P_PID, (id_t)pid, &si, WEXITED), 0);
                CHECK_EQ(si.si_pid, pid);
                st = si.si_status << 8;
            } else {
                CHECK_EQ(waitpid(-pid, &st, 0), pid);
            }
            t = now();
            CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 10 + how);
            double other;
            MPI_Recv(&other, 1, MPI_DOUBLE, partner, 97, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            busy_before(t, other);
        } else {
            int x;
            MPI_Recv(&x, 1, MPI_INT, partner, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            /* Compute and communicate (with itself) meanwhile. */
            volatile double sum = 0;
            for (int i = 0; i < 100; i++) {
                for (int j = 0; j < 10000; j++)
                    sum += j * 0.5;
                int v = i, w;
                MPI_Sendrecv(&v, 1, MPI_INT, 0, 5, &w, 1, MPI_INT, 0, 5, MPI_COMM_SELF,
                             MPI_STATUS_IGNORE);
                CHECK_EQ(w, i);
            }
            t = now();
            MPI_Send(&t, 1, MPI_DOUBLE, partner, 97, MPI_COMM_WORLD);
        }
    }
}

/* What every rank checks alone. */
static void alone(void)
{
    /* A regular file reads back whole. */
    char path[64];
    snprintf(path, sizeof path, "/tmp/loom_block_file_%d_%d_XXXXXX", (int)getpid(), rank);
    int fd = mkostemp(path, O_CLOEXEC);
    REQUIRE(fd >= 0);
    unsigned char *buf = malloc(BIG), *back = malloc(BIG);
    for (size_t i = 0; i < BIG; i++)
        buf[i] = pattern(i);
    CHECK_EQ(write(fd, buf, BIG), BIG);
    CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
    CHECK_EQ(read(fd, back, BIG), BIG);
    CHECK(memcmp(buf, back, BIG) == 0);
    CHECK_EQ(read(fd, back, 1), 0);
    close(fd);
    unlink(path);
    free(buf);
    free(back);

    /* A descriptor made non-blocking, and zero timeouts, do not wait. */
    int p[2];
    REQUIRE(pipe2(p, O_CLOEXEC) == 0);
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    CHECK_EQ(poll(&pf, 1, 0), 0);
    struct timeval tv = {0, 0};
    fd_set r;
    FD_ZERO(&r);
    FD_SET(p[0], &r);
    CHECK_EQ(select(p[0] + 1, &r, NULL, NULL, &tv), 0);
    CHECK(fcntl(p[0], F_SETFL, O_NONBLOCK) == 0);
    char c;
    errno = 0;
    CHECK(read(p[0], &c, 1) == -1 && errno == EAGAIN);
    close(p[0]);
    close(p[1]);
    /* A pipe with data ready, and its end (blocking: a child that another
     * rank is starting may hold the write end until its exec). */
    REQUIRE(pipe2(p, O_CLOEXEC) == 0);
    CHECK_EQ(write(p[1], "z", 1), 1);
    CHECK_EQ(read(p[0], &c, 1), 1);
    close(p[1]);
    CHECK_EQ(read(p[0], &c, 1), 0);
    close(p[0]);
    errno = 0;
    CHECK(read(-1, &c, 1) == -1 && errno == EBADF);
    /* A short wait alone: poll with a timeout and nothing else to run. */
    REQUIRE(pipe2(p, O_CLOEXEC) == 0);
    double t0 = now();
    pf.fd = p[0];
    CHECK_EQ(poll(&pf, 1, 30), 0);
    CHECK(now() - t0 >= 0.03);
    close(p[0]);
    close(p[1]);
    /* ppoll's timeout, and a socket's receive timeout, end a parked wait. */
    int s[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) == 0);
    struct timespec ts = {0, 30000000};
    pf.fd = s[0];
    t0 = now();
    CHECK_EQ(ppoll(&pf, 1, &ts, NULL), 0);
    CHECK(now() - t0 >= 0.03);
    struct timeval rcv = {0, 30000};
    CHECK(setsockopt(s[0], SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof rcv) == 0);
    t0 = now();
    errno = 0;
    CHECK(recv(s[0], &c, 1, 0) == -1 && (errno == EAGAIN || errno == EWOULDBLOCK));
    CHECK(now() - t0 >= 0.03);
    t0 = now();
    CHECK(read(s[0], &c, 1) == -1 && errno == EAGAIN);
    CHECK(now() - t0 >= 0.03);
    close(s[0]);
    close(s[1]);
    /* A child waited for alone. */
    pid_t pid = spawn(3, false);
    int st;
    CHECK_EQ(waitpid(pid, &st, 0), pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    partner = rank ^ 1;
    bool paired = partner < size;
    waiter = rank % 2 == 0;
    alone();
    MPI_Comm pairs;
    MPI_Comm_split(MPI_COMM_WORLD, paired, rank, &pairs);
    if (paired) {
        pipes();
        sockets();
        polls();
        locks();
        children();
    } else {
        /* Match the paired ranks' barriers (pipes, sockets, polls, locks). */
        for (int i = 0; i < 4; i++)
            MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Comm_free(&pairs);
    int failed = check_failures_ != 0, any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("block_park: %d ranks ok\n", size);
    MPI_Finalize();
    return check_summary();
}
