/*
 * Attribute caching on communicators (MPI-3.1 6.7.2): keyvals, set, get,
 * delete, with the copy and delete callbacks (src/comm/attr.c). The
 * predefined attributes (MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL,
 * MPI_UNIVERSE_SIZE, MPI_APPNUM, MPI_LASTUSEDCODE) read on any communicator
 * and cannot be set or deleted; get returns a pointer to the int value.
 */
#include "comm/comm_impl.h"
#include "mpi/mpi_impl.h"

#define COMM_ARG(c, comm, fn)                                                                      \
    struct loom_comm *c;                                                                           \
    do {                                                                                           \
        int rc_ = loom_mpi_check_init(fn);                                                         \
        if (rc_)                                                                                   \
            return rc_;                                                                            \
        if (!(c = loom_comm_lookup(comm)))                                                         \
            return loom_mpi_bad_comm(comm, fn);                                                    \
    } while (0)

static int bad_keyval(MPI_Comm comm, int keyval, const char *fn)
{
    if (keyval == MPI_KEYVAL_INVALID)
        return loom_mpi_err(comm, MPI_ERR_KEYVAL, fn, "the keyval is MPI_KEYVAL_INVALID");
    if (loom_keyval_is_predefined(keyval))
        return loom_mpi_err(comm, MPI_ERR_KEYVAL, fn,
                            "keyval 0x%x is predefined and cannot be changed", (unsigned)keyval);
    return loom_mpi_err(comm, MPI_ERR_KEYVAL, fn, "0x%x is not a valid keyval of this rank",
                        (unsigned)keyval);
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                            void *extra_state)
{
    int rc = loom_mpi_check_init("MPI_Comm_create_keyval");
    if (rc)
        return rc;
    if (!comm_keyval)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_create_keyval",
                            "comm_keyval is NULL");
    if (loom_keyval_create(comm_copy_attr_fn, comm_delete_attr_fn, extra_state, comm_keyval) !=
        LOOM_OK)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Comm_create_keyval",
                            "out of memory");
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_create_keyval);

int PMPI_Comm_free_keyval(int *comm_keyval)
{
    int rc = loom_mpi_check_init("MPI_Comm_free_keyval");
    if (rc)
        return rc;
    if (!comm_keyval)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_free_keyval",
                            "comm_keyval is NULL");
    struct loom_keyval *kv = loom_keyval_lookup(*comm_keyval);
    if (!kv)
        return bad_keyval(MPI_COMM_WORLD, *comm_keyval, "MPI_Comm_free_keyval");
    loom_keyval_free(kv);
    *comm_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_free_keyval);

int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    COMM_ARG(c, comm, "MPI_Comm_set_attr");
    struct loom_keyval *kv = loom_keyval_lookup(comm_keyval);
    if (!kv)
        return bad_keyval(comm, comm_keyval, "MPI_Comm_set_attr");
    int rc = loom_attr_set(c, kv, attribute_val);
    if (rc != MPI_SUCCESS)
        return loom_mpi_err(comm, loom_mpi_callback_class(rc), "MPI_Comm_set_attr",
                            "the delete callback of the old value returned %d", rc);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_set_attr);

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    COMM_ARG(c, comm, "MPI_Comm_get_attr");
    if (!attribute_val || !flag)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_get_attr", "%s is NULL",
                            !flag ? "flag" : "attribute_val");
    if (!loom_keyval_is_predefined(comm_keyval) && !loom_keyval_lookup(comm_keyval))
        return loom_mpi_err(comm, MPI_ERR_KEYVAL, "MPI_Comm_get_attr",
                            comm_keyval == MPI_KEYVAL_INVALID ? "the keyval is MPI_KEYVAL_INVALID"
                                                              : "not a valid keyval of this rank");
    void *val;
    bool found;
    (void)loom_attr_get(c, comm_keyval, &val, &found);
    if (found)
        *(void **)attribute_val = val;
    *flag = found;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_get_attr);

int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    COMM_ARG(c, comm, "MPI_Comm_delete_attr");
    struct loom_keyval *kv = loom_keyval_lookup(comm_keyval);
    if (!kv)
        return bad_keyval(comm, comm_keyval, "MPI_Comm_delete_attr");
    bool found;
    int rc = loom_attr_delete(c, kv, &found);
    if (rc != MPI_SUCCESS)
        return loom_mpi_err(comm, loom_mpi_callback_class(rc), "MPI_Comm_delete_attr",
                            "the delete callback returned %d", rc);
    if (!found)
        return loom_mpi_err(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr",
                            "no attribute is set for keyval 0x%x", (unsigned)comm_keyval);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_delete_attr);
