/*
 * getpwnam, getpwuid, getgrnam and getgrgid with their results in this copy of
 * the program (per rank): each has its own struct and string buffer, as in
 * glibc, filled by the reentrant form with the buffer grown while it reports
 * ERANGE. Not found: NULL with errno untouched; an error: NULL with errno set.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <pwd.h>

#include "rankc.h"

/* Defines FN(PARAM) returning a TYPE* that lives in this copy, over FN_R. */
#define RANKC_DB_LOOKUP(TYPE, FN, PARAM_T, FN_R)                                                   \
    RANKC_WEAK struct TYPE *FN(PARAM_T key)                                                        \
    {                                                                                              \
        static struct TYPE res;                                                                    \
        static char *buf;                                                                          \
        static size_t len;                                                                         \
        size_t need = len ? len : 1024;                                                            \
        for (;;) {                                                                                 \
            struct TYPE *out = NULL;                                                               \
            if (loom_rankc_grow(&buf, &len, need) != 0) {                                          \
                errno = ENOMEM;                                                                    \
                return NULL;                                                                       \
            }                                                                                      \
            int e = FN_R(key, &res, buf, len, &out);                                               \
            if (e == ERANGE) {                                                                     \
                need = len * 2;                                                                    \
                continue;                                                                          \
            }                                                                                      \
            if (e != 0) {                                                                          \
                errno = e;                                                                         \
                return NULL;                                                                       \
            }                                                                                      \
            return out;                                                                            \
        }                                                                                          \
    }

RANKC_DB_LOOKUP(passwd, getpwnam, const char *, getpwnam_r)
RANKC_DB_LOOKUP(passwd, getpwuid, uid_t, getpwuid_r)
RANKC_DB_LOOKUP(group, getgrnam, const char *, getgrnam_r)
RANKC_DB_LOOKUP(group, getgrgid, gid_t, getgrgid_r)
