/*
 * Error classes, codes and strings; error handlers (predefined and user).
 *
 * Every bad argument is raised through the communicator's error handler with
 * a message that says what was wrong. MPI_ERRORS_ARE_FATAL (the default) and
 * MPI_ERRORS_ABORT print the message naming the rank and the function and end
 * the job with the error class as exit status; MPI_ERRORS_RETURN hands the
 * code back. Errors not tied to a valid communicator go to MPI_COMM_WORLD's
 * handler (MPI-3.1, 8.3). A user handler is called with the communicator and
 * the error class, and the class is handed back when it returns.
 *
 * User error classes and codes (MPI_Add_error_class...) are per rank, from
 * LOOM_FIRST_USER_CODE up (src/comm/errhandler.c).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm_impl.h"
#include "mpi/mpi_impl.h"
#include "rma/rma.h"
#include "util/log.h"

static const char *const class_names[] = {
    "MPI_SUCCESS",
    "MPI_ERR_BUFFER",
    "MPI_ERR_COUNT",
    "MPI_ERR_TYPE",
    "MPI_ERR_TAG",
    "MPI_ERR_COMM",
    "MPI_ERR_RANK",
    "MPI_ERR_REQUEST",
    "MPI_ERR_ROOT",
    "MPI_ERR_GROUP",
    "MPI_ERR_OP",
    "MPI_ERR_TOPOLOGY",
    "MPI_ERR_DIMS",
    "MPI_ERR_ARG",
    "MPI_ERR_UNKNOWN",
    "MPI_ERR_TRUNCATE",
    "MPI_ERR_OTHER",
    "MPI_ERR_INTERN",
    "MPI_ERR_IN_STATUS",
    "MPI_ERR_PENDING",
    "MPI_ERR_ACCESS",
    "MPI_ERR_AMODE",
    "MPI_ERR_ASSERT",
    "MPI_ERR_BAD_FILE",
    "MPI_ERR_BASE",
    "MPI_ERR_CONVERSION",
    "MPI_ERR_DISP",
    "MPI_ERR_DUP_DATAREP",
    "MPI_ERR_FILE_EXISTS",
    "MPI_ERR_FILE_IN_USE",
    "MPI_ERR_FILE",
    "MPI_ERR_INFO_KEY",
    "MPI_ERR_INFO_NOKEY",
    "MPI_ERR_INFO_VALUE",
    "MPI_ERR_INFO",
    "MPI_ERR_IO",
    "MPI_ERR_KEYVAL",
    "MPI_ERR_LOCKTYPE",
    "MPI_ERR_NAME",
    "MPI_ERR_NO_MEM",
    "MPI_ERR_NOT_SAME",
    "MPI_ERR_NO_SPACE",
    "MPI_ERR_NO_SUCH_FILE",
    "MPI_ERR_PORT",
    "MPI_ERR_QUOTA",
    "MPI_ERR_READ_ONLY",
    "MPI_ERR_RMA_CONFLICT",
    "MPI_ERR_RMA_SYNC",
    "MPI_ERR_SERVICE",
    "MPI_ERR_SIZE",
    "MPI_ERR_SPAWN",
    "MPI_ERR_UNSUPPORTED_DATAREP",
    "MPI_ERR_UNSUPPORTED_OPERATION",
    "MPI_ERR_WIN",
    "MPI_ERR_RMA_RANGE",
    "MPI_ERR_RMA_ATTACH",
    "MPI_ERR_RMA_SHARED",
    "MPI_ERR_RMA_FLAVOR",
    "MPI_T_ERR_MEMORY",
    "MPI_ERR_SESSION",
};

static const char *const class_texts[] = {
    "no error",
    "invalid buffer pointer",
    "invalid count argument",
    "invalid datatype",
    "invalid tag",
    "invalid communicator",
    "invalid rank",
    "invalid request",
    "invalid root",
    "invalid group",
    "invalid operation",
    "invalid topology",
    "invalid dimension argument",
    "invalid argument",
    "unknown error",
    "message truncated on receive",
    "other error",
    "internal error",
    "error code is in status",
    "pending request",
    "permission denied",
    "invalid file access mode",
    "invalid assertion",
    "invalid file name",
    "invalid base",
    "unsupported data conversion",
    "invalid displacement",
    "duplicate data representation",
    "file exists",
    "file in use",
    "invalid file",
    "invalid info key",
    "info key not defined",
    "invalid info value",
    "invalid info object",
    "I/O error",
    "invalid keyval",
    "invalid lock type",
    "name not found",
    "out of memory",
    "collective argument not identical",
    "no space left",
    "no such file",
    "invalid port",
    "quota exceeded",
    "read-only file",
    "conflicting RMA accesses",
    "wrong RMA synchronization",
    "invalid service name",
    "invalid size",
    "spawn error",
    "unsupported data representation",
    "unsupported operation",
    "invalid window",
    "RMA address out of range",
    "RMA attach error",
    "RMA shared memory error",
    "RMA flavor error",
    "MPI_T memory allocation failed",
    "invalid session",
};

/* The tools interface's classes (MPI_T_ERR_NOT_INITIALIZED...), numbered
 * apart from the others (mpi.h). */
static const char *const mpit_class_names[][2] = {
    {"MPI_T_ERR_NOT_INITIALIZED", "the tools interface is not initialized"},
    {"MPI_T_ERR_CANNOT_INIT", "the tools interface cannot be initialized"},
    {"MPI_T_ERR_INVALID_INDEX", "invalid variable or category index"},
    {"MPI_T_ERR_INVALID_ITEM", "invalid item index of an enumeration"},
    {"MPI_T_ERR_INVALID_HANDLE", "invalid tools interface handle"},
    {"MPI_T_ERR_OUT_OF_HANDLES", "no more tools interface handles"},
    {"MPI_T_ERR_OUT_OF_SESSIONS", "no more performance variable sessions"},
    {"MPI_T_ERR_INVALID_SESSION", "invalid performance variable session"},
    {"MPI_T_ERR_CVAR_SET_NOT_NOW", "the control variable cannot be set now"},
    {"MPI_T_ERR_CVAR_SET_NEVER", "the control variable can never be set"},
    {"MPI_T_ERR_PVAR_NO_STARTSTOP", "the performance variable cannot be started or stopped"},
    {"MPI_T_ERR_PVAR_NO_WRITE", "the performance variable cannot be written or reset"},
    {"MPI_T_ERR_PVAR_NO_ATOMIC", "the performance variable cannot be read and reset atomically"},
    {"MPI_T_ERR_INVALID_NAME", "no variable or category of that name"},
    {"MPI_T_ERR_INVALID", "invalid use of the tools interface or bad parameter value"},
    {"MPI_T_ERR_NOT_SUPPORTED", "not supported by the tools interface"},
    {"MPI_T_ERR_NOT_ACCESSIBLE", "the tools interface is not accessible"},
};
_Static_assert(MPI_T_ERR_NOT_INITIALIZED > MPI_T_ERR_MEMORY &&
                   MPI_T_ERR_NOT_ACCESSIBLE == MPI_T_ERR_NOT_INITIALIZED + 16 &&
                   MPI_T_ERR_NOT_ACCESSIBLE <= MPI_ERR_LASTCODE,
               "the tools interface's classes: one run of 17 below MPI_ERR_LASTCODE");

/* The name and text of a tools interface class, or NULL. */
static const char *const *mpit_class(int code)
{
    if (code >= MPI_T_ERR_NOT_INITIALIZED && code <= MPI_T_ERR_NOT_ACCESSIBLE)
        return mpit_class_names[code - MPI_T_ERR_NOT_INITIALIZED];
    return NULL;
}

const char *loom_mpi_class_name(int errclass)
{
    if (errclass >= 0 && (size_t)errclass < LOOM_ARRAY_SIZE(class_names))
        return class_names[errclass];
    if (mpit_class(errclass))
        return mpit_class(errclass)[0];
    return errclass > MPI_ERR_LASTCODE ? "a user-defined error class" : "unknown error class";
}

/* Raises errclass through handler eh of the object `handle` (a
 * communicator, or a window when win). */
static int raise_on(MPI_Errhandler eh, bool win, int handle, int errclass, const char *fn,
                    const char *fmt, va_list ap)
{
    if (eh == MPI_ERRORS_RETURN)
        return errclass;
    struct loom_errhandler *e = loom_errhandler_lookup(eh);
    if (e) {
        int h = handle, code = errclass;
        if (win)
            ((MPI_Win_errhandler_function *)(void (*)(void))e->fn)(&h, &code);
        else
            e->fn(&h, &code);
        return errclass;
    }
    char what[512];
    vsnprintf(what, sizeof what, fmt, ap);
    struct loom_rank *r = loom_rank_self();
    loom_log_error("rank %d: %s: %s (%s); ending the job", r ? r->rank : 0, fn, what,
                   loom_mpi_class_name(errclass));
    /* The class is the exit status; a user class (above MPI_ERR_LASTCODE)
     * whose low byte is 0 would read as success. */
    loom_job_abort(errclass & 0xff ? errclass & 0xff : 1);
}

int loom_mpi_err(MPI_Comm comm, int errclass, const char *fn, const char *fmt, ...)
{
    MPI_Errhandler eh = loom_comm_errhandler_for(comm);
    MPI_Comm h = eh != MPI_ERRORS_RETURN && loom_comm_lookup(comm) ? comm : MPI_COMM_WORLD;
    va_list ap;
    va_start(ap, fmt);
    int rc = raise_on(eh, false, h, errclass, fn, fmt, ap);
    va_end(ap);
    return rc;
}

int loom_mpi_handler_err(MPI_Errhandler eh, int handle, int errclass, const char *fn,
                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = raise_on(eh, false, handle, errclass, fn, fmt, ap);
    va_end(ap);
    return rc;
}

int loom_mpi_win_err(MPI_Win win, int errclass, const char *fn, const char *fmt, ...)
{
    struct loom_win *w = loom_win_lookup(win);
    va_list ap;
    va_start(ap, fmt);
    int rc = w ? raise_on(w->errhandler, true, win, errclass, fn, fmt, ap)
               : raise_on(loom_comm_errhandler_for(MPI_COMM_WORLD), false, MPI_COMM_WORLD, errclass,
                          fn, fmt, ap);
    va_end(ap);
    return rc;
}

int loom_mpi_check_init(const char *fn)
{
    struct loom_rank *r = loom_rank_self();
    if (!r || r->mpi_state == LOOM_MPI_NONE)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_OTHER, fn, "called before MPI_Init");
    if (r->mpi_state == LOOM_MPI_FINALIZED)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_OTHER, fn, "called after MPI_Finalize");
    return MPI_SUCCESS;
}

/* The class of a valid code, or -1. */
static int class_of(int code)
{
    if ((code >= 0 && (size_t)code < LOOM_ARRAY_SIZE(class_names)) || mpit_class(code))
        return code;
    struct loom_user_code *u = loom_user_code(code);
    return u ? u->errclass : -1;
}

int PMPI_Error_class(int errorcode, int *errorclass)
{
    if (!errorclass)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_class", "errorclass is NULL");
    int c = class_of(errorcode);
    if (c < 0)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_class",
                            "%d is not a valid error code", errorcode);
    *errorclass = c;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Error_class);

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (!string || !resultlen)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_string",
                            "string or resultlen is NULL");
    int n;
    struct loom_user_code *u = loom_user_code(errorcode);
    if (u) {
        n = snprintf(string, MPI_MAX_ERROR_STRING, "%s", u->string ? u->string : "");
    } else if (errorcode >= 0 && (size_t)errorcode < LOOM_ARRAY_SIZE(class_names)) {
        n = snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", class_names[errorcode],
                     class_texts[errorcode]);
    } else if (mpit_class(errorcode)) {
        n = snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", mpit_class(errorcode)[0],
                     mpit_class(errorcode)[1]);
    } else {
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_string",
                            "%d is not a valid error code", errorcode);
    }
    *resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Error_string);

int PMPI_Add_error_class(int *errorclass)
{
    int rc = loom_mpi_check_init("MPI_Add_error_class");
    if (rc)
        return rc;
    if (!errorclass)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_class",
                            "errorclass is NULL");
    int c = loom_user_code_add(-1);
    if (c < 0)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Add_error_class", "out of memory");
    *errorclass = c;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Add_error_class);

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    int rc = loom_mpi_check_init("MPI_Add_error_code");
    if (rc)
        return rc;
    if (!errorcode)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_code", "errorcode is NULL");
    int c = class_of(errorclass);
    if (c < 0 || c != errorclass)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_code",
                            "%d is not an error class", errorclass);
    int code = loom_user_code_add(errorclass);
    if (code < 0)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Add_error_code", "out of memory");
    *errorcode = code;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Add_error_code);

int PMPI_Add_error_string(int errorcode, const char *string)
{
    int rc = loom_mpi_check_init("MPI_Add_error_string");
    if (rc)
        return rc;
    if (!string)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_string", "string is NULL");
    struct loom_user_code *u = loom_user_code(errorcode);
    if (!u)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_string",
                            "%d is not a user-defined error code or class", errorcode);
    if (strlen(string) >= MPI_MAX_ERROR_STRING)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_string",
                            "the string is %zu characters long (at most %d)", strlen(string),
                            MPI_MAX_ERROR_STRING - 1);
    char *s = strdup(string);
    if (!s)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Add_error_string",
                            "out of memory");
    free(u->string);
    u->string = s;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Add_error_string);

/* ---- removing user classes, codes and strings (MPI-4.1 9.5) ---- */

/* A user-defined class (is_class) or code of the caller, or the raised error. */
static int user_code_arg(const char *fn, int code, bool is_class, struct loom_user_code **u_p)
{
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    struct loom_user_code *u = loom_user_code(code);
    if (!u || (is_class && u->errclass != code) || (!is_class && u->errclass == code)) {
        bool predefined = code >= 0 && (size_t)code < LOOM_ARRAY_SIZE(class_names);
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "%d is not a user-defined error %s%s",
                            code, is_class ? "class" : "code",
                            predefined ? " (predefined classes cannot be removed)" : "");
    }
    *u_p = u;
    return MPI_SUCCESS;
}

int PMPI_Remove_error_class(int errorclass)
{
    const char *fn = "MPI_Remove_error_class";
    struct loom_user_code *u = NULL;
    int rc = user_code_arg(fn, errorclass, true, &u);
    if (rc)
        return rc;
    struct loom_comm_rank *cr = loom_comm_rank_self();
    for (int i = 0; i < cr->ncodes; i++)
        if (cr->codes[i].errclass == errorclass && LOOM_FIRST_USER_CODE + i != errorclass)
            return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                                "error code %d still belongs to class %d (remove it first)",
                                LOOM_FIRST_USER_CODE + i, errorclass);
    free(u->string);
    u->string = NULL;
    u->errclass = -1;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Remove_error_class);

int PMPI_Remove_error_code(int errorcode)
{
    const char *fn = "MPI_Remove_error_code";
    struct loom_user_code *u = NULL;
    int rc = user_code_arg(fn, errorcode, false, &u);
    if (rc)
        return rc;
    free(u->string);
    u->string = NULL;
    u->errclass = -1;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Remove_error_code);

int PMPI_Remove_error_string(int errorcode)
{
    const char *fn = "MPI_Remove_error_string";
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    struct loom_user_code *u = loom_user_code(errorcode);
    if (!u)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn,
                            "%d is not a user-defined error code or class", errorcode);
    if (!u->string)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "error code %d has no string",
                            errorcode);
    free(u->string);
    u->string = NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Remove_error_string);

/* True when eh is a handler the caller may install. */
static bool handler_valid(MPI_Errhandler eh)
{
    return loom_errhandler_is_predefined(eh) || loom_errhandler_lookup(eh) != NULL;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    int rc = loom_mpi_check_init("MPI_Comm_create_errhandler");
    if (rc)
        return rc;
    if (!fn || !errhandler)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_create_errhandler", "%s is NULL",
                            !fn ? "the function" : "errhandler");
    if (loom_errhandler_create(fn, errhandler) != LOOM_OK)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Comm_create_errhandler",
                            "out of memory");
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_create_errhandler);

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    int rc = loom_mpi_check_init("MPI_Comm_set_errhandler");
    if (rc)
        return rc;
    struct loom_comm *c = loom_comm_lookup(comm);
    if (!c)
        return loom_mpi_bad_comm(comm, "MPI_Comm_set_errhandler");
    if (errhandler == MPI_ERRHANDLER_NULL)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler",
                            "the error handler is MPI_ERRHANDLER_NULL");
    if (!handler_valid(errhandler))
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler",
                            "invalid error handler 0x%x", (unsigned)errhandler);
    loom_errhandler_ref(errhandler);
    loom_errhandler_unref(c->errhandler);
    c->errhandler = errhandler;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_set_errhandler);

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    int rc = loom_mpi_check_init("MPI_Comm_get_errhandler");
    if (rc)
        return rc;
    struct loom_comm *c = loom_comm_lookup(comm);
    if (!c)
        return loom_mpi_bad_comm(comm, "MPI_Comm_get_errhandler");
    if (!errhandler)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler", "errhandler is NULL");
    /* The caller gets a new reference, to be freed with MPI_Errhandler_free. */
    loom_errhandler_ref(c->errhandler);
    *errhandler = c->errhandler;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_get_errhandler);

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    int rc = loom_mpi_check_init("MPI_Comm_call_errhandler");
    if (rc)
        return rc;
    struct loom_comm *c = loom_comm_lookup(comm);
    if (!c)
        return loom_mpi_bad_comm(comm, "MPI_Comm_call_errhandler");
    if (c->errhandler == MPI_ERRORS_RETURN)
        return MPI_SUCCESS;
    struct loom_errhandler *e = loom_errhandler_lookup(c->errhandler);
    if (e) {
        MPI_Comm h = comm;
        int code = errorcode;
        e->fn(&h, &code);
        return MPI_SUCCESS;
    }
    int cls = class_of(errorcode);
    return loom_mpi_err(comm, cls < 0 ? MPI_ERR_UNKNOWN : cls, "MPI_Comm_call_errhandler",
                        "called with error code %d", errorcode);
}
LOOM_MPI_ALIAS(Comm_call_errhandler);

int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    if (!errhandler)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free",
                            "errhandler is NULL");
    if (!handler_valid(*errhandler))
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free",
                            "invalid error handler 0x%x", (unsigned)*errhandler);
    loom_errhandler_unref(*errhandler);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Errhandler_free);
