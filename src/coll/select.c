/*
 * Choosing an algorithm per call, first of:
 *  - loom_coll_force() (tune.h: loom-tune's benchmark, at run time),
 *  - LOOM_COLL_<COLLECTIVE>=<algorithm>,
 *  - the machine's tuning table (tune.c), where an entry matches the call
 *    and its algorithm applies,
 *  - the cost model of each algorithm (its file's header) evaluated with the
 *    machine parameters below: the cheapest applicable one.
 * LOOM_COLL_VERBOSE=1 prints, on member 0 of the communicator, the
 * candidates, their predicted costs and the choice (and why, when not the
 * model's).
 *
 * The choice depends only on what every member of a call agrees on (the
 * collective, the member count, the message size, the topology, the
 * environment), so all members run the same algorithm.
 *
 * Machine parameters: coll_model, set by model.c (built-in constants, this
 * machine's calibration from its cache file, LOOM_COLL_MODEL overrides).
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_impl.h"
#include "coll/model.h"
#include "comm/comm_impl.h"
#include "coll/tune.h"
#include "util/log.h"
#include "util/options.h"

static const struct coll_algorithm algorithms[] = {
#define INDEPENDENT true
#define COOPERATIVE false
#define LOOM_COLL_ALGORITHM(KIND, kind, name, progress, summary)                                   \
    {LOOM_COLL_##KIND,                                                                             \
     COLL_ALG_##kind##_##name,                                                                     \
     #name,                                                                                        \
     coll_##kind##_##name,                                                                         \
     coll_##kind##_##name##_cost,                                                                  \
     progress,                                                                                     \
     summary},
#include "coll/algorithms.def"
#undef LOOM_COLL_ALGORITHM
#undef INDEPENDENT
#undef COOPERATIVE
};

_Atomic unsigned coll_select_gen;

/* An override that forces no algorithm, not even LOOM_COLL_<COLLECTIVE>'s
 * (loom_coll_choice_set(kind, -1)): never run. */
static const struct coll_algorithm no_algorithm;

static struct {
    _Atomic bool ready; /* configure() ran: skips pthread_once on each call */
    pthread_once_t once;
    const struct coll_algorithm *forced[LOOM_COLL_NKINDS];
    /* loom_coll_force(): every rank sets the same value between barriers. */
    _Atomic(const struct coll_algorithm *) override[LOOM_COLL_NKINDS];
    bool verbose;
    bool arrival; /* LOOM_COLL_REDUCE_ORDER=arrival */
} cfg = {.once = PTHREAD_ONCE_INIT};

static void configure_body(void);

static void configure(void)
{
    configure_body();
    atomic_store_explicit(&cfg.ready, true, memory_order_release);
}

/* LOOM_COLL_<COLLECTIVE> of collective k: its name into var, its value
 * (NULL when unset or empty), and the algorithm it names into *alg_p (NULL
 * if none). */
static const char *env_forced(int k, char var[64], const struct coll_algorithm **alg_p)
{
    const char *name = loom_coll_name((enum loom_coll_kind)k);
    size_t len = strlen("LOOM_COLL_");
    memcpy(var, "LOOM_COLL_", len);
    for (size_t i = 0; name[i] && len < 63; i++)
        var[len++] = (char)toupper((unsigned char)name[i]);
    var[len] = 0;
    *alg_p = NULL;
    const char *want = getenv(var);
    if (!want || !*want)
        return NULL;
    for (size_t i = 0; i < LOOM_ARRAY_SIZE(algorithms); i++)
        if ((int)algorithms[i].kind == k && strcmp(algorithms[i].name, want) == 0)
            *alg_p = &algorithms[i];
    return want;
}

static void configure_body(void)
{
    cfg.verbose = loom_opt_flag(LOOM_OPT_COLL_VERBOSE);
    const char *order = loom_opt_str(LOOM_OPT_COLL_REDUCE_ORDER);
    if (order && *order && strcmp(order, "fixed") != 0) {
        cfg.arrival = strcmp(order, "arrival") == 0;
        if (!cfg.arrival)
            loom_log_error("LOOM_COLL_REDUCE_ORDER=%s: choose fixed or arrival; using fixed",
                           order);
    }
    coll_model_configure();
    for (int k = 0; k < LOOM_COLL_NKINDS; k++) {
        char var[64];
        const char *want = env_forced(k, var, &cfg.forced[k]);
        if (want && !cfg.forced[k]) {
            char list[256] = "";
            for (size_t i = 0; i < LOOM_ARRAY_SIZE(algorithms); i++)
                if ((int)algorithms[i].kind == k) {
                    strncat(list, " ", sizeof list - strlen(list) - 1);
                    strncat(list, algorithms[i].name, sizeof list - strlen(list) - 1);
                }
            loom_log_error("%s=%s: no such algorithm (choose from:%s); using the model's choice",
                           var, want, list);
        }
    }
    coll_tuning_load();
}

const struct coll_algorithm *coll_algorithm_list(size_t *count_p)
{
    *count_p = LOOM_ARRAY_SIZE(algorithms);
    return algorithms;
}

void coll_select_override(int kind, const struct coll_algorithm *alg)
{
    pthread_once(&cfg.once, configure);
    atomic_store_explicit(&cfg.override[kind], alg, memory_order_relaxed);
    atomic_fetch_add_explicit(&coll_select_gen, 1, memory_order_relaxed);
}

size_t coll_call_bytes(const struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    switch (x->kind) {
    case LOOM_COLL_BCAST:
    case LOOM_COLL_REDUCE:
    case LOOM_COLL_ALLREDUCE:
    case LOOM_COLL_SCAN:
    case LOOM_COLL_EXSCAN:
    case LOOM_COLL_REDUCE_SCATTER_BLOCK:
        return a->rcount * (a->rtype ? a->rtype->size : 0);
    default:
        return 0; /* sizes may differ between members: single algorithm */
    }
}

int coll_max_per_worker(const struct coll_shared *sh)
{
    return sh->max_per_worker;
}

bool coll_reduce_arrival(const struct loom_info *info)
{
    if (LOOM_UNLIKELY(info != NULL)) {
        int i = loom_info_find(info, "loom_reduce_order");
        if (i >= 0)
            return strcmp(info->vals[i], "arrival") == 0;
    }
    if (!atomic_load_explicit(&cfg.ready, memory_order_acquire))
        pthread_once(&cfg.once, configure);
    return cfg.arrival;
}

/* coll_select() without a memo of this choice. */
static __attribute__((noinline)) const struct coll_algorithm *
select_slow(struct coll_ctx *x, struct coll_memo *memo, size_t nbytes, int flags, unsigned gen)
{
    const struct loom_coll_args *a = x->a;
    if (!atomic_load_explicit(&cfg.ready, memory_order_acquire))
        pthread_once(&cfg.once, configure);
    const struct coll_algorithm *forced =
        atomic_load_explicit(&cfg.override[x->kind], memory_order_relaxed);
    if (forced == &no_algorithm)
        forced = NULL;
    else if (!forced)
        forced = cfg.forced[x->kind];
    if (forced && x->nonblocking && !forced->independent)
        forced = NULL; /* several calls of a member may run at once: algorithms.def */
    if (forced && !cfg.verbose)
        return *memo = (struct coll_memo){forced, nbytes, a->root, flags, gen}, forced;
    const struct coll_algorithm *tuned = forced ? NULL : coll_tuning_lookup(x, nbytes);
    if (tuned && x->nonblocking && !tuned->independent)
        tuned = NULL; /* measured with blocking calls; see algorithms.def */
    if (tuned && !cfg.verbose)
        return *memo = (struct coll_memo){tuned, nbytes, a->root, flags, gen}, tuned;
    const struct coll_algorithm *best = NULL;
    double best_cost = 0;
    char line[512];
    int len = 0;
    for (size_t i = 0; i < LOOM_ARRAY_SIZE(algorithms); i++) {
        const struct coll_algorithm *alg = &algorithms[i];
        if (alg->kind != x->kind || (x->nonblocking && !alg->independent))
            continue;
        double c = alg->cost(x, nbytes);
        if (cfg.verbose && len < (int)sizeof line)
            len += c < 0 ? snprintf(line + len, sizeof line - (size_t)len, " %s n/a", alg->name)
                         : snprintf(line + len, sizeof line - (size_t)len, " %s %.3g us", alg->name,
                                    c * 1e6);
        if (c >= 0 && (!best || c < best_cost)) {
            best = alg;
            best_cost = c;
        }
    }
    if (!best) /* nothing applies: the first listed always does */
        for (size_t i = 0; !best && i < LOOM_ARRAY_SIZE(algorithms); i++)
            if (algorithms[i].kind == x->kind && (!x->nonblocking || algorithms[i].independent))
                best = &algorithms[i];
    if (forced)
        best = forced;
    else if (tuned)
        best = tuned;
    if (!forced && !cfg.verbose)
        *memo = (struct coll_memo){best, nbytes, a->root, flags, gen};
    if (cfg.verbose && x->rank == 0) {
        const char *name = loom_coll_name(x->kind);
        fprintf(stderr, "loom: MPI_%s%c%s on %d ranks, %zu bytes:%s -> %s%s\n",
                x->nonblocking ? "I" : "",
                x->nonblocking ? tolower((unsigned char)name[0]) : name[0], name + 1, x->size,
                nbytes, line, best->name,
                forced  ? " (forced)"
                : tuned ? " (tuning table)"
                        : "");
    }
    return best;
}

const struct coll_algorithm *coll_select(struct coll_ctx *x)
{
    /* The choice depends on nothing else than this, the communicator and
     * the overrides: remember the last one per collective (checked first,
     * since every call asks; a memo exists only once configure() ran). */
    if (LOOM_UNLIKELY(x->sh->inter_a))
        return coll_inter_algorithm(x->kind);
    size_t nbytes = coll_call_bytes(x);
    const struct loom_coll_args *a = x->a;
    int flags = coll_memo_flags(a->op, a->rtype, x->nonblocking);
    const struct coll_algorithm *alg = coll_memo_lookup(x->me, x->kind, nbytes, a->root, flags);
    if (LOOM_UNLIKELY(alg == NULL))
        alg = select_slow(x, &x->me->memo[x->kind], nbytes, flags,
                          atomic_load_explicit(&coll_select_gen, memory_order_relaxed));
    coll_count_use(x->me, alg);
    return alg;
}

/* ---- the tools interface (MPI_T) ------------------------------------------ */

int loom_coll_nalgorithms(void)
{
    return COLL_NALG;
}

const char *loom_coll_algorithm_name(int id)
{
    return algorithms[id].name;
}

enum loom_coll_kind loom_coll_algorithm_kind(int id)
{
    return algorithms[id].kind;
}

const char *loom_coll_algorithm_summary(int id)
{
    return algorithms[id].summary;
}

int loom_coll_choice_get(enum loom_coll_kind kind)
{
    const struct coll_algorithm *alg =
        atomic_load_explicit(&cfg.override[kind], memory_order_relaxed);
    if (alg == &no_algorithm)
        return -1;
    if (!alg && atomic_load_explicit(&cfg.ready, memory_order_acquire)) {
        alg = cfg.forced[kind];
    } else if (!alg) {
        /* Not configured yet (no collective call so far): what it will
         * read, without loading the cost model now. */
        char var[64];
        (void)env_forced((int)kind, var, &alg);
    }
    return alg ? (int)alg->id : -1;
}

int loom_coll_choice_set(enum loom_coll_kind kind, int id)
{
    if (id >= COLL_NALG || (id >= 0 && algorithms[id].kind != kind))
        return LOOM_ERR_INVALID;
    coll_select_override((int)kind, id < 0 ? &no_algorithm : &algorithms[id]);
    return LOOM_OK;
}

static uint64_t (*uses)[COLL_NALG + LOOM_CACHE_LINE / sizeof(uint64_t)];
static uint64_t uses_dummy[COLL_NALG];
static int uses_ranks;
static pthread_once_t uses_once = PTHREAD_ONCE_INIT;

static void uses_alloc(void)
{
    int n = loom_job.nranks > 0 ? loom_job.nranks : 1;
    size_t bytes = (size_t)n * sizeof *uses;
    bytes = (bytes + LOOM_CACHE_LINE - 1) & ~(size_t)(LOOM_CACHE_LINE - 1);
    uses = aligned_alloc(LOOM_CACHE_LINE, bytes);
    if (uses) {
        memset(uses, 0, bytes);
        uses_ranks = n;
    }
}

uint64_t *coll_uses_of(int rank)
{
    pthread_once(&uses_once, uses_alloc);
    return rank >= 0 && rank < uses_ranks ? uses[rank] : uses_dummy;
}

uint64_t loom_coll_uses(int rank, int id)
{
    return coll_uses_of(rank)[id];
}

void loom_coll_describe(void *file)
{
    FILE *f = file;
    pthread_once(&cfg.once, configure);
    coll_model_describe(f);
    fprintf(f, "Collective algorithms (force one with LOOM_COLL_<COLLECTIVE>=<name>; nonblocking "
               "calls choose among those marked *, which progress while a member computes):\n");
    for (size_t i = 0; i < LOOM_ARRAY_SIZE(algorithms); i++) {
        const struct coll_algorithm *a = &algorithms[i];
        fprintf(f, "  %-22s %c %-14s %s%s\n", loom_coll_name(a->kind), a->independent ? '*' : ' ',
                a->name, a->summary, cfg.forced[a->kind] == a ? " [forced]" : "");
    }
    fprintf(f,
            "Reduction order: %s (LOOM_COLL_REDUCE_ORDER=fixed|arrival, or the info key "
            "loom_reduce_order on a communicator)\n",
            cfg.arrival ? "arrival: perworker may combine floating-point and user ops as ranks "
                          "arrive"
                        : "fixed: floating-point and user ops combine in the algorithm's order, "
                          "whoever arrives first; arrival order only for integer, logical and "
                          "bitwise ops");
    coll_tuning_describe(f);
}
