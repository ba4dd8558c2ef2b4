/*
 * MPI-1 names removed from MPI-3.0 (deprecated since MPI-2.0) that old codes
 * still call: keyvals and attributes, error handlers. Each is the MPI-2
 * function under its old name, with the same arguments and semantics (the
 * callback types are the same: MPI_Copy_function is
 * MPI_Comm_copy_attr_function, MPI_Handler_function is
 * MPI_Comm_errhandler_function); errors are raised under the MPI-2 name.
 * The datatype ones (MPI_Type_extent/lb/ub, MPI_Type_hvector/hindexed/
 * struct, MPI_Address) are in datatype.c.
 */
#include "mpi/mpi_impl.h"

int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}
LOOM_MPI_ALIAS(Keyval_create);

int PMPI_Keyval_free(int *keyval)
{
    return PMPI_Comm_free_keyval(keyval);
}
LOOM_MPI_ALIAS(Keyval_free);

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}
LOOM_MPI_ALIAS(Attr_put);

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}
LOOM_MPI_ALIAS(Attr_get);

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return PMPI_Comm_delete_attr(comm, keyval);
}
LOOM_MPI_ALIAS(Attr_delete);

int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_create_errhandler(function, errhandler);
}
LOOM_MPI_ALIAS(Errhandler_create);

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return PMPI_Comm_set_errhandler(comm, errhandler);
}
LOOM_MPI_ALIAS(Errhandler_set);

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_get_errhandler(comm, errhandler);
}
LOOM_MPI_ALIAS(Errhandler_get);
