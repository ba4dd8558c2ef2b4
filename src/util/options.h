/*
 * Loom's environment variables: one table (options.def) with each one's
 * kind, default, category and summary. Layers read them through these
 * functions only, so a new knob cannot be forgotten by the tools interface
 * (MPI_T control variables, src/mpi/mpit.c) and the documentation
 * (docs/mpi_t.md). Each value is read from the environment once, at the
 * first call, and kept: what a later read returns is what Loom uses.
 */
#ifndef LOOM_UTIL_OPTIONS_H
#define LOOM_UTIL_OPTIONS_H

#include "util/common.h"

enum loom_opt_kind { LOOM_OPT_SIZE, LOOM_OPT_FLAG, LOOM_OPT_STRING };
enum loom_opt_category { LOOM_OPT_RUNTIME, LOOM_OPT_PT2PT, LOOM_OPT_COLL };
/* The MPI_T_VERBOSITY_ values (checked in src/mpi/mpit.c). */
enum loom_opt_verbosity {
    LOOM_VERB_USER_BASIC = 1,
    LOOM_VERB_USER_DETAIL,
    LOOM_VERB_USER_ALL,
    LOOM_VERB_TUNER_BASIC,
    LOOM_VERB_TUNER_DETAIL,
    LOOM_VERB_TUNER_ALL,
    LOOM_VERB_MPIDEV_BASIC,
    LOOM_VERB_MPIDEV_DETAIL,
    LOOM_VERB_MPIDEV_ALL
};

enum loom_opt {
#define LOOM_OPTION(ID, KIND, DFLT, CAT, VERB, SUMMARY) LOOM_OPT_##ID,
#include "util/options.def"
#undef LOOM_OPTION
    LOOM_OPT_COUNT
};

struct loom_opt_desc {
    const char *env; /* "LOOM_SPIN_NS" */
    const char *summary;
    enum loom_opt_kind kind;
    enum loom_opt_category category;
    enum loom_opt_verbosity verbosity;
};

/* The table entry of an option (opt < LOOM_OPT_COUNT). */
const struct loom_opt_desc *loom_opt_desc(enum loom_opt opt);

/* A SIZE option's value (its default when unset; a malformed value ends
 * the process with a message naming it), a FLAG option's 0 or 1. */
long long loom_opt_size(enum loom_opt opt);
static inline bool loom_opt_flag(enum loom_opt opt)
{
    return loom_opt_size(opt) != 0;
}
/* A STRING option's value; NULL when unset or empty. */
const char *loom_opt_str(enum loom_opt opt);

#endif
