/*
 * Linked into every program by Loom's mpicc (installed as lib/loom/loom_app.o).
 *
 * A Loom program is linked as an executable shared object: it runs directly
 * (./app is a one-rank job) and mpiexec can dlopen N private copies of it, one
 * per rank, each with its own globals and thread-locals. This object supplies
 * what that needs:
 *  - the ELF interpreter (.interp), which a shared object has none of;
 *  - a note that tells mpiexec the file is a Loom program of this ABI;
 *  - loom_app_fini, which runs this copy's atexit handlers and C++ static
 *    destructors when its rank ends (each copy has its own __dso_handle);
 *  - a reference that links the lgamma member of the per-rank C library
 *    (src/rankc/lgamma.c) into every program.
 * It is compiled without sanitizers and depends on nothing but libc.
 */
#include <stdint.h>

#ifndef LOOM_ELF_INTERP
#error "LOOM_ELF_INTERP must name the ELF interpreter"
#endif

__attribute__((section(".interp"), used)) static const char loom_interp[] = LOOM_ELF_INTERP;

/* An ELF note: namesz, descsz, type, "Loom\0" padded to 8, ABI version. */
struct loom_app_note {
    uint32_t namesz, descsz, type;
    char name[8];
    uint32_t abi;
};
__attribute__((section(".note.loom"), aligned(4),
               used)) static const struct loom_app_note loom_note = {5, 4, 0x4c4f4f4d /* "LOOM" */,
                                                                     "Loom", 1};

extern void *__dso_handle;
void __cxa_finalize(void *dso);
void loom_app_fini(void);

/* Links src/rankc/lgamma.c into every program: signgam and the lgamma family
 * are per rank even when the program links -lm before Loom's archive. */
extern const char loom_rankc_lgamma_anchor;
__attribute__((used)) static const char *const loom_rankc_pull = &loom_rankc_lgamma_anchor;

__attribute__((visibility("default"))) void loom_app_fini(void)
{
    __cxa_finalize(&__dso_handle);
}
