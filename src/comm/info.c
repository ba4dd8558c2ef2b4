/*
 * Info objects (MPI-3.1 9): ordered (key, value) string pairs, owned by the
 * rank that created them. MPI_INFO_ENV is one read-only object for the job,
 * built on first use: command, argv, maxprocs, soft, host, arch, wdir,
 * thread_level.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "comm/comm_impl.h"
#include "runtime/job.h"
#include "util/handle.h"

static struct loom_info env_info = {.handle = MPI_INFO_ENV, .owner = -1};
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void env_init(void)
{
    char buf[4096];
    int rc = LOOM_OK;
    struct loom_rank *r0 = loom_job.ranks;
    const char *cmd = loom_job.program;
    if (!cmd && r0 && r0->argc > 0)
        cmd = r0->argv[0];
    if (cmd)
        rc |= loom_info_set(&env_info, "command", cmd);
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 1; r0 && r0->argv && i < r0->argc && len < sizeof buf; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i > 1 ? " " : "", r0->argv[i]);
    rc |= loom_info_set(&env_info, "argv", buf);
    snprintf(buf, sizeof buf, "%d", loom_job.nranks);
    rc |= loom_info_set(&env_info, "maxprocs", buf);
    rc |= loom_info_set(&env_info, "soft", buf);
    if (gethostname(buf, sizeof buf) != 0)
        snprintf(buf, sizeof buf, "localhost");
    buf[sizeof buf - 1] = '\0';
    rc |= loom_info_set(&env_info, "host", buf);
    struct utsname u;
    if (uname(&u) == 0)
        rc |= loom_info_set(&env_info, "arch", u.machine);
    if (getcwd(buf, sizeof buf))
        rc |= loom_info_set(&env_info, "wdir", buf);
    rc |= loom_info_set(&env_info, "thread_level", "MPI_THREAD_FUNNELED");
    (void)rc; /* out of memory: the object has fewer keys */
}

struct loom_info *loom_info_lookup(MPI_Info h)
{
    if (h == MPI_INFO_ENV) {
        pthread_once(&env_once, env_init);
        return &env_info;
    }
    struct loom_info *info = loom_handle_get(LOOM_KIND_INFO, h);
    struct loom_rank *r = loom_rank_self();
    return info && r && info->owner == r->rank ? info : NULL;
}

struct loom_info *loom_info_new(void)
{
    struct loom_info *info = calloc(1, sizeof *info);
    if (!info)
        return NULL;
    struct loom_rank *r = loom_rank_self();
    info->owner = r ? r->rank : 0;
    info->handle = loom_handle_alloc(LOOM_KIND_INFO, info);
    if (!info->handle) {
        free(info);
        return NULL;
    }
    return info;
}

void loom_info_free(struct loom_info *info)
{
    if (info == &env_info)
        return;
    for (int i = 0; i < info->n; i++) {
        free(info->keys[i]);
        free(info->vals[i]);
    }
    free(info->keys);
    free(info->vals);
    loom_handle_free(LOOM_KIND_INFO, info->handle);
    free(info);
}

struct loom_info *loom_info_dup(const struct loom_info *src)
{
    struct loom_info *info = loom_info_new();
    if (!info)
        return NULL;
    for (int i = 0; i < src->n; i++) {
        if (loom_info_set(info, src->keys[i], src->vals[i]) != LOOM_OK) {
            loom_info_free(info);
            return NULL;
        }
    }
    return info;
}

int loom_info_find(const struct loom_info *info, const char *key)
{
    for (int i = 0; i < info->n; i++)
        if (strcmp(info->keys[i], key) == 0)
            return i;
    return -1;
}

int loom_info_set(struct loom_info *info, const char *key, const char *val)
{
    char *v = strdup(val);
    if (!v)
        return LOOM_ERR_NOMEM;
    int i = loom_info_find(info, key);
    if (i >= 0) {
        free(info->vals[i]);
        info->vals[i] = v;
        return LOOM_OK;
    }
    if (info->n == info->cap) {
        int cap = info->cap ? 2 * info->cap : 8;
        char **k = realloc(info->keys, (size_t)cap * sizeof *k);
        if (k)
            info->keys = k;
        char **vv = k ? realloc(info->vals, (size_t)cap * sizeof *vv) : NULL;
        if (!vv) {
            free(v);
            return LOOM_ERR_NOMEM;
        }
        info->vals = vv;
        info->cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return LOOM_ERR_NOMEM;
    }
    info->keys[info->n] = k;
    info->vals[info->n] = v;
    info->n++;
    return LOOM_OK;
}

void loom_info_delete_at(struct loom_info *info, int i)
{
    free(info->keys[i]);
    free(info->vals[i]);
    memmove(&info->keys[i], &info->keys[i + 1], (size_t)(info->n - i - 1) * sizeof(char *));
    memmove(&info->vals[i], &info->vals[i + 1], (size_t)(info->n - i - 1) * sizeof(char *));
    info->n--;
}
