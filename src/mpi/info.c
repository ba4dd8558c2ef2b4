/*
 * Info objects (MPI-3.1 chapter 9; src/comm/info.c). Keys are 1 to
 * MPI_MAX_INFO_KEY characters, values 1 to MPI_MAX_INFO_VAL; MPI_INFO_ENV is
 * read-only. Errors go to MPI_COMM_WORLD's handler.
 */
#include <string.h>

#include "comm/comm_impl.h"
#include "mpi/mpi_impl.h"

#define W MPI_COMM_WORLD

#define INFO_ARG(in, h, fn)                                                                        \
    struct loom_info *in;                                                                          \
    do {                                                                                           \
        int rc_ = loom_mpi_check_init(fn);                                                         \
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
    int rc = loom_mpi_check_init("MPI_Info_create");
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
