/*
 * Tuning: the machine's tuning table (read, validated and looked up for
 * select.c) and the exported hooks loom-tune's benchmark measures with
 * (tune.h).
 *
 * Table format (version 1; tools/loom-tune writes it, docs/collectives.md):
 *   {"format": "loom-tuning", "version": 1,
 *    "machine": {...}, "created": "2026-11-23T10:00:00Z",
 *    "entries": [{"collective": "bcast", "ranks": 16, "workers": 2,
 *                 "min_bytes": 0, "max_bytes": 2048, "algorithm": "direct",
 *                 "sizes": [8, 32], "measured_us": [1.5, 1.6]}, ...]}
 * "workers", "sizes", "measured_us", "machine" and "created" are optional;
 * any other member is an error. The first entry that matches a call (same
 * collective, exactly its rank count, its worker count when given,
 * min_bytes <= bytes <= max_bytes) decides, if its algorithm applies to the
 * call (cost >= 0); otherwise the model does.
 *
 * Validation is strict: a table with any problem (not JSON, wrong format or
 * version, a missing or unknown member, a wrong type, an unknown collective
 * or algorithm) is ignored as a whole, with one warning naming the file and
 * the line:column of the problem.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coll/coll_impl.h"
#include "coll/tune.h"
#include "util/json.h"
#include "util/log.h"
#include "util/options.h"

/* Largest table file read (a full table is a few tens of KiB). */
#define TABLE_MAX_BYTES (16 << 20)
/* Largest integer a table may hold exactly (doubles: 2^53). */
#define TABLE_MAX_INT 9007199254740992.0

/* ---- names ------------------------------------------------------------- */

/* The collective called `name` (any case), or -1. */
static int kind_of(const char *name)
{
    if (!name)
        return -1;
    for (int k = 0; k < LOOM_COLL_NKINDS; k++)
        if (strcasecmp(name, loom_coll_name((enum loom_coll_kind)k)) == 0)
            return k;
    return -1;
}

/* Algorithm `name` of collective kind, or NULL. */
static const struct coll_algorithm *algorithm_of(int kind, const char *name)
{
    size_t n;
    const struct coll_algorithm *list = coll_algorithm_list(&n);
    for (size_t i = 0; name && i < n; i++)
        if ((int)list[i].kind == kind && strcmp(list[i].name, name) == 0)
            return &list[i];
    return NULL;
}

/* " direct twostage pipeline": kind's algorithm names, for messages. */
static void algorithm_names(int kind, char *buf, size_t len)
{
    size_t n;
    const struct coll_algorithm *list = coll_algorithm_list(&n);
    buf[0] = 0;
    for (size_t i = 0; i < n; i++)
        if ((int)list[i].kind == kind) {
            strncat(buf, " ", len - strlen(buf) - 1);
            strncat(buf, list[i].name, len - strlen(buf) - 1);
        }
}

/* ---- hooks ------------------------------------------------------------- */

LOOM_EXPORT int loom_coll_force(const char *collective, const char *algorithm)
{
    int kind = kind_of(collective);
    if (kind < 0)
        return -1;
    const struct coll_algorithm *alg = NULL;
    if (algorithm && *algorithm) {
        alg = algorithm_of(kind, algorithm);
        if (!alg)
            return -1;
    }
    coll_select_override(kind, alg);
    return 0;
}

LOOM_EXPORT int loom_coll_algorithms(const char *collective, const char **names, int max)
{
    int kind = kind_of(collective);
    if (kind < 0)
        return -1;
    size_t n;
    const struct coll_algorithm *list = coll_algorithm_list(&n);
    int count = 0;
    for (size_t i = 0; i < n; i++)
        if ((int)list[i].kind == kind) {
            if (count < max && names)
                names[count] = list[i].name;
            count++;
        }
    return count;
}

/* The collective state of the caller's communicator h, or NULL. */
static struct coll_shared *shared_of(MPI_Comm h, int *rank_p)
{
    struct loom_comm *c = loom_comm_lookup(h);
    if (!c)
        return NULL;
    _Atomic(void *) *slot = (_Atomic(void *) *)&c->sh->coll;
    *rank_p = c->rank;
    /* Pairs with the creator's publication of the state (core.c). */
    return atomic_load_explicit(slot, memory_order_acquire);
}

LOOM_EXPORT int loom_coll_workers(MPI_Comm comm)
{
    int rank;
    struct coll_shared *sh = shared_of(comm, &rank);
    return sh ? sh->nlocal : -1;
}

LOOM_EXPORT double loom_coll_predict(MPI_Comm comm, const char *collective, const char *algorithm,
                                     size_t nbytes)
{
    int kind = kind_of(collective), rank;
    const struct coll_algorithm *alg = algorithm_of(kind, algorithm);
    struct coll_shared *sh = alg ? shared_of(comm, &rank) : NULL;
    if (!sh)
        return -2;
    bool reduction = kind == LOOM_COLL_REDUCE || kind == LOOM_COLL_ALLREDUCE ||
                     kind == LOOM_COLL_REDUCE_SCATTER_BLOCK || kind == LOOM_COLL_SCAN ||
                     kind == LOOM_COLL_EXSCAN;
    struct loom_type *t = loom_type_get(reduction ? MPI_DOUBLE : MPI_BYTE);
    struct loom_coll_args a = {
        .rtype = t,
        .stype = t,
        .rcount = nbytes / t->size,
        .scount = nbytes / t->size,
        .op = reduction ? loom_op_get(MPI_SUM) : NULL,
        .root = 0,
    };
    struct coll_ctx x = {
        .sh = sh,
        .me = &sh->m[rank],
        .rank = rank,
        .size = sh->size,
        .kind = (enum loom_coll_kind)kind,
        .a = &a,
    };
    double c = alg->cost(&x, coll_call_bytes(&x));
    return c < 0 ? -1 : c;
}

/* ---- the table --------------------------------------------------------- */

struct tuned {
    int ranks;
    int workers; /* 0: any */
    size_t min_bytes, max_bytes;
    const struct coll_algorithm *alg;
};

/* Written once by coll_tuning_load() (inside select.c's pthread_once), read
 * only after it. */
static struct {
    char path[512];
    const char *state; /* for loom-info: why there is no table */
    struct tuned *entries;
    size_t count;
    size_t first[LOOM_COLL_NKINDS], n[LOOM_COLL_NKINDS]; /* each kind's entries */
} table;

/* Why a table is rejected, where. */
struct problem {
    int line, column;
    char message[256];
};

__attribute__((format(printf, 3, 4))) static bool
bad(struct problem *pb, const struct loom_json *at, const char *fmt, ...)
{
    pb->line = at->line;
    pb->column = at->column;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pb->message, sizeof pb->message, fmt, ap);
    va_end(ap);
    return false;
}

/* Checks that object v has only members named in `allowed` (NULL-ended). */
static bool only_members(const struct loom_json *v, const char *const *allowed, const char *what,
                         struct problem *pb)
{
    for (size_t i = 0; i < v->count; i++) {
        bool ok = false;
        for (size_t k = 0; allowed[k] && !ok; k++)
            ok = strcmp(v->keys[i], allowed[k]) == 0;
        if (!ok) {
            char list[256] = "";
            for (size_t k = 0; allowed[k]; k++) {
                strncat(list, k ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, allowed[k], sizeof list - strlen(list) - 1);
            }
            return bad(pb, &v->items[i], "%s: unknown member \"%.60s\" (valid: %s)", what,
                       v->keys[i], list);
        }
    }
    return true;
}

/* Member `key` of v with type `type`; required or NULL when absent. */
static bool member(const struct loom_json *v, const char *key, enum loom_json_type type,
                   bool required, const char *what, const struct loom_json **out_p,
                   struct problem *pb)
{
    const struct loom_json *m = loom_json_get(v, key);
    *out_p = m;
    if (!m)
        return required ? bad(pb, v, "%s: missing \"%s\"", what, key) : true;
    if (m->type != type)
        return bad(pb, m, "%s: \"%s\" must be a%s %s, not %s %s", what, key,
                   type == LOOM_JSON_ARRAY || type == LOOM_JSON_OBJECT ? "n" : "",
                   loom_json_type_name(type),
                   m->type == LOOM_JSON_ARRAY || m->type == LOOM_JSON_OBJECT ? "an" : "a",
                   loom_json_type_name(m->type));
    return true;
}

/* An integer in [lo, TABLE_MAX_INT]. */
static bool integer(const struct loom_json *v, double lo, const char *what, const char *key,
                    struct problem *pb)
{
    if (v->type != LOOM_JSON_NUMBER || !v->integer || v->number < lo || v->number > TABLE_MAX_INT)
        return bad(pb, v, "%s: \"%s\" must be an integer >= %.0f", what, key, lo);
    return true;
}

/* Integer member `key` (>= lo) into *out_p; absent and optional: untouched. */
static bool int_member(const struct loom_json *v, const char *key, double lo, bool required,
                       const char *what, double *out_p, struct problem *pb)
{
    const struct loom_json *m;
    if (!member(v, key, LOOM_JSON_NUMBER, required, what, &m, pb))
        return false;
    if (!m)
        return true;
    if (!integer(m, lo, what, key, pb))
        return false;
    *out_p = m->number;
    return true;
}

static bool check_entry(const struct loom_json *e, size_t i, struct tuned *out, int *kind_p,
                        struct problem *pb)
{
    static const char *const allowed[] = {"collective", "ranks",       "workers",
                                          "min_bytes",  "max_bytes",   "algorithm",
                                          "sizes",      "measured_us", NULL};
    char what[32];
    snprintf(what, sizeof what, "entry %zu", i);
    if (e->type != LOOM_JSON_OBJECT)
        return bad(pb, e, "%s must be an object, not %s", what, loom_json_type_name(e->type));
    if (!only_members(e, allowed, what, pb))
        return false;
    const struct loom_json *coll, *alg, *sizes, *us;
    if (!member(e, "collective", LOOM_JSON_STRING, true, what, &coll, pb))
        return false;
    int kind = kind_of(coll->string);
    if (kind < 0) {
        char list[512] = "";
        for (int k = 0; k < LOOM_COLL_NKINDS; k++) {
            strncat(list, " ", sizeof list - strlen(list) - 1);
            strncat(list, loom_coll_name((enum loom_coll_kind)k), sizeof list - strlen(list) - 1);
        }
        return bad(pb, coll, "%s: unknown collective \"%.40s\" (valid:%s)", what, coll->string,
                   list);
    }
    if (!member(e, "algorithm", LOOM_JSON_STRING, true, what, &alg, pb))
        return false;
    out->alg = algorithm_of(kind, alg->string);
    if (!out->alg) {
        char list[256];
        algorithm_names(kind, list, sizeof list);
        return bad(pb, alg, "%s: %s has no algorithm \"%.40s\" (valid:%s)", what,
                   loom_coll_name((enum loom_coll_kind)kind), alg->string, list);
    }
    double ranks = 0, workers = 0, lo = 0, hi = 0;
    if (!int_member(e, "ranks", 1, true, what, &ranks, pb) ||
        !int_member(e, "workers", 1, false, what, &workers, pb) ||
        !int_member(e, "min_bytes", 0, true, what, &lo, pb) ||
        !int_member(e, "max_bytes", 0, true, what, &hi, pb))
        return false;
    if (hi < lo)
        return bad(pb, loom_json_get(e, "max_bytes"), "%s: max_bytes %.0f is below min_bytes %.0f",
                   what, hi, lo);
    if (ranks > 1 << 30 || workers > 1 << 30)
        return bad(pb, e, "%s: too many ranks or workers", what);
    if (!member(e, "sizes", LOOM_JSON_ARRAY, false, what, &sizes, pb) ||
        !member(e, "measured_us", LOOM_JSON_ARRAY, false, what, &us, pb))
        return false;
    for (size_t k = 0; sizes && k < sizes->count; k++)
        if (!integer(&sizes->items[k], 0, what, "sizes", pb))
            return false;
    for (size_t k = 0; us && k < us->count; k++)
        if (us->items[k].type != LOOM_JSON_NUMBER || us->items[k].number < 0)
            return bad(pb, &us->items[k], "%s: \"measured_us\" must hold numbers >= 0", what);
    if (sizes && us && sizes->count != us->count)
        return bad(pb, us, "%s: \"measured_us\" has %zu values for %zu sizes", what, us->count,
                   sizes->count);
    out->ranks = (int)ranks;
    out->workers = (int)workers;
    out->min_bytes = (size_t)lo;
    out->max_bytes = (size_t)hi;
    *kind_p = kind;
    return true;
}

/* Checks the whole table; on success fills `table`'s entries. */
static bool check_table(const struct loom_json *root, struct problem *pb)
{
    static const char *const allowed[] = {"format",  "version", "machine",
                                          "created", "entries", NULL};
    if (root->type != LOOM_JSON_OBJECT)
        return bad(pb, root, "the table must be a JSON object, not %s",
                   loom_json_type_name(root->type));
    const struct loom_json *format, *version, *other, *entries;
    if (!member(root, "format", LOOM_JSON_STRING, true, "the table", &format, pb))
        return false;
    if (strcmp(format->string, "loom-tuning") != 0)
        return bad(pb, format, "format \"%.40s\" is not \"loom-tuning\"", format->string);
    if (!member(root, "version", LOOM_JSON_NUMBER, true, "the table", &version, pb))
        return false;
    if (!version->integer || version->number != 1)
        return bad(pb, version, "version %g is not supported (this Loom reads version 1)",
                   version->number);
    if (!only_members(root, allowed, "the table", pb) ||
        !member(root, "machine", LOOM_JSON_OBJECT, false, "the table", &other, pb) ||
        !member(root, "created", LOOM_JSON_STRING, false, "the table", &other, pb) ||
        !member(root, "entries", LOOM_JSON_ARRAY, true, "the table", &entries, pb))
        return false;

    size_t n = entries->count;
    struct tuned *parsed = calloc(n ? n : 1, sizeof *parsed);
    int *kinds = calloc(n ? n : 1, sizeof *kinds);
    struct tuned *sorted = calloc(n ? n : 1, sizeof *sorted);
    if (!parsed || !kinds || !sorted) {
        free(parsed);
        free(kinds);
        free(sorted);
        return bad(pb, root, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        if (!check_entry(&entries->items[i], i, &parsed[i], &kinds[i], pb)) {
            free(parsed);
            free(kinds);
            free(sorted);
            return false;
        }
    /* Group by collective, keeping the table's order inside each. */
    size_t at = 0;
    for (int k = 0; k < LOOM_COLL_NKINDS; k++) {
        table.first[k] = at;
        for (size_t i = 0; i < n; i++)
            if (kinds[i] == k)
                sorted[at++] = parsed[i];
        table.n[k] = at - table.first[k];
    }
    free(parsed);
    free(kinds);
    table.entries = sorted;
    table.count = n;
    return true;
}

/* Reads the file at path into a NUL-terminated buffer; NULL with *why set
 * (and *missing_p when there is no such file). */
static char *read_file(const char *path, size_t *len_p, const char **why, bool *missing_p)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *missing_p = errno == ENOENT;
        *why = strerror(errno);
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (len + 1 >= cap) {
            if (cap >= TABLE_MAX_BYTES) {
                *why = "larger than 16 MiB";
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                *why = "read error";
            else {
                fclose(f);
                buf[len] = 0;
                *len_p = len;
                return buf;
            }
            break;
        }
    }
    if (!buf)
        *why = "out of memory";
    free(buf);
    fclose(f);
    return NULL;
}

void coll_tuning_load(void)
{
    const char *env = loom_opt_str(LOOM_OPT_COLL_TUNING);
    bool explicit = env && *env;
    if (explicit && strcmp(env, "none") == 0) {
        table.state = "none (LOOM_COLL_TUNING=none)";
        return;
    }
    if (explicit) {
        snprintf(table.path, sizeof table.path, "%s", env);
    } else {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        if (xdg && xdg[0] == '/')
            snprintf(table.path, sizeof table.path, "%s/loom/tuning.json", xdg);
        else if (home && *home)
            snprintf(table.path, sizeof table.path, "%s/.cache/loom/tuning.json", home);
        else {
            table.state = "none (no HOME for the default path)";
            return;
        }
    }
    const char *why = NULL;
    size_t len = 0;
    bool missing = false;
    char *text = read_file(table.path, &len, &why, &missing);
    if (!text) {
        if (!explicit && missing) {
            table.state = "none (no file at the default path; loom-tune writes one)";
            return;
        }
        loom_log_warn("tuning table %s: cannot read it (%s); the table is ignored "
                      "(LOOM_COLL_TUNING=none silences this)",
                      table.path, why);
        table.state = "ignored (unreadable)";
        return;
    }
    struct loom_json *root = NULL;
    struct loom_json_error jerr;
    struct problem pb = {0};
    bool ok;
    if (loom_json_parse(text, len, &root, &jerr) != LOOM_OK) {
        pb.line = jerr.line;
        pb.column = jerr.column;
        snprintf(pb.message, sizeof pb.message, "%s", jerr.message);
        ok = false;
    } else {
        ok = check_table(root, &pb);
    }
    loom_json_free(root);
    free(text);
    if (!ok) {
        loom_log_warn("tuning table %s:%d:%d: %s; the table is ignored, the cost model decides "
                      "(LOOM_COLL_TUNING=none silences this)",
                      table.path, pb.line, pb.column, pb.message);
        table.state = "ignored (invalid; see the warning)";
        return;
    }
    table.state = NULL;
}

const struct coll_algorithm *coll_tuning_lookup(const struct coll_ctx *x, size_t nbytes)
{
    size_t n = table.n[x->kind];
    if (LOOM_LIKELY(n == 0))
        return NULL;
    const struct tuned *t = table.entries + table.first[x->kind];
    for (size_t i = 0; i < n; i++, t++)
        if (t->ranks == x->size && (t->workers == 0 || t->workers == x->sh->nlocal) &&
            t->min_bytes <= nbytes && nbytes <= t->max_bytes)
            return t->alg->cost(x, nbytes) >= 0 ? t->alg : NULL;
    return NULL;
}

void coll_tuning_describe(void *file)
{
    FILE *f = file;
    if (table.state)
        fprintf(f, "Tuning table: %s%s%s%s\n", table.state, table.path[0] ? " [" : "", table.path,
                table.path[0] ? "]" : "");
    else
        fprintf(f, "Tuning table: %s (%zu entries; LOOM_COLL_TUNING=none disables it)\n",
                table.path, table.count);
}
