/*
 * on_exit, with its handlers run when this rank ends. atexit handlers of a
 * program (glibc's atexit is __cxa_atexit with the object's __dso_handle) and
 * C++ static destructors already belong to this copy: the rank's exit runs
 * __cxa_finalize on its __dso_handle (runtime/app_crt.c). glibc's on_exit has
 * no handle, so its handlers would run at the end of the whole process; here
 * they join the same per-copy list through __cxa_atexit, so atexit and on_exit
 * handlers run in reverse order of registration, interleaved, and each
 * on_exit handler gets the status the rank ends with. In a program run
 * directly (not under mpiexec) glibc's own on_exit is used.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "rankc.h"

extern void *__dso_handle;
int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

struct on_exit_rec {
    void (*fn)(int, void *);
    void *arg;
};

static void run_on_exit(void *p)
{
    struct on_exit_rec r = *(struct on_exit_rec *)p;
    free(p);
    r.fn(loom_rankc_exit_status ? loom_rankc_exit_status() : 0, r.arg);
}

RANKC_WEAK int on_exit(void (*fn)(int, void *), void *arg)
{
    if (!rankc_hosted()) {
        int (*libc_on_exit)(void (*)(int, void *), void *) =
            (int (*)(void (*)(int, void *), void *))loom_rankc_libc("on_exit");
        return libc_on_exit ? libc_on_exit(fn, arg) : -1;
    }
    struct on_exit_rec *r = malloc(sizeof *r);
    if (!r)
        return -1;
    r->fn = fn;
    r->arg = arg;
    if (__cxa_atexit(run_on_exit, r, &__dso_handle) != 0) {
        free(r);
        return -1;
    }
    return 0;
}
