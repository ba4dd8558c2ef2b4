/*
 * The cost model's machine parameters (coll_model) and where they come
 * from, in this order:
 *  1. built-in constants, fitted by hand on the development machine (2-core
 *     x86-64 VM, docs/collectives.md);
 *  2. this machine's calibration (calibrate.c), read from the cache file, or
 *     measured when there is no valid one and then written to it;
 *  3. LOOM_COLL_MODEL="line=70e-9,wake=1e-6,local_wake=..,copy=20e9,mem=25e9"
 *     (any subset), which replaces single values.
 *
 * Cache file: LOOM_COLL_MODEL_FILE, else $XDG_CACHE_HOME/loom/model.json
 * (~/.cache/loom/model.json). Version 1:
 *   {"format": "loom-model", "version": 1,
 *    "machine": {"hostname": "vm", "cpu": "AMD EPYC", "pus": 2, "cores": 2,
 *                "numa_nodes": 1, "packages": 1, "l3_caches": 1},
 *    "created": "2026-11-23T10:00:00Z", "calibration_ms": 40.5,
 *    "model": {"line": 7e-8, "wake": 5e-7, "local_wake": 1.5e-7,
 *              "copy": 2e10, "mem": 2.5e10},
 *    "line_levels": {"l3": 7e-8}, "copy_l2": 1.2e11}
 * "model" holds what was measured (line and wake need two cores), "machine"
 * is the key: a file for another machine key (hostname, CPU model, hwloc's
 * counts of the allowed PUs, cores, NUMA nodes, packages, L3 caches), of
 * another format or version, or with any problem (read strictly) is
 * ignored, and the machine is calibrated again and the file rewritten.
 * Writes go to a temporary file renamed over the old one, under an flock
 * of <file>.lock, so that jobs starting at once calibrate once and never
 * read half a file.
 *
 * LOOM_COLL_CALIBRATE=0 keeps the built-in constants (no file is read),
 * =1 calibrates and rewrites the file even when it is valid. A synthetic
 * topology (HWLOC_SYNTHETIC, HWLOC_XMLFILE) keeps the built-in constants:
 * the file and the calibration describe the real machine.
 *
 * When: mpiexec calls loom_coll_model_init() before the job's scheduler
 * starts (the calibration runs a scheduler of its own); a program run
 * without mpiexec and loom-info do it at their first collective call or
 * description. Either way it runs once per process, before any rank selects
 * an algorithm, so every rank uses the same parameters.
 */
#define _GNU_SOURCE
#include "coll/model.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "coll/coll_impl.h"
#include "runtime/job.h"
#include "util/json.h"
#include "util/log.h"
#include "util/options.h"

#define MODEL_FORMAT  "loom-model"
#define MODEL_VERSION 1
/* Largest cache file read (one is about 500 bytes). */
#define MODEL_MAX_BYTES (64 << 10)

static const struct coll_model builtin = {
    .line_s = 70e-9,
    .wake_s = 0.5e-6,
    .local_wake_s = 0.15e-6,
    .copy_bps = 20e9,
    .mem_bps = 25e9,
};

struct coll_model coll_model = builtin;

/* The parameters' names in the file and in LOOM_COLL_MODEL. */
static const char *const param_names[] = {"line", "wake", "local_wake", "copy", "mem"};

static double *param(struct coll_model *m, size_t i)
{
    double *const p[] = {&m->line_s, &m->wake_s, &m->local_wake_s, &m->copy_bps, &m->mem_bps};
    return p[i];
}

static double calib_param(const struct coll_calib *c, size_t i)
{
    const double v[] = {c->line_s, c->wake_s, c->local_wake_s, c->copy_bps, c->mem_bps};
    return v[i];
}

static double *calib_param_p(struct coll_calib *c, size_t i)
{
    double *const p[] = {&c->line_s, &c->wake_s, &c->local_wake_s, &c->copy_bps, &c->mem_bps};
    return p[i];
}

/* Written once by model_load() (loom_coll_model_init's pthread_once), then
 * by coll_model_configure() (select.c's pthread_once); read after them. */
static struct {
    pthread_once_t once;
    bool have; /* calib holds this machine's values */
    struct coll_calib calib;
    char path[512];     /* the cache file ("" when there is none) */
    char source[768];   /* for loom-info */
    char overrides[64]; /* LOOM_COLL_MODEL's keys */
    int line_level;     /* the line_share_s in use, or -1 */
} model = {.once = PTHREAD_ONCE_INIT, .line_level = -1};

/* ---- the machine key ------------------------------------------------------ */

struct machine_key {
    char hostname[256];
    struct loom_topo_machine topo;
};

/* Keeps printable ASCII of s but quotes and backslashes, so that it goes
 * into a JSON string as it is (the key is compared as written). */
static void printable(char *s)
{
    for (; *s; s++)
        if (*s < 0x20 || *s > 0x7e || *s == '"' || *s == '\\')
            *s = '?';
}

static void machine_key(struct machine_key *k)
{
    if (gethostname(k->hostname, sizeof k->hostname) != 0)
        snprintf(k->hostname, sizeof k->hostname, "unknown");
    k->hostname[sizeof k->hostname - 1] = 0;
    printable(k->hostname);
    loom_topo_machine(&k->topo);
    printable(k->topo.cpu);
}

/* ---- reading -------------------------------------------------------------- */

/* Why a file is not used, for loom-info. */
struct why {
    char text[256];
};

__attribute__((format(printf, 3, 4))) static bool reject(struct why *w, const struct loom_json *at,
                                                         const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at)
        snprintf(w->text, sizeof w->text, "%d:%d: %s", at->line, at->column, msg);
    else
        snprintf(w->text, sizeof w->text, "%s", msg);
    return false;
}

/* Member key of object v of the given type, or NULL (w says why). */
static const struct loom_json *typed(const struct loom_json *v, const char *key,
                                     enum loom_json_type type, struct why *w)
{
    const struct loom_json *m = loom_json_get(v, key);
    if (!m)
        return reject(w, v, "missing \"%s\"", key), NULL;
    if (m->type != type)
        return reject(w, m, "\"%s\" must be a %s", key, loom_json_type_name(type)), NULL;
    return m;
}

/* Checks that object v has no members but those in names (count n). */
static bool known_members(const struct loom_json *v, const char *const *names, size_t n,
                          struct why *w)
{
    for (size_t i = 0; i < v->count; i++) {
        bool ok = false;
        for (size_t k = 0; k < n && !ok; k++)
            ok = strcmp(v->keys[i], names[k]) == 0;
        if (!ok)
            return reject(w, &v->items[i], "unknown member \"%.60s\"", v->keys[i]);
    }
    return true;
}

/* A positive, finite number. */
static bool positive(const struct loom_json *v, const char *key, struct why *w)
{
    if (v->type != LOOM_JSON_NUMBER || !(v->number > 0) || !isfinite(v->number))
        return reject(w, v, "\"%s\" must be a positive number", key);
    return true;
}

/* Whether the file's machine object is this machine's key. */
static bool same_machine(const struct loom_json *m, const struct machine_key *k, struct why *w)
{
    static const char *const names[] = {"hostname",   "cpu",      "pus",      "cores",
                                        "numa_nodes", "packages", "l3_caches"};
    if (!known_members(m, names, LOOM_ARRAY_SIZE(names), w))
        return false;
    const struct loom_json *host = typed(m, "hostname", LOOM_JSON_STRING, w);
    const struct loom_json *cpu = host ? typed(m, "cpu", LOOM_JSON_STRING, w) : NULL;
    if (!cpu)
        return false;
    if (strcmp(host->string, k->hostname) != 0 || strcmp(cpu->string, k->topo.cpu) != 0)
        return reject(w, NULL, "it is for another machine (%.60s, %.60s)", host->string,
                      cpu->string);
    const int counts[] = {k->topo.pus, k->topo.cores, k->topo.numa_nodes, k->topo.packages,
                          k->topo.l3_caches};
    for (size_t i = 0; i < LOOM_ARRAY_SIZE(counts); i++) {
        const struct loom_json *c = typed(m, names[2 + i], LOOM_JSON_NUMBER, w);
        if (!c)
            return false;
        if (c->number != counts[i])
            return reject(w, NULL, "it is for another machine (%.0f %s, here %d)", c->number,
                          names[2 + i], counts[i]);
    }
    return true;
}

/* Parses a cache file's text for machine k into *c; false with w set. */
static bool parse_file(const char *text, size_t len, const struct machine_key *k,
                       struct coll_calib *c, char *created, size_t created_len, struct why *w)
{
    static const char *const top[] = {"format",         "version", "machine",     "created",
                                      "calibration_ms", "model",   "line_levels", "copy_l2"};
    struct loom_json *root = NULL;
    struct loom_json_error jerr;
    if (loom_json_parse(text, len, &root, &jerr) != LOOM_OK) {
        snprintf(w->text, sizeof w->text, "%d:%d: %s", jerr.line, jerr.column, jerr.message);
        return false;
    }
    bool ok = false;
    const struct loom_json *f, *v, *m, *d, *p, *lv, *ms;
    memset(c, 0, sizeof *c);
    if (root->type != LOOM_JSON_OBJECT) {
        reject(w, root, "not a JSON object");
        goto out;
    }
    if (!(f = typed(root, "format", LOOM_JSON_STRING, w)))
        goto out;
    if (strcmp(f->string, MODEL_FORMAT) != 0) {
        reject(w, f, "format \"%.40s\" is not \"%s\"", f->string, MODEL_FORMAT);
        goto out;
    }
    if (!(v = typed(root, "version", LOOM_JSON_NUMBER, w)))
        goto out;
    if (!v->integer || v->number != MODEL_VERSION) {
        reject(w, v, "version %g is not %d", v->number, MODEL_VERSION);
        goto out;
    }
    if (!known_members(root, top, LOOM_ARRAY_SIZE(top), w) ||
        !(m = typed(root, "machine", LOOM_JSON_OBJECT, w)) || !same_machine(m, k, w) ||
        !(d = typed(root, "created", LOOM_JSON_STRING, w)) ||
        !(ms = typed(root, "calibration_ms", LOOM_JSON_NUMBER, w)) ||
        !positive(ms, "calibration_ms", w) || !(p = typed(root, "model", LOOM_JSON_OBJECT, w)) ||
        !known_members(p, param_names, LOOM_ARRAY_SIZE(param_names), w))
        goto out;
    c->elapsed_s = ms->number * 1e-3;
    snprintf(created, created_len, "%s", d->string);
    for (size_t i = 0; i < p->count; i++) {
        if (!positive(&p->items[i], p->keys[i], w))
            goto out;
        for (size_t k2 = 0; k2 < LOOM_ARRAY_SIZE(param_names); k2++)
            if (strcmp(p->keys[i], param_names[k2]) == 0)
                *calib_param_p(c, k2) = p->items[i].number;
    }
    if (!c->local_wake_s || !c->copy_bps || !c->mem_bps) {
        reject(w, p, "\"model\" lacks local_wake, copy or mem");
        goto out;
    }
    if ((d = loom_json_get(root, "copy_l2"))) {
        if (!positive(d, "copy_l2", w))
            goto out;
        c->copy_l2_bps = d->number;
    }
    if ((lv = loom_json_get(root, "line_levels"))) {
        if (lv->type != LOOM_JSON_OBJECT) {
            reject(w, lv, "\"line_levels\" must be an object");
            goto out;
        }
        for (size_t i = 0; i < lv->count; i++) {
            int s = -1;
            for (int k2 = 0; k2 < LOOM_NSHARES; k2++)
                if (strcmp(lv->keys[i], loom_share_name((enum loom_share)k2)) == 0)
                    s = k2;
            if (s < 0) {
                reject(w, &lv->items[i], "unknown level \"%.40s\"", lv->keys[i]);
                goto out;
            }
            if (!positive(&lv->items[i], lv->keys[i], w))
                goto out;
            c->line_share_s[s] = lv->items[i].number;
        }
    }
    ok = true;
out:
    loom_json_free(root);
    return ok;
}

/* Reads and checks the cache file; false with w set (and *missing_p when
 * there is no file). */
static bool read_file(const char *path, const struct machine_key *k, struct coll_calib *c,
                      char *created, size_t created_len, struct why *w, bool *missing_p)
{
    *missing_p = false;
    FILE *f = fopen(path, "rb");
    if (!f) {
        *missing_p = errno == ENOENT;
        return reject(w, NULL, "%s", strerror(errno));
    }
    char *buf = malloc(MODEL_MAX_BYTES + 1);
    size_t len = buf ? fread(buf, 1, MODEL_MAX_BYTES + 1, f) : 0;
    fclose(f);
    if (!buf)
        return reject(w, NULL, "out of memory");
    bool ok = false;
    if (len > MODEL_MAX_BYTES)
        reject(w, NULL, "larger than %d bytes", MODEL_MAX_BYTES);
    else
        ok = parse_file(buf, len, k, c, created, created_len, w);
    free(buf);
    return ok;
}

/* ---- writing -------------------------------------------------------------- */

/* Creates the directories above path (mkdir -p of its dirname). */
static void make_parents(const char *path)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(dir, 0755); /* EEXIST and the like: the open will tell */
            *p = '/';
        }
}

/* Writes c for machine k to path through a temporary file and rename(2);
 * false with w set. */
static bool write_file(const char *path, const struct machine_key *k, const struct coll_calib *c,
                       struct why *w)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    make_parents(path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return reject(w, NULL, "%s", strerror(errno));
    char created[32] = "";
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(f,
            "{\"format\": \"%s\", \"version\": %d,\n"
            " \"machine\": {\"hostname\": \"%s\", \"cpu\": \"%s\", \"pus\": %d, \"cores\": %d, "
            "\"numa_nodes\": %d, \"packages\": %d, \"l3_caches\": %d},\n"
            " \"created\": \"%s\", \"calibration_ms\": %.4g,\n \"model\": {",
            MODEL_FORMAT, MODEL_VERSION, k->hostname, k->topo.cpu, k->topo.pus, k->topo.cores,
            k->topo.numa_nodes, k->topo.packages, k->topo.l3_caches, created,
            c->elapsed_s > 0 ? c->elapsed_s * 1e3 : 1e-3);
    const char *sep = "";
    for (size_t i = 0; i < LOOM_ARRAY_SIZE(param_names); i++)
        if (calib_param(c, i) > 0) {
            fprintf(f, "%s\"%s\": %.6g", sep, param_names[i], calib_param(c, i));
            sep = ", ";
        }
    fprintf(f, "},\n \"line_levels\": {");
    sep = "";
    for (int s = 0; s < LOOM_NSHARES; s++)
        if (c->line_share_s[s] > 0) {
            fprintf(f, "%s\"%s\": %.6g", sep, loom_share_name((enum loom_share)s),
                    c->line_share_s[s]);
            sep = ", ";
        }
    fprintf(f, "}");
    if (c->copy_l2_bps > 0)
        fprintf(f, ",\n \"copy_l2\": %.6g", c->copy_l2_bps);
    fprintf(f, "}\n");
    bool ok = fflush(f) == 0 && !ferror(f);
    int err = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        err = errno;
    }
    if (!ok) {
        unlink(tmp);
        return reject(w, NULL, "%s", strerror(err));
    }
    return true;
}

/* ---- loading -------------------------------------------------------------- */

/* The cache file's path into model.path; false when there is none. */
static bool cache_path(void)
{
    const char *env = loom_opt_str(LOOM_OPT_COLL_MODEL_FILE);
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (env && *env)
        snprintf(model.path, sizeof model.path, "%s", env);
    else if (xdg && xdg[0] == '/')
        snprintf(model.path, sizeof model.path, "%s/loom/model.json", xdg);
    else if (home && *home)
        snprintf(model.path, sizeof model.path, "%s/.cache/loom/model.json", home);
    else
        model.path[0] = 0;
    return model.path[0] != 0;
}

/* Takes the flock of path.lock; the descriptor, or -1 (then unlocked: the
 * rename still keeps readers safe). */
static int lock_file(const char *path)
{
    char lock[600];
    snprintf(lock, sizeof lock, "%s.lock", path);
    make_parents(path);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0 && flock(fd, LOCK_EX) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static void model_load(void)
{
    const char *env = loom_opt_str(LOOM_OPT_COLL_CALIBRATE);
    bool force = env && strcmp(env, "1") == 0;
    if (env && strcmp(env, "0") == 0) {
        snprintf(model.source, sizeof model.source, "built-in (LOOM_COLL_CALIBRATE=0)");
        return;
    }
    if (env && *env && !force)
        loom_log_warn("LOOM_COLL_CALIBRATE=%s: expected 0 or 1; ignored", env);
    if (loom_topo_init() != LOOM_OK) {
        snprintf(model.source, sizeof model.source, "built-in (hwloc cannot read the topology)");
        return;
    }
    if (!loom_topo_is_real()) {
        snprintf(model.source, sizeof model.source,
                 "built-in (synthetic topology; the calibration describes the real machine)");
        return;
    }
    struct machine_key key;
    machine_key(&key);
    bool have_path = cache_path();
    struct why w = {""};
    char created[40] = "";
    char reason[320];
    bool missing = false;
    if (force)
        snprintf(reason, sizeof reason, "LOOM_COLL_CALIBRATE=1");
    else if (!have_path)
        snprintf(reason, sizeof reason, "no HOME for the cache file");
    else if (read_file(model.path, &key, &model.calib, created, sizeof created, &w, &missing)) {
        model.have = true;
        snprintf(model.source, sizeof model.source, "cache file %s (calibrated %s in %.3g ms)",
                 model.path, created, model.calib.elapsed_s * 1e3);
        return;
    } else if (missing) {
        snprintf(reason, sizeof reason, "no cache file");
    } else {
        snprintf(reason, sizeof reason, "cache file ignored: %s", w.text);
    }
    int lock = have_path ? lock_file(model.path) : -1;
    /* Another job may have calibrated while this one waited for the lock. */
    if (lock >= 0 && !force &&
        read_file(model.path, &key, &model.calib, created, sizeof created, &w, &missing)) {
        model.have = true;
        snprintf(model.source, sizeof model.source,
                 "cache file %s (calibrated %s in %.3g ms, by a job that started at the same "
                 "time)",
                 model.path, created, model.calib.elapsed_s * 1e3);
        close(lock);
        return;
    }
    char why[200];
    if (coll_calibrate(&model.calib, why, sizeof why) != LOOM_OK) {
        snprintf(model.source, sizeof model.source, "built-in (calibration failed: %s)", why);
        if (lock >= 0)
            close(lock);
        return;
    }
    model.have = true;
    int n = snprintf(model.source, sizeof model.source, "calibrated now (%.3g ms; %s)",
                     model.calib.elapsed_s * 1e3, reason);
    if (have_path && write_file(model.path, &key, &model.calib, &w))
        snprintf(model.source + n, sizeof model.source - (size_t)n, ", written to %s", model.path);
    else if (have_path) {
        loom_log_warn("cannot write the collective model's cache file %s (%s); the next job "
                      "calibrates again (LOOM_COLL_CALIBRATE=0 uses the built-in values)",
                      model.path, w.text);
        snprintf(model.source + n, sizeof model.source - (size_t)n, ", not written to %s: %s",
                 model.path, w.text);
    }
    if (lock >= 0)
        close(lock); /* releases the flock */
}

LOOM_EXPORT void loom_coll_model_init(void)
{
    pthread_once(&model.once, model_load);
}

/* ---- the parameters in use ------------------------------------------------ */

/* The farthest sharing level between the job's workers, or -1 when there
 * is no job (loom-info, a singleton). */
static int job_span(void)
{
    if (!loom_job.worker_domain || loom_job.nworkers < 1)
        return -1;
    int span = LOOM_SHARE_L3; /* different cores; an L2 in common is not recorded */
    int *const *d = loom_job.worker_domain;
    for (int w = 1; w < loom_job.nworkers; w++) {
        int s = d[LOOM_LEVEL_PACKAGE][w] != d[LOOM_LEVEL_PACKAGE][0] ? LOOM_SHARE_MACHINE
                : d[LOOM_LEVEL_NUMA][w] != d[LOOM_LEVEL_NUMA][0]     ? LOOM_SHARE_PACKAGE
                : d[LOOM_LEVEL_L3][w] != d[LOOM_LEVEL_L3][0]         ? LOOM_SHARE_NUMA
                                                                     : LOOM_SHARE_L3;
        if (s > span)
            span = s;
    }
    return span;
}

/* Applies LOOM_COLL_MODEL to coll_model. */
static void apply_env(void)
{
    const char *mp = loom_opt_str(LOOM_OPT_COLL_MODEL);
    if (!mp)
        return;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", mp);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        bool ok = false;
        if (eq) {
            *eq = 0;
            for (size_t i = 0; i < LOOM_ARRAY_SIZE(param_names); i++)
                if (strcmp(tok, param_names[i]) == 0) {
                    char *end;
                    double d = strtod(eq + 1, &end);
                    if (*end == 0 && d > 0 && isfinite(d)) {
                        *param(&coll_model, i) = d;
                        if (param(&coll_model, i) == &coll_model.line_s)
                            model.line_level = -1; /* no level's value is in use */
                        size_t n = strlen(model.overrides);
                        snprintf(model.overrides + n, sizeof model.overrides - n, "%s%s",
                                 n ? ", " : "", tok);
                        ok = true;
                    }
                }
        }
        if (!ok)
            loom_log_error("LOOM_COLL_MODEL: ignoring '%s' (expected line=, wake=, local_wake=, "
                           "copy= or mem= with a positive number)",
                           tok);
    }
}

void coll_model_configure(void)
{
    loom_coll_model_init();
    coll_model = builtin;
    if (model.have) {
        for (size_t i = 0; i < LOOM_ARRAY_SIZE(param_names); i++)
            if (calib_param(&model.calib, i) > 0)
                *param(&coll_model, i) = calib_param(&model.calib, i);
        /* The line time of the level the job spans: the nearest measured
         * level at or beyond it, else the farthest one below it. */
        int span = job_span(), pick = -1;
        for (int s = LOOM_NSHARES - 1; s >= 0; s--)
            if (model.calib.line_share_s[s] > 0 && (s >= span || pick < 0))
                pick = s;
        if (span < 0) /* no job: the farthest, as calib.line_s */
            for (int s = 0; s < LOOM_NSHARES; s++)
                if (model.calib.line_share_s[s] > 0)
                    pick = s;
        if (pick >= 0) {
            coll_model.line_s = model.calib.line_share_s[pick];
            model.line_level = pick;
        }
    }
    apply_env();
}

void coll_model_describe(void *file)
{
    FILE *f = file;
    fprintf(f,
            "Collective model: line %.3g us, wake %.3g us (same worker %.3g us), copy %.3g GB/s, "
            "memory %.3g GB/s\n",
            coll_model.line_s * 1e6, coll_model.wake_s * 1e6, coll_model.local_wake_s * 1e6,
            coll_model.copy_bps / 1e9, coll_model.mem_bps / 1e9);
    fprintf(f, "  source: %s\n", model.source);
    if (model.have) {
        char unmeasured[64] = "";
        for (size_t i = 0; i < LOOM_ARRAY_SIZE(param_names); i++)
            if (!(calib_param(&model.calib, i) > 0)) {
                size_t n = strlen(unmeasured);
                snprintf(unmeasured + n, sizeof unmeasured - n, "%s%s", n ? ", " : "",
                         param_names[i]);
            }
        if (unmeasured[0])
            fprintf(f, "  not measured (one core), built-in: %s\n", unmeasured);
        fprintf(f, "  line by level:");
        bool any = false;
        for (int s = 0; s < LOOM_NSHARES; s++)
            if (model.calib.line_share_s[s] > 0) {
                fprintf(f, " %s %.3g us%s", loom_share_name((enum loom_share)s),
                        model.calib.line_share_s[s] * 1e6,
                        s == model.line_level ? " (in use)" : "");
                any = true;
            }
        fprintf(f, "%s\n", any ? "" : " none measured");
        if (model.calib.copy_l2_bps > 0)
            fprintf(f, "  copy within one core's L2 (not in the model): %.3g GB/s\n",
                    model.calib.copy_l2_bps / 1e9);
    }
    fprintf(f,
            "  built-in: line %.3g us, wake %.3g us, local_wake %.3g us, copy %.3g GB/s, "
            "mem %.3g GB/s\n",
            builtin.line_s * 1e6, builtin.wake_s * 1e6, builtin.local_wake_s * 1e6,
            builtin.copy_bps / 1e9, builtin.mem_bps / 1e9);
    if (model.overrides[0])
        fprintf(f, "  LOOM_COLL_MODEL overrides: %s\n", model.overrides);
}
