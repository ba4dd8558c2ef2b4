/*
 * Error handler objects and user error classes and codes.
 *
 * MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN and MPI_ERRORS_ABORT are
 * predefined handles with no object. A user handler is a table entry with a
 * reference count: the user's handle holds one until MPI_Errhandler_free,
 * every communicator using it holds one, the last reference frees it.
 *
 * User error classes and codes are per rank (each rank is a process in MPI's
 * model): numbers from LOOM_FIRST_USER_CODE up, in the order the rank added
 * them; MPI_LASTUSEDCODE follows them.
 */
#include <stdlib.h>

#include "comm/comm_impl.h"
#include "util/handle.h"

bool loom_errhandler_is_predefined(MPI_Errhandler eh)
{
    return eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ABORT;
}

struct loom_errhandler *loom_errhandler_lookup(MPI_Errhandler eh)
{
    return loom_handle_get(LOOM_KIND_ERRHANDLER, eh);
}

int loom_errhandler_create(MPI_Comm_errhandler_function *fn, MPI_Errhandler *eh_p)
{
    struct loom_errhandler *e = calloc(1, sizeof *e);
    if (!e)
        return LOOM_ERR_NOMEM;
    e->fn = fn;
    atomic_init(&e->refs, 1);
    e->handle = loom_handle_alloc(LOOM_KIND_ERRHANDLER, e);
    if (!e->handle) {
        free(e);
        return LOOM_ERR_NOMEM;
    }
    *eh_p = e->handle;
    return LOOM_OK;
}

void loom_errhandler_ref(MPI_Errhandler eh)
{
    struct loom_errhandler *e = loom_errhandler_lookup(eh);
    if (e)
        atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
}

void loom_errhandler_unref(MPI_Errhandler eh)
{
    struct loom_errhandler *e = loom_errhandler_lookup(eh);
    /* acq_rel: the last reference sees every use before it frees. */
    if (e && atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1) {
        loom_handle_free(LOOM_KIND_ERRHANDLER, e->handle);
        free(e);
    }
}

struct loom_user_code *loom_user_code(int code)
{
    struct loom_comm_rank *cr = loom_comm_rank_self();
    if (!cr || code < LOOM_FIRST_USER_CODE || code - LOOM_FIRST_USER_CODE >= cr->ncodes)
        return NULL;
    struct loom_user_code *u = &cr->codes[code - LOOM_FIRST_USER_CODE];
    return u->errclass < 0 ? NULL : u; /* removed (MPI_Remove_error_class/code) */
}

int loom_user_code_add(int errclass)
{
    struct loom_comm_rank *cr = loom_comm_rank_self();
    if (cr->ncodes == cr->capcodes) {
        int cap = cr->capcodes ? 2 * cr->capcodes : 16;
        struct loom_user_code *codes = realloc(cr->codes, (size_t)cap * sizeof *codes);
        if (!codes)
            return LOOM_ERR_NOMEM;
        cr->codes = codes;
        cr->capcodes = cap;
    }
    int code = LOOM_FIRST_USER_CODE + cr->ncodes;
    cr->codes[cr->ncodes++] = (struct loom_user_code){errclass < 0 ? code : errclass, NULL};
    cr->lastusedcode = code;
    return code;
}
