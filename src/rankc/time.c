/*
 * localtime, gmtime, ctime, asctime and getdate with their static results in
 * this copy of the program (per rank), over the reentrant forms.
 *
 * As in glibc: localtime and gmtime return the same struct tm (each call
 * overwrites what the other returned), ctime(t) is asctime(localtime(t)) (so
 * it overwrites that struct tm too), localtime reads TZ again at every call
 * (tzset) while localtime_r need not, and asctime's buffer is large enough
 * for any year that fits an int (asctime_r's 26 bytes are not: it fails with
 * EOVERFLOW where asctime succeeds), so asctime formats here itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <time.h>

#include "rankc.h"

static struct tm tm_buf;         /* shared by localtime and gmtime, as in glibc */
static char asctime_buf[3 * 12]; /* "Www Mmm dd hh:mm:ss yyyy\n" for any int fields */

RANKC_WEAK struct tm *localtime(const time_t *t)
{
    tzset();
    return localtime_r(t, &tm_buf);
}

RANKC_WEAK struct tm *gmtime(const time_t *t)
{
    return gmtime_r(t, &tm_buf);
}

RANKC_WEAK char *asctime(const struct tm *tp)
{
    static const char wday[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char mon[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    if (!tp) {
        errno = EINVAL;
        return NULL;
    }
    if (tp->tm_year > INT_MAX - 1900) {
        errno = EOVERFLOW;
        return NULL;
    }
    const char *w = (unsigned)tp->tm_wday < 7 ? wday[tp->tm_wday] : "???";
    const char *m = (unsigned)tp->tm_mon < 12 ? mon[tp->tm_mon] : "???";
    int n = snprintf(asctime_buf, sizeof asctime_buf, "%.3s %.3s%3d %.2d:%.2d:%.2d %d\n", w, m,
                     tp->tm_mday, tp->tm_hour, tp->tm_min, tp->tm_sec, 1900 + tp->tm_year);
    if (n < 0 || (size_t)n >= sizeof asctime_buf) {
        errno = EOVERFLOW;
        return NULL;
    }
    return asctime_buf;
}

RANKC_WEAK char *ctime(const time_t *t)
{
    struct tm *tp = localtime(t);
    return tp ? asctime(tp) : NULL;
}

/* getdate's result and error code (a libc variable, defined here per rank). */
int getdate_err;
static struct tm getdate_tm;

RANKC_WEAK struct tm *getdate(const char *string)
{
    int e = getdate_r(string, &getdate_tm);
    if (e != 0) {
        getdate_err = e;
        return NULL;
    }
    return &getdate_tm;
}
