/*
 * Internal to the per-rank C library (src/rankc): what its files share.
 * Nothing here is visible to programs but the hooks into libloom, which are
 * weak references so that the archive also links without libloom.
 */
#ifndef LOOM_RANKC_H
#define LOOM_RANKC_H

#include <locale.h>
#include <stddef.h>

/* Definitions here are weak: a program that defines one of the names itself
 * keeps its own, without a duplicate definition from a member that the
 * linker pulled in for another name (as in rand.c, getopt.c). */
#define RANKC_WEAK __attribute__((weak))

/* libloom (src/runtime/job.c, ult.c): whether the caller is a rank of a job
 * that mpiexec started (0 in a program run directly), the status its rank
 * ends with, and the locale to install whenever its ULT runs. */
int loom_rankc_hosted(void) __attribute__((weak));
int loom_rankc_exit_status(void) __attribute__((weak));
void loom_rankc_use_locale(locale_t loc) __attribute__((weak));

/* True when the caller runs as a rank under mpiexec. */
static inline int rankc_hosted(void)
{
    return loom_rankc_hosted && loom_rankc_hosted();
}

/* lgamma.c: the symbol by which app_crt.c links it into every program. */
extern const char loom_rankc_lgamma_anchor;

/* libc's own definition of NAME (the program's copy defines its own, which
 * -Bsymbolic binds to): NULL if libc lacks it. */
void *loom_rankc_libc(const char *name);

/* A per-copy buffer of *len_p bytes that grows to hold at least `need`
 * (doubling): 0 on success, -1 if out of memory (*buf_p unchanged). */
int loom_rankc_grow(char **buf_p, size_t *len_p, size_t need);

#endif
