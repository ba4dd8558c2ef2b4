/*
 * The table of Loom's environment variables (options.def) and their reads,
 * each kept after the first (options.h).
 */
#include "util/options.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static const struct loom_opt_desc table[LOOM_OPT_COUNT] = {
#define LOOM_OPTION(ID, KIND, DFLT, CAT, VERB, SUMMARY)                                            \
    [LOOM_OPT_##ID] = {"LOOM_" #ID, SUMMARY, LOOM_OPT_##KIND, LOOM_OPT_##CAT, LOOM_VERB_##VERB},
#include "util/options.def"
#undef LOOM_OPTION
};

#define SIZE_DEFAULT(KIND, DFLT)  SIZE_DEFAULT_##KIND(DFLT)
#define SIZE_DEFAULT_SIZE(DFLT)   (DFLT)
#define SIZE_DEFAULT_FLAG(DFLT)   (DFLT)
#define SIZE_DEFAULT_STRING(DFLT) 0
static const long long defaults[LOOM_OPT_COUNT] = {
#define LOOM_OPTION(ID, KIND, DFLT, CAT, VERB, SUMMARY) [LOOM_OPT_##ID] = SIZE_DEFAULT(KIND, DFLT),
#include "util/options.def"
#undef LOOM_OPTION
};

/* The values read; several threads may read an option first at once, and
 * all compute the same value from the same environment. */
static struct {
    _Atomic bool have;
    _Atomic long long size;
    _Atomic(const char *) str;
} seen[LOOM_OPT_COUNT];

const struct loom_opt_desc *loom_opt_desc(enum loom_opt opt)
{
    return &table[opt];
}

long long loom_opt_size(enum loom_opt opt)
{
    if (atomic_load_explicit(&seen[opt].have, memory_order_acquire))
        return atomic_load_explicit(&seen[opt].size, memory_order_relaxed);
    long long v;
    if (table[opt].kind == LOOM_OPT_FLAG) {
        const char *s = getenv(table[opt].env);
        v = s && *s ? strcmp(s, "0") != 0 : defaults[opt];
    } else {
        v = loom_env_size(table[opt].env, defaults[opt]);
    }
    atomic_store_explicit(&seen[opt].size, v, memory_order_relaxed);
    /* Release: the value before the flag that says it is there. */
    atomic_store_explicit(&seen[opt].have, true, memory_order_release);
    return v;
}

const char *loom_opt_str(enum loom_opt opt)
{
    if (atomic_load_explicit(&seen[opt].have, memory_order_acquire))
        return atomic_load_explicit(&seen[opt].str, memory_order_relaxed);
    const char *s = getenv(table[opt].env);
    if (s && !*s)
        s = NULL;
    atomic_store_explicit(&seen[opt].str, s, memory_order_relaxed);
    atomic_store_explicit(&seen[opt].have, true, memory_order_release);
    return s;
}
