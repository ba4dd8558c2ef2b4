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
 * ends with, whether exit handlers may run now (not at the process's end
 * under mpiexec), the locale to install whenever its ULT runs, and a lock
 * for the whole process (held briefly, never across a switch). */
int loom_rankc_hosted(void) __attribute__((weak));
int loom_rankc_exit_status(void) __attribute__((weak));
int loom_rankc_handlers_may_run(void) __attribute__((weak));
void loom_rankc_lock(void) __attribute__((weak));
void loom_rankc_unlock(void) __attribute__((weak));
void loom_rankc_use_locale(locale_t loc) __attribute__((weak));

/* Non-zero when the caller runs as a rank under mpiexec (or on a thread that
 * a rank started); 2 on the rank's own ULT. */
static inline int rankc_hosted(void)
{
    return loom_rankc_hosted ? loom_rankc_hosted() : 0;
}

/* lgamma.c: the symbol by which app_crt.c links it into every program. */
extern const char loom_rankc_lgamma_anchor;

/* libc's own definition of NAME (the program's copy defines its own, which
 * -Bsymbolic binds to): NULL if libc lacks it. */
void *loom_rankc_libc(const char *name);

/* A per-copy buffer of *len_p bytes that grows to hold at least `need`
 * (doubling): 0 on success, -1 if out of memory (*buf_p unchanged). */
int loom_rankc_grow(char **buf_p, size_t *len_p, size_t need);

/* The body of a lookup that returns a struct TYPE * of this copy (per
 * rank): CALL, a reentrant form writing to res, buf, len and &out, is
 * retried with a doubled buffer while it returns ERANGE. An error: NULL with
 * errno set; not found: NULL (errno as CALL left it). HERR, when not NULL,
 * is where CALL put its h_errno, copied to h_errno (success or not, as glibc). */
#define RANKC_LOOKUP(TYPE, CALL, HERR)                                                             \
    static struct TYPE res;                                                                        \
    static char *buf;                                                                              \
    static size_t len;                                                                             \
    size_t need = len ? len : 1024;                                                                \
    for (;;) {                                                                                     \
        struct TYPE *out = NULL;                                                                   \
        if (loom_rankc_grow(&buf, &len, need) != 0) {                                              \
            errno = ENOMEM;                                                                        \
            return NULL;                                                                           \
        }                                                                                          \
        int e = (CALL);                                                                            \
        if (e == ERANGE) {                                                                         \
            need = len * 2;                                                                        \
            continue;                                                                              \
        }                                                                                          \
        int *herr_p = (HERR);                                                                      \
        if (herr_p)                                                                                \
            h_errno = *herr_p;                                                                     \
        if (e != 0) {                                                                              \
            errno = e;                                                                             \
            return NULL;                                                                           \
        }                                                                                          \
        return out;                                                                                \
    }

#endif
