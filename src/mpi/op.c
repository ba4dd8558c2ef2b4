/*
 * MPI entry points of reduction operations (MPI-3.1 5.9.5-5.9.7): creating,
 * freeing and querying user ops, and MPI_Reduce_local. Arguments are checked
 * here; the ops and their kernels are coll/op.h's. These functions take no
 * communicator, so their errors go to MPI_COMM_WORLD's handler.
 */
#include <stdio.h>

#include "coll/op.h"
#include "datatype/datatype.h"
#include "mpi/mpi_impl.h"

#define W MPI_COMM_WORLD

/* The op behind h, or the raised MPI_ERR_OP. */
static int op_arg(MPI_Op h, const char *fn, struct loom_op **op_p)
{
    char buf[96];
    const char *why = loom_op_handle_problem(h, buf, sizeof buf);
    if (why)
        return loom_mpi_err(W, MPI_ERR_OP, fn, "op %s", why);
    *op_p = loom_op_get(h);
    return MPI_SUCCESS;
}

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    const char *fn = "MPI_Op_create";
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (!user_fn)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "user_fn is NULL");
    if (!op)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "op is NULL");
    struct loom_op *o = NULL;
    if (loom_op_create(user_fn, commute != 0, &o))
        return loom_mpi_err(W, MPI_ERR_OTHER, fn, "out of memory (or of operation handles)");
    *op = o->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Op_create);

int PMPI_Op_free(MPI_Op *op)
{
    const char *fn = "MPI_Op_free";
    struct loom_op *o = NULL;
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (!op)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "op is NULL");
    if ((rc = op_arg(*op, fn, &o)))
        return rc;
    if (o->number)
        return loom_mpi_err(W, MPI_ERR_OP, fn, "%s is predefined and cannot be freed",
                            loom_op_name(o));
    loom_op_free(o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Op_free);

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    const char *fn = "MPI_Op_commutative";
    struct loom_op *o = NULL;
    int rc = loom_mpi_check_init(fn);
    if (rc || (rc = op_arg(op, fn, &o)))
        return rc;
    if (!commute)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "commute is NULL");
    *commute = o->commutative;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Op_commutative);

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op)
{
    const char *fn = "MPI_Reduce_local";
    struct loom_op *o = NULL;
    char buf[160];
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (count < 0)
        return loom_mpi_err(W, MPI_ERR_COUNT, fn, "count %d is negative", count);
    const char *why = loom_type_problem(datatype, true, buf, sizeof buf);
    if (why)
        return loom_mpi_err(W, MPI_ERR_TYPE, fn, "datatype %s", why);
    struct loom_type *t = loom_type_get(datatype);
    if ((rc = op_arg(op, fn, &o)))
        return rc;
    if ((why = loom_op_problem(o, t, buf, sizeof buf)))
        return loom_mpi_err(W, MPI_ERR_OP, fn, "%s", why);
    /* A NULL buffer is MPI_BOTTOM, which only types of absolute addresses use. */
    bool relative = count > 0 && t->size > 0 && t->true_lb == 0;
    if (relative && !inbuf)
        return loom_mpi_err(W, MPI_ERR_BUFFER, fn,
                            "inbuf is NULL for %d elements of a datatype with relative "
                            "displacements",
                            count);
    if (relative && !inoutbuf)
        return loom_mpi_err(W, MPI_ERR_BUFFER, fn,
                            "inoutbuf is NULL for %d elements of a datatype with relative "
                            "displacements",
                            count);
    if (count > 0 && t->size > 0 && inbuf == inoutbuf)
        return loom_mpi_err(W, MPI_ERR_BUFFER, fn, "inbuf and inoutbuf are the same buffer");
    loom_op_apply(o, inbuf, inoutbuf, (size_t)count, t);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Reduce_local);
