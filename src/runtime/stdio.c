/*
 * Standard streams of a job: every rank its own stdout and stderr, stdin for
 * rank 0 only.
 *
 * All ranks share libc, so they share its stdout FILE. Before the first copy
 * of the program is loaded, libc's stdout and stderr are replaced with
 * unbuffered cookie streams whose write function appends to the calling
 * rank's own line buffer and writes whole lines, one write(2) each, so lines
 * of different ranks never mix, as with separate processes. With
 * --tag-output each line is prefixed "[1,RANK]<stdout>:" as Open MPI does.
 * Without tagging, stderr is written through at once. libstdc++'s std::cout
 * picks up the replaced stdout when it is loaded with the first copy.
 *
 * stdin is replaced by a stream that reads fd 0 for rank 0 only; as with
 * mpiexec's /dev/null for other ranks, their reads return nothing (fgets
 * gives NULL, getchar EOF). The stream is shared, and end-of-file is sticky
 * on a FILE (C11), so other ranks get a read error (EBADF, ferror is set)
 * rather than end-of-file, which would also end rank 0's input. The stream
 * is unbuffered, so that data read for rank 0 never sits in the FILE's
 * buffer, which another rank could read from; instead the stream's read
 * function reads ahead into a buffer of its own that it serves to rank 0
 * only, so that getchar() costs a function call, not a read(2) (10 MB
 * through getchar: 13.6 s before, on a loaded 2-core machine). A program
 * that mixes stdio with read(0, ...) sees data already taken by the read
 * ahead, as it would with a buffered stdin in its own process. A read that
 * waits for input parks rank 0 only: its read(2) is libloom's (block.c).
 */
#define _GNU_SOURCE
#include "runtime/job.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"

static bool tag;

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static int reserve(struct loom_outbuf *b, size_t need)
{
    if (b->cap >= need)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d)
        return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

/* Writes lines [p, p+n) of rank r to fd, tagged if asked, in one write. */
static void emit(int fd, const struct loom_rank *r, const char *p, size_t n)
{
    if (!tag) {
        write_all(fd, p, n);
        return;
    }
    char prefix[48];
    int plen =
        snprintf(prefix, sizeof prefix, "[1,%d]<%s>:", r->rank, fd == 1 ? "stdout" : "stderr");
    size_t lines = 1;
    for (size_t i = 0; i + 1 < n; i++)
        lines += p[i] == '\n';
    char stackbuf[4096];
    size_t total = n + lines * (size_t)plen;
    char *out = total <= sizeof stackbuf ? stackbuf : malloc(total);
    if (!out) {
        write_all(fd, p, n);
        return;
    }
    size_t o = 0, start = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n' || i + 1 == n) {
            memcpy(out + o, prefix, (size_t)plen);
            o += (size_t)plen;
            memcpy(out + o, p + start, i + 1 - start);
            o += i + 1 - start;
            start = i + 1;
        }
    }
    write_all(fd, out, o);
    if (out != stackbuf)
        free(out);
}

/* Appends to the rank's buffer and writes out every complete line. */
static ssize_t rank_write(int fd, const char *buf, size_t size)
{
    struct loom_rank *r = loom_rank_self();
    if (!r || loom_job.singleton) {
        write_all(fd, buf, size);
        return (ssize_t)size;
    }
    if (fd == 2 && !tag) {
        write_all(fd, buf, size);
        return (ssize_t)size;
    }
    struct loom_outbuf *b = fd == 1 ? &r->out : &r->err;
    const char *nl = memrchr(buf, '\n', size);
    if (!nl) {
        if (reserve(b, b->len + size) != 0)
            return -1;
        memcpy(b->data + b->len, buf, size);
        b->len += size;
        return (ssize_t)size;
    }
    size_t head = (size_t)(nl - buf) + 1;
    if (b->len) {
        if (reserve(b, b->len + head) != 0)
            return -1;
        memcpy(b->data + b->len, buf, head);
        emit(fd, r, b->data, b->len + head);
        b->len = 0;
    } else {
        emit(fd, r, buf, head);
    }
    if (head < size) {
        if (reserve(b, size - head) != 0)
            return -1;
        memcpy(b->data, buf + head, size - head);
        b->len = size - head;
    }
    return (ssize_t)size;
}

static ssize_t out_write(void *cookie, const char *buf, size_t size)
{
    return rank_write(1, buf, size);
}

static ssize_t err_write(void *cookie, const char *buf, size_t size)
{
    return rank_write(2, buf, size);
}

/* Rank 0's read-ahead of fd 0 (only rank 0 touches it). */
static struct {
    char data[65536];
    size_t pos, len;
} in_ahead;

static ssize_t in_read(void *cookie, char *buf, size_t size)
{
    struct loom_rank *r = loom_rank_self();
    if (r && r->rank != 0) {
        errno = EBADF;
        return -1;
    }
    if (in_ahead.pos == in_ahead.len) {
        /* Large requests (fread of a block) go straight to the caller. */
        bool direct = size >= sizeof in_ahead.data;
        ssize_t n;
        do
            n = read(0, direct ? buf : in_ahead.data, direct ? size : sizeof in_ahead.data);
        while (n < 0 && errno == EINTR);
        if (n <= 0 || direct)
            return n;
        in_ahead.pos = 0;
        in_ahead.len = (size_t)n;
    }
    size_t n = in_ahead.len - in_ahead.pos;
    if (n > size)
        n = size;
    memcpy(buf, in_ahead.data + in_ahead.pos, n);
    in_ahead.pos += n;
    return (ssize_t)n;
}

void loom_stdio_flush_rank(struct loom_rank *r)
{
    if (r->out.len)
        emit(1, r, r->out.data, r->out.len);
    if (r->err.len)
        emit(2, r, r->err.data, r->err.len);
    r->out.len = r->err.len = 0;
}

int loom_stdio_init(bool tag_output)
{
    tag = tag_output;
    fflush(stdout);
    fflush(stderr);
    FILE *o = fopencookie(NULL, "w", (cookie_io_functions_t){.write = out_write});
    FILE *e = fopencookie(NULL, "w", (cookie_io_functions_t){.write = err_write});
    FILE *i = fopencookie(NULL, "r", (cookie_io_functions_t){.read = in_read});
    if (!o || !e || !i)
        return LOOM_ERR_NOMEM;
    setvbuf(o, NULL, _IONBF, 0);
    setvbuf(e, NULL, _IONBF, 0);
    setvbuf(i, NULL, _IONBF, 0);
    stdout = o;
    stderr = e;
    stdin = i;
    return LOOM_OK;
}
