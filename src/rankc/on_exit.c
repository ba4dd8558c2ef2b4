/*
 * atexit, on_exit, at_quick_exit and quick_exit per rank.
 *
 * on_exit, with its handlers run when this rank ends. atexit handlers of a
 * program (glibc's atexit is __cxa_atexit with the object's __dso_handle) and
 * C++ static destructors already belong to this copy: the rank's exit runs
 * __cxa_finalize on its __dso_handle (runtime/app_crt.c). glibc's on_exit has
 * no handle, so its handlers would run at the end of the whole process; here
 * they join the same per-copy list through __cxa_atexit, so atexit and on_exit
 * handlers run in reverse order of registration, interleaved, and each
 * on_exit handler gets the status the rank ends with. In a program run
 * directly (not under mpiexec) glibc's own on_exit is used.
 *
 * atexit is defined here too, as glibc's libc_nonshared.a defines it
 * (__cxa_atexit with this copy's handle): a sanitizer's runtime, linked
 * first, defines its own atexit that registers for the whole process.
 *
 * __cxa_atexit (which atexit, on_exit and C++ static objects use) is wrapped
 * here: a rank that ends by _exit or quick_exit runs none of its handlers, as
 * a process, but they stay in glibc's list, which the process's own exit
 * would run at the end of the job; the wrapper skips them then
 * (loom_rankc_handlers_may_run).
 *
 * at_quick_exit handlers go to a list of this copy; quick_exit runs them in
 * reverse order, then calls _exit, which mpicc's --wrap=_exit turns into the
 * end of this rank only (glibc's quick_exit would end the whole job).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>

#include "rankc.h"

extern void *__dso_handle;
int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

/* A handler of this copy: a __cxa_atexit one (fn) or an on_exit one (ofn). */
struct handler {
    void (*fn)(void *);
    void (*ofn)(int, void *);
    void *arg;
};

static int (*libc_cxa_atexit)(void (*)(void *), void *, void *);

static void run_handler(void *p)
{
    struct handler h = *(struct handler *)p;
    free(p);
    if (loom_rankc_handlers_may_run && !loom_rankc_handlers_may_run())
        return;
    if (h.ofn)
        h.ofn(loom_rankc_exit_status ? loom_rankc_exit_status() : 0, h.arg);
    else
        h.fn(h.arg);
}

static int add_handler(void (*fn)(void *), void (*ofn)(int, void *), void *arg, void *dso)
{
    struct handler *h = malloc(sizeof *h);
    if (!h)
        return -1;
    h->fn = fn;
    h->ofn = ofn;
    h->arg = arg;
    if (libc_cxa_atexit(run_handler, h, dso) != 0) {
        free(h);
        return -1;
    }
    return 0;
}

RANKC_WEAK int __cxa_atexit(void (*fn)(void *), void *arg, void *dso)
{
    if (!libc_cxa_atexit)
        libc_cxa_atexit =
            (int (*)(void (*)(void *), void *, void *))loom_rankc_libc("__cxa_atexit");
    if (!rankc_hosted())
        return libc_cxa_atexit(fn, arg, dso);
    return add_handler(fn, NULL, arg, dso);
}

RANKC_WEAK int on_exit(void (*fn)(int, void *), void *arg)
{
    if (!rankc_hosted()) {
        int (*libc_on_exit)(void (*)(int, void *), void *) =
            (int (*)(void (*)(int, void *), void *))loom_rankc_libc("on_exit");
        return libc_on_exit ? libc_on_exit(fn, arg) : -1;
    }
    if (!libc_cxa_atexit)
        libc_cxa_atexit =
            (int (*)(void (*)(void *), void *, void *))loom_rankc_libc("__cxa_atexit");
    return add_handler(NULL, fn, arg, &__dso_handle);
}

static void run_atexit(void *fn)
{
    ((void (*)(void))fn)();
}

RANKC_WEAK int atexit(void (*fn)(void))
{
    return __cxa_atexit(run_atexit, (void *)fn, &__dso_handle);
}

struct quick_rec {
    void (*fn)(void);
    struct quick_rec *next;
};
static struct quick_rec *quick_handlers; /* last registered first */

RANKC_WEAK int at_quick_exit(void (*fn)(void))
{
    struct quick_rec *r = malloc(sizeof *r);
    if (!r)
        return -1;
    r->fn = fn;
    r->next = quick_handlers;
    quick_handlers = r;
    return 0;
}

RANKC_WEAK void quick_exit(int status)
{
    while (quick_handlers) {
        struct quick_rec *r = quick_handlers;
        quick_handlers = r->next;
        void (*fn)(void) = r->fn;
        free(r);
        fn();
    }
    _exit(status);
}
