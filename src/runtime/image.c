/*
 * Program images: per rank a copy of what the program writes, one shared
 * copy of its text.
 *
 * mpicc links a program as an executable shared object (see app_crt.c).
 * glibc identifies loaded objects by path and by device/inode, so the
 * program dlopen'ed from a distinct anonymous memory file (memfd) per rank is
 * a distinct object with its own .data, .bss and TLS module: globals, statics
 * and thread-locals are per rank, with no change to the program. Libraries
 * the program links dynamically are loaded once and shared by all ranks.
 *
 * What a rank costs (docs/architecture.md, "Per-rank globals"):
 *  - The program (its PT_LOAD extents) is written once into a master memfd.
 *    A rank's memfd holds what the dynamic loader reads while it loads
 *    (headers, notes, dynamic symbols and strings, hash and version tables,
 *    relocations) and the writable segment; text, rodata and unwind tables
 *    are holes there, which cost nothing.
 *  - Right after dlopen, the read-only segments are mapped from the master
 *    over the rank's as one mapping (read and execute) shared by all ranks,
 *    and the writable segment and its .bss become one private mapping of the
 *    master into which the bytes the loader changed (relocations) are
 *    copied: a rank owns the pages it writes, the others stay the master's.
 *    The rank's memfd is then closed and freed. Two mappings per rank.
 *  - Nothing may run the rank's text before that: DT_INIT and DT_INIT_ARRAY
 *    are retagged in the copies, so that dlopen finds no constructors, and
 *    the load runs them afterwards as glibc does (the process's argc and
 *    argv, environ, on the rank's ULT, DT_INIT and then the array in order).
 *    A program whose loading runs or writes its own text (IRELATIVE
 *    relocations, IFUNC symbols, TEXTREL) gets a whole copy per rank instead,
 *    dlopen runs its constructors, and it is remapped the same way after.
 *  - glibc hands back the object already loaded from a path it has seen,
 *    and a closed memfd's number is reused: each load opens /proc/PID/fd/N
 *    spelled its own way ("/" or "/." per bit of a load counter first).
 *    Once loaded, the copy's link-map name becomes the program's path, so
 *    that dladdr and a debugger attached later name (and read) the file.
 * Lost to sharing: relro (the writable segment is one read-write mapping)
 * and the split between executable and read-only pages (the headers and
 * rodata are mapped executable with the text).
 */
#define _GNU_SOURCE
#include "runtime/job.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/ult.h"
#include "util/log.h"
#include "util/options.h"

/* TSAN builds load plain whole copies (MODE_PLAIN: no remapping). With
 * sparse copies ranks died of SIGBUS at start (not analysed yet), and the
 * remap's mremap leaves TSAN's shadow of the moved pages behind, so the
 * next rank mapped at that address "races" with the previous one. */
#ifdef __SANITIZE_THREAD__
#define TSAN_BUILD 1
#else
#define TSAN_BUILD 0
#endif

extern char **environ;

#define LOOM_NOTE_TYPE 0x4c4f4f4du

#if defined(__LP64__)
typedef Elf64_Ehdr ehdr_t;
typedef Elf64_Phdr phdr_t;
typedef Elf64_Nhdr nhdr_t;
typedef Elf64_Shdr shdr_t;
typedef Elf64_Dyn dyn_t;
typedef Elf64_Rela rela_t;
typedef Elf64_Sym sym_t;
#define ELF_R_TYPE  ELF64_R_TYPE
#define ELF_ST_TYPE ELF64_ST_TYPE
#define ELF_ST_BIND ELF64_ST_BIND
#define ELF_ST_INFO ELF64_ST_INFO
#endif
#if defined(__x86_64__)
#define R_IRELATIVE R_X86_64_IRELATIVE
#elif defined(__aarch64__)
#define R_IRELATIVE R_AARCH64_IRELATIVE
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

/* How ranks get their copies (decided once, by loom_image_prepare). */
enum image_mode {
    MODE_SPARSE, /* loader's tables and writable segment per rank; remapped;
                    constructors run by Loom */
    MODE_FULL,   /* whole file per rank, remapped after dlopen */
    MODE_PLAIN,  /* whole file per rank, as loaded (a layout not remapped) */
};

/* A range of file offsets [lo, hi). */
struct range {
    size_t lo, hi;
};

/* Retagged DT_INIT, DT_INIT_ARRAY and DT_INIT_ARRAYSZ: tags in the
 * OS-specific range that glibc ignores. */
#define LOOM_DT_INIT         0x6000d00cu
#define LOOM_DT_INIT_ARRAY   0x6000d019u
#define LOOM_DT_INIT_ARRAYSZ 0x6000d01bu

static struct {
    char *image; /* the trimmed file: what the master holds */
    size_t len;
    int master_fd;
    enum image_mode mode;
    size_t page;
    /* The read-only segments as one range of addresses from the object's
     * base [ro_lo, ro_hi), at file offset ro_off, and their protection. */
    uintptr_t ro_lo, ro_hi;
    size_t ro_off;
    int ro_prot;
    /* The writable segment: its pages [rw_lo, rw_hi) from the base (.bss
     * included), at file offset rw_off; its bytes at [rw_seg, rw_end) of the
     * file. */
    uintptr_t rw_lo, rw_hi;
    size_t rw_off, rw_seg, rw_end;
    /* MODE_SPARSE: what a rank's memfd holds, and the constructors. */
    struct range *copy;
    int ncopy;
    /* MODE_SPARSE: the pages of the writable segment's file part (from
     * rw_off) that the loader reads or writes (relocation targets, the
     * dynamic section, the TLS image, the GOT's header); NULL: all. */
    unsigned char *rw_used;
    size_t rw_npages;
    uintptr_t init, init_array;
    size_t init_count;
    int maps_per_rank;
    int path_bits;
    size_t nsyms; /* dynamic symbols */
    atomic_uint loads;
} img = {.master_fd = -1};

/* The process's argc and argv, which glibc passes to the constructors of
 * the objects that dlopen loads. */
static int proc_argc;
static char **proc_argv;

__attribute__((constructor)) static void keep_args(int argc, char **argv, char **envp)
{
    (void)envp;
    proc_argc = argc;
    proc_argv = argv;
}

/* The copy's writable segment is compared and copied as raw bytes: in
 * MODE_FULL an ASAN-instrumented program's constructors have already
 * poisoned the redzones between its globals, which these loops read. */
#define RAW_BYTES __attribute__((no_sanitize("address", "hwaddress")))

/* Whether n bytes at a equal those at b (ref NULL: zeros). */
RAW_BYTES static bool same_bytes(const char *a, const char *b, size_t n)
{
    static const uint64_t zero;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        __builtin_memcpy(&x, a + i, 8);
        __builtin_memcpy(&y, b ? b + i : (const char *)&zero, 8);
        if (x != y)
            return false;
    }
    for (; i < n; i++)
        if (a[i] != (b ? b[i] : 0))
            return false;
    return true;
}

RAW_BYTES static void copy_bytes(char *to, const char *from, size_t n)
{
    for (size_t i = 0; i < n; i++)
        to[i] = from[i];
}

static bool page_is_zero(const char *p)
{
    return same_bytes(p, NULL, img.page);
}

static size_t page_down(size_t x)
{
    return x & ~(img.page - 1);
}

static size_t page_up(size_t x)
{
    return (x + img.page - 1) & ~(img.page - 1);
}

/* The file offset of address vaddr (from the base), or SIZE_MAX. */
static size_t file_offset(const char *p, const ehdr_t *eh, uintptr_t vaddr)
{
    const phdr_t *ph = (const phdr_t *)(p + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
            vaddr < ph[i].p_vaddr + ph[i].p_filesz)
            return ph[i].p_offset + (vaddr - ph[i].p_vaddr);
    return SIZE_MAX;
}

/* Finds the read-only and writable ranges; false (MODE_PLAIN) unless there
 * is exactly one writable PT_LOAD, last in the file and in memory, after
 * read-only segments that lie at one offset from their file extents. */
static bool find_ranges(const char *p, const ehdr_t *eh, size_t trimmed_len)
{
    const phdr_t *ph = (const phdr_t *)(p + eh->e_phoff);
    const phdr_t *rw = NULL;
    bool have_ro = false;
    intptr_t delta = 0;
    img.ro_prot = PROT_READ;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type != PT_LOAD)
            continue;
        if (ph[i].p_flags & PF_W) {
            if (rw)
                return false;
            rw = &ph[i];
            continue;
        }
        intptr_t d = (intptr_t)ph[i].p_vaddr - (intptr_t)ph[i].p_offset;
        if (ph[i].p_filesz != ph[i].p_memsz || (have_ro && d != delta))
            return false;
        if (!have_ro || ph[i].p_vaddr < img.ro_lo) {
            img.ro_lo = page_down(ph[i].p_vaddr);
            img.ro_off = page_down(ph[i].p_offset);
        }
        if (!have_ro || ph[i].p_vaddr + ph[i].p_memsz > img.ro_hi)
            img.ro_hi = page_up(ph[i].p_vaddr + ph[i].p_memsz);
        if (ph[i].p_flags & PF_X)
            img.ro_prot |= PROT_EXEC;
        have_ro = true;
        delta = d;
    }
    if (!rw || !have_ro || rw->p_offset + rw->p_filesz != trimmed_len)
        return false;
    img.rw_lo = page_down(rw->p_vaddr);
    img.rw_hi = page_up(rw->p_vaddr + rw->p_memsz);
    img.rw_off = page_down(rw->p_offset);
    img.rw_seg = rw->p_offset;
    img.rw_end = rw->p_offset + rw->p_filesz;
    return img.ro_hi <= img.rw_lo;
}

/* The dynamic section's entries in the file (NULL if none); count in *n_p. */
static dyn_t *dynamic(char *p, const ehdr_t *eh, size_t *n_p)
{
    const phdr_t *ph = (const phdr_t *)(p + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_DYNAMIC) {
            *n_p = ph[i].p_filesz / sizeof(dyn_t);
            return (dyn_t *)(p + ph[i].p_offset);
        }
    return NULL;
}

/* The value of tag in the dynamic section, or 0. */
static uint64_t dyn_val(const dyn_t *d, size_t n, int64_t tag)
{
    for (size_t i = 0; i < n && d[i].d_tag != DT_NULL; i++)
        if (d[i].d_tag == tag)
            return d[i].d_un.d_val;
    return 0;
}

/* True when relocations of the table at vaddr (size bytes) include one that
 * runs the program's code at load time (an IFUNC resolver). */
static bool has_irelative(const char *p, size_t len, const ehdr_t *eh, uint64_t vaddr,
                          uint64_t size)
{
    size_t off = vaddr ? file_offset(p, eh, vaddr) : SIZE_MAX;
    if (off == SIZE_MAX || off + size > len)
        return vaddr != 0;
    const rela_t *r = (const rela_t *)(p + off);
    for (size_t i = 0; i < size / sizeof *r; i++)
        if (ELF_R_TYPE(r[i].r_info) == R_IRELATIVE)
            return true;
    return false;
}

/* Whether the loader may find the object's text missing: no IFUNC symbols,
 * no IRELATIVE or REL relocations, no relocations of the text. */
static bool loads_without_text(const char *p, size_t len, const ehdr_t *eh, const dyn_t *d,
                               size_t n, const shdr_t *sh)
{
    if (dyn_val(d, n, DT_TEXTREL) || (dyn_val(d, n, DT_FLAGS) & DF_TEXTREL) ||
        dyn_val(d, n, DT_REL) ||
        has_irelative(p, len, eh, dyn_val(d, n, DT_RELA), dyn_val(d, n, DT_RELASZ)) ||
        has_irelative(p, len, eh, dyn_val(d, n, DT_JMPREL), dyn_val(d, n, DT_PLTRELSZ)))
        return false;
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM)
            continue;
        if (sh[i].sh_offset + sh[i].sh_size > len || sh[i].sh_entsize != sizeof(sym_t))
            return false;
        const sym_t *s = (const sym_t *)(p + sh[i].sh_offset);
        for (size_t j = 0; j < sh[i].sh_size / sizeof *s; j++)
            if (ELF_ST_TYPE(s[j].st_info) == STT_GNU_IFUNC && s[j].st_shndx != SHN_UNDEF)
                return false;
    }
    return true;
}

static int range_cmp(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The holes of a rank's memfd: the read-only PROGBITS sections (text,
 * rodata, unwind tables), which the loader never reads. Sorted. */
static int find_holes(const char *p, size_t len, const ehdr_t *eh, struct range **holes_p)
{
    const shdr_t *sh = (const shdr_t *)(p + eh->e_shoff);
    struct range *h = malloc(((size_t)eh->e_shnum + 1) * sizeof *h);
    int n = 0;
    if (!h)
        return -1;
    for (int i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_type == SHT_PROGBITS && (sh[i].sh_flags & SHF_ALLOC) &&
            !(sh[i].sh_flags & SHF_WRITE) && sh[i].sh_offset + sh[i].sh_size <= img.rw_seg &&
            sh[i].sh_offset + sh[i].sh_size <= len && sh[i].sh_size > 0)
            h[n++] = (struct range){sh[i].sh_offset, sh[i].sh_offset + sh[i].sh_size};
    qsort(h, (size_t)n, sizeof *h, range_cmp);
    *holes_p = h;
    return n;
}

/* True when the table at vaddr lies outside every hole. */
static bool outside_holes(const char *p, const ehdr_t *eh, uint64_t vaddr, const struct range *h,
                          int nh)
{
    if (!vaddr)
        return true;
    size_t off = file_offset(p, eh, vaddr);
    if (off == SIZE_MAX)
        return false;
    for (int i = 0; i < nh; i++)
        if (off >= h[i].lo && off < h[i].hi)
            return false;
    return true;
}

/* Marks the writable pages holding [vaddr, vaddr + size). */
static void mark_used(const char *p, const ehdr_t *eh, uint64_t vaddr, uint64_t size)
{
    size_t lo = file_offset(p, eh, vaddr), hi = lo + (size ? size : 1);
    if (lo == SIZE_MAX || lo < img.rw_seg || lo >= img.rw_end)
        return;
    for (size_t o = page_down(lo); o < hi && o < img.rw_end; o += img.page)
        img.rw_used[(o - img.rw_off) / img.page] = 1;
}

/* Marks the targets of the RELA table at vaddr (size bytes). */
static void mark_rela(const char *p, size_t len, const ehdr_t *eh, uint64_t vaddr, uint64_t size)
{
    size_t off = vaddr ? file_offset(p, eh, vaddr) : SIZE_MAX;
    if (off == SIZE_MAX || off + size > len)
        return;
    const rela_t *r = (const rela_t *)(p + off);
    for (size_t i = 0; i < size / sizeof *r; i++)
        mark_used(p, eh, r[i].r_offset, sizeof(uint64_t));
}

/* Marks the targets of the RELR table at vaddr (size bytes): an address,
 * then bitmaps of the 63 words that follow it. */
static void mark_relr(const char *p, size_t len, const ehdr_t *eh, uint64_t vaddr, uint64_t size)
{
    size_t off = vaddr ? file_offset(p, eh, vaddr) : SIZE_MAX;
    if (off == SIZE_MAX || off + size > len)
        return;
    const uint64_t *e = (const uint64_t *)(const void *)(p + off);
    uint64_t where = 0;
    for (size_t i = 0; i < size / sizeof *e; i++) {
        if (!(e[i] & 1)) {
            mark_used(p, eh, e[i], 8);
            where = e[i] + 8;
            continue;
        }
        for (int b = 1; b < 64; b++)
            if ((e[i] >> b) & 1)
                mark_used(p, eh, where + (uint64_t)(b - 1) * 8, 8);
        where += 63 * 8;
    }
}

/* Whether this process can tell written pages from read ones
 * (/proc/self/pagemap), which checks the marks at each load. */
static bool pagemap_works(void)
{
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    uint64_t e = 0;
    volatile char probe = 1; /* on the stack: present */
    bool ok = fd >= 0 && pread(fd, &e, 8, (off_t)((uintptr_t)&probe / img.page * 8)) == 8 &&
              (e >> 63) & 1;
    if (fd >= 0)
        close(fd);
    return ok;
}

/* The writable pages that the loader uses; without pagemap, all of them. */
static void plan_rw_pages(const char *p, size_t len, const ehdr_t *eh, const dyn_t *d, size_t n)
{
    img.rw_npages = (page_up(img.rw_end) - img.rw_off) / img.page;
    if (!pagemap_works() || !(img.rw_used = calloc(img.rw_npages, 1)))
        return;
    const phdr_t *ph = (const phdr_t *)(p + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_DYNAMIC || ph[i].p_type == PT_TLS)
            mark_used(p, eh, ph[i].p_vaddr, ph[i].p_filesz);
    mark_used(p, eh, dyn_val(d, n, DT_PLTGOT), 3 * sizeof(uint64_t));
    /* The loader zeroes the tail of the file's last page (.bss). */
    if (img.rw_end % img.page)
        img.rw_used[img.rw_npages - 1] = 1;
    mark_rela(p, len, eh, dyn_val(d, n, DT_RELA), dyn_val(d, n, DT_RELASZ));
    mark_rela(p, len, eh, dyn_val(d, n, DT_JMPREL), dyn_val(d, n, DT_PLTRELSZ));
    mark_relr(p, len, eh, dyn_val(d, n, DT_RELR), dyn_val(d, n, DT_RELRSZ));
}

/* MODE_SPARSE's plan: the ranges a rank's memfd holds (the complement of the
 * holes), with every table the loader reads inside them. */
static bool plan_sparse(const char *p, size_t len, const ehdr_t *eh, const dyn_t *d, size_t n)
{
    static const int64_t tables[] = {DT_SYMTAB, DT_STRTAB, DT_HASH,   DT_GNU_HASH, DT_RELA,
                                     DT_JMPREL, DT_VERSYM, DT_VERDEF, DT_VERNEED,  DT_RELR};
    struct range *h;
    int nh = find_holes(p, len, eh, &h);
    if (nh < 0)
        return false;
    bool ok = true;
    for (size_t i = 0; i < LOOM_ARRAY_SIZE(tables); i++)
        ok = ok && outside_holes(p, eh, dyn_val(d, n, tables[i]), h, nh);
    plan_rw_pages(p, len, eh, d, n);
    img.copy = malloc(((size_t)nh + 2 + img.rw_npages) * sizeof *img.copy);
    if (!ok || !img.copy) {
        free(img.copy);
        img.copy = NULL;
        free(img.rw_used);
        img.rw_used = NULL;
        free(h);
        return false;
    }
    size_t at = 0;
    img.ncopy = 0;
    for (int i = 0; i < nh; i++) {
        if (h[i].lo > at)
            img.copy[img.ncopy++] = (struct range){at, h[i].lo};
        if (h[i].hi > at)
            at = h[i].hi;
    }
    if (!img.rw_used) {
        img.copy[img.ncopy++] = (struct range){at, img.rw_end};
    } else {
        if (at < img.rw_seg)
            img.copy[img.ncopy++] = (struct range){at, img.rw_seg};
        for (size_t i = 0; i < img.rw_npages; i++) {
            size_t lo = img.rw_off + i * img.page, hi = lo + img.page;
            if (img.rw_used[i])
                img.copy[img.ncopy++] = (struct range){lo < img.rw_seg ? img.rw_seg : lo,
                                                       hi > img.rw_end ? img.rw_end : hi};
        }
    }
    free(h);
    return true;
}

/* Retags the constructors in the image so that dlopen runs none, and keeps
 * them for loom_image_load. */
static void take_constructors(dyn_t *d, size_t n)
{
    for (size_t i = 0; i < n && d[i].d_tag != DT_NULL; i++) {
        switch (d[i].d_tag) {
        case DT_INIT:
            img.init = d[i].d_un.d_ptr;
            d[i].d_tag = LOOM_DT_INIT;
            break;
        case DT_INIT_ARRAY:
            img.init_array = d[i].d_un.d_ptr;
            d[i].d_tag = LOOM_DT_INIT_ARRAY;
            break;
        case DT_INIT_ARRAYSZ:
            img.init_count = d[i].d_un.d_val / sizeof(void *);
            d[i].d_tag = LOOM_DT_INIT_ARRAYSZ;
            break;
        default:
            break;
        }
    }
}

/* The number of dynamic symbols: the section's size, or the highest symbol
 * in DT_GNU_HASH's chains (DT_HASH's nchain where there is no section). */
static size_t dynsym_count(const char *p, size_t len, const ehdr_t *eh, const dyn_t *d, size_t n)
{
    const shdr_t *sh = (const shdr_t *)(p + eh->e_shoff);
    if (eh->e_shoff && eh->e_shentsize == sizeof(shdr_t) &&
        eh->e_shoff + (size_t)eh->e_shnum * sizeof(shdr_t) <= len)
        for (int i = 0; i < eh->e_shnum; i++)
            if (sh[i].sh_type == SHT_DYNSYM && sh[i].sh_entsize == sizeof(sym_t))
                return sh[i].sh_size / sizeof(sym_t);
    size_t off = file_offset(p, eh, dyn_val(d, n, DT_HASH));
    if (dyn_val(d, n, DT_HASH) && off != SIZE_MAX && off + 8 <= len)
        return ((const uint32_t *)(const void *)(p + off))[1];
    off = file_offset(p, eh, dyn_val(d, n, DT_GNU_HASH));
    if (!dyn_val(d, n, DT_GNU_HASH) || off == SIZE_MAX || off + 16 > len)
        return 0;
    const uint32_t *h = (const uint32_t *)(const void *)(p + off);
    uint32_t nbuckets = h[0], symoffset = h[1], bloom = h[2];
    size_t buckets = off + 16 + (size_t)bloom * sizeof(uint64_t);
    if (buckets + (size_t)nbuckets * 4 > len)
        return 0;
    const uint32_t *b = (const uint32_t *)(const void *)(p + buckets);
    uint32_t last = 0;
    for (uint32_t i = 0; i < nbuckets; i++)
        if (b[i] > last)
            last = b[i];
    if (last < symoffset)
        return symoffset;
    const uint32_t *chain = b + nbuckets;
    while ((const char *)(chain + (last - symoffset + 1)) <= p + len &&
           !(chain[last - symoffset] & 1))
        last++;
    return (size_t)last + 1;
}

/* Makes the program's STB_GNU_UNIQUE definitions weak. glibc keeps one
 * instance of a unique symbol per process, whichever object defined it
 * first: every rank would share the first rank's static locals of inline
 * functions, static members of templates and C++17 inline variables. As
 * weak definitions each copy binds its own (or a shared library's, where
 * one the whole process shares defines it too, as in a process). */
static int unshare_unique(char *p, size_t len, const ehdr_t *eh, const dyn_t *d, size_t n)
{
    size_t off = file_offset(p, eh, dyn_val(d, n, DT_SYMTAB));
    size_t count = dynsym_count(p, len, eh, d, n);
    if (!dyn_val(d, n, DT_SYMTAB) || off == SIZE_MAX || off + count * sizeof(sym_t) > len)
        return 0;
    sym_t *s = (sym_t *)(void *)(p + off);
    int changed = 0;
    for (size_t i = 0; i < count; i++)
        if (ELF_ST_BIND(s[i].st_info) == STB_GNU_UNIQUE && s[i].st_shndx != SHN_UNDEF) {
            s[i].st_info = ELF_ST_INFO(STB_WEAK, ELF_ST_TYPE(s[i].st_info));
            changed++;
        }
    return changed;
}

/* Mappings a rank's copy costs in each mode. */
static int plain_maps(const char *p, const ehdr_t *eh)
{
    const phdr_t *ph = (const phdr_t *)(p + eh->e_phoff);
    int n = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_GNU_RELRO)
            n++;
        if (ph[i].p_type != PT_LOAD)
            continue;
        n++;
        if (page_up(ph[i].p_vaddr + ph[i].p_memsz) > page_up(ph[i].p_vaddr + ph[i].p_filesz))
            n++; /* .bss beyond the file's pages */
    }
    return n;
}

/* The program's direct dependencies (its DT_NEEDED names): the libraries
 * whose thread-locals are made per rank (keep_libraries_tls). */
static char *needed[32];
static int nneeded;

static void record_needed(const char *p, size_t len, const ehdr_t *eh, const dyn_t *d, size_t n)
{
    size_t str = file_offset(p, eh, dyn_val(d, n, DT_STRTAB));
    size_t strsz = dyn_val(d, n, DT_STRSZ);
    if (str == SIZE_MAX || str + strsz > len)
        return;
    for (size_t i = 0; i < n && nneeded < (int)LOOM_ARRAY_SIZE(needed); i++)
        if (d[i].d_tag == DT_NEEDED && d[i].d_un.d_val < strsz &&
            memchr(p + str + d[i].d_un.d_val, 0, strsz - d[i].d_un.d_val))
            needed[nneeded++] = strdup(p + str + d[i].d_un.d_val);
}

static bool program_needs(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (int i = 0; i < nneeded; i++)
        if (needed[i] && strcmp(needed[i], base) == 0)
            return true;
    return false;
}

/* Decides the mode and prepares it; p is the whole file, len_p its length,
 * trimmed to the PT_LOAD extents on return. */
static void plan(char *p, size_t *len_p, const ehdr_t *eh)
{
    size_t len = *len_p;
    const phdr_t *ph = (const phdr_t *)(p + eh->e_phoff);
    size_t end = eh->e_phoff + (size_t)eh->e_phnum * sizeof(phdr_t);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > end)
            end = ph[i].p_offset + ph[i].p_filesz;
    if (end > len)
        end = len;
    img.mode = MODE_PLAIN;
    img.maps_per_rank = plain_maps(p, eh);
    size_t nd = 0;
    dyn_t *d = dynamic(p, eh, &nd);
    if (d && (char *)(d + nd) <= p + len) {
        img.nsyms = dynsym_count(p, len, eh, d, nd);
        record_needed(p, len, eh, d, nd);
        int u = unshare_unique(p, len, eh, d, nd);
        if (u)
            loom_log_debug("image: %d unique symbols made per rank", u);
    }
    if (!TSAN_BUILD && find_ranges(p, eh, end) && d && (char *)(d + nd) <= p + len) {
        img.mode = MODE_FULL;
        img.maps_per_rank = 2;
        const shdr_t *sh = (const shdr_t *)(p + eh->e_shoff);
        bool have_sections = eh->e_shoff && eh->e_shentsize == sizeof(shdr_t) &&
                             eh->e_shoff + (size_t)eh->e_shnum * sizeof(shdr_t) <= len;
        if (!loom_opt_flag(LOOM_OPT_IMAGE_FULL) && have_sections &&
            loads_without_text(p, len, eh, d, nd, sh) && plan_sparse(p, len, eh, d, nd)) {
            img.mode = MODE_SPARSE;
            take_constructors(d, nd);
        }
    }
    /* Keep only what the loader maps; drop section headers with the rest. */
    if (end < len) {
        ehdr_t *w = (ehdr_t *)p;
        w->e_shoff = 0;
        w->e_shnum = 0;
        w->e_shstrndx = 0;
    }
    *len_p = end;
}

/* Writes len bytes of buf at offset off of fd. */
static int write_at(int fd, const char *buf, size_t len, size_t off)
{
    while (len) {
        ssize_t n = pwrite(fd, buf, len, (off_t)off);
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
        off += (size_t)n;
    }
    return 0;
}

/* The master memfd: the image, and zeros for the .bss pages. */
static int make_master(void)
{
    int fd = memfd_create("loom-program", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t size = img.len;
    if (img.mode != MODE_PLAIN && img.rw_off + (img.rw_hi - img.rw_lo) > size)
        size = img.rw_off + (img.rw_hi - img.rw_lo);
    if (write_at(fd, img.image, img.len, 0) != 0 || ftruncate(fd, (off_t)size) != 0) {
        close(fd);
        return -1;
    }
    img.master_fd = fd;
    return 0;
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
    img.page = (size_t)sysconf(_SC_PAGESIZE);
    plan(p, &len, eh);
    img.image = p;
    img.len = len;
    img.path_bits = 1;
    while (img.path_bits < 31 && (1u << img.path_bits) < (unsigned)loom_job.nranks)
        img.path_bits++;
    static const char *const modes[] = {"text shared, loader tables and data per rank",
                                        "whole copy per rank, then text shared",
                                        "whole copy per rank"};
    size_t used = 0;
    for (size_t i = 0; img.rw_used && i < img.rw_npages; i++)
        used += img.rw_used[i];
    loom_log_debug("image: %s: %s, %d mappings per rank; a rank's memfd holds %zu of the %zu "
                   "pages of data",
                   path, modes[img.mode], img.maps_per_rank, img.rw_used ? used : img.rw_npages,
                   img.rw_npages);
    if (make_master() != 0) {
        loom_log_error("cannot copy %s into memory: %s", path, strerror(errno));
        return LOOM_ERR_SYSTEM;
    }
    return LOOM_OK;
}

int loom_image_maps_per_rank(void)
{
    return img.maps_per_rank;
}

/* Fills a rank's memfd: what the loader reads (MODE_SPARSE), or all. */
static int fill_copy(int fd)
{
    if (img.mode != MODE_SPARSE)
        return write_at(fd, img.image, img.len, 0);
    for (int i = 0; i < img.ncopy; i++)
        if (write_at(fd, img.image + img.copy[i].lo, img.copy[i].hi - img.copy[i].lo,
                     img.copy[i].lo) != 0)
            return -1;
    return ftruncate(fd, (off_t)img.len);
}

/* "/" or "/." per bit of k, lowest first, then "/proc/PID/fd/N": a
 * spelling of the path that no other load of this job uses. glibc compares
 * the new path with every loaded object's: the paths differ early. The pid,
 * not "self": a debugger reads the objects of its inferior by their paths,
 * in its own process, as the load happens. The kernel's pid: getpid() is
 * the rank's own (signal.c). */
static void rank_path(char *buf, size_t len, int fd, unsigned k)
{
    char *p = buf;
    for (int b = 0; b < img.path_bits; b++)
        p = stpcpy(p, (k >> b) & 1 ? "/." : "/");
    snprintf(p, len - (size_t)(p - buf), "/proc/%ld/fd/%d", syscall(SYS_getpid), fd);
}

/* Copies into tmp the non-zero pages of .bss at [from, len) of cur: those
 * that are resident (mincore), so that an untouched .bss costs nothing. */
static int copy_bss(char *cur, char *tmp, size_t from, size_t len)
{
    size_t first = page_down(from), npages = (len - first) / img.page;
    if (from > first) { /* the file's last page: its tail is .bss */
        if (!same_bytes(cur + from, NULL, first + img.page - from))
            copy_bytes(tmp + from, cur + from, first + img.page - from);
        first += img.page;
        npages--;
    }
    if (npages == 0)
        return 0;
    unsigned char *res = malloc(npages);
    if (!res || mincore(cur + first, npages * img.page, res) != 0) {
        free(res);
        return -1;
    }
    for (size_t i = 0; i < npages; i++) {
        char *pg = cur + first + i * img.page;
        if ((res[i] & 1) && !page_is_zero(pg))
            copy_bytes(tmp + first + i * img.page, pg, img.page);
    }
    free(res);
    return 0;
}

/* Checks with /proc/self/pagemap that the loader wrote none of the pages
 * that the rank's memfd left as holes (a write there would have started
 * from zeros, not from the program's data). */
static int check_unused(const char *cur)
{
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t first = (uintptr_t)cur / img.page;
    uint64_t e[512];
    int rc = 0;
    for (size_t i = 0; i < img.rw_npages && rc == 0; i += 512) {
        size_t n = img.rw_npages - i < 512 ? img.rw_npages - i : 512;
        if (pread(fd, e, n * 8, (off_t)((first + i) * 8)) != (ssize_t)(n * 8)) {
            rc = -1;
            break;
        }
        for (size_t j = 0; j < n; j++) {
            /* bit 63: present, 62: swapped, 61: a file's page (not written) */
            bool written = (((e[j] >> 63) & 1) && !((e[j] >> 61) & 1)) || ((e[j] >> 62) & 1);
            if (written && !img.rw_used[i + j]) {
                loom_log_error("the loader wrote page %zu of %s's data, which Loom did not "
                               "expect; LOOM_IMAGE_FULL=1 avoids this",
                               i + j, loom_job.program);
                errno = EINVAL;
                rc = -1;
                break;
            }
        }
    }
    close(fd);
    return rc;
}

/* Maps the master's read-only segments over the copy's, and replaces its
 * writable segment and .bss by one private mapping of the master that holds
 * the copy's changed bytes. */
static int remap(char *base)
{
    if (mmap(base + img.ro_lo, img.ro_hi - img.ro_lo, img.ro_prot, MAP_PRIVATE | MAP_FIXED,
             img.master_fd, (off_t)img.ro_off) == MAP_FAILED)
        return -1;
    size_t len = img.rw_hi - img.rw_lo;
    char *tmp =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, img.master_fd, (off_t)img.rw_off);
    if (tmp == MAP_FAILED)
        return -1;
    /* The loader writes only the file's part (relocations); in MODE_FULL
     * the constructors have run too, and may have written .bss. */
    char *cur = base + img.rw_lo;
    size_t seg = img.rw_seg - img.rw_off, file_end = img.rw_end - img.rw_off;
    if (img.rw_used && check_unused(cur) != 0) {
        munmap(tmp, len);
        return -1;
    }
    for (size_t o = page_down(seg); o < file_end; o += img.page) {
        size_t lo = o < seg ? seg : o, hi = o + img.page < file_end ? o + img.page : file_end;
        if (img.rw_used && !img.rw_used[o / img.page])
            continue;
        if (!same_bytes(cur + lo, img.image + img.rw_off + lo, hi - lo))
            copy_bytes(tmp + lo, cur + lo, hi - lo);
    }
    if (img.mode == MODE_FULL && copy_bss(cur, tmp, file_end, len) != 0) {
        munmap(tmp, len);
        return -1;
    }
    if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, base + img.rw_lo) == MAP_FAILED) {
        munmap(tmp, len);
        return -1;
    }
    return 0;
}

/* ---- clones ----------------------------------------------------------------
 *
 * glibc's dlopen walks every object already loaded, several times, to load
 * one more (names, file identities, the namespace list, _dl_find_object's
 * table): the n-th copy costs O(n), and 16,384 ranks spent most of their
 * start there (45 s on this machine, 1.8 s for 4,096). So in MODE_SPARSE
 * only the first copy (the template) goes through dlopen; every later copy
 * is made here, without glibc knowing of it:
 *  - the template is loaded with every symbol bound (RTLD_NOW) and, once
 *    remapped and before its constructors, its relocated writable pages are
 *    kept (the snapshot), with the list of the words its relocations filled
 *    with an address inside the object (RELATIVE, RELR, and symbols the
 *    object itself defines);
 *  - a clone maps the shared text and a private copy of the master's
 *    writable segment at a fresh base, copies the snapshot's pages in, and
 *    moves each listed word by the distance between the two bases; words
 *    that hold addresses in shared libraries are already right;
 *  - thread-locals: glibc gives TLS modules to what it loads only. The
 *    clone's module-id words hold its rank (tagged), and its calls to
 *    __tls_get_addr go to loom_image_tls_get_addr, which keeps a block per
 *    (thread, clone), initialized from the clone's own TLS image;
 *  - C++ exceptions and backtraces: the clone's .eh_frame is registered
 *    with libgcc's unwinder (__register_frame_info), which looks there
 *    before asking glibc.
 * What glibc does not know about a clone: dladdr, dl_iterate_phdr and
 * debuggers do not see it (LOOM_IMAGE_CLONE=0 loads every copy by dlopen).
 * A program whose relocations Loom cannot move (static TLS, TLS
 * descriptors, copy relocations, any type not listed in clone_plan) or
 * that carries its own unwinder is loaded by dlopen throughout. */

#if defined(__x86_64__)
#define CLONE_ARCH 1
#define R_NONE_    R_X86_64_NONE
#define R_ABS_     R_X86_64_64
#define R_GLOB_    R_X86_64_GLOB_DAT
#define R_JUMP_    R_X86_64_JUMP_SLOT
#define R_REL_     R_X86_64_RELATIVE
#define R_DTPMOD_  R_X86_64_DTPMOD64
#define R_DTPOFF_  R_X86_64_DTPOFF64
#else
#define CLONE_ARCH 0
#endif

/* glibc's argument to __tls_get_addr. */
struct tls_index {
    unsigned long module, offset;
};
#define CLONE_TLS_TAG (1ul << 62)

static struct {
    atomic_bool ready; /* the plan is made: later loads clone */
    bool tried;
    void *template_dl;
    uintptr_t t_base;
    uintptr_t span_lo, span_hi; /* the object's pages, from the base */
    size_t align;               /* of the base */
    size_t *pages;              /* the snapshot: page offsets from the base */
    char *snap;                 /* and their bytes */
    size_t npages;
    size_t *adjust, nadjust; /* words holding an address in the object */
    size_t *tlsmod, ntlsmod; /* the object's own TLS module id */
    size_t *tlsget, ntlsget; /* __tls_get_addr */
    uintptr_t tls_vaddr;
    size_t tls_filesz, tls_memsz, tls_align;
    uintptr_t eh_frame;
    void (*register_frame)(const void *, void *);
    uintptr_t *bases; /* by rank: the clone's base (0: not a clone) */
} cl;

/* Appends x to the growing array *a of *n entries. */
static bool push_off(size_t **a, size_t *n, size_t x)
{
    if ((*n & (*n - 1)) == 0 || *n == 0) {
        size_t *g = realloc(*a, (*n ? *n * 2 : 64) * sizeof **a);
        if (!g)
            return false;
        *a = g;
    }
    (*a)[(*n)++] = x;
    return true;
}

/* The address that the pointer at hdr + 4 of .eh_frame_hdr designates
 * (pc-relative sdata4, as GNU ld writes it), from the base; 0 if other. */
static uintptr_t eh_frame_of(const char *p, const ehdr_t *eh)
{
    const phdr_t *ph = (const phdr_t *)(p + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type != PT_GNU_EH_FRAME)
            continue;
        size_t off = file_offset(p, eh, ph[i].p_vaddr);
        if (off == SIZE_MAX || off + 8 > img.len)
            return 0;
        const unsigned char *h = (const unsigned char *)p + off;
        if (h[0] != 1 || h[1] != 0x1b) /* version 1, DW_EH_PE_pcrel | sdata4 */
            return 0;
        int32_t rel;
        memcpy(&rel, h + 4, 4);
        return (uintptr_t)((intptr_t)ph[i].p_vaddr + 4 + rel);
    }
    return 0;
}

/* Classifies the RELA table at vaddr (size bytes) of the template at base
 * t; false when a relocation cannot be moved. */
static bool plan_rela(const char *p, const ehdr_t *eh, const dyn_t *d, size_t nd, uint64_t vaddr,
                      uint64_t size, const char *t, unsigned long modid)
{
    if (!vaddr || !size)
        return true;
    size_t off = file_offset(p, eh, vaddr);
    size_t symoff = file_offset(p, eh, dyn_val(d, nd, DT_SYMTAB));
    size_t stroff = file_offset(p, eh, dyn_val(d, nd, DT_STRTAB));
    size_t strsz = dyn_val(d, nd, DT_STRSZ);
    if (off == SIZE_MAX || off + size > img.len || symoff == SIZE_MAX || stroff == SIZE_MAX ||
        stroff + strsz > img.len)
        return false;
    const rela_t *r = (const rela_t *)(const void *)(p + off);
    const sym_t *syms = (const sym_t *)(const void *)(p + symoff);
    uintptr_t lo = (uintptr_t)t + cl.span_lo, hi = (uintptr_t)t + cl.span_hi;
    for (size_t i = 0; i < size / sizeof *r; i++) {
        size_t slot = r[i].r_offset;
        uint64_t v;
        if (slot < img.rw_lo || slot + 8 > img.rw_hi)
            return false;
        memcpy(&v, t + slot, 8);
        size_t si = ELF64_R_SYM(r[i].r_info);
        const char *name = "";
        if (si && syms[si].st_name < strsz)
            name = p + stroff + syms[si].st_name;
        bool ok = true;
        switch (ELF_R_TYPE(r[i].r_info)) {
        case R_NONE_:
        case R_DTPOFF_:
            break;
        case R_REL_:
            ok = push_off(&cl.adjust, &cl.nadjust, slot);
            break;
        case R_ABS_:
        case R_GLOB_:
        case R_JUMP_:
            if (si && strcmp(name, "__tls_get_addr") == 0)
                ok = push_off(&cl.tlsget, &cl.ntlsget, slot);
            else if (si && v >= lo && v <= hi)
                ok = push_off(&cl.adjust, &cl.nadjust, slot);
            break;
        case R_DTPMOD_:
            if (v == modid)
                ok = push_off(&cl.tlsmod, &cl.ntlsmod, slot);
            break;
        default:
            loom_log_debug("image: relocation type %u at %#zx: copies are loaded by dlopen",
                           (unsigned)ELF_R_TYPE(r[i].r_info), slot);
            return false;
        }
        if (!ok)
            return false;
    }
    return true;
}

/* The RELR table's words: all RELATIVE. */
static bool plan_relr(const char *p, const ehdr_t *eh, uint64_t vaddr, uint64_t size)
{
    size_t off = vaddr ? file_offset(p, eh, vaddr) : SIZE_MAX;
    if (!vaddr || !size)
        return true;
    if (off == SIZE_MAX || off + size > img.len)
        return false;
    const uint64_t *e = (const uint64_t *)(const void *)(p + off);
    uint64_t where = 0;
    for (size_t i = 0; i < size / sizeof *e; i++) {
        if (!(e[i] & 1)) {
            if (!push_off(&cl.adjust, &cl.nadjust, e[i]))
                return false;
            where = e[i] + 8;
            continue;
        }
        for (int b = 1; b < 64; b++)
            if ((e[i] >> b) & 1 &&
                !push_off(&cl.adjust, &cl.nadjust, where + (uint64_t)(b - 1) * 8))
                return false;
        where += 63 * 8;
    }
    return true;
}

/* Whether the program defines sym among its dynamic symbols. */
static bool defines(const char *p, const ehdr_t *eh, const dyn_t *d, size_t nd, const char *sym)
{
    size_t symoff = file_offset(p, eh, dyn_val(d, nd, DT_SYMTAB));
    size_t stroff = file_offset(p, eh, dyn_val(d, nd, DT_STRTAB));
    size_t strsz = dyn_val(d, nd, DT_STRSZ), n = img.nsyms;
    if (symoff == SIZE_MAX || stroff == SIZE_MAX || symoff + n * sizeof(sym_t) > img.len)
        return true; /* unknown: assume the worst */
    const sym_t *s = (const sym_t *)(const void *)(p + symoff);
    for (size_t i = 1; i < n; i++)
        if (s[i].st_shndx != SHN_UNDEF && s[i].st_name < strsz &&
            strcmp(p + stroff + s[i].st_name, sym) == 0)
            return true;
    return false;
}

/* Frees a partial plan. */
static void drop_plan(void)
{
    free(cl.adjust);
    free(cl.tlsmod);
    free(cl.tlsget);
    free(cl.pages);
    free(cl.snap);
    free(cl.bases);
    cl.adjust = cl.tlsmod = cl.tlsget = cl.pages = NULL;
    cl.snap = NULL;
    cl.bases = NULL;
    cl.nadjust = cl.ntlsmod = cl.ntlsget = cl.npages = 0;
}

/* Makes the plan from the template dl at base t, remapped, before its
 * constructors; false: every copy is loaded by dlopen. */
static bool clone_plan(void *dl, char *t)
{
    const char *p = img.image;
    const ehdr_t *eh = (const ehdr_t *)(const void *)p;
    const phdr_t *ph = (const phdr_t *)(const void *)(p + eh->e_phoff);
    size_t nd = 0;
    const dyn_t *d = dynamic(img.image, eh, &nd);
    if (!CLONE_ARCH || !d || img.mode != MODE_SPARSE || !loom_opt_flag(LOOM_OPT_IMAGE_CLONE))
        return false;
    if (defines(p, eh, d, nd, "_Unwind_Find_FDE")) {
        loom_log_debug("image: the program carries its own unwinder: copies are loaded by dlopen");
        return false;
    }
    cl.template_dl = dl;
    cl.t_base = (uintptr_t)t;
    cl.span_lo = SIZE_MAX;
    cl.align = img.page;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD) {
            if (page_down(ph[i].p_vaddr) < cl.span_lo)
                cl.span_lo = page_down(ph[i].p_vaddr);
            if (ph[i].p_align > cl.align)
                cl.align = ph[i].p_align;
        } else if (ph[i].p_type == PT_TLS) {
            cl.tls_vaddr = ph[i].p_vaddr;
            cl.tls_filesz = ph[i].p_filesz;
            cl.tls_memsz = ph[i].p_memsz;
            cl.tls_align = ph[i].p_align > sizeof(void *) ? ph[i].p_align : sizeof(void *);
        }
    }
    cl.span_hi = img.rw_hi;
    if (cl.span_lo > img.ro_lo || (cl.align & (cl.align - 1)))
        return false;
    size_t modid = 0;
    if (cl.tls_memsz && dlinfo(dl, RTLD_DI_TLS_MODID, &modid) != 0)
        return false;
    bool ok =
        plan_rela(p, eh, d, nd, dyn_val(d, nd, DT_RELA), dyn_val(d, nd, DT_RELASZ), t, modid) &&
        plan_rela(p, eh, d, nd, dyn_val(d, nd, DT_JMPREL), dyn_val(d, nd, DT_PLTRELSZ), t, modid) &&
        plan_relr(p, eh, dyn_val(d, nd, DT_RELR), dyn_val(d, nd, DT_RELRSZ));
    /* Every word to move must lie in a page of the snapshot. */
    size_t first = img.rw_lo, npg = img.rw_npages;
    cl.pages = malloc(npg * sizeof *cl.pages);
    cl.snap = malloc(npg * img.page);
    cl.bases = calloc((size_t)loom_job.nranks, sizeof *cl.bases);
    if (!ok || !cl.pages || !cl.snap || !cl.bases) {
        drop_plan();
        return false;
    }
    for (size_t i = 0; i < npg; i++) {
        if (img.rw_used && !img.rw_used[i])
            continue;
        cl.pages[cl.npages] = first + i * img.page;
        copy_bytes(cl.snap + cl.npages * img.page, t + first + i * img.page, img.page);
        cl.npages++;
    }
    for (size_t i = 0; i < cl.nadjust; i++) {
        size_t pg = (cl.adjust[i] - first) / img.page;
        if (cl.adjust[i] < first || pg >= npg || (img.rw_used && !img.rw_used[pg])) {
            drop_plan();
            return false;
        }
    }
    cl.eh_frame = eh_frame_of(p, eh);
    if (cl.eh_frame) {
        void *gcc = dlopen("libgcc_s.so.1", RTLD_NOW);
        cl.register_frame =
            gcc ? (void (*)(const void *, void *))dlsym(gcc, "__register_frame_info") : NULL;
        if (!cl.register_frame)
            loom_log_debug("image: no __register_frame_info: clones' frames cannot unwind");
    }
    loom_log_debug("image: later copies are clones: %zu snapshot pages, %zu words moved, %zu "
                   "TLS module words, %zu __tls_get_addr slots",
                   cl.npages, cl.nadjust, cl.ntlsmod, cl.ntlsget);
    return true;
}

/* Where clone id's TLS block lives in this thread. */
static __thread void **tls_blocks;
static __thread size_t tls_nblocks;
static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;

static void free_tls_blocks(void *v)
{
    void **b = v;
    for (size_t i = 0; i < tls_nblocks; i++)
        free(b[i]);
    free(b);
    tls_blocks = NULL;
    tls_nblocks = 0;
}

static void make_tls_key(void)
{
    if (pthread_key_create(&tls_key, free_tls_blocks) != 0)
        abort();
}

/* A clone's block in this thread: allocated and initialized from the
 * clone's TLS image at first use. */
static __attribute__((noinline)) char *clone_tls_block(size_t id)
{
    if (id >= (size_t)loom_job.nranks || !cl.bases[id]) {
        loom_log_error("thread-local storage of an unknown copy of the program (%zu)", id);
        abort();
    }
    if (id >= tls_nblocks) {
        size_t n = (size_t)loom_job.nranks;
        void **b = realloc(tls_blocks, n * sizeof *b);
        if (!b)
            abort();
        memset(b + tls_nblocks, 0, (n - tls_nblocks) * sizeof *b);
        pthread_once(&tls_once, make_tls_key);
        pthread_setspecific(tls_key, b);
        tls_blocks = b;
        tls_nblocks = n;
    }
    size_t size = (cl.tls_memsz + cl.tls_align - 1) / cl.tls_align * cl.tls_align;
    char *blk = aligned_alloc(cl.tls_align, size);
    if (!blk)
        abort();
    memcpy(blk, (const char *)cl.bases[id] + cl.tls_vaddr, cl.tls_filesz);
    memset(blk + cl.tls_filesz, 0, size - cl.tls_filesz);
    tls_blocks[id] = blk;
    return blk;
}

/* What a clone calls for __tls_get_addr (compilers call it with any
 * stack alignment). */
static __attribute__((force_align_arg_pointer)) void *loom_image_tls_get_addr(struct tls_index *ti)
{
    size_t id = ti->module & ~CLONE_TLS_TAG;
    char *b = id < tls_nblocks ? tls_blocks[id] : NULL;
    if (__builtin_expect(!b, 0))
        b = clone_tls_block(id);
    return b + ti->offset;
}

/* Writes the snapshot into a clone at base and moves its words. */
RAW_BYTES static void fill_clone(char *base, int rank)
{
    for (size_t i = 0; i < cl.npages; i++)
        copy_bytes(base + cl.pages[i], cl.snap + i * img.page, img.page);
    uintptr_t delta = (uintptr_t)base - cl.t_base;
    for (size_t i = 0; i < cl.nadjust; i++)
        *(uintptr_t *)(void *)(base + cl.adjust[i]) += delta;
    for (size_t i = 0; i < cl.ntlsmod; i++)
        *(uintptr_t *)(void *)(base + cl.tlsmod[i]) = CLONE_TLS_TAG | (uintptr_t)rank;
    for (size_t i = 0; i < cl.ntlsget; i++)
        *(uintptr_t *)(void *)(base + cl.tlsget[i]) = (uintptr_t)loom_image_tls_get_addr;
}

/* Makes r's copy as a clone of the template. */
static int make_clone(struct loom_rank *r)
{
    size_t span = cl.span_hi - cl.span_lo, extra = cl.align > img.page ? cl.align : 0;
    char *res =
        mmap(NULL, span + extra, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (res == MAP_FAILED)
        goto err;
    char *at = (char *)(((uintptr_t)res + cl.align - 1) & ~(uintptr_t)(cl.align - 1));
    if (extra) {
        if (at > res)
            munmap(res, (size_t)(at - res));
        munmap(at + span, (size_t)(res + span + extra - (at + span)));
    }
    char *base = at - cl.span_lo;
    if (mmap(base + img.ro_lo, img.ro_hi - img.ro_lo, img.ro_prot, MAP_PRIVATE | MAP_FIXED,
             img.master_fd, (off_t)img.ro_off) == MAP_FAILED ||
        mmap(base + img.rw_lo, img.rw_hi - img.rw_lo, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_FIXED, img.master_fd, (off_t)img.rw_off) == MAP_FAILED)
        goto err_unmap;
    if (img.ro_lo > cl.span_lo)
        munmap(at, img.ro_lo - cl.span_lo);
    if (img.rw_lo > img.ro_hi)
        munmap(base + img.ro_hi, img.rw_lo - img.ro_hi);
    fill_clone(base, r->rank);
    if (cl.register_frame) {
        void *ob = calloc(1, 256); /* libgcc's struct object, freed never */
        if (ob)
            cl.register_frame(base + cl.eh_frame, ob);
    }
    cl.bases[r->rank] = (uintptr_t)base;
    r->image_base = (uintptr_t)base;
    r->dl = NULL;
    return LOOM_OK;
err_unmap:
    munmap(at, span);
err:
    loom_log_error("rank %d: mapping a copy of %s: %s", r->rank, loom_job.program, strerror(errno));
    return LOOM_ERR_SYSTEM;
}

/* The constructors dlopen did not run, as glibc's call_init runs them. */
static void run_constructors(char *base)
{
    typedef void (*init_fn)(int, char **, char **);
    if (img.init)
        ((init_fn)(void *)(base + img.init))(proc_argc, proc_argv, environ);
    init_fn *a = (init_fn *)(void *)(base + img.init_array);
    for (size_t i = 0; img.init_array && i < img.init_count; i++)
        a[i](proc_argc, proc_argv, environ);
}

/* ---- libraries' thread-locals ---------------------------------------------- */

/* The TLS modules loaded so far (dl_iterate_phdr), up to LOOM_ARRAY_SIZE(m). */
struct tls_modules {
    struct loom_lib_tls m[16];
    int n;
    uintptr_t skip[2]; /* the load biases of objects to leave out */
};

static bool has_static_tls(const struct dl_phdr_info *info)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
            continue;
        for (const ElfW(Dyn) *d = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
             d->d_tag != DT_NULL; d++)
            if (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_STATIC_TLS))
                return true;
    }
    return false;
}

static int list_tls(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct tls_modules *t = arg;
    if (!info->dlpi_tls_modid || info->dlpi_addr == t->skip[0] || info->dlpi_addr == t->skip[1] ||
        t->n == (int)LOOM_ARRAY_SIZE(t->m) || !program_needs(info->dlpi_name))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_TLS)
            t->m[t->n++] = (struct loom_lib_tls){
                .modid = info->dlpi_tls_modid,
                .size = info->dlpi_phdr[i].p_memsz,
                .filesz = info->dlpi_phdr[i].p_filesz,
                .align = info->dlpi_phdr[i].p_align ? info->dlpi_phdr[i].p_align : 1,
                .image = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr),
                .static_tls = has_static_tls(info)};
    return 0;
}

/* Makes the thread-locals of the program's direct dependencies (libstdc++
 * for a C++ program, which hwloc's plugins may have loaded before it) per
 * rank; ult.c says how, and which cannot be. Others cost every switch
 * without a use: a C program has none. Left out: Loom's own library (its
 * thread-locals are the worker's) and the program's copy at base (its own
 * are per rank already: loom_image_tls_get_addr). */
static void keep_libraries_tls(uintptr_t base)
{
    struct tls_modules t = {.skip = {base, 0}};
    Dl_info info;
    struct link_map *self = NULL;
    if (dladdr1((void *)keep_libraries_tls, &info, (void **)&self, RTLD_DL_LINKMAP) && self)
        t.skip[1] = self->l_addr;
    dl_iterate_phdr(list_tls, &t);
    if (!t.n)
        return;
    int kept = loom_ult_keep_lib_tls(t.m, t.n);
    if (kept < 0)
        loom_log_warn("the thread-locals of the program's libraries stay per worker thread, "
                      "shared by its ranks (%d)",
                      kept);
    else
        loom_log_debug("image: thread-locals of %d of the %d libraries that have them are per "
                       "rank",
                       kept, t.n);
}

/* The first load, and every load where clones cannot be made, run one at a
 * time from the memfd to the remap (dlopen serializes on glibc's lock
 * anyway); the template's plan is made under the same lock. Clones are made
 * in parallel, from the finished plan. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static int load_locked(struct loom_rank *r);

int loom_image_load(struct loom_rank *r)
{
    int rc;
    if (atomic_load_explicit(&cl.ready, memory_order_acquire)) {
        rc = make_clone(r);
    } else {
        pthread_mutex_lock(&load_lock);
        bool clone = atomic_load_explicit(&cl.ready, memory_order_relaxed);
        rc = clone ? LOOM_OK : load_locked(r);
        pthread_mutex_unlock(&load_lock);
        if (clone)
            rc = make_clone(r);
    }
    if (rc == LOOM_OK && img.mode == MODE_SPARSE)
        run_constructors((char *)r->image_base);
    return rc;
}

static int load_locked(struct loom_rank *r)
{
    char name[32], path[160];
    snprintf(name, sizeof name, "loom-rank-%d", r->rank);
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) {
        loom_log_error("rank %d: memfd_create: %s", r->rank, strerror(errno));
        return LOOM_ERR_SYSTEM;
    }
    if (fill_copy(fd) != 0) {
        loom_log_error("rank %d: copying the program: %s", r->rank, strerror(errno));
        close(fd);
        return LOOM_ERR_SYSTEM;
    }
    unsigned k = atomic_fetch_add_explicit(&img.loads, 1, memory_order_relaxed);
    rank_path(path, sizeof path, fd, k);
    static bool first_done;
    bool first = !first_done && loom_opt_flag(LOOM_OPT_LIB_TLS);
    first_done = true;
    /* The template of the clones is loaded with every symbol bound. */
    bool template = !cl.tried && img.mode == MODE_SPARSE;
    void *dl = dlopen(path, template ? RTLD_NOW | RTLD_LOCAL : RTLD_LAZY | RTLD_LOCAL);
    if (!dl && template) {
        loom_log_debug("image: %s does not load with RTLD_NOW (%s): no clones", loom_job.program,
                       dlerror());
        cl.tried = true;
        template = false;
        rank_path(path, sizeof path, fd, atomic_fetch_add(&img.loads, 1));
        dl = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    }
    close(fd);
    if (!dl) {
        loom_log_error("rank %d: loading %s: %s", r->rank, loom_job.program, dlerror());
        return LOOM_ERR_SYSTEM;
    }
    struct link_map *lm;
    if (dlinfo(dl, RTLD_DI_LINKMAP, &lm) != 0) {
        loom_log_error("rank %d: dlinfo: %s", r->rank, dlerror());
        return LOOM_ERR_SYSTEM;
    }
    if (img.mode != MODE_PLAIN && remap((char *)lm->l_addr) != 0) {
        loom_log_error("rank %d: mapping %s's shared text: %s", r->rank, loom_job.program,
                       strerror(errno));
        return LOOM_ERR_SYSTEM;
    }
    r->dl = dl;
    r->image_base = lm->l_addr;
    /* glibc allocated the name and frees it at dlclose: so is ours. */
    char *real = loom_job.program ? realpath(loom_job.program, NULL) : NULL;
    if (real) {
        free(lm->l_name);
        lm->l_name = real;
    }
    if (first)
        keep_libraries_tls(lm->l_addr);
    if (template) {
        cl.tried = true;
        if (clone_plan(dl, (char *)lm->l_addr))
            atomic_store_explicit(&cl.ready, true, memory_order_release);
    }
    return LOOM_OK;
}

void *loom_image_sym(const struct loom_rank *r, const char *name)
{
    if (r->dl)
        return dlsym(r->dl, name);
    uintptr_t t = (uintptr_t)dlsym(cl.template_dl, name);
    if (t >= cl.t_base + cl.span_lo && t < cl.t_base + cl.span_hi)
        return (void *)(t - cl.t_base + r->image_base);
    return (void *)t;
}

uintptr_t loom_image_unclone(const struct loom_rank *r, uintptr_t addr)
{
    if (r->dl || !cl.template_dl || !r->image_base)
        return addr;
    uintptr_t b = r->image_base;
    if (addr >= b + cl.span_lo && addr < b + cl.span_hi)
        return addr - b + cl.t_base;
    return addr;
}

bool loom_image_text(const struct loom_rank *r, uintptr_t *lo_p, uintptr_t *hi_p)
{
    if (!img.image || !r->image_base)
        return false;
    const ehdr_t *eh = (const ehdr_t *)(const void *)img.image;
    const phdr_t *ph = (const phdr_t *)(const void *)(img.image + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
            *lo_p = r->image_base + ph[i].p_vaddr;
            *hi_p = *lo_p + ph[i].p_memsz;
            return true;
        }
    return false;
}

void loom_image_release(void)
{
    if (img.master_fd >= 0)
        close(img.master_fd);
    img.master_fd = -1;
    free(img.copy);
    img.copy = NULL;
    free(img.rw_used);
    img.rw_used = NULL;
    free(img.image);
    img.image = NULL;
}
