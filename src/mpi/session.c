/*
 * Sessions (MPI-4.1 11.3): MPI_Session_init/finalize, the process sets
 * "mpi://WORLD" and "mpi://SELF", groups from them, communicators from
 * groups (MPI_Comm_create_from_group), session error handlers and info.
 *
 * A session brings the rank's MPI state up as MPI_Init does
 * (loom_mpi_instance_up), without the world model: MPI_Initialized stays
 * false. The state is shared: the world model and any number of sessions
 * may be open together, MPI_Finalize leaves open sessions working, and the
 * rank's MPI state stops when the last of them ends (nothing is torn down
 * then, so a later MPI_Session_init starts it again; after MPI_Finalize and
 * the last session, MPI cannot be started again).
 *
 * A session handle belongs to the rank that made it. Errors in a session
 * call go to the session's error handler; errors before one exists (bad
 * arguments to MPI_Session_init) to the errhandler argument.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "comm/comm_impl.h"
#include "mpi/mpi_impl.h"
#include "util/handle.h"

struct loom_session {
    int handle;
    int owner;
    MPI_Errhandler errhandler;
    struct loom_info *info; /* the hints given at init, or NULL */
};

static const char *const psets[] = {"mpi://WORLD", "mpi://SELF"};
enum { PSET_WORLD, PSET_SELF, NPSETS };

static struct loom_session *session_lookup(MPI_Session h)
{
    struct loom_session *s = loom_handle_get(LOOM_KIND_SESSION, h);
    struct loom_rank *r = loom_rank_self();
    return s && r && s->owner == r->rank ? s : NULL;
}

/* The session behind h, or the raised error (on MPI_COMM_SELF's handler
 * when MPI is up, else fatal: there is no object to raise it on). */
static int session_arg(const char *fn, MPI_Session h, struct loom_session **s_p)
{
    struct loom_rank *r = loom_rank_self();
    if (r && (*s_p = session_lookup(h)))
        return MPI_SUCCESS;
    MPI_Comm on = r && r->mpi_state == LOOM_MPI_INITIALIZED ? MPI_COMM_SELF : MPI_COMM_WORLD;
    return loom_mpi_err(on, MPI_ERR_SESSION, fn, "%s",
                        h == MPI_SESSION_NULL ? "the session is MPI_SESSION_NULL"
                                              : "not a valid session of this rank");
}

#define SESSION_ERR(s, cls, fn, ...)                                                               \
    loom_mpi_handler_err((s)->errhandler, (s)->handle, cls, fn, __VA_ARGS__)

static bool handler_usable(MPI_Errhandler eh)
{
    return loom_errhandler_is_predefined(eh) || loom_errhandler_lookup(eh) != NULL;
}

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    const char *fn = "MPI_Session_init";
    int rc0 = loom_mpi_rank_enter(fn);
    if (rc0)
        return rc0;
    MPI_Errhandler eh = handler_usable(errhandler) ? errhandler : MPI_ERRORS_ARE_FATAL;
    if (!handler_usable(errhandler))
        return loom_mpi_handler_err(eh, MPI_SESSION_NULL, MPI_ERR_ARG, fn,
                                    "invalid error handler 0x%x", (unsigned)errhandler);
    if (!session)
        return loom_mpi_handler_err(eh, MPI_SESSION_NULL, MPI_ERR_ARG, fn, "session is NULL");
    struct loom_info *in = NULL;
    if (info != MPI_INFO_NULL && !(in = loom_info_lookup(info)))
        return loom_mpi_handler_err(eh, MPI_SESSION_NULL, MPI_ERR_INFO, fn,
                                    "0x%x is not a valid info object", (unsigned)info);
    int rc = loom_mpi_instance_up(fn, MPI_THREAD_FUNNELED);
    if (rc)
        return rc;
    struct loom_rank *r = loom_rank_self();
    struct loom_session *s = calloc(1, sizeof *s);
    if (!s || (in && in->n && !(s->info = loom_info_dup(in))) ||
        !(s->handle = loom_handle_alloc(LOOM_KIND_SESSION, s))) {
        if (s && s->info)
            loom_info_free(s->info);
        free(s);
        return loom_mpi_handler_err(eh, MPI_SESSION_NULL, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    s->owner = r->rank;
    s->errhandler = eh;
    loom_errhandler_ref(eh);
    loom_mpi_self()->sessions++;
    *session = s->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Session_init);

int PMPI_Session_finalize(MPI_Session *session)
{
    const char *fn = "MPI_Session_finalize";
    if (!session)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "session is NULL");
    struct loom_session *s = NULL;
    int rc = session_arg(fn, *session, &s);
    if (rc)
        return rc;
    loom_handle_free(LOOM_KIND_SESSION, s->handle);
    loom_errhandler_unref(s->errhandler);
    if (s->info)
        loom_info_free(s->info);
    free(s);
    *session = MPI_SESSION_NULL;
    struct loom_rank *r = loom_rank_self();
    struct loom_mpi_rank *m = loom_mpi_self();
    if (--m->sessions == 0 && m->world != LOOM_WORLD_UP)
        /* Nothing left open: the rank is done with MPI (until a new session). */
        __atomic_store_n(&r->mpi_state, LOOM_MPI_FINALIZED, __ATOMIC_RELEASE);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Session_finalize);

/* An info argument of the pset calls: MPI_INFO_NULL or a valid info. */
static int info_arg(struct loom_session *s, const char *fn, MPI_Info info)
{
    if (info != MPI_INFO_NULL && !loom_info_lookup(info))
        return SESSION_ERR(s, MPI_ERR_INFO, fn, "0x%x is not a valid info object", (unsigned)info);
    return MPI_SUCCESS;
}

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    const char *fn = "MPI_Session_get_num_psets";
    struct loom_session *s = NULL;
    int rc = session_arg(fn, session, &s);
    if (rc || (rc = info_arg(s, fn, info)))
        return rc;
    if (!npset_names)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "npset_names is NULL");
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Session_get_num_psets);

int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                              char *pset_name)
{
    const char *fn = "MPI_Session_get_nth_pset";
    struct loom_session *s = NULL;
    int rc = session_arg(fn, session, &s);
    if (rc || (rc = info_arg(s, fn, info)))
        return rc;
    if (n < 0 || n >= NPSETS)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "n = %d is not in [0, %d)", n, NPSETS);
    if (!pset_len || *pset_len < 0 || (*pset_len > 0 && !pset_name))
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "pset_len or pset_name is NULL or negative");
    size_t len = strlen(psets[n]);
    /* *pset_len 0: only the length (with the terminator) comes back. */
    if (*pset_len > 0) {
        size_t m = len < (size_t)*pset_len - 1 ? len : (size_t)*pset_len - 1;
        memcpy(pset_name, psets[n], m);
        pset_name[m] = '\0';
    }
    *pset_len = (int)len + 1;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Session_get_nth_pset);

/* Which process set a name is, or the raised MPI_ERR_ARG. */
static int pset_arg(struct loom_session *s, const char *fn, const char *name, int *which)
{
    if (!name)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "pset_name is NULL");
    for (int i = 0; i < NPSETS; i++)
        if (strcmp(name, psets[i]) == 0) {
            *which = i;
            return MPI_SUCCESS;
        }
    return SESSION_ERR(s, MPI_ERR_ARG, fn,
                       "\"%s\" is not a process set (\"mpi://WORLD\" or \"mpi://SELF\")", name);
}

static int pset_size(int which)
{
    return which == PSET_WORLD ? loom_job.nranks : 1;
}

int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    const char *fn = "MPI_Session_get_pset_info";
    struct loom_session *s = NULL;
    int rc = session_arg(fn, session, &s), which = 0;
    if (rc || (rc = pset_arg(s, fn, pset_name, &which)))
        return rc;
    if (!info)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "info is NULL");
    struct loom_info *in = loom_info_new();
    char size[16];
    snprintf(size, sizeof size, "%d", pset_size(which));
    if (!in || loom_info_set(in, "mpi_size", size) != LOOM_OK) {
        if (in)
            loom_info_free(in);
        return SESSION_ERR(s, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *info = in->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Session_get_pset_info);

int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    const char *fn = "MPI_Group_from_session_pset";
    struct loom_session *s = NULL;
    int rc = session_arg(fn, session, &s), which = 0;
    if (rc || (rc = pset_arg(s, fn, pset_name, &which)))
        return rc;
    if (!newgroup)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "newgroup is NULL");
    int n = pset_size(which);
    struct loom_group *g = loom_group_new(n);
    if (!g)
        return SESSION_ERR(s, MPI_ERR_NO_MEM, fn, "out of memory");
    if (which == PSET_WORLD)
        for (int i = 0; i < n; i++)
            g->world[i] = i;
    else
        g->world[0] = s->owner;
    *newgroup = g->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Group_from_session_pset);

int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    const char *fn = "MPI_Session_get_info";
    struct loom_session *s = NULL;
    int rc = session_arg(fn, session, &s);
    if (rc)
        return rc;
    if (!info_used)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "info_used is NULL");
    /* The hints given, with the thread level provided. */
    struct loom_info *in = s->info ? loom_info_dup(s->info) : loom_info_new();
    static const char *const names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                        "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    int level = loom_mpi_self()->thread_level;
    if (!in || loom_info_set(in, "thread_level", names[level]) != LOOM_OK) {
        if (in)
            loom_info_free(in);
        return SESSION_ERR(s, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *info_used = in->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Session_get_info);

/* FNV-1a: the meeting key of a string tag. */
static uint32_t tag_hash(const char *tag)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)tag; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    const char *fn = "MPI_Comm_create_from_group";
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    struct loom_group *g = loom_group_lookup(group);
    if (!g)
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_GROUP, fn, "0x%x is not a valid group",
                            (unsigned)group);
    if (!stringtag || strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_ARG, fn,
                            "stringtag is NULL or longer than MPI_MAX_STRINGTAG_LEN - 1");
    if (info != MPI_INFO_NULL && !loom_info_lookup(info))
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_INFO, fn, "0x%x is not a valid info object",
                            (unsigned)info);
    if (errhandler == MPI_ERRHANDLER_NULL || !handler_usable(errhandler))
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_ARG, fn, "invalid error handler 0x%x",
                            (unsigned)errhandler);
    if (!newcomm)
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_ARG, fn, "newcomm is NULL");
    if (g->size == 0) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if (loom_group_rank_of(g, loom_rank_self()->rank) == MPI_UNDEFINED)
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_GROUP, fn,
                            "the calling rank is not in the group");
    struct loom_comm *newc = NULL;
    loom_errhandler_ref(errhandler);
    rc = loom_comm_create_from_group(g, tag_hash(stringtag), errhandler, &newc);
    if (rc != LOOM_OK) {
        loom_errhandler_unref(errhandler);
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    struct loom_info *in = info != MPI_INFO_NULL ? loom_info_lookup(info) : NULL;
    if (in && in->n && !(loom_comm_priv(newc)->info = loom_info_dup(in))) {
        (void)loom_comm_free(newc, true);
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    *newcomm = newc->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Comm_create_from_group);

/* ---- session error handlers ---- */

int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                   MPI_Errhandler *errhandler)
{
    const char *fn = "MPI_Session_create_errhandler";
    if (!session_errhandler_fn || !errhandler)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "%s is NULL",
                            !errhandler ? "errhandler" : "the function");
    /* Called as (int *handle, int *code, ...), like a communicator's. */
    if (loom_errhandler_create(
            (MPI_Comm_errhandler_function *)(void (*)(void))session_errhandler_fn, errhandler) !=
        LOOM_OK)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory");
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Session_create_errhandler);

int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    const char *fn = "MPI_Session_set_errhandler";
    struct loom_session *s = NULL;
    int rc = session_arg(fn, session, &s);
    if (rc)
        return rc;
    if (errhandler == MPI_ERRHANDLER_NULL || !handler_usable(errhandler))
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "invalid error handler 0x%x", (unsigned)errhandler);
    loom_errhandler_ref(errhandler);
    loom_errhandler_unref(s->errhandler);
    s->errhandler = errhandler;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Session_set_errhandler);

int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    const char *fn = "MPI_Session_get_errhandler";
    struct loom_session *s = NULL;
    int rc = session_arg(fn, session, &s);
    if (rc)
        return rc;
    if (!errhandler)
        return SESSION_ERR(s, MPI_ERR_ARG, fn, "errhandler is NULL");
    /* A new reference, freed with MPI_Errhandler_free. */
    loom_errhandler_ref(s->errhandler);
    *errhandler = s->errhandler;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Session_get_errhandler);

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    const char *fn = "MPI_Session_call_errhandler";
    struct loom_session *s = NULL;
    int rc = session_arg(fn, session, &s);
    if (rc)
        return rc;
    SESSION_ERR(s, errorcode, fn, "called with error code %d", errorcode);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Session_call_errhandler);

/* ---- Fortran handles: a session handle is its own MPI_Fint ---- */

MPI_Fint PMPI_Session_c2f(MPI_Session session)
{
    return (MPI_Fint)session;
}
LOOM_MPI_ALIAS(Session_c2f);

MPI_Session PMPI_Session_f2c(MPI_Fint session)
{
    return (MPI_Session)session;
}
LOOM_MPI_ALIAS(Session_f2c);
