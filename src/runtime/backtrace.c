/*
 * Backtraces of parked ranks, for the job's state view and the deadlock
 * report (state.c) and for the gdb extension (loom_debug_backtrace).
 *
 * A parked rank's stack is the stack of no thread, so neither backtrace(3)
 * nor a debugger walks it by itself. The caller holds the rank in its park
 * (loom_ult_hold_begin) and backtrace(3) runs on the rank's own stack, below
 * the frame the rank left there (loom_ult_borrow_stack), with frame
 * information that makes the rank's frames its callers; libgcc's unwinder
 * knows the clones' frames too (image.c registers them). Addresses are named
 * by dladdr, in the template for a clone, else by the file's own symbol table
 * for the functions it does not export, else as file+offset.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/job.h"
#include "runtime/ult.h"
#include "util/log.h"

#define BT_MAX 64

struct bt {
    void *pc[BT_MAX];
    int n;
};

static void collect(void *arg)
{
    struct bt *b = arg;
    b->n = backtrace(b->pc, BT_MAX);
}

static struct bt warm;

static void find_loom_base(void);

static void collect_warm(void)
{
    collect(&warm);
    find_loom_base();
}

/* ---- names -------------------------------------------------------------------- */

/* A file's .symtab, mapped once (the few files of one job's backtraces). */
struct symfile {
    char path[256];
    const ElfW(Sym) * syms;
    size_t nsyms;
    const char *strs;
    size_t strsz;
};

static struct symfile files[16];
static int nfiles;
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct symfile *symfile_of(const char *path)
{
    for (int i = 0; i < nfiles; i++)
        if (strcmp(files[i].path, path) == 0)
            return &files[i];
    if (nfiles == (int)LOOM_ARRAY_SIZE(files) || strlen(path) >= sizeof files[0].path)
        return NULL;
    struct symfile *f = &files[nfiles++];
    snprintf(f->path, sizeof f->path, "%s", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return f;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(ElfW(Ehdr))) {
        close(fd);
        return f;
    }
    const char *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return f;
    size_t len = (size_t)st.st_size;
    const ElfW(Ehdr) *eh = (const void *)m;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shoff == 0 ||
        eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > len)
        return f;
    const ElfW(Shdr) *sh = (const void *)(m + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
            continue;
        const ElfW(Shdr) *str = &sh[sh[i].sh_link];
        if (sh[i].sh_offset + sh[i].sh_size > len || str->sh_offset + str->sh_size > len)
            break;
        f->syms = (const void *)(m + sh[i].sh_offset);
        f->nsyms = sh[i].sh_size / sizeof(ElfW(Sym));
        f->strs = m + str->sh_offset;
        f->strsz = str->sh_size;
        break;
    }
    return f;
}

/* The function of file path (loaded at base) that holds addr, from its
 * symbol table; NULL if it has none. */
static const char *symtab_name(const char *path, uintptr_t base, uintptr_t addr, uintptr_t *start)
{
    pthread_mutex_lock(&files_lock);
    const struct symfile *f = symfile_of(path);
    pthread_mutex_unlock(&files_lock);
    if (!f || !f->syms)
        return NULL;
    uintptr_t off = addr - base;
    for (size_t i = 0; i < f->nsyms; i++) {
        const ElfW(Sym) *s = &f->syms[i];
        if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_name >= f->strsz)
            continue;
        if (off >= s->st_value && off < s->st_value + (s->st_size ? s->st_size : 1)) {
            *start = base + s->st_value;
            return f->strs + s->st_name;
        }
    }
    return NULL;
}

/* Where libloom lies (its dladdr base), found once with the warm-up. */
static void *loom_base;

static void find_loom_base(void)
{
    Dl_info self;
    if (dladdr((const void *)loom_rank_backtrace, &self))
        loom_base = self.dli_fbase;
}

/* "name+0xoff (file)" or "file+0xoff" for a return address of rank r. */
static void name_pc(const struct loom_rank *r, uintptr_t pc, bool first, char *buf, size_t n,
                    bool *in_loom)
{
    /* A return address points after its call: name the call. */
    uintptr_t at = loom_image_unclone(r, first ? pc : pc - 1);
    uintptr_t shown = loom_image_unclone(r, pc);
    Dl_info info;
    *in_loom = false;
    if (!dladdr((void *)at, &info) || !info.dli_fname) {
        snprintf(buf, n, "0x%lx", (unsigned long)pc);
        return;
    }
    *in_loom = info.dli_fbase == loom_base;
    const char *path = info.dli_fname;
    const char *file = strrchr(path, '/');
    file = file ? file + 1 : path;
    const char *name = info.dli_sname;
    uintptr_t start = (uintptr_t)info.dli_saddr;
    uintptr_t tstart;
    const char *tname = symtab_name(path, (uintptr_t)info.dli_fbase, at, &tstart);
    if (tname && (!name || tstart > start)) {
        name = tname;
        start = tstart;
    }
    /* MPI_X is PMPI_X under another name: show the one users call. */
    if (name && strncmp(name, "PMPI_", 5) == 0)
        name++;
    else if (name && strncmp(name, "LPMPI_", 6) == 0)
        name += 2;
    if (name)
        snprintf(buf, n, "%s+0x%lx (%s)", name, (unsigned long)(shown - start), file);
    else
        snprintf(buf, n, "%s+0x%lx", file, (unsigned long)(shown - (uintptr_t)info.dli_fbase));
}

/* ---- the backtrace ------------------------------------------------------------- */

int loom_rank_backtrace(const struct loom_rank *r, char *buf, size_t n)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    buf[0] = 0;
    if (!r->ult)
        return 0;
    /* backtrace(3) loads libgcc's unwinder at its first call: here, on our
     * own stack, not on the rank's (and libloom's base is found once). */
    pthread_once(&once, collect_warm);
    struct bt b = {.n = 0};
    if (!loom_ult_borrow_stack(r->ult, collect, &b) || b.n <= 2)
        return 0;
    /* pc[0] is in collect, pc[1] in loom_ctx_borrow: the rank's frames
     * follow. Leading frames in Loom are shown from the last one, which is
     * the MPI call (or the libc call Loom parks in); frames in Loom after the
     * program's are the rank's start. */
    int first = 2, lines = 0;
    bool in_loom[BT_MAX];
    char name[BT_MAX][160];
    for (int i = first; i < b.n; i++)
        name_pc(r, (uintptr_t)b.pc[i], i == first, name[i], sizeof name[i], &in_loom[i]);
    int from = first;
    while (from + 1 < b.n && in_loom[from] && in_loom[from + 1])
        from++;
    size_t len = 0;
    for (int i = from; i < b.n && len + 8 < n; i++) {
        if (i > from && in_loom[i] && !in_loom[i - 1])
            break;
        len += (size_t)snprintf(buf + len, n - len, "%s#%d %s", lines ? "\n" : "", lines, name[i]);
        lines++;
    }
    return lines;
}
