/*
 * Windows (MPI-3.1 11.2, 11.2.6 attributes, 11.2.7 info, 8.3.2 error
 * handlers on windows): creation, free, shared queries, group, name, info,
 * attributes and error handlers. The window itself is src/rma.
 *
 * Attributes: user keyvals made by MPI_Win_create_keyval (comm/attr.c's
 * keyval objects, marked as window keyvals), a list per window, newest
 * first; delete callbacks run at MPI_Win_free newest first. The predefined
 * MPI_WIN_BASE (the base address itself), MPI_WIN_SIZE, MPI_WIN_DISP_UNIT,
 * MPI_WIN_CREATE_FLAVOR and MPI_WIN_MODEL (pointers to the values) read on
 * every window and cannot be set or deleted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm_impl.h"
#include "mpi/mpi_impl.h"
#include "rma/rma.h"

struct loom_win_attr {
    struct loom_win_attr *next;
    struct loom_keyval *kv;
    int keyval;
    void *val;
};

/* The per-window values predefined attributes point at. */
struct win_attr_vals {
    MPI_Aint size;
    int disp_unit, flavor, model;
};

#define WIN_ARG(w, win, fn)                                                                        \
    struct loom_win *w;                                                                            \
    do {                                                                                           \
        int rc_ = loom_mpi_check_init(fn);                                                         \
        if (rc_)                                                                                   \
            return rc_;                                                                            \
        if (!(w = loom_win_lookup(win))) {                                                         \
            char buf_[96];                                                                         \
            return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_WIN, fn, "%s",                             \
                                loom_win_problem(win, buf_, sizeof buf_));                         \
        }                                                                                          \
    } while (0)

#define NULL_ARG(win, p, fn)                                                                       \
    do {                                                                                           \
        if (!(p))                                                                                  \
            return loom_mpi_win_err(win, MPI_ERR_ARG, fn, "%s is NULL", #p);                       \
    } while (0)

/* ---- info hints ---- */

static bool info_true(const struct loom_info *info, const char *key)
{
    int i = info ? loom_info_find(info, key) : -1;
    return i >= 0 && strcmp(info->vals[i], "true") == 0;
}

static void hints_from(const struct loom_info *info, struct loom_win_hints *h)
{
    h->no_locks = info_true(info, "no_locks");
    h->same_size = info_true(info, "same_size");
    h->same_disp_unit = info_true(info, "same_disp_unit");
    h->alloc_shared_noncontig = info_true(info, "alloc_shared_noncontig");
    int i = info ? loom_info_find(info, "accumulate_ordering") : -1;
    snprintf(h->accumulate_ordering, sizeof h->accumulate_ordering, "%s",
             i >= 0 ? info->vals[i] : "rar,raw,war,waw");
    i = info ? loom_info_find(info, "accumulate_ops") : -1;
    snprintf(h->accumulate_ops, sizeof h->accumulate_ops, "%s",
             i >= 0 && strcmp(info->vals[i], "same_op") == 0 ? "same_op" : "same_op_no_op");
}

/* The info argument of a creation call, or an error raised on comm. */
static int info_arg(MPI_Comm comm, MPI_Info info, const char *fn, struct loom_info **info_p)
{
    *info_p = NULL;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    if (!(*info_p = loom_info_lookup(info)))
        return loom_mpi_err(comm, MPI_ERR_INFO, fn, "0x%x is not a valid info object",
                            (unsigned)info);
    return MPI_SUCCESS;
}

/* ---- creation ---- */

static int create(const char *fn, int flavor, void *base, MPI_Aint size, int disp_unit,
                  MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    struct loom_comm *c = NULL;
    int rc = loom_mpi_comm_enter(fn, comm, &c);
    if (rc)
        return rc;
    LOOM_MPI_INTRA_ONLY(c, comm, fn);
    if (!win)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "win is NULL");
    if (flavor != MPI_WIN_FLAVOR_CREATE && flavor != MPI_WIN_FLAVOR_DYNAMIC && !baseptr)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "baseptr is NULL");
    if (size < 0)
        return loom_mpi_err(comm, MPI_ERR_SIZE, fn, "size %ld is negative", (long)size);
    if (disp_unit <= 0)
        return loom_mpi_err(comm, MPI_ERR_DISP, fn, "disp_unit %d is not positive", disp_unit);
    if (flavor == MPI_WIN_FLAVOR_CREATE && size > 0 && !base)
        return loom_mpi_err(comm, MPI_ERR_BASE, fn, "base is NULL for %ld bytes", (long)size);
    struct loom_info *inf;
    if ((rc = info_arg(comm, info, fn, &inf)))
        return rc;
    struct loom_win_hints h;
    hints_from(inf, &h);
    struct loom_win *w;
    if (loom_win_create(c, flavor, base, size, disp_unit, &h, baseptr, &w) != LOOM_OK)
        return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory for a window of %ld bytes",
                            (long)size);
    *win = w->handle;
    return MPI_SUCCESS;
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    return create("MPI_Win_create", MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, NULL,
                  win);
}
LOOM_MPI_ALIAS(Win_create);

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win)
{
    return create("MPI_Win_allocate", MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm,
                  baseptr, win);
}
LOOM_MPI_ALIAS(Win_allocate);

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    return create("MPI_Win_allocate_shared", MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info,
                  comm, baseptr, win);
}
LOOM_MPI_ALIAS(Win_allocate_shared);

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return create("MPI_Win_create_dynamic", MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, comm, NULL,
                  win);
}
LOOM_MPI_ALIAS(Win_create_dynamic);

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    WIN_ARG(w, win, "MPI_Win_attach");
    if (w->sh->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return loom_mpi_win_err(win, MPI_ERR_RMA_FLAVOR, "MPI_Win_attach",
                                "the window was not made by MPI_Win_create_dynamic");
    if (size < 0)
        return loom_mpi_win_err(win, MPI_ERR_SIZE, "MPI_Win_attach", "size %ld is negative",
                                (long)size);
    if (size > 0 && !base)
        return loom_mpi_win_err(win, MPI_ERR_BASE, "MPI_Win_attach", "base is NULL");
    int rc = loom_win_attach(w, base, (size_t)size);
    if (rc == LOOM_ERR_INVALID)
        return loom_mpi_win_err(win, MPI_ERR_RMA_ATTACH, "MPI_Win_attach",
                                "[%p, +%ld) overlaps a region already attached", base, (long)size);
    if (rc)
        return loom_mpi_win_err(win, MPI_ERR_NO_MEM, "MPI_Win_attach", "out of memory");
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_attach);

int PMPI_Win_detach(MPI_Win win, const void *base)
{
    WIN_ARG(w, win, "MPI_Win_detach");
    if (w->sh->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return loom_mpi_win_err(win, MPI_ERR_RMA_FLAVOR, "MPI_Win_detach",
                                "the window was not made by MPI_Win_create_dynamic");
    if (loom_win_detach(w, base) != LOOM_OK)
        return loom_mpi_win_err(win, MPI_ERR_RMA_ATTACH, "MPI_Win_detach",
                                "%p does not start a region attached by this rank", base);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_detach);

static int call_delete(struct loom_win *w, struct loom_win_attr *a)
{
    MPI_Win_delete_attr_function *fn =
        (MPI_Win_delete_attr_function *)(void (*)(void))a->kv->delete_fn;
    return fn ? fn(w->handle, a->keyval, a->val, a->kv->extra_state) : MPI_SUCCESS;
}

int PMPI_Win_free(MPI_Win *win)
{
    if (!win)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Win_free", "win is NULL");
    WIN_ARG(w, *win, "MPI_Win_free");
    if (w->lock_all || w->nlocks || w->started || w->posted)
        return loom_mpi_win_err(*win, MPI_ERR_RMA_SYNC, "MPI_Win_free",
                                "an epoch is still open on this window (%s)",
                                w->lock_all  ? "MPI_Win_lock_all"
                                : w->nlocks  ? "MPI_Win_lock"
                                : w->started ? "MPI_Win_start"
                                             : "MPI_Win_post");
    /* Attributes go first, newest first, while the window is whole. */
    while (w->attrs) {
        struct loom_win_attr *a = w->attrs;
        int rc = call_delete(w, a);
        if (rc != MPI_SUCCESS)
            return loom_mpi_win_err(*win, loom_mpi_callback_class(rc), "MPI_Win_free",
                                    "the delete callback of keyval 0x%x returned %d",
                                    (unsigned)a->keyval, rc);
        w->attrs = a->next;
        loom_keyval_unref(a->kv);
        free(a);
    }
    free(w->priv_attr_vals);
    loom_errhandler_unref(w->errhandler);
    loom_win_free(w);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_free);

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    WIN_ARG(w, win, "MPI_Win_shared_query");
    NULL_ARG(win, size, "MPI_Win_shared_query");
    NULL_ARG(win, disp_unit, "MPI_Win_shared_query");
    NULL_ARG(win, baseptr, "MPI_Win_shared_query");
    struct loom_win_shared *sh = w->sh;
    if (rank == MPI_PROC_NULL) {
        /* The lowest rank with memory (MPI-3.1 11.2.3). */
        rank = 0;
        while (rank < sh->size - 1 && sh->m[rank].size == 0)
            rank++;
    } else if (rank < 0 || rank >= sh->size) {
        return loom_mpi_win_err(win, MPI_ERR_RANK, "MPI_Win_shared_query",
                                "rank %d is not in the window's group of %d", rank, sh->size);
    }
    /* Every window's memory is shared here (MPI-4.1 allows the query on any
     * flavor); a dynamic window has none at a rank. */
    *size = sh->m[rank].size;
    *disp_unit = sh->m[rank].disp_unit;
    *(void **)baseptr = sh->m[rank].base;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_shared_query);

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    WIN_ARG(w, win, "MPI_Win_get_group");
    NULL_ARG(win, group, "MPI_Win_get_group");
    struct loom_group *g = loom_group_new(w->sh->size);
    if (!g)
        return loom_mpi_win_err(win, MPI_ERR_NO_MEM, "MPI_Win_get_group", "out of memory");
    if (w->sh->size)
        memcpy(g->world, w->comm->sh->world_of, (size_t)w->sh->size * sizeof *g->world);
    *group = g->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_get_group);

int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
    WIN_ARG(w, win, "MPI_Win_set_name");
    NULL_ARG(win, win_name, "MPI_Win_set_name");
    snprintf(w->name, sizeof w->name, "%s", win_name);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_set_name);

int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    WIN_ARG(w, win, "MPI_Win_get_name");
    NULL_ARG(win, win_name, "MPI_Win_get_name");
    NULL_ARG(win, resultlen, "MPI_Win_get_name");
    strcpy(win_name, w->name);
    *resultlen = (int)strlen(win_name);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_get_name);

int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    WIN_ARG(w, win, "MPI_Win_set_info");
    struct loom_info *inf = NULL;
    if (info != MPI_INFO_NULL && !(inf = loom_info_lookup(info)))
        return loom_mpi_win_err(win, MPI_ERR_INFO, "MPI_Win_set_info",
                                "0x%x is not a valid info object", (unsigned)info);
    /* Hints given at creation that change how memory was laid out stay. */
    bool noncontig = w->hints.alloc_shared_noncontig;
    hints_from(inf, &w->hints);
    w->hints.alloc_shared_noncontig = noncontig;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_set_info);

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    WIN_ARG(w, win, "MPI_Win_get_info");
    NULL_ARG(win, info_used, "MPI_Win_get_info");
    struct loom_info *inf = loom_info_new();
    const struct loom_win_hints *h = &w->hints;
    if (!inf || loom_info_set(inf, "no_locks", h->no_locks ? "true" : "false") ||
        loom_info_set(inf, "accumulate_ordering", h->accumulate_ordering) ||
        loom_info_set(inf, "accumulate_ops", h->accumulate_ops) ||
        loom_info_set(inf, "same_size", h->same_size ? "true" : "false") ||
        loom_info_set(inf, "same_disp_unit", h->same_disp_unit ? "true" : "false") ||
        (w->sh->flavor == MPI_WIN_FLAVOR_SHARED &&
         loom_info_set(inf, "alloc_shared_noncontig",
                       h->alloc_shared_noncontig ? "true" : "false"))) {
        if (inf)
            loom_info_free(inf);
        return loom_mpi_win_err(win, MPI_ERR_NO_MEM, "MPI_Win_get_info", "out of memory");
    }
    *info_used = inf->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_get_info);

/* ---- attributes ---- */

static bool win_keyval_predefined(int keyval)
{
    return keyval >= MPI_WIN_BASE && keyval <= MPI_WIN_MODEL;
}

/* The caller's window keyval behind keyval, or NULL. */
static struct loom_keyval *win_kv(int keyval)
{
    struct loom_keyval *kv = loom_keyval_lookup(keyval);
    return kv && kv->win ? kv : NULL;
}

static int bad_keyval(MPI_Win win, int keyval, const char *fn)
{
    if (keyval == MPI_KEYVAL_INVALID)
        return loom_mpi_win_err(win, MPI_ERR_KEYVAL, fn, "the keyval is MPI_KEYVAL_INVALID");
    if (win_keyval_predefined(keyval))
        return loom_mpi_win_err(win, MPI_ERR_KEYVAL, fn,
                                "keyval 0x%x is predefined and cannot be changed",
                                (unsigned)keyval);
    return loom_mpi_win_err(win, MPI_ERR_KEYVAL, fn, "0x%x is not a window keyval of this rank",
                            (unsigned)keyval);
}

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                           void *extra_state)
{
    int rc = loom_mpi_check_init("MPI_Win_create_keyval");
    if (rc)
        return rc;
    if (!win_keyval)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Win_create_keyval",
                            "win_keyval is NULL");
    if (loom_keyval_create((MPI_Comm_copy_attr_function *)(void (*)(void))win_copy_attr_fn,
                           (MPI_Comm_delete_attr_function *)(void (*)(void))win_delete_attr_fn,
                           extra_state, win_keyval) != LOOM_OK)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Win_create_keyval",
                            "out of memory");
    loom_keyval_lookup(*win_keyval)->win = true;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_create_keyval);

int PMPI_Win_free_keyval(int *win_keyval)
{
    int rc = loom_mpi_check_init("MPI_Win_free_keyval");
    if (rc)
        return rc;
    if (!win_keyval)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Win_free_keyval",
                            "win_keyval is NULL");
    struct loom_keyval *kv = win_kv(*win_keyval);
    if (!kv)
        return bad_keyval(MPI_WIN_NULL, *win_keyval, "MPI_Win_free_keyval");
    loom_keyval_free(kv);
    *win_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_free_keyval);

static struct loom_win_attr **attr_find(struct loom_win *w, const struct loom_keyval *kv)
{
    struct loom_win_attr **pa = &w->attrs;
    while (*pa && (*pa)->kv != kv)
        pa = &(*pa)->next;
    return pa;
}

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    WIN_ARG(w, win, "MPI_Win_set_attr");
    struct loom_keyval *kv = win_kv(win_keyval);
    if (!kv)
        return bad_keyval(win, win_keyval, "MPI_Win_set_attr");
    struct loom_win_attr *a = *attr_find(w, kv);
    if (a) {
        int rc = call_delete(w, a);
        if (rc != MPI_SUCCESS)
            return loom_mpi_win_err(win, loom_mpi_callback_class(rc), "MPI_Win_set_attr",
                                    "the delete callback of the old value returned %d", rc);
        a->val = attribute_val;
        return MPI_SUCCESS;
    }
    if (!(a = malloc(sizeof *a)))
        return loom_mpi_win_err(win, MPI_ERR_NO_MEM, "MPI_Win_set_attr", "out of memory");
    *a = (struct loom_win_attr){w->attrs, kv, win_keyval, attribute_val};
    w->attrs = a;
    loom_keyval_ref(kv);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_set_attr);

int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    WIN_ARG(w, win, "MPI_Win_get_attr");
    NULL_ARG(win, attribute_val, "MPI_Win_get_attr");
    NULL_ARG(win, flag, "MPI_Win_get_attr");
    if (win_keyval_predefined(win_keyval)) {
        struct win_attr_vals *v = w->priv_attr_vals;
        if (!v && !(v = w->priv_attr_vals = malloc(sizeof *v)))
            return loom_mpi_win_err(win, MPI_ERR_NO_MEM, "MPI_Win_get_attr", "out of memory");
        struct loom_win_member *m = &w->sh->m[w->rank];
        *v = (struct win_attr_vals){m->size, m->disp_unit, w->sh->flavor, MPI_WIN_UNIFIED};
        void *vals[] = {m->base, &v->size, &v->disp_unit, &v->flavor, &v->model};
        *(void **)attribute_val = vals[win_keyval - MPI_WIN_BASE];
        *flag = 1;
        return MPI_SUCCESS;
    }
    struct loom_keyval *kv = win_kv(win_keyval);
    if (!kv)
        return bad_keyval(win, win_keyval, "MPI_Win_get_attr");
    struct loom_win_attr *a = *attr_find(w, kv);
    if (a)
        *(void **)attribute_val = a->val;
    *flag = a != NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_get_attr);

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    WIN_ARG(w, win, "MPI_Win_delete_attr");
    struct loom_keyval *kv = win_kv(win_keyval);
    if (!kv)
        return bad_keyval(win, win_keyval, "MPI_Win_delete_attr");
    struct loom_win_attr **pa = attr_find(w, kv), *a = *pa;
    if (!a)
        return loom_mpi_win_err(win, MPI_ERR_KEYVAL, "MPI_Win_delete_attr",
                                "no attribute is set for keyval 0x%x", (unsigned)win_keyval);
    int rc = call_delete(w, a);
    if (rc != MPI_SUCCESS)
        return loom_mpi_win_err(win, loom_mpi_callback_class(rc), "MPI_Win_delete_attr",
                                "the delete callback returned %d", rc);
    *pa = a->next;
    loom_keyval_unref(a->kv);
    free(a);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_delete_attr);

/* ---- error handlers ---- */

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                               MPI_Errhandler *errhandler)
{
    int rc = loom_mpi_check_init("MPI_Win_create_errhandler");
    if (rc)
        return rc;
    if (!win_errhandler_fn || !errhandler)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Win_create_errhandler", "%s is NULL",
                            !win_errhandler_fn ? "the function" : "errhandler");
    if (loom_errhandler_create((MPI_Comm_errhandler_function *)(void (*)(void))win_errhandler_fn,
                               errhandler) != LOOM_OK)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Win_create_errhandler",
                            "out of memory");
    loom_errhandler_lookup(*errhandler)->win = true;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_create_errhandler);

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    WIN_ARG(w, win, "MPI_Win_set_errhandler");
    struct loom_errhandler *e = loom_errhandler_lookup(errhandler);
    if (!loom_errhandler_is_predefined(errhandler) && !e)
        return loom_mpi_win_err(win, MPI_ERR_ARG, "MPI_Win_set_errhandler",
                                "invalid error handler 0x%x", (unsigned)errhandler);
    if (e && !e->win)
        return loom_mpi_win_err(win, MPI_ERR_ARG, "MPI_Win_set_errhandler",
                                "error handler 0x%x was made for communicators, not windows",
                                (unsigned)errhandler);
    loom_errhandler_ref(errhandler);
    loom_errhandler_unref(w->errhandler);
    w->errhandler = errhandler;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_set_errhandler);

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    WIN_ARG(w, win, "MPI_Win_get_errhandler");
    NULL_ARG(win, errhandler, "MPI_Win_get_errhandler");
    loom_errhandler_ref(w->errhandler);
    *errhandler = w->errhandler;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_get_errhandler);

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    WIN_ARG(w, win, "MPI_Win_call_errhandler");
    int cls;
    if (PMPI_Error_class(errorcode, &cls) != MPI_SUCCESS)
        cls = MPI_ERR_UNKNOWN;
    if (w->errhandler == MPI_ERRORS_RETURN)
        return MPI_SUCCESS;
    struct loom_errhandler *e = loom_errhandler_lookup(w->errhandler);
    if (e) {
        int h = win, code = errorcode;
        ((MPI_Win_errhandler_function *)(void (*)(void))e->fn)(&h, &code);
        return MPI_SUCCESS;
    }
    return loom_mpi_win_err(win, cls, "MPI_Win_call_errhandler",
                            "error code %d raised by the program", errorcode);
}
LOOM_MPI_ALIAS(Win_call_errhandler);

MPI_Fint PMPI_Win_c2f(MPI_Win win)
{
    return (MPI_Fint)win;
}
LOOM_MPI_ALIAS(Win_c2f);

MPI_Win PMPI_Win_f2c(MPI_Fint win)
{
    return (MPI_Win)win;
}
LOOM_MPI_ALIAS(Win_f2c);
