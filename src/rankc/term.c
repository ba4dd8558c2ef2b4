/*
 * Functions that return a static buffer when given none, with that buffer in
 * this copy of the program (per rank): tmpnam(NULL), ctermid(NULL) (always "/dev/tty", as glibc),
 * ttyname, getlogin, ptsname. Each calls the reentrant form; on failure, NULL with the error in
 * errno, as glibc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rankc.h"

RANKC_WEAK char *tmpnam(char s[L_tmpnam])
{
    /* Through libc's symbol table: a reference to tmpnam_r would make the
     * linker warn at every link of this member. */
    static char buf[L_tmpnam];
    static char *(*libc_tmpnam_r)(char *);
    if (!libc_tmpnam_r)
        libc_tmpnam_r = (char *(*)(char *))loom_rankc_libc("tmpnam_r");
    return libc_tmpnam_r(s ? s : buf);
}

RANKC_WEAK char *ctermid(char *s)
{
    static char buf[L_ctermid];
    if (!s)
        s = buf;
    return strcpy(s, "/dev/tty");
}

RANKC_WEAK char *ttyname(int fd)
{
    static char buf[PATH_MAX];
    int e = ttyname_r(fd, buf, sizeof buf);
    if (e != 0) {
        errno = e;
        return NULL;
    }
    return buf;
}

RANKC_WEAK char *getlogin(void)
{
    static char buf[LOGIN_NAME_MAX + 1];
    int e = getlogin_r(buf, sizeof buf);
    if (e != 0) {
        errno = e;
        return NULL;
    }
    return buf;
}

RANKC_WEAK char *ptsname(int fd)
{
    static char buf[128];
    int e = ptsname_r(fd, buf, sizeof buf);
    if (e != 0) {
        errno = e;
        return NULL;
    }
    return buf;
}
