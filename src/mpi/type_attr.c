/*
 * Attribute caching on datatypes (MPI-4.1 7.7.4): keyvals, set, get,
 * delete, copied by MPI_Type_dup through the copy callbacks and deleted by
 * MPI_Type_free through the delete callbacks.
 *
 * Datatype objects are job-wide (a predefined type is one object for every
 * rank), but attributes are local to the process that sets them, so they do
 * not live in the type: each rank keeps a list of the attributes it set,
 * newest first, keyed by type handle and keyval (comm/attr.c's keyval
 * objects, marked as type keyvals).
 */
#include <stdlib.h>

#include "comm/comm_impl.h"
#include "datatype/datatype.h"
#include "mpi/mpi_impl.h"

#define W MPI_COMM_WORLD

struct loom_mpi_type_attr {
    struct loom_mpi_type_attr *next;
    MPI_Datatype type;
    struct loom_keyval *kv;
    int keyval;
    void *val;
};

/* The caller's type keyval behind keyval, or NULL. */
static struct loom_keyval *type_kv(int keyval)
{
    struct loom_keyval *kv = loom_keyval_lookup(keyval);
    return kv && kv->type ? kv : NULL;
}

static int bad_keyval(int keyval, const char *fn)
{
    if (keyval == MPI_KEYVAL_INVALID)
        return loom_mpi_err(W, MPI_ERR_KEYVAL, fn, "the keyval is MPI_KEYVAL_INVALID");
    return loom_mpi_err(W, MPI_ERR_KEYVAL, fn, "0x%x is not a datatype keyval of this rank",
                        (unsigned)keyval);
}

/* The checks of set/get/delete: MPI initialized, a datatype, a type keyval. */
static int attr_args(const char *fn, MPI_Datatype type, int keyval, struct loom_keyval **kv_p)
{
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    char buf[96];
    const char *why = loom_type_problem(type, false, buf, sizeof buf);
    if (why)
        return loom_mpi_err(W, MPI_ERR_TYPE, fn, "datatype %s", why);
    if (!(*kv_p = type_kv(keyval)))
        return bad_keyval(keyval, fn);
    return MPI_SUCCESS;
}

static struct loom_mpi_type_attr **find(MPI_Datatype type, const struct loom_keyval *kv)
{
    struct loom_mpi_type_attr **pa = &loom_mpi_self()->type_attrs;
    while (*pa && ((*pa)->type != type || (*pa)->kv != kv))
        pa = &(*pa)->next;
    return pa;
}

static int call_delete(const struct loom_mpi_type_attr *a)
{
    MPI_Type_delete_attr_function *fn =
        (MPI_Type_delete_attr_function *)(void (*)(void))a->kv->delete_fn;
    return fn ? fn(a->type, a->keyval, a->val, a->kv->extra_state) : MPI_SUCCESS;
}

static int attr_add(MPI_Datatype type, struct loom_keyval *kv, void *val)
{
    struct loom_mpi_type_attr *a = malloc(sizeof *a);
    if (!a)
        return MPI_ERR_NO_MEM;
    struct loom_mpi_rank *m = loom_mpi_self();
    *a = (struct loom_mpi_type_attr){m->type_attrs, type, kv, kv->handle, val};
    m->type_attrs = a;
    loom_keyval_ref(kv);
    return MPI_SUCCESS;
}

static void attr_unlink(struct loom_mpi_type_attr **pa)
{
    struct loom_mpi_type_attr *a = *pa;
    *pa = a->next;
    loom_keyval_unref(a->kv);
    free(a);
}

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                            void *extra_state)
{
    const char *fn = "MPI_Type_create_keyval";
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (!type_keyval)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "type_keyval is NULL");
    if (loom_keyval_create((MPI_Comm_copy_attr_function *)(void (*)(void))type_copy_attr_fn,
                           (MPI_Comm_delete_attr_function *)(void (*)(void))type_delete_attr_fn,
                           extra_state, type_keyval) != LOOM_OK)
        return loom_mpi_err(W, MPI_ERR_NO_MEM, fn, "out of memory");
    loom_keyval_lookup(*type_keyval)->type = true;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_create_keyval);

int PMPI_Type_free_keyval(int *type_keyval)
{
    const char *fn = "MPI_Type_free_keyval";
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (!type_keyval)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "type_keyval is NULL");
    struct loom_keyval *kv = type_kv(*type_keyval);
    if (!kv)
        return bad_keyval(*type_keyval, fn);
    /* Attributes already set keep the keyval object until deleted. */
    loom_keyval_free(kv);
    *type_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_free_keyval);

int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    const char *fn = "MPI_Type_set_attr";
    struct loom_keyval *kv = NULL;
    int rc = attr_args(fn, datatype, type_keyval, &kv);
    if (rc)
        return rc;
    struct loom_mpi_type_attr *a = *find(datatype, kv);
    if (!a) {
        if (attr_add(datatype, kv, attribute_val))
            return loom_mpi_err(W, MPI_ERR_NO_MEM, fn, "out of memory");
        return MPI_SUCCESS;
    }
    if ((rc = call_delete(a)))
        return loom_mpi_err(W, loom_mpi_callback_class(rc), fn,
                            "the delete callback of the old value returned %d", rc);
    a->val = attribute_val;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_set_attr);

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    const char *fn = "MPI_Type_get_attr";
    struct loom_keyval *kv = NULL;
    int rc = attr_args(fn, datatype, type_keyval, &kv);
    if (rc)
        return rc;
    if (!attribute_val || !flag)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "%s is NULL", !flag ? "flag" : "attribute_val");
    struct loom_mpi_type_attr *a = *find(datatype, kv);
    if (a)
        *(void **)attribute_val = a->val;
    *flag = a != NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_get_attr);

int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    const char *fn = "MPI_Type_delete_attr";
    struct loom_keyval *kv = NULL;
    int rc = attr_args(fn, datatype, type_keyval, &kv);
    if (rc)
        return rc;
    struct loom_mpi_type_attr **pa = find(datatype, kv);
    if (!*pa)
        return loom_mpi_err(W, MPI_ERR_KEYVAL, fn, "no attribute is set for keyval 0x%x",
                            (unsigned)type_keyval);
    if ((rc = call_delete(*pa)))
        return loom_mpi_err(W, loom_mpi_callback_class(rc), fn, "the delete callback returned %d",
                            rc);
    attr_unlink(pa);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Type_delete_attr);

int loom_mpi_type_attrs_copy(MPI_Datatype old, MPI_Datatype new_type)
{
    struct loom_mpi_rank *m = loom_mpi_self();
    /* Oldest first, as they were set; the list is newest first. */
    int n = 0;
    for (struct loom_mpi_type_attr *a = m->type_attrs; a; a = a->next)
        n += a->type == old;
    if (!n)
        return MPI_SUCCESS;
    struct loom_mpi_type_attr **v = malloc((size_t)n * sizeof *v);
    if (!v)
        return MPI_ERR_NO_MEM;
    int i = n;
    for (struct loom_mpi_type_attr *a = m->type_attrs; a; a = a->next)
        if (a->type == old)
            v[--i] = a;
    int rc = MPI_SUCCESS;
    for (i = 0; i < n && rc == MPI_SUCCESS; i++) {
        struct loom_keyval *kv = v[i]->kv;
        MPI_Type_copy_attr_function *copy =
            (MPI_Type_copy_attr_function *)(void (*)(void))kv->copy_fn;
        void *out = NULL;
        int flag = 0;
        if (copy == MPI_TYPE_NULL_COPY_FN)
            continue;
        if (copy == MPI_TYPE_DUP_FN) {
            out = v[i]->val;
            flag = 1;
        } else {
            rc = copy(old, v[i]->keyval, kv->extra_state, v[i]->val, &out, &flag);
        }
        if (rc == MPI_SUCCESS && flag)
            rc = attr_add(new_type, kv, out);
    }
    free(v);
    return rc;
}

int loom_mpi_type_attrs_delete(MPI_Datatype t)
{
    struct loom_mpi_rank *m = loom_mpi_self();
    if (!m)
        return MPI_SUCCESS;
    for (struct loom_mpi_type_attr **pa = &m->type_attrs; *pa;) {
        if ((*pa)->type != t) {
            pa = &(*pa)->next;
            continue;
        }
        int rc = call_delete(*pa);
        if (rc)
            return rc;
        attr_unlink(pa);
    }
    return MPI_SUCCESS;
}
