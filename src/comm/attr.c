/*
 * Keyvals and communicator attributes (MPI-3.1 6.7).
 *
 * A keyval belongs to the rank that created it. It stays alive while its
 * handle or any attribute uses it (MPI_Comm_free_keyval frees the handle at
 * once; the object goes with the last attribute). Attributes are a list per
 * communicator, newest first: delete callbacks at MPI_Comm_free run newest
 * first, copy callbacks at MPI_Comm_dup oldest first, keeping the order.
 * The predefined attributes (MPI_TAG_UB...) are read from the rank's state.
 */
#include <stdlib.h>

#include "comm/comm_impl.h"
#include "runtime/job.h"
#include "util/handle.h"

struct loom_attr {
    struct loom_attr *next;
    struct loom_keyval *kv;
    int keyval; /* the handle the value was set with */
    void *val;
};

struct loom_keyval *loom_keyval_lookup(int keyval)
{
    struct loom_keyval *kv = loom_handle_get(LOOM_KIND_KEYVAL, keyval);
    struct loom_rank *r = loom_rank_self();
    return kv && r && kv->owner == r->rank ? kv : NULL;
}

int loom_keyval_create(MPI_Comm_copy_attr_function *copy_fn,
                       MPI_Comm_delete_attr_function *delete_fn, void *extra_state, int *keyval_p)
{
    struct loom_keyval *kv = calloc(1, sizeof *kv);
    if (!kv)
        return LOOM_ERR_NOMEM;
    kv->owner = loom_rank_self()->rank;
    kv->refs = 1;
    kv->copy_fn = copy_fn;
    kv->delete_fn = delete_fn;
    kv->extra_state = extra_state;
    kv->handle = loom_handle_alloc(LOOM_KIND_KEYVAL, kv);
    if (!kv->handle) {
        free(kv);
        return LOOM_ERR_NOMEM;
    }
    *keyval_p = kv->handle;
    return LOOM_OK;
}

static void keyval_unref(struct loom_keyval *kv)
{
    if (--kv->refs == 0)
        free(kv);
}

void loom_keyval_ref(struct loom_keyval *kv)
{
    kv->refs++;
}

void loom_keyval_unref(struct loom_keyval *kv)
{
    keyval_unref(kv);
}

void loom_keyval_free(struct loom_keyval *kv)
{
    loom_handle_free(LOOM_KIND_KEYVAL, kv->handle);
    keyval_unref(kv);
}

bool loom_keyval_is_predefined(int keyval)
{
    return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE;
}

static struct loom_attr **find(struct loom_comm *c, const struct loom_keyval *kv)
{
    struct loom_attr **pa = &loom_comm_priv(c)->attrs;
    while (*pa && (*pa)->kv != kv)
        pa = &(*pa)->next;
    return pa;
}

static int call_delete(struct loom_comm *c, struct loom_attr *a)
{
    if (!a->kv->delete_fn)
        return MPI_SUCCESS;
    return a->kv->delete_fn(c->handle, a->keyval, a->val, a->kv->extra_state);
}

static int attr_add(struct loom_comm *c, struct loom_keyval *kv, void *val)
{
    struct loom_attr *a = malloc(sizeof *a);
    if (!a)
        return MPI_ERR_NO_MEM;
    struct loom_comm_priv *p = loom_comm_priv(c);
    *a = (struct loom_attr){p->attrs, kv, kv->handle, val};
    p->attrs = a;
    kv->refs++;
    return MPI_SUCCESS;
}

int loom_attr_set(struct loom_comm *c, struct loom_keyval *kv, void *val)
{
    struct loom_attr *a = *find(c, kv);
    if (!a)
        return attr_add(c, kv, val);
    int rc = call_delete(c, a);
    if (rc != MPI_SUCCESS)
        return rc;
    a->val = val;
    return MPI_SUCCESS;
}

int loom_attr_get(struct loom_comm *c, int keyval, void **val_p, bool *found)
{
    if (loom_keyval_is_predefined(keyval)) {
        struct loom_comm_rank *cr = loom_comm_rank_self();
        int *vals[] = {&cr->tag_ub,        &cr->host,   &cr->io,          &cr->wtime_is_global,
                       &cr->universe_size, &cr->appnum, &cr->lastusedcode};
        *val_p = vals[keyval - MPI_TAG_UB];
        *found = true;
        return MPI_SUCCESS;
    }
    struct loom_keyval *kv = loom_keyval_lookup(keyval);
    struct loom_attr *a = kv ? *find(c, kv) : NULL;
    *found = a != NULL;
    if (a)
        *val_p = a->val;
    return MPI_SUCCESS;
}

int loom_attr_delete(struct loom_comm *c, struct loom_keyval *kv, bool *found)
{
    struct loom_attr **pa = find(c, kv), *a = *pa;
    *found = a != NULL;
    if (!a)
        return MPI_SUCCESS;
    int rc = call_delete(c, a);
    if (rc != MPI_SUCCESS)
        return rc;
    *pa = a->next;
    keyval_unref(a->kv);
    free(a);
    return MPI_SUCCESS;
}

int loom_attr_copy_all(struct loom_comm *oldc, struct loom_comm *newc)
{
    int n = 0;
    for (struct loom_attr *a = loom_comm_priv(oldc)->attrs; a; a = a->next)
        n++;
    if (!n)
        return MPI_SUCCESS;
    struct loom_attr **v = malloc((size_t)n * sizeof *v);
    if (!v)
        return MPI_ERR_NO_MEM;
    int i = n;
    for (struct loom_attr *a = loom_comm_priv(oldc)->attrs; a; a = a->next)
        v[--i] = a;
    int rc = MPI_SUCCESS;
    for (i = 0; i < n && rc == MPI_SUCCESS; i++) {
        struct loom_keyval *kv = v[i]->kv;
        void *out = NULL;
        int flag = 0;
        if (kv->copy_fn == MPI_COMM_NULL_COPY_FN)
            continue;
        if (kv->copy_fn == MPI_COMM_DUP_FN) {
            out = v[i]->val;
            flag = 1;
        } else {
            rc = kv->copy_fn(oldc->handle, v[i]->keyval, kv->extra_state, v[i]->val, &out, &flag);
        }
        if (rc == MPI_SUCCESS && flag)
            rc = attr_add(newc, kv, out);
    }
    free(v);
    return rc;
}

int loom_attr_delete_all(struct loom_comm *c, bool run_callbacks)
{
    struct loom_comm_priv *p = loom_comm_priv(c);
    while (p->attrs) {
        struct loom_attr *a = p->attrs;
        if (run_callbacks) {
            int rc = call_delete(c, a);
            if (rc != MPI_SUCCESS)
                return rc;
        }
        p->attrs = a->next;
        keyval_unref(a->kv);
        free(a);
    }
    return MPI_SUCCESS;
}
