/*
 * Diagnostics. Messages go to stderr with the "loom" prefix and, inside a
 * job, the rank; they are written with one write(2) so lines from different
 * ranks and workers do not interleave. loom_log_raw is async-signal-safe.
 */
#ifndef LOOM_UTIL_LOG_H
#define LOOM_UTIL_LOG_H

#include "util/common.h"

void loom_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void loom_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void loom_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
LOOM_NORETURN void loom_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Async-signal-safe: writes s to fd 2 in one write. */
void loom_log_raw(const char *s);

/* Async-signal-safe decimal formatting; returns the end of the written text. */
char *loom_fmt_long(char *dst, long v);

/* Cheap assertion, always on. */
#define LOOM_CHECK(cond)                                                                           \
    do {                                                                                           \
        if (LOOM_UNLIKELY(!(cond)))                                                                \
            loom_fatal("internal error: %s failed at %s:%d", #cond, __FILE__, __LINE__);           \
    } while (0)

/* Internal consistency check, debug builds only. */
#ifndef NDEBUG
#define LOOM_ASSERT(cond) LOOM_CHECK(cond)
#else
#define LOOM_ASSERT(cond) ((void)0)
#endif

#endif
