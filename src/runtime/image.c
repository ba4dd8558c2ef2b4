/*
 * Program images: one private copy of the program per rank.
 *
 * mpicc links a program as an executable shared object (see app_crt.c).
 * Here the file is read once; each rank gets a copy in an anonymous memory
 * file (memfd) that is dlopen'ed with RTLD_LOCAL. glibc identifies loaded
 * objects by path and by device/inode, so every copy is a distinct object
 * with its own .data, .bss and TLS module: globals, statics and
 * thread-locals are per rank, with no change to the program. Libraries the
 * program links dynamically are loaded once and shared by all ranks.
 *
 * Two details matter:
 *  - The memfds stay open until the job ends: the path /proc/self/fd/N of a
 *    closed memfd would be reused by the next copy, and glibc would hand back
 *    the first copy for the same path.
 *  - Only the part of the file that is mapped (the PT_LOAD extents) is
 *    copied; section headers and debug sections are dropped from the copies,
 *    so a -g build does not cost its debug info once per rank.
 */
#define _GNU_SOURCE
#include "runtime/job.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"

#define LOOM_NOTE_TYPE 0x4c4f4f4du

static char *image; /* the trimmed image every copy is made from */
static size_t image_len;

#if defined(__LP64__)
typedef Elf64_Ehdr ehdr_t;
typedef Elf64_Phdr phdr_t;
typedef Elf64_Nhdr nhdr_t;
#endif

/* Checks the ELF header; returns NULL with why filled when it is not ours. */
static const ehdr_t *check_elf(const char *p, size_t len, char *why, size_t whylen)
{
    const ehdr_t *eh = (const ehdr_t *)p;
    if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
        snprintf(why, whylen, "not an ELF file");
        return NULL;
    }
    if (eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_phoff + (size_t)eh->e_phnum * sizeof(phdr_t) > len) {
        snprintf(why, whylen, "not a 64-bit ELF file for this machine");
        return NULL;
    }
    return eh;
}

/* True when the PT_NOTE segments hold Loom's note. */
static bool has_loom_note(const char *p, size_t len, const ehdr_t *eh)
{
    const phdr_t *ph = (const phdr_t *)(p + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type != PT_NOTE || ph[i].p_offset + ph[i].p_filesz > len)
            continue;
        size_t off = ph[i].p_offset, end = off + ph[i].p_filesz;
        while (off + sizeof(nhdr_t) <= end) {
            const nhdr_t *n = (const nhdr_t *)(p + off);
            const char *name = p + off + sizeof *n;
            if (n->n_type == LOOM_NOTE_TYPE && n->n_namesz == 5 && memcmp(name, "Loom", 5) == 0)
                return true;
            off += sizeof *n + ((n->n_namesz + 3) & ~3u) + ((n->n_descsz + 3) & ~3u);
        }
    }
    return false;
}

static char *read_file(const char *path, size_t *len_p)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        errno = EINVAL;
        goto err_close;
    }
    buf = malloc((size_t)st.st_size + 1);
    if (!buf)
        goto err_close;
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n <= 0)
            goto err_free;
        got += (size_t)n;
    }
    close(fd);
    *len_p = got;
    return buf;
err_free:
    free(buf);
err_close:
    close(fd);
    return NULL;
}

bool loom_image_is_loom_program(const char *path, char *why, size_t whylen)
{
    size_t len;
    char *p = read_file(path, &len);
    if (!p) {
        snprintf(why, whylen, "cannot read %s: %s", path, strerror(errno));
        return false;
    }
    const ehdr_t *eh = check_elf(p, len, why, whylen);
    bool ok = eh && has_loom_note(p, len, eh);
    if (eh && !ok)
        snprintf(why, whylen, "%s was not linked by Loom's mpicc", path);
    free(p);
    return ok;
}

/* Raises the open-file limit so one memfd per rank fits. */
static void raise_fd_limit(rlim_t need)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need) {
        rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < need)
            loom_log_warn("the open-file limit (%lu) is below the %lu a job of this size needs",
                          (unsigned long)rl.rlim_cur, (unsigned long)need);
    }
}

int loom_image_prepare(const char *path)
{
    char why[512];
    size_t len;
    char *p = read_file(path, &len);
    if (!p) {
        loom_log_error("cannot read %s: %s", path, strerror(errno));
        return LOOM_ERR_SYSTEM;
    }
    const ehdr_t *eh = check_elf(p, len, why, sizeof why);
    if (!eh || !has_loom_note(p, len, eh)) {
        loom_log_error("%s: %s", path, eh ? "not linked by Loom's mpicc" : why);
        free(p);
        return LOOM_ERR_INVALID;
    }
    /* Keep only what the loader maps; drop section headers with the rest. */
    const phdr_t *ph = (const phdr_t *)(p + eh->e_phoff);
    size_t end = eh->e_phoff + (size_t)eh->e_phnum * sizeof(phdr_t);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > end)
            end = ph[i].p_offset + ph[i].p_filesz;
    if (end < len) {
        ehdr_t *w = (ehdr_t *)p;
        w->e_shoff = 0;
        w->e_shnum = 0;
        w->e_shstrndx = 0;
        len = end;
    }
    image = p;
    image_len = len;
    raise_fd_limit((rlim_t)loom_job.nranks + 256);
    return LOOM_OK;
}

int loom_image_load(struct loom_rank *r)
{
    char name[32], path[64];
    snprintf(name, sizeof name, "loom-rank-%d", r->rank);
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) {
        loom_log_error("rank %d: memfd_create: %s", r->rank, strerror(errno));
        return LOOM_ERR_SYSTEM;
    }
    size_t done = 0;
    while (done < image_len) {
        ssize_t n = write(fd, image + done, image_len - done);
        if (n <= 0) {
            loom_log_error("rank %d: copying the program: %s", r->rank, strerror(errno));
            goto err_close;
        }
        done += (size_t)n;
    }
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    void *dl = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (!dl) {
        loom_log_error("rank %d: loading %s: %s", r->rank, loom_job.program, dlerror());
        goto err_close;
    }
    r->memfd = fd;
    r->dl = dl;
    return LOOM_OK;
err_close:
    close(fd);
    return LOOM_ERR_SYSTEM;
}

void loom_image_release(void)
{
    for (int i = 0; i < loom_job.nranks; i++) {
        struct loom_rank *r = &loom_job.ranks[i];
        if (r->memfd > 0)
            close(r->memfd);
        r->memfd = -1;
    }
    free(image);
    image = NULL;
}
