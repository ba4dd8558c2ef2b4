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
 *    and a closed memfd's number is reused: each load opens /proc/self/fd/N
 *    spelled its own way ("/" or "/." per bit of a load counter first).
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
#include <unistd.h>

#include "util/log.h"

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
        if (!loom_env_size("LOOM_IMAGE_FULL", 0) && have_sections &&
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

/* "/" or "/." per bit of k, lowest first, then "/proc/self/fd/N": a
 * spelling of the path that no other load of this job uses. glibc compares
 * the new path with every loaded object's: the paths differ early. */
static void rank_path(char *buf, size_t len, int fd, unsigned k)
{
    char *p = buf;
    for (int b = 0; b < img.path_bits; b++)
        p = stpcpy(p, (k >> b) & 1 ? "/." : "/");
    snprintf(p, len - (size_t)(p - buf), "/proc/self/fd/%d", fd);
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

/* Loads one at a time, from the memfd to the remap (not the constructors):
 * a hypothesis-driven guard, not a proven fix. One clean-clone ASAN run saw
 * rank 128 (the first rank of worker 1, loaded while worker 0 loads rank 0)
 * with C++ globals that did not hold what its main wrote; it was never
 * reproduced. dlopen serializes on glibc's lock anyway; what this adds to
 * the serial part is the memfd's few pages and the remap. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static int load_locked(struct loom_rank *r);

int loom_image_load(struct loom_rank *r)
{
    pthread_mutex_lock(&load_lock);
    int rc = load_locked(r);
    pthread_mutex_unlock(&load_lock);
    if (rc == LOOM_OK && img.mode == MODE_SPARSE) {
        struct link_map *lm;
        if (dlinfo(r->dl, RTLD_DI_LINKMAP, &lm) != 0)
            return LOOM_ERR_SYSTEM;
        run_constructors((char *)lm->l_addr);
    }
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
    void *dl = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    close(fd);
    if (!dl) {
        loom_log_error("rank %d: loading %s: %s", r->rank, loom_job.program, dlerror());
        return LOOM_ERR_SYSTEM;
    }
    struct link_map *lm;
    if (img.mode != MODE_PLAIN) {
        if (dlinfo(dl, RTLD_DI_LINKMAP, &lm) != 0 || remap((char *)lm->l_addr) != 0) {
            loom_log_error("rank %d: mapping %s's shared text: %s", r->rank, loom_job.program,
                           strerror(errno));
            return LOOM_ERR_SYSTEM;
        }
    }
    r->dl = dl;
    return LOOM_OK;
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
