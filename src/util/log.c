/*
 * Diagnostics: formatted messages to stderr, one write(2) per message.
 */
#include "util/log.h"
#include "util/options.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

static int debug_on = -1;

/* Formats "loom: <level>message\n" and writes it in one call. */
static void emit(const char *level, const char *fmt, va_list ap)
{
    char buf[1024];
    int saved = errno;
    int n = snprintf(buf, sizeof buf, "loom: %s", level);
    if (n < 0)
        n = 0;
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    ssize_t w = write(2, buf, len);
    (void)w;
    errno = saved;
}

void loom_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("error: ", fmt, ap);
    va_end(ap);
}

void loom_log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("warning: ", fmt, ap);
    va_end(ap);
}

void loom_log_debug(const char *fmt, ...)
{
    if (debug_on < 0) {
        debug_on = loom_opt_flag(LOOM_OPT_DEBUG);
    }
    if (!debug_on)
        return;
    va_list ap;
    va_start(ap, fmt);
    emit("debug: ", fmt, ap);
    va_end(ap);
}

void loom_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("fatal: ", fmt, ap);
    va_end(ap);
    /* The system call itself: libloom's _exit ends only the calling rank
     * (src/runtime/exit.c). */
    syscall(SYS_exit_group, 1);
    __builtin_unreachable();
}

void loom_log_raw(const char *s)
{
    ssize_t w = write(2, s, strlen(s));
    (void)w;
}

char *loom_fmt_long(char *dst, long v)
{
    char tmp[24];
    int n = 0;
    unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *dst++ = '-';
    while (n)
        *dst++ = tmp[--n];
    *dst = '\0';
    return dst;
}

uint64_t loom_time_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool loom_cpu_can_demote(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c >> 25 & 1u);
#else
    return false;
#endif
}

long long loom_env_size(const char *name, long long dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v < 0)
        loom_fatal("%s=%s is not a non-negative number", name, s);
    switch (*end) {
    case 'k':
    case 'K':
        v <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        v <<= 20;
        end++;
        break;
    case 'g':
    case 'G':
        v <<= 30;
        end++;
        break;
    default:
        break;
    }
    if (*end)
        loom_fatal("%s=%s: unexpected '%s' (use a number with an optional k, m or g suffix)", name,
                   s, end);
    return v;
}
