/*
 * Info objects (MPI-3.1 chapter 9; src/comm/info.c). Keys are 1 to
 * MPI_MAX_INFO_KEY characters, values 1 to MPI_MAX_INFO_VAL; MPI_INFO_ENV is
 * read-only. Errors go to MPI_COMM_WORLD's handler. As MPI-4.1 11.4.1 allows,
 * the info calls work before MPI_Init and after MPI_Finalize too (for
 * MPI_Session_init's info argument).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm_impl.h"
#include "mpi/mpi_impl.h"

#define W MPI_COMM_WORLD

/* The info calls need a rank, not an initialized MPI. */
static int info_enter(const char *fn)
{
    return loom_mpi_rank_enter(fn);
}

#define INFO_ARG(in, h, fn)                                                                        \
    struct loom_info *in;                                                                          \
    do {                                                                                           \
        int rc_ = info_enter(fn);                                                                  \
        if (rc_)                                                                                   \
            return rc_;                                                                            \
        if (!(in = loom_info_lookup(h)))                                                           \
            return loom_mpi_err(W, MPI_ERR_INFO, fn,                                               \
                                (h) == MPI_INFO_NULL ? "the info is MPI_INFO_NULL"                 \
                                                     : "not a valid info object of this rank");    \
    } while (0)

static int check_key(const char *key, const char *fn)
{
    if (!key)
        return loom_mpi_err(W, MPI_ERR_INFO_KEY, fn, "key is NULL");
    size_t n = strlen(key);
    if (n == 0)
        return loom_mpi_err(W, MPI_ERR_INFO_KEY, fn, "the key is empty");
    if (n > MPI_MAX_INFO_KEY)
        return loom_mpi_err(W, MPI_ERR_INFO_KEY, fn, "the key is %zu characters long (at most %d)",
                            n, MPI_MAX_INFO_KEY);
    return MPI_SUCCESS;
}

static int read_only(const char *fn)
{
    return loom_mpi_err(W, MPI_ERR_INFO, fn, "MPI_INFO_ENV is read-only");
}

int PMPI_Info_create(MPI_Info *info)
{
    int rc = info_enter("MPI_Info_create");
    if (rc)
        return rc;
    if (!info)
        return loom_mpi_err(W, MPI_ERR_ARG, "MPI_Info_create", "info is NULL");
    struct loom_info *in = loom_info_new();
    if (!in)
        return loom_mpi_err(W, MPI_ERR_NO_MEM, "MPI_Info_create", "out of memory");
    *info = in->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Info_create);

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    INFO_ARG(in, info, "MPI_Info_set");
    if (info == MPI_INFO_ENV)
        return read_only("MPI_Info_set");
    int rc = check_key(key, "MPI_Info_set");
    if (rc)
        return rc;
    if (!value)
        return loom_mpi_err(W, MPI_ERR_INFO_VALUE, "MPI_Info_set", "value is NULL");
    size_t n = strlen(value);
    if (n == 0)
        return loom_mpi_err(W, MPI_ERR_INFO_VALUE, "MPI_Info_set", "the value is empty");
    if (n > MPI_MAX_INFO_VAL)
        return loom_mpi_err(W, MPI_ERR_INFO_VALUE, "MPI_Info_set",
                            "the value is %zu characters long (at most %d)", n, MPI_MAX_INFO_VAL);
    if (loom_info_set(in, key, value) != LOOM_OK)
        return loom_mpi_err(W, MPI_ERR_NO_MEM, "MPI_Info_set", "out of memory");
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Info_set);

int PMPI_Info_delete(MPI_Info info, const char *key)
{
    INFO_ARG(in, info, "MPI_Info_delete");
    if (info == MPI_INFO_ENV)
        return read_only("MPI_Info_delete");
    int rc = check_key(key, "MPI_Info_delete");
    if (rc)
        return rc;
    int i = loom_info_find(in, key);
    if (i < 0)
        return loom_mpi_err(W, MPI_ERR_INFO_NOKEY, "MPI_Info_delete", "no key \"%s\"", key);
    loom_info_delete_at(in, i);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Info_delete);

int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    INFO_ARG(in, info, "MPI_Info_get");
    int rc = check_key(key, "MPI_Info_get");
    if (rc)
        return rc;
    if (valuelen < 0)
        return loom_mpi_err(W, MPI_ERR_ARG, "MPI_Info_get", "valuelen = %d is negative", valuelen);
    if (!value || !flag)
        return loom_mpi_err(W, MPI_ERR_ARG, "MPI_Info_get", "%s is NULL", !flag ? "flag" : "value");
    int i = loom_info_find(in, key);
    *flag = i >= 0;
    if (i >= 0) {
        /* At most valuelen characters and the terminating null (MPI-3.1 9). */
        size_t n = strlen(in->vals[i]);
        if (n > (size_t)valuelen)
            n = (size_t)valuelen;
        memcpy(value, in->vals[i], n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Info_get);

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    INFO_ARG(in, info, "MPI_Info_get_valuelen");
    int rc = check_key(key, "MPI_Info_get_valuelen");
    if (rc)
        return rc;
    if (!valuelen || !flag)
        return loom_mpi_err(W, MPI_ERR_ARG, "MPI_Info_get_valuelen", "%s is NULL",
                            !flag ? "flag" : "valuelen");
    int i = loom_info_find(in, key);
    *flag = i >= 0;
    if (i >= 0)
        *valuelen = (int)strlen(in->vals[i]);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Info_get_valuelen);

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    INFO_ARG(in, info, "MPI_Info_get_nkeys");
    if (!nkeys)
        return loom_mpi_err(W, MPI_ERR_ARG, "MPI_Info_get_nkeys", "nkeys is NULL");
    *nkeys = in->n;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Info_get_nkeys);

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    INFO_ARG(in, info, "MPI_Info_get_nthkey");
    if (!key)
        return loom_mpi_err(W, MPI_ERR_ARG, "MPI_Info_get_nthkey", "key is NULL");
    if (n < 0 || n >= in->n)
        return loom_mpi_err(W, MPI_ERR_ARG, "MPI_Info_get_nthkey",
                            "n = %d is not in [0, %d) (the number of keys)", n, in->n);
    strcpy(key, in->keys[n]);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Info_get_nthkey);

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    INFO_ARG(in, info, "MPI_Info_dup");
    if (!newinfo)
        return loom_mpi_err(W, MPI_ERR_ARG, "MPI_Info_dup", "newinfo is NULL");
    struct loom_info *copy = loom_info_dup(in);
    if (!copy)
        return loom_mpi_err(W, MPI_ERR_NO_MEM, "MPI_Info_dup", "out of memory");
    *newinfo = copy->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Info_dup);

int PMPI_Info_free(MPI_Info *info)
{
    if (!info)
        return loom_mpi_err(W, MPI_ERR_ARG, "MPI_Info_free", "info is NULL");
    INFO_ARG(in, *info, "MPI_Info_free");
    if (*info == MPI_INFO_ENV)
        return read_only("MPI_Info_free");
    loom_info_free(in);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Info_free);

/* MPI-4.1 10.4: a new info object holding what MPI_INFO_ENV holds, with
 * "command" and "argv" taken from argc/argv when given. */
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    const char *fn = "MPI_Info_create_env";
    int rc = info_enter(fn);
    if (rc)
        return rc;
    if (!info)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "info is NULL");
    if (argc < 0 || (argc > 0 && !argv))
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "argc = %d with argv %s", argc,
                            argv ? "given" : "NULL");
    struct loom_info *in = loom_info_dup(loom_info_lookup(MPI_INFO_ENV));
    if (!in)
        return loom_mpi_err(W, MPI_ERR_NO_MEM, fn, "out of memory");
    if (argc > 0 && argv[0]) {
        size_t len = 1;
        for (int i = 1; i < argc && argv[i]; i++)
            len += strlen(argv[i]) + 1;
        char *joined = malloc(len);
        rc = !joined || loom_info_set(in, "command", argv[0]) != LOOM_OK;
        if (!rc) {
            size_t at = 0;
            joined[0] = '\0';
            for (int i = 1; i < argc && argv[i]; i++)
                at += (size_t)snprintf(joined + at, len - at, "%s%s", i > 1 ? " " : "", argv[i]);
            rc = loom_info_set(in, "argv", joined) != LOOM_OK;
        }
        free(joined);
        if (rc) {
            loom_info_free(in);
            return loom_mpi_err(W, MPI_ERR_NO_MEM, fn, "out of memory");
        }
    }
    *info = in->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Info_create_env);

/* MPI-4.1 10.3: the value in a buffer of *buflen characters (terminator
 * included), truncated if need be; *buflen becomes the value's length + 1. */
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    const char *fn = "MPI_Info_get_string";
    INFO_ARG(in, info, fn);
    int rc = check_key(key, fn);
    if (rc)
        return rc;
    if (!buflen || !flag)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "%s is NULL", !flag ? "flag" : "buflen");
    if (*buflen < 0)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "*buflen = %d is negative", *buflen);
    if (*buflen > 0 && !value)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "value is NULL with *buflen = %d", *buflen);
    int i = loom_info_find(in, key);
    *flag = i >= 0;
    if (i < 0)
        return MPI_SUCCESS;
    size_t n = strlen(in->vals[i]);
    if (*buflen > 0) {
        size_t m = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
        memcpy(value, in->vals[i], m);
        value[m] = '\0';
    }
    *buflen = (int)n + 1;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Info_get_string);
