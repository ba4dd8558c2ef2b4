/*
 * Helpers of the per-rank C library: libc's own definitions of the functions
 * this archive replaces, and growing per-copy buffers.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <stdlib.h>

#include "rankc.h"

void *loom_rankc_libc(const char *name)
{
    static void *libc;
    if (!libc)
        libc = dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
    return libc ? dlsym(libc, name) : NULL;
}

int loom_rankc_grow(char **buf_p, size_t *len_p, size_t need)
{
    if (*len_p >= need && *buf_p)
        return 0;
    size_t len = *len_p ? *len_p : 1024;
    while (len < need)
        len *= 2;
    char *b = realloc(*buf_p, len);
    if (!b)
        return -1;
    *buf_p = b;
    *len_p = len;
    return 0;
}
