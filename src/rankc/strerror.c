/*
 * strerror, strerror_l and strsignal with their result buffers in this copy of
 * the program (per rank). glibc returns known messages from its (translated)
 * tables and formats unknown numbers into a buffer per thread, which the ranks
 * of a worker share; the GNU strerror_r gives the same text into a buffer of
 * ours. strsignal has no reentrant form: known signals take sigdescr_np's text
 * through libc's translations, others are formatted as glibc does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libintl.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "rankc.h"

static char strerror_buf[1024];
static char strerror_l_buf[1024];
static char strsignal_buf[128];

RANKC_WEAK char *strerror(int errnum)
{
    return strerror_r(errnum, strerror_buf, sizeof strerror_buf);
}

RANKC_WEAK char *strerror_l(int errnum, locale_t loc)
{
    locale_t old = uselocale(loc);
    char *s = strerror_r(errnum, strerror_l_buf, sizeof strerror_l_buf);
    uselocale(old);
    return s;
}

RANKC_WEAK char *strsignal(int sig)
{
    const char *d = sigdescr_np(sig);
    if (d)
        return dgettext("libc", d);
    int saved = errno;
    if (sig >= SIGRTMIN && sig <= SIGRTMAX)
        snprintf(strsignal_buf, sizeof strsignal_buf, dgettext("libc", "Real-time signal %d"),
                 sig - SIGRTMIN);
    else
        snprintf(strsignal_buf, sizeof strsignal_buf, dgettext("libc", "Unknown signal %d"), sig);
    errno = saved;
    return strsignal_buf;
}
