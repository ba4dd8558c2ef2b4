/*
 * Shared definitions for every layer: status codes, branch hints, cache-line
 * size, attributes. Internal functions return int status codes (LOOM_OK == 0);
 * they are mapped to MPI error classes only at the MPI layer.
 */
#ifndef LOOM_UTIL_COMMON_H
#define LOOM_UTIL_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum loom_status {
    LOOM_OK = 0,
    LOOM_ERR_NOMEM = -1,    /* out of memory or address space */
    LOOM_ERR_INVALID = -2,  /* bad argument */
    LOOM_ERR_SYSTEM = -3,   /* a system call failed; errno tells why */
    LOOM_ERR_NOTFOUND = -4, /* no such object, symbol or file */
    LOOM_ERR_UNSUPPORTED = -5,
};

#define LOOM_CACHE_LINE    64
#define LOOM_ALIGNED_CL    __attribute__((aligned(LOOM_CACHE_LINE)))
#define LOOM_LIKELY(x)     __builtin_expect(!!(x), 1)
#define LOOM_UNLIKELY(x)   __builtin_expect(!!(x), 0)
#define LOOM_MUST_CHECK    __attribute__((warn_unused_result))
#define LOOM_NORETURN      __attribute__((noreturn))
#define LOOM_NOINLINE      __attribute__((noinline, cold)) /* error paths off the hot ones */
#define LOOM_EXPORT        __attribute__((visibility("default")))
#define LOOM_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Tells the CPU we are in a spin-wait loop. */
static inline void loom_cpu_relax(void)
{
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Asks for the cache line at p in a writable state, ahead of a store
 * (PREFETCHW; a no-op where the CPU lacks it). */
static inline void loom_prefetch_write(const void *p)
{
#if defined(__x86_64__)
    __asm__ __volatile__("prefetchw %0" ::"m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

/* Hints that the cache line at p, just written for another core, should
 * move from our private caches to the shared one (CLDEMOTE; its encoding is
 * a hint NOP, but call it only where loom_cpu_can_demote() says the CPU has
 * it), so that its reader's miss does not snoop us and our later loads do
 * not pull it back (docs/pt2pt-perf.md). */
static inline void loom_cache_demote(const void *p)
{
#if defined(__x86_64__)
    __asm__ __volatile__("cldemote %0" ::"m"(*(const char *)p));
#else
    (void)p;
#endif
}

/* True when the CPU has CLDEMOTE (CPUID leaf 7, ECX bit 25). */
bool loom_cpu_can_demote(void);

/* Monotonic time in nanoseconds. */
uint64_t loom_time_ns(void);

/* Reads an environment variable as a non-negative integer with an optional
 * k/m/g suffix (powers of 1024); returns dflt when unset. Exits with a clear
 * message when it is set but malformed. */
long long loom_env_size(const char *name, long long dflt);

#endif
