/*
 * MPI entry points of datatypes (MPI-3.1 chapter 4): constructors, commit
 * and free, sizes and extents, addresses, pack/unpack, envelope/contents,
 * names, and the counts of a status. Arguments are checked here; the layouts
 * are built by the engine (datatype/datatype.h) from the constructor's
 * contents, which every constructor passes in the form
 * MPI_Type_get_contents returns.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datatype/datatype.h"
#include "mpi/mpi_impl.h"

#define W MPI_COMM_WORLD

/* The type behind h, or the raised MPI_ERR_TYPE (`what` names the argument). */
static int type_arg(MPI_Datatype h, bool need_commit, const char *fn, const char *what,
                    struct loom_type **t_p)
{
    char buf[96];
    const char *why = loom_type_problem(h, need_commit, buf, sizeof buf);
    if (why)
        return loom_mpi_err(W, MPI_ERR_TYPE, fn, "%s %s", what, why);
    *t_p = loom_type_get(h);
    return MPI_SUCCESS;
}

/* Builds the type and hands out its handle. */
static int create(int combiner, const int *ints, const MPI_Aint *aints,
                  struct loom_type *const *types, MPI_Datatype *newtype, const char *fn)
{
    struct loom_type *t = NULL;
    int rc = loom_type_create(combiner, ints, aints, types, &t);
    if (rc == LOOM_ERR_INVALID)
        return loom_mpi_err(W, MPI_ERR_ARG, fn,
                            "the new type's size or displacements overflow MPI_Aint");
    if (rc)
        return loom_mpi_err(W, MPI_ERR_OTHER, fn, "out of memory (or of datatype handles)");
    *newtype = t->handle;
    return MPI_SUCCESS;
}

/* The checks every constructor starts with. */
static int ctor_start(const char *fn, int count, const void *newtype)
{
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (count < 0)
        return loom_mpi_err(W, MPI_ERR_COUNT, fn, "count %d is negative", count);
    if (!newtype)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "newtype is NULL");
    return MPI_SUCCESS;
}

static int check_blocklengths(const char *fn, int count, const int *bl)
{
    if (count > 0 && !bl)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "array_of_blocklengths is NULL");
    for (int i = 0; i < count; i++)
        if (bl[i] < 0)
            return loom_mpi_err(W, MPI_ERR_ARG, fn, "array_of_blocklengths[%d] = %d is negative", i,
                                bl[i]);
    return MPI_SUCCESS;
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_contiguous";
    struct loom_type *old = NULL;
    int rc = ctor_start(fn, count, newtype);
    if (rc || (rc = type_arg(oldtype, false, fn, "oldtype", &old)))
        return rc;
    int ints[1] = {count};
    return create(MPI_COMBINER_CONTIGUOUS, ints, NULL, &old, newtype, fn);
}
LOOM_MPI_ALIAS(Type_contiguous);

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_vector";
    struct loom_type *old = NULL;
    int rc = ctor_start(fn, count, newtype);
    if (rc || (rc = type_arg(oldtype, false, fn, "oldtype", &old)))
        return rc;
    if (blocklength < 0)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "blocklength %d is negative", blocklength);
    int ints[3] = {count, blocklength, stride};
    return create(MPI_COMBINER_VECTOR, ints, NULL, &old, newtype, fn);
}
LOOM_MPI_ALIAS(Type_vector);

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_hvector";
    struct loom_type *old = NULL;
    int rc = ctor_start(fn, count, newtype);
    if (rc || (rc = type_arg(oldtype, false, fn, "oldtype", &old)))
        return rc;
    if (blocklength < 0)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "blocklength %d is negative", blocklength);
    int ints[2] = {count, blocklength};
    MPI_Aint aints[1] = {stride};
    return create(MPI_COMBINER_HVECTOR, ints, aints, &old, newtype, fn);
}
LOOM_MPI_ALIAS(Type_create_hvector);

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_indexed";
    struct loom_type *old = NULL;
    int rc = ctor_start(fn, count, newtype);
    if (rc || (rc = type_arg(oldtype, false, fn, "oldtype", &old)) ||
        (rc = check_blocklengths(fn, count, array_of_blocklengths)))
        return rc;
    if (count > 0 && !array_of_displacements)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "array_of_displacements is NULL");
    int *ints = malloc((2 * (size_t)count + 1) * sizeof *ints);
    if (!ints)
        return loom_mpi_err(W, MPI_ERR_OTHER, fn, "out of memory");
    ints[0] = count;
    if (count) {
        memcpy(ints + 1, array_of_blocklengths, (size_t)count * sizeof *ints);
        memcpy(ints + 1 + count, array_of_displacements, (size_t)count * sizeof *ints);
    }
    rc = create(MPI_COMBINER_INDEXED, ints, NULL, &old, newtype, fn);
    free(ints);
    return rc;
}
LOOM_MPI_ALIAS(Type_indexed);

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_hindexed";
    struct loom_type *old = NULL;
    int rc = ctor_start(fn, count, newtype);
    if (rc || (rc = type_arg(oldtype, false, fn, "oldtype", &old)) ||
        (rc = check_blocklengths(fn, count, array_of_blocklengths)))
        return rc;
    if (count > 0 && !array_of_displacements)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "array_of_displacements is NULL");
    int *ints = malloc(((size_t)count + 1) * sizeof *ints);
    if (!ints)
        return loom_mpi_err(W, MPI_ERR_OTHER, fn, "out of memory");
    ints[0] = count;
    if (count)
        memcpy(ints + 1, array_of_blocklengths, (size_t)count * sizeof *ints);
    rc = create(MPI_COMBINER_HINDEXED, ints, array_of_displacements, &old, newtype, fn);
    free(ints);
    return rc;
}
LOOM_MPI_ALIAS(Type_create_hindexed);

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_indexed_block";
    struct loom_type *old = NULL;
    int rc = ctor_start(fn, count, newtype);
    if (rc || (rc = type_arg(oldtype, false, fn, "oldtype", &old)))
        return rc;
    if (blocklength < 0)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "blocklength %d is negative", blocklength);
    if (count > 0 && !array_of_displacements)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "array_of_displacements is NULL");
    int *ints = malloc(((size_t)count + 2) * sizeof *ints);
    if (!ints)
        return loom_mpi_err(W, MPI_ERR_OTHER, fn, "out of memory");
    ints[0] = count;
    ints[1] = blocklength;
    if (count)
        memcpy(ints + 2, array_of_displacements, (size_t)count * sizeof *ints);
    rc = create(MPI_COMBINER_INDEXED_BLOCK, ints, NULL, &old, newtype, fn);
    free(ints);
    return rc;
}
LOOM_MPI_ALIAS(Type_create_indexed_block);

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_hindexed_block";
    struct loom_type *old = NULL;
    int rc = ctor_start(fn, count, newtype);
    if (rc || (rc = type_arg(oldtype, false, fn, "oldtype", &old)))
        return rc;
    if (blocklength < 0)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "blocklength %d is negative", blocklength);
    if (count > 0 && !array_of_displacements)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "array_of_displacements is NULL");
    int ints[2] = {count, blocklength};
    return create(MPI_COMBINER_HINDEXED_BLOCK, ints, array_of_displacements, &old, newtype, fn);
}
LOOM_MPI_ALIAS(Type_create_hindexed_block);

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_struct";
    int rc = ctor_start(fn, count, newtype);
    if (rc || (rc = check_blocklengths(fn, count, array_of_blocklengths)))
        return rc;
    if (count > 0 && !array_of_displacements)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "array_of_displacements is NULL");
    if (count > 0 && !array_of_types)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "array_of_types is NULL");
    int *ints = malloc(((size_t)count + 1) * sizeof *ints);
    struct loom_type **types = malloc(((size_t)count + 1) * sizeof *types);
    if (!ints || !types) {
        rc = loom_mpi_err(W, MPI_ERR_OTHER, fn, "out of memory");
        goto out;
    }
    ints[0] = count;
    for (int i = 0; i < count; i++) {
        char what[48];
        snprintf(what, sizeof what, "array_of_types[%d]", i);
        if ((rc = type_arg(array_of_types[i], false, fn, what, &types[i])))
            goto out;
        ints[1 + i] = array_of_blocklengths[i];
    }
    /* The engine reads types[0] of every constructor. */
    if (count == 0)
        types[0] = loom_type_get(MPI_BYTE);
    rc = create(MPI_COMBINER_STRUCT, ints, array_of_displacements, types, newtype, fn);
out:
    free(ints);
    free(types);
    return rc;
}
LOOM_MPI_ALIAS(Type_create_struct);

static int check_order(const char *fn, int order)
{
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return loom_mpi_err(W, MPI_ERR_ARG, fn,
                            "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
    return MPI_SUCCESS;
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_subarray";
    struct loom_type *old = NULL;
    int rc = ctor_start(fn, 0, newtype);
    if (rc || (rc = type_arg(oldtype, false, fn, "oldtype", &old)) || (rc = check_order(fn, order)))
        return rc;
    if (ndims < 1)
        return loom_mpi_err(W, MPI_ERR_DIMS, fn, "ndims %d is not positive", ndims);
    if (!array_of_sizes || !array_of_subsizes || !array_of_starts)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "an array argument is NULL");
    for (int i = 0; i < ndims; i++) {
        int n = array_of_sizes[i], s = array_of_subsizes[i], st = array_of_starts[i];
        if (n < 1)
            return loom_mpi_err(W, MPI_ERR_ARG, fn, "array_of_sizes[%d] = %d is not positive", i,
                                n);
        if (s < 0 || s > n)
            return loom_mpi_err(W, MPI_ERR_ARG, fn, "array_of_subsizes[%d] = %d is not in [0, %d]",
                                i, s, n);
        if (st < 0 || st > n - s)
            return loom_mpi_err(W, MPI_ERR_ARG, fn,
                                "array_of_starts[%d] = %d puts the subarray (%d elements) outside "
                                "the %d elements of the array",
                                i, st, s, n);
    }
    int *ints = malloc((3 * (size_t)ndims + 2) * sizeof *ints);
    if (!ints)
        return loom_mpi_err(W, MPI_ERR_OTHER, fn, "out of memory");
    ints[0] = ndims;
    memcpy(ints + 1, array_of_sizes, (size_t)ndims * sizeof *ints);
    memcpy(ints + 1 + ndims, array_of_subsizes, (size_t)ndims * sizeof *ints);
    memcpy(ints + 1 + 2 * ndims, array_of_starts, (size_t)ndims * sizeof *ints);
    ints[1 + 3 * ndims] = order;
    rc = create(MPI_COMBINER_SUBARRAY, ints, NULL, &old, newtype, fn);
    free(ints);
    return rc;
}
LOOM_MPI_ALIAS(Type_create_subarray);

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_darray";
    struct loom_type *old = NULL;
    int rc = ctor_start(fn, 0, newtype);
    if (rc || (rc = type_arg(oldtype, false, fn, "oldtype", &old)) || (rc = check_order(fn, order)))
        return rc;
    if (size < 1)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "size %d is not positive", size);
    if (rank < 0 || rank >= size)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "rank %d is not in [0, %d)", rank, size);
    if (ndims < 1)
        return loom_mpi_err(W, MPI_ERR_DIMS, fn, "ndims %d is not positive", ndims);
    if (!array_of_gsizes || !array_of_distribs || !array_of_dargs || !array_of_psizes)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "an array argument is NULL");
    long long procs = 1;
    for (int i = 0; i < ndims; i++) {
        int g = array_of_gsizes[i], d = array_of_distribs[i], a = array_of_dargs[i];
        int p = array_of_psizes[i];
        if (g < 1)
            return loom_mpi_err(W, MPI_ERR_ARG, fn, "array_of_gsizes[%d] = %d is not positive", i,
                                g);
        if (p < 1)
            return loom_mpi_err(W, MPI_ERR_ARG, fn, "array_of_psizes[%d] = %d is not positive", i,
                                p);
        if (d != MPI_DISTRIBUTE_BLOCK && d != MPI_DISTRIBUTE_CYCLIC && d != MPI_DISTRIBUTE_NONE)
            return loom_mpi_err(W, MPI_ERR_ARG, fn,
                                "array_of_distribs[%d] = %d is no MPI_DISTRIBUTE_ value", i, d);
        if (a != MPI_DISTRIBUTE_DFLT_DARG && a < 1)
            return loom_mpi_err(W, MPI_ERR_ARG, fn,
                                "array_of_dargs[%d] = %d is neither positive nor "
                                "MPI_DISTRIBUTE_DFLT_DARG",
                                i, a);
        if (d == MPI_DISTRIBUTE_BLOCK && a != MPI_DISTRIBUTE_DFLT_DARG && (long long)a * p < g)
            return loom_mpi_err(W, MPI_ERR_ARG, fn,
                                "dimension %d: blocks of %d over %d processes do not cover %d "
                                "elements",
                                i, a, p, g);
        procs *= p;
        if (procs > size)
            break;
    }
    if (procs != size)
        return loom_mpi_err(W, MPI_ERR_ARG, fn,
                            "the process grid (array_of_psizes) does not have size %d", size);
    int *ints = malloc((4 * (size_t)ndims + 4) * sizeof *ints);
    if (!ints)
        return loom_mpi_err(W, MPI_ERR_OTHER, fn, "out of memory");
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    memcpy(ints + 3, array_of_gsizes, (size_t)ndims * sizeof *ints);
    memcpy(ints + 3 + ndims, array_of_distribs, (size_t)ndims * sizeof *ints);
    memcpy(ints + 3 + 2 * ndims, array_of_dargs, (size_t)ndims * sizeof *ints);
    memcpy(ints + 3 + 3 * ndims, array_of_psizes, (size_t)ndims * sizeof *ints);
    ints[3 + 4 * ndims] = order;
    rc = create(MPI_COMBINER_DARRAY, ints, NULL, &old, newtype, fn);
    free(ints);
    return rc;
}
LOOM_MPI_ALIAS(Type_create_darray);

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_resized";
    struct loom_type *old = NULL;
    int rc = ctor_start(fn, 0, newtype);
    if (rc || (rc = type_arg(oldtype, false, fn, "oldtype", &old)))
        return rc;
    MPI_Aint aints[2] = {lb, extent};
    return create(MPI_COMBINER_RESIZED, NULL, aints, &old, newtype, fn);
}
LOOM_MPI_ALIAS(Type_create_resized);

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_dup";
    struct loom_type *old = NULL;
    int rc = ctor_start(fn, 0, newtype);
    if (rc || (rc = type_arg(oldtype, false, fn, "oldtype", &old)))
        return rc;
    struct loom_type *t = NULL;
    if ((rc = create(MPI_COMBINER_DUP, NULL, NULL, &old, newtype, fn)))
        return rc;
    /* The new type has the old one's committed state. */
    t = loom_type_get(*newtype);
    if (old->committed)
        loom_type_commit(t);
    if ((rc = loom_mpi_type_attrs_copy(oldtype, *newtype))) {
        (void)loom_mpi_type_attrs_delete(*newtype);
        loom_type_free(t);
        *newtype = MPI_DATATYPE_NULL;
        return loom_mpi_err(W, loom_mpi_callback_class(rc), fn,
                            "an attribute copy callback returned %d", rc);
    }
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_dup);

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    const char *fn = "MPI_Type_commit";
    struct loom_type *t = NULL;
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (!datatype)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "datatype is NULL");
    if ((rc = type_arg(*datatype, false, fn, "datatype", &t)))
        return rc;
    loom_type_commit(t);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_commit);

int PMPI_Type_free(MPI_Datatype *datatype)
{
    const char *fn = "MPI_Type_free";
    struct loom_type *t = NULL;
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (!datatype)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "datatype is NULL");
    if ((rc = type_arg(*datatype, false, fn, "datatype", &t)))
        return rc;
    if (loom_type_is_named(t)) {
        char name[MPI_MAX_OBJECT_NAME];
        loom_type_get_name(t, name);
        return loom_mpi_err(W, MPI_ERR_TYPE, fn, "%s is predefined and cannot be freed", name);
    }
    if ((rc = loom_mpi_type_attrs_delete(*datatype)))
        return loom_mpi_err(W, loom_mpi_callback_class(rc), fn,
                            "an attribute delete callback returned %d", rc);
    loom_type_free(t);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_free);

/* The checks of the queries: init, the type, one output argument. */
static int query_start(const char *fn, MPI_Datatype h, const void *out, const char *out_name,
                       struct loom_type **t_p)
{
    int rc = loom_mpi_check_init(fn);
    if (rc || (rc = type_arg(h, false, fn, "datatype", t_p)))
        return rc;
    if (!out)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "%s is NULL", out_name);
    return MPI_SUCCESS;
}

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    struct loom_type *t = NULL;
    int rc = query_start("MPI_Type_size", datatype, size, "size", &t);
    if (rc)
        return rc;
    *size = t->size > INT_MAX ? MPI_UNDEFINED : (int)t->size;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_size);

/* MPI_Type_size_x and MPI_Type_size_c. */
static int size_count(const char *fn, MPI_Datatype datatype, MPI_Count *size)
{
    struct loom_type *t = NULL;
    int rc = query_start(fn, datatype, size, "size", &t);
    if (rc)
        return rc;
    *size = (MPI_Count)t->size;
    return MPI_SUCCESS;
}

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    return size_count("MPI_Type_size_x", datatype, size);
}
LOOM_MPI_ALIAS(Type_size_x);

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    return size_count("MPI_Type_size_c", datatype, size);
}
LOOM_MPI_ALIAS(Type_size_c);

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    struct loom_type *t = NULL;
    int rc =
        query_start("MPI_Type_get_extent", datatype, lb && extent ? lb : NULL, "lb or extent", &t);
    if (rc)
        return rc;
    *lb = t->lb;
    *extent = t->ub - t->lb;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_get_extent);

/* MPI_Type_get_extent_x and MPI_Type_get_extent_c. */
static int extent_count(const char *fn, MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    struct loom_type *t = NULL;
    int rc = query_start(fn, datatype, lb && extent ? lb : NULL, "lb or extent", &t);
    if (rc)
        return rc;
    *lb = t->lb;
    *extent = t->ub - t->lb;
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return extent_count("MPI_Type_get_extent_x", datatype, lb, extent);
}
LOOM_MPI_ALIAS(Type_get_extent_x);

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return extent_count("MPI_Type_get_extent_c", datatype, lb, extent);
}
LOOM_MPI_ALIAS(Type_get_extent_c);

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    struct loom_type *t = NULL;
    int rc = query_start("MPI_Type_get_true_extent", datatype,
                         true_lb && true_extent ? true_lb : NULL, "true_lb or true_extent", &t);
    if (rc)
        return rc;
    *true_lb = t->true_lb;
    *true_extent = t->true_ub - t->true_lb;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_get_true_extent);

/* MPI_Type_get_true_extent_x and MPI_Type_get_true_extent_c. */
static int true_extent_count(const char *fn, MPI_Datatype datatype, MPI_Count *true_lb,
                             MPI_Count *true_extent)
{
    struct loom_type *t = NULL;
    int rc = query_start(fn, datatype, true_lb && true_extent ? true_lb : NULL,
                         "true_lb or true_extent", &t);
    if (rc)
        return rc;
    *true_lb = t->true_lb;
    *true_extent = t->true_ub - t->true_lb;
    return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return true_extent_count("MPI_Type_get_true_extent_x", datatype, true_lb, true_extent);
}
LOOM_MPI_ALIAS(Type_get_true_extent_x);

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return true_extent_count("MPI_Type_get_true_extent_c", datatype, true_lb, true_extent);
}
LOOM_MPI_ALIAS(Type_get_true_extent_c);

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    int rc = loom_mpi_check_init("MPI_Get_address");
    if (rc)
        return rc;
    if (!address)
        return loom_mpi_err(W, MPI_ERR_ARG, "MPI_Get_address", "address is NULL");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Get_address);

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((unsigned long)base + (unsigned long)disp);
}
LOOM_MPI_ALIAS(Aint_add);

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((unsigned long)addr1 - (unsigned long)addr2);
}
LOOM_MPI_ALIAS(Aint_diff);

/* ---- pack and unpack ---- */

static int pack_start(const char *fn, int count, MPI_Datatype datatype, int bufsize,
                      const int *position, MPI_Comm comm, struct loom_type **t_p)
{
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (!loom_mpi_comm_valid(comm))
        return loom_mpi_bad_comm(comm, fn);
    if (count < 0)
        return loom_mpi_err(comm, MPI_ERR_COUNT, fn, "count %d is negative", count);
    char buf[96];
    const char *why = loom_type_problem(datatype, true, buf, sizeof buf);
    if (why)
        return loom_mpi_err(comm, MPI_ERR_TYPE, fn, "datatype %s", why);
    *t_p = loom_type_get(datatype);
    if (bufsize < 0)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "the buffer size %d is negative", bufsize);
    if (!position)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "position is NULL");
    if (*position < 0 || *position > bufsize)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "position %d is outside the %d-byte buffer",
                            *position, bufsize);
    return MPI_SUCCESS;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    const char *fn = "MPI_Pack";
    struct loom_type *t = NULL;
    int rc = pack_start(fn, incount, datatype, outsize, position, comm, &t);
    if (rc)
        return rc;
    MPI_Count bytes = (MPI_Count)incount * (MPI_Count)t->size;
    if (bytes > outsize - *position)
        return loom_mpi_err(comm, MPI_ERR_TRUNCATE, fn,
                            "%lld bytes of data do not fit in the %d bytes left of the output "
                            "buffer",
                            bytes, outsize - *position);
    if (bytes && !outbuf)
        return loom_mpi_err(comm, MPI_ERR_BUFFER, fn, "outbuf is NULL");
    loom_type_pack((char *)outbuf + *position, inbuf, t, 0, (size_t)bytes);
    *position += (int)bytes;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Pack);

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm)
{
    const char *fn = "MPI_Unpack";
    struct loom_type *t = NULL;
    int rc = pack_start(fn, outcount, datatype, insize, position, comm, &t);
    if (rc)
        return rc;
    MPI_Count bytes = (MPI_Count)outcount * (MPI_Count)t->size;
    if (bytes > insize - *position)
        return loom_mpi_err(comm, MPI_ERR_TRUNCATE, fn,
                            "%lld bytes to unpack but only %d left in the input buffer", bytes,
                            insize - *position);
    if (bytes && !inbuf)
        return loom_mpi_err(comm, MPI_ERR_BUFFER, fn, "inbuf is NULL");
    loom_type_unpack(outbuf, t, (const char *)inbuf + *position, 0, (size_t)bytes);
    *position += (int)bytes;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Unpack);

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    const char *fn = "MPI_Pack_size";
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (!loom_mpi_comm_valid(comm))
        return loom_mpi_bad_comm(comm, fn);
    if (incount < 0)
        return loom_mpi_err(comm, MPI_ERR_COUNT, fn, "incount %d is negative", incount);
    char buf[96];
    const char *why = loom_type_problem(datatype, true, buf, sizeof buf);
    if (why)
        return loom_mpi_err(comm, MPI_ERR_TYPE, fn, "datatype %s", why);
    if (!size)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "size is NULL");
    MPI_Count bytes = (MPI_Count)incount * (MPI_Count)loom_type_get(datatype)->size;
    if (bytes > INT_MAX)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "%lld bytes do not fit in an int", bytes);
    *size = (int)bytes;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Pack_size);

/* ---- envelope and contents ---- */

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    struct loom_type *t = NULL;
    int rc = query_start(
        "MPI_Type_get_envelope", datatype,
        num_integers && num_addresses && num_datatypes && combiner ? (const void *)combiner : NULL,
        "an output argument", &t);
    if (rc)
        return rc;
    loom_type_envelope(t, num_integers, num_addresses, num_datatypes, combiner);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_get_envelope);

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    const char *fn = "MPI_Type_get_contents";
    struct loom_type *t = NULL;
    int rc = loom_mpi_check_init(fn);
    if (rc || (rc = type_arg(datatype, false, fn, "datatype", &t)))
        return rc;
    int ni, na, nd, combiner;
    loom_type_envelope(t, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED)
        return loom_mpi_err(W, MPI_ERR_ARG, fn,
                            "datatype is predefined (MPI_COMBINER_NAMED) and has no contents");
    if (max_integers < ni || max_addresses < na || max_datatypes < nd)
        return loom_mpi_err(W, MPI_ERR_ARG, fn,
                            "the arrays hold (%d, %d, %d) entries; the contents need (%d, %d, %d)",
                            max_integers, max_addresses, max_datatypes, ni, na, nd);
    if ((ni && !array_of_integers) || (na && !array_of_addresses) || (nd && !array_of_datatypes))
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "an output array is NULL");
    const int *ints;
    const MPI_Aint *aints;
    struct loom_type *const *types;
    loom_type_contents(t, &ints, &aints, &types);
    /* Derived types come back as new handles the caller frees (MPI-3.1 4.1.13). */
    for (int i = 0; i < nd; i++) {
        struct loom_type *c = types[i];
        if (!loom_type_is_named(c) && loom_type_clone(types[i], &c) != LOOM_OK) {
            while (i-- > 0) {
                struct loom_type *d = loom_type_get(array_of_datatypes[i]);
                if (!loom_type_is_named(d))
                    loom_type_free(d);
            }
            return loom_mpi_err(W, MPI_ERR_OTHER, fn, "out of memory");
        }
        array_of_datatypes[i] = c->handle;
    }
    if (ni)
        memcpy(array_of_integers, ints, (size_t)ni * sizeof *ints);
    if (na)
        memcpy(array_of_addresses, aints, (size_t)na * sizeof *aints);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_get_contents);

/* ---- names ---- */

int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    struct loom_type *t = NULL;
    int rc = query_start("MPI_Type_set_name", datatype, type_name, "type_name", &t);
    if (rc)
        return rc;
    loom_type_set_name(t, type_name);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_set_name);

int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    struct loom_type *t = NULL;
    int rc = query_start("MPI_Type_get_name", datatype, type_name && resultlen ? type_name : NULL,
                         "type_name or resultlen", &t);
    if (rc)
        return rc;
    *resultlen = loom_type_get_name(t, type_name);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_get_name);

/* ---- counts of a status ---- */

static int status_start(const char *fn, const MPI_Status *status, MPI_Datatype datatype,
                        const void *count, struct loom_type **t_p)
{
    int rc = loom_mpi_check_init(fn);
    if (rc || (rc = type_arg(datatype, false, fn, "datatype", t_p)))
        return rc;
    if (!status || status == MPI_STATUS_IGNORE)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "status is %s",
                            status ? "MPI_STATUS_IGNORE" : "NULL");
    if (!count)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "count is NULL");
    return MPI_SUCCESS;
}

/* Whole elements of t in a message of bytes, or MPI_UNDEFINED. */
static MPI_Count whole_elements(const struct loom_type *t, long long bytes)
{
    if (t->size == 0)
        return bytes == 0 ? 0 : MPI_UNDEFINED;
    if (bytes % (long long)t->size)
        return MPI_UNDEFINED;
    return bytes / (long long)t->size;
}

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    struct loom_type *t = NULL;
    int rc = status_start("MPI_Get_count", status, datatype, count, &t);
    if (rc)
        return rc;
    MPI_Count n = whole_elements(t, status->loom_count);
    *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Get_count);

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    struct loom_type *t = NULL;
    int rc = status_start("MPI_Get_elements", status, datatype, count, &t);
    if (rc)
        return rc;
    MPI_Count n = loom_type_elements(t, status->loom_count);
    *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Get_elements);

/* MPI_Get_elements_x and MPI_Get_elements_c. */
static int elements_count(const char *fn, const MPI_Status *status, MPI_Datatype datatype,
                          MPI_Count *count)
{
    struct loom_type *t = NULL;
    int rc = status_start(fn, status, datatype, count, &t);
    if (rc)
        return rc;
    *count = loom_type_elements(t, status->loom_count);
    return MPI_SUCCESS;
}

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return elements_count("MPI_Get_elements_x", status, datatype, count);
}
LOOM_MPI_ALIAS(Get_elements_x);

int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return elements_count("MPI_Get_elements_c", status, datatype, count);
}
LOOM_MPI_ALIAS(Get_elements_c);

int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    struct loom_type *t = NULL;
    int rc = status_start("MPI_Get_count_c", status, datatype, count, &t);
    if (rc)
        return rc;
    *count = whole_elements(t, status->loom_count);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Get_count_c);

/* ---- setting a status's counts (generalized requests' query functions) ---- */

struct elem_walk {
    MPI_Count left; /* basic elements still to count */
    size_t bytes;
};

static void elem_run(const struct loom_type *basic, size_t n, void *arg)
{
    struct elem_walk *w = arg;
    size_t take = (MPI_Count)n < w->left ? n : (size_t)w->left;
    w->bytes += take * basic->size;
    w->left -= (MPI_Count)take;
}

/* Makes status say count basic elements of datatype: the bytes of the first
 * count basic elements of a message of datatype, so MPI_Get_elements gives
 * count back (and MPI_Get_count the whole elements, or MPI_UNDEFINED). */
static int set_elements(const char *fn, MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    struct loom_type *t = NULL;
    int rc = loom_mpi_check_init(fn);
    if (rc || (rc = type_arg(datatype, false, fn, "datatype", &t)))
        return rc;
    if (!status || status == MPI_STATUS_IGNORE)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "status is %s",
                            status ? "MPI_STATUS_IGNORE" : "NULL");
    if (count < 0)
        return loom_mpi_err(W, MPI_ERR_COUNT, fn, "count %lld is negative", (long long)count);
    if (t->nbasic == 0) {
        if (count > 0)
            return loom_mpi_err(W, MPI_ERR_COUNT, fn,
                                "count %lld: the datatype has no basic elements", (long long)count);
        status->loom_count = 0;
        return MPI_SUCCESS;
    }
    MPI_Count full = count / t->nbasic;
    if ((unsigned long long)full > (unsigned long long)LLONG_MAX / (t->size ? t->size : 1))
        return loom_mpi_err(W, MPI_ERR_COUNT, fn, "count %lld is too large", (long long)count);
    struct elem_walk w = {count % t->nbasic, (size_t)full * t->size};
    if (w.left)
        loom_type_signature(t, 1, elem_run, &w);
    status->loom_count = (long long)w.bytes;
    return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    return set_elements("MPI_Status_set_elements", status, datatype, count);
}
LOOM_MPI_ALIAS(Status_set_elements);

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements("MPI_Status_set_elements_x", status, datatype, count);
}
LOOM_MPI_ALIAS(Status_set_elements_x);

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    const char *fn = "MPI_Status_set_cancelled";
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (!status || status == MPI_STATUS_IGNORE)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "status is %s",
                            status ? "MPI_STATUS_IGNORE" : "NULL");
    status->loom_cancelled = flag != 0;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Status_set_cancelled);

/* MPI-4.1 5.1.x: the predefined pair type of MINLOC/MAXLOC for a value type
 * and an index type, or MPI_DATATYPE_NULL when there is none. */
int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                              MPI_Datatype *pair_type)
{
    const char *fn = "MPI_Type_get_value_index";
    struct loom_type *t = NULL;
    int rc = loom_mpi_check_init(fn);
    if (rc || (rc = type_arg(value_type, false, fn, "value_type", &t)) ||
        (rc = type_arg(index_type, false, fn, "index_type", &t)))
        return rc;
    if (!pair_type)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "pair_type is NULL");
    static const struct {
        MPI_Datatype value, index, pair;
    } pairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
    };
    *pair_type = MPI_DATATYPE_NULL;
    for (size_t i = 0; i < LOOM_ARRAY_SIZE(pairs); i++)
        if (pairs[i].value == value_type && pairs[i].index == index_type)
            *pair_type = pairs[i].pair;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_get_value_index);

/* ---- Fortran's types from C: match by size, F90 parameterized types ---- */

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    const char *fn = "MPI_Type_match_size";
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (!datatype)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "datatype is NULL");
    /* The sized Fortran types (MPI-4.1 19.1.9): exactly one per size. */
    static const struct {
        int typeclass, size;
        MPI_Datatype type;
    } match[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1},   {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4},   {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},         {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_REAL, 16, MPI_REAL16},       {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16}, {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
    };
    if (typeclass != MPI_TYPECLASS_INTEGER && typeclass != MPI_TYPECLASS_REAL &&
        typeclass != MPI_TYPECLASS_COMPLEX)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "typeclass %d is no MPI_TYPECLASS_ value",
                            typeclass);
    for (size_t i = 0; i < LOOM_ARRAY_SIZE(match); i++)
        if (match[i].typeclass == typeclass && match[i].size == size) {
            *datatype = match[i].type;
            return MPI_SUCCESS;
        }
    return loom_mpi_err(W, MPI_ERR_ARG, fn, "no %s type has %d bytes",
                        typeclass == MPI_TYPECLASS_INTEGER ? "integer"
                        : typeclass == MPI_TYPECLASS_REAL  ? "real"
                                                           : "complex",
                        size);
}
LOOM_MPI_ALIAS(Type_match_size);

/* The kind gfortran's SELECTED_REAL_KIND(p, r) gives, as a predefined
 * type, or MPI_DATATYPE_NULL. Loom has no type for gfortran's REAL(10)
 * (x87 extended): precisions 16-18 get REAL16, the next kind up. */
static MPI_Datatype real_kind(int p, int r)
{
    if (p == MPI_UNDEFINED)
        p = 0;
    if (r == MPI_UNDEFINED)
        r = 0;
    if (p <= 6 && r <= 37)
        return MPI_REAL4;
    if (p <= 15 && r <= 307)
        return MPI_REAL8;
    if (p <= 33 && r <= 4931)
        return MPI_REAL16;
    return MPI_DATATYPE_NULL;
}

static int f90_start(const char *fn, const void *newtype)
{
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (!newtype)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "newtype is NULL");
    return MPI_SUCCESS;
}

static int f90_make(const char *fn, int combiner, int p, int r, MPI_Datatype base,
                    MPI_Datatype *newtype)
{
    struct loom_type *t;
    if (loom_type_f90(combiner, p, r, base, &t) != LOOM_OK)
        return loom_mpi_err(W, MPI_ERR_NO_MEM, fn, "out of memory (or of F90 types)");
    *newtype = t->handle;
    return MPI_SUCCESS;
}

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_f90_integer";
    int rc = f90_start(fn, newtype);
    if (rc)
        return rc;
    /* gfortran's SELECTED_INT_KIND; no INTEGER(16) here. */
    MPI_Datatype base = r < 0     ? MPI_DATATYPE_NULL
                        : r <= 2  ? MPI_INTEGER1
                        : r <= 4  ? MPI_INTEGER2
                        : r <= 9  ? MPI_INTEGER4
                        : r <= 18 ? MPI_INTEGER8
                                  : MPI_DATATYPE_NULL;
    if (base == MPI_DATATYPE_NULL)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "no integer kind has a decimal range of %d", r);
    return f90_make(fn, MPI_COMBINER_F90_INTEGER, 0, r, base, newtype);
}
LOOM_MPI_ALIAS(Type_create_f90_integer);

/* The checks of f90_real and f90_complex; *base_p is the REAL kind. */
static int f90_real_args(const char *fn, int p, int r, MPI_Datatype *base_p)
{
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "p and r are both MPI_UNDEFINED");
    if ((p < 0 && p != MPI_UNDEFINED) || (r < 0 && r != MPI_UNDEFINED))
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "p = %d or r = %d is negative", p, r);
    *base_p = real_kind(p, r);
    if (*base_p == MPI_DATATYPE_NULL)
        return loom_mpi_err(W, MPI_ERR_ARG, fn,
                            "no real kind has a precision of %d and a decimal range of %d "
                            "digits",
                            p, r);
    return MPI_SUCCESS;
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_f90_real";
    MPI_Datatype base;
    int rc = f90_start(fn, newtype);
    if (rc || (rc = f90_real_args(fn, p, r, &base)))
        return rc;
    return f90_make(fn, MPI_COMBINER_F90_REAL, p, r, base, newtype);
}
LOOM_MPI_ALIAS(Type_create_f90_real);

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    const char *fn = "MPI_Type_create_f90_complex";
    MPI_Datatype base;
    int rc = f90_start(fn, newtype);
    if (rc || (rc = f90_real_args(fn, p, r, &base)))
        return rc;
    base = base == MPI_REAL4 ? MPI_COMPLEX8 : base == MPI_REAL8 ? MPI_COMPLEX16 : MPI_COMPLEX32;
    return f90_make(fn, MPI_COMBINER_F90_COMPLEX, p, r, base, newtype);
}
LOOM_MPI_ALIAS(Type_create_f90_complex);

/* ---- external32 (MPI_Pack_external) ---- */

/* The checks every external function starts with: init, the data
 * representation (only "external32" is defined for these functions), the
 * count and the type. */
static int external_start(const char *fn, const char *datarep, int count, MPI_Datatype datatype,
                          struct loom_type **t_p)
{
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (!datarep)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "datarep is NULL");
    if (strcmp(datarep, "external32") != 0)
        return loom_mpi_err(W, MPI_ERR_ARG, fn,
                            "data representation \"%.64s\" is not \"external32\"", datarep);
    if (count < 0)
        return loom_mpi_err(W, MPI_ERR_COUNT, fn, "count %d is negative", count);
    return type_arg(datatype, true, fn, "datatype", t_p);
}

/* The checks of a position in a buffer of size bytes. */
static int external_position(const char *fn, MPI_Aint size, const MPI_Aint *position)
{
    if (size < 0)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "the buffer size %ld is negative", size);
    if (!position)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "position is NULL");
    if (*position < 0 || *position > size)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "position %ld is outside the %ld-byte buffer",
                            *position, size);
    return MPI_SUCCESS;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
                       void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    const char *fn = "MPI_Pack_external";
    struct loom_type *t = NULL;
    int rc = external_start(fn, datarep, incount, datatype, &t);
    if (rc || (rc = external_position(fn, outsize, position)))
        return rc;
    size_t bytes = loom_type_ext32_size(t, (size_t)incount);
    if ((MPI_Aint)bytes > outsize - *position)
        return loom_mpi_err(W, MPI_ERR_TRUNCATE, fn,
                            "%zu bytes of external32 data do not fit in the %ld bytes left of the "
                            "output buffer",
                            bytes, outsize - *position);
    if (bytes && !outbuf)
        return loom_mpi_err(W, MPI_ERR_BUFFER, fn, "outbuf is NULL");
    rc = loom_type_ext32_pack((char *)outbuf + *position, inbuf, t, (size_t)incount);
    if (rc == LOOM_ERR_NOMEM)
        return loom_mpi_err(W, MPI_ERR_NO_MEM, fn, "out of memory");
    if (rc)
        return loom_mpi_err(W, MPI_ERR_CONVERSION, fn,
                            "a value does not fit in its external32 size (e.g. an MPI_LONG "
                            "beyond 32 bits)");
    *position += (MPI_Aint)bytes;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Pack_external);

int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    const char *fn = "MPI_Unpack_external";
    struct loom_type *t = NULL;
    int rc = external_start(fn, datarep, outcount, datatype, &t);
    if (rc || (rc = external_position(fn, insize, position)))
        return rc;
    size_t bytes = loom_type_ext32_size(t, (size_t)outcount);
    if ((MPI_Aint)bytes > insize - *position)
        return loom_mpi_err(W, MPI_ERR_TRUNCATE, fn,
                            "%zu bytes to unpack but only %ld left in the input buffer", bytes,
                            insize - *position);
    if (bytes && !inbuf)
        return loom_mpi_err(W, MPI_ERR_BUFFER, fn, "inbuf is NULL");
    if (loom_type_ext32_unpack(outbuf, t, (size_t)outcount, (const char *)inbuf + *position))
        return loom_mpi_err(W, MPI_ERR_NO_MEM, fn, "out of memory");
    *position += (MPI_Aint)bytes;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Unpack_external);

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint *size)
{
    const char *fn = "MPI_Pack_external_size";
    struct loom_type *t = NULL;
    int rc = external_start(fn, datarep, incount, datatype, &t);
    if (rc)
        return rc;
    if (!size)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "size is NULL");
    *size = (MPI_Aint)loom_type_ext32_size(t, (size_t)incount);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Pack_external_size);

/* ---- MPI-1 names (removed from MPI-3.0; old codes still call them) ---- */

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    struct loom_type *t = NULL;
    int rc = query_start("MPI_Type_extent", datatype, extent, "extent", &t);
    if (rc)
        return rc;
    *extent = t->ub - t->lb;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_extent);

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    struct loom_type *t = NULL;
    int rc = query_start("MPI_Type_lb", datatype, displacement, "displacement", &t);
    if (rc)
        return rc;
    *displacement = t->lb;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_lb);

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    struct loom_type *t = NULL;
    int rc = query_start("MPI_Type_ub", datatype, displacement, "displacement", &t);
    if (rc)
        return rc;
    *displacement = t->ub;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_ub);

/* MPI_Type_hvector, MPI_Type_hindexed and MPI_Type_struct are the MPI-2
 * constructors under their MPI-1 names (same combiners from C). */
int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}
LOOM_MPI_ALIAS(Type_hvector);

int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return PMPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype,
                                     newtype);
}
LOOM_MPI_ALIAS(Type_hindexed);

int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements,
                                   array_of_types, newtype);
}
LOOM_MPI_ALIAS(Type_struct);

int PMPI_Address(void *location, MPI_Aint *address)
{
    return PMPI_Get_address(location, address);
}
LOOM_MPI_ALIAS(Address);
