/*
 * getpwent and getgrent iterations per rank: setpwent, getpwent, endpwent,
 * setgrent, getgrent, endgrent.
 *
 * glibc keeps one iteration position per process (in NSS), so ranks that
 * iterate would take entries from each other. Here a rank's first getpwent
 * (after setpwent or endpwent) takes a snapshot of the whole database with
 * glibc's own calls, under a process-wide lock (loom_rankc_lock: ranks of
 * other workers may iterate at the same time; no rank switches while it is
 * held), then returns its entries in order from one struct of this copy (as
 * glibc returns one static struct). At the end, NULL with errno untouched:
 * glibc's errno there depends on the NSS modules' history (nss_systemd sets
 * ENOENT or EHOSTDOWN depending on the errno it finds), which is not
 * reproduced. Entries added to the database during an iteration are seen
 * from the next setpwent on. In a program run directly,
 * glibc's functions are used.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "rankc.h"

/* A snapshot: entries as single allocations, and the next one's index. */
struct snap {
    void **ent;
    size_t n, cap, pos;
    int taken;
};

static void snap_free(struct snap *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->ent[i]);
    free(s->ent);
    memset(s, 0, sizeof *s);
}

static int snap_push(struct snap *s, void *e)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        void **ent = realloc(s->ent, cap * sizeof *ent);
        if (!ent)
            return -1;
        s->ent = ent;
        s->cap = cap;
    }
    s->ent[s->n++] = e;
    return 0;
}

/* Copies a string into *p, advancing it. */
static char *put(char **p, const char *str)
{
    if (!str)
        return NULL;
    char *d = *p;
    *p = stpcpy(d, str) + 1;
    return d;
}

static size_t len0(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

static void *copy_passwd(const struct passwd *pw)
{
    size_t len = sizeof *pw + len0(pw->pw_name) + len0(pw->pw_passwd) + len0(pw->pw_gecos) +
                 len0(pw->pw_dir) + len0(pw->pw_shell);
    struct passwd *c = malloc(len);
    if (!c)
        return NULL;
    char *p = (char *)(c + 1);
    *c = *pw;
    c->pw_name = put(&p, pw->pw_name);
    c->pw_passwd = put(&p, pw->pw_passwd);
    c->pw_gecos = put(&p, pw->pw_gecos);
    c->pw_dir = put(&p, pw->pw_dir);
    c->pw_shell = put(&p, pw->pw_shell);
    return c;
}

static void *copy_group(const struct group *gr)
{
    size_t nmem = 0, len = sizeof *gr + len0(gr->gr_name) + len0(gr->gr_passwd);
    for (; gr->gr_mem && gr->gr_mem[nmem]; nmem++)
        len += len0(gr->gr_mem[nmem]);
    len += (nmem + 1) * sizeof(char *);
    struct group *c = malloc(len);
    if (!c)
        return NULL;
    char **mem = (char **)(c + 1);
    char *p = (char *)(mem + nmem + 1);
    *c = *gr;
    c->gr_name = put(&p, gr->gr_name);
    c->gr_passwd = put(&p, gr->gr_passwd);
    for (size_t i = 0; i < nmem; i++)
        mem[i] = put(&p, gr->gr_mem[i]);
    mem[nmem] = NULL;
    c->gr_mem = mem;
    return c;
}

/* Takes the snapshot with glibc's set/get/end functions NAME##ent. */
static void snap_take(struct snap *s, const char *set, const char *get, const char *end,
                      void *(*copy)(const void *))
{
    void (*setf)(void) = (void (*)(void))loom_rankc_libc(set);
    void *(*getf)(void) = (void *(*)(void))loom_rankc_libc(get);
    void (*endf)(void) = (void (*)(void))loom_rankc_libc(end);
    snap_free(s);
    s->taken = 1;
    if (loom_rankc_lock)
        loom_rankc_lock();
    int saved = errno;
    setf();
    for (void *e; (e = getf());) {
        void *c = copy(e);
        if (!c || snap_push(s, c) != 0) {
            free(c);
            break;
        }
    }
    endf();
    if (loom_rankc_lock)
        loom_rankc_unlock();
    errno = saved;
}

/* The next entry of a snapshot, or NULL at its end (errno untouched). */
static void *snap_next(struct snap *s)
{
    return s->pos < s->n ? s->ent[s->pos++] : NULL;
}

static void *copy_passwd_v(const void *e)
{
    return copy_passwd(e);
}

static void *copy_group_v(const void *e)
{
    return copy_group(e);
}

static struct snap pw_snap, gr_snap;

#define LIBC_CALL(TYPE, NAME) ((TYPE)loom_rankc_libc(NAME))

RANKC_WEAK void setpwent(void)
{
    if (!rankc_hosted()) {
        LIBC_CALL(void (*)(void), "setpwent")();
        return;
    }
    snap_free(&pw_snap);
}

RANKC_WEAK void endpwent(void)
{
    if (!rankc_hosted()) {
        LIBC_CALL(void (*)(void), "endpwent")();
        return;
    }
    snap_free(&pw_snap);
}

RANKC_WEAK struct passwd *getpwent(void)
{
    if (!rankc_hosted())
        return LIBC_CALL(struct passwd * (*)(void), "getpwent")();
    static struct passwd res;
    if (!pw_snap.taken)
        snap_take(&pw_snap, "setpwent", "getpwent", "endpwent", copy_passwd_v);
    struct passwd *e = snap_next(&pw_snap);
    if (!e)
        return NULL;
    res = *e;
    return &res;
}

RANKC_WEAK void setgrent(void)
{
    if (!rankc_hosted()) {
        LIBC_CALL(void (*)(void), "setgrent")();
        return;
    }
    snap_free(&gr_snap);
}

RANKC_WEAK void endgrent(void)
{
    if (!rankc_hosted()) {
        LIBC_CALL(void (*)(void), "endgrent")();
        return;
    }
    snap_free(&gr_snap);
}

RANKC_WEAK struct group *getgrent(void)
{
    if (!rankc_hosted())
        return LIBC_CALL(struct group * (*)(void), "getgrent")();
    static struct group res;
    if (!gr_snap.taken)
        snap_take(&gr_snap, "setgrent", "getgrent", "endgrent", copy_group_v);
    struct group *e = snap_next(&gr_snap);
    if (!e)
        return NULL;
    res = *e;
    return &res;
}
