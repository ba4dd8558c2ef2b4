/*
 * The MPI tool information interface (MPI-4.1 15.3): control variables,
 * performance variables and their sessions and handles, categories.
 *
 * Every variable comes from one list, built once per process from the
 * layers' own lists (docs/mpi_t.md names each one):
 *  - control variables: every LOOM_ environment variable (util/options.def,
 *    read once at start: MPI_T_SCOPE_CONSTANT, never written), then one per
 *    collective, loom_coll_<collective>, the algorithm forced for it (an
 *    enumeration of "auto" and its algorithms in coll/algorithms.def;
 *    MPI_T_SCOPE_ALL_EQ: writing it forces or frees the choice for every
 *    rank of the process, so every rank must write the same value before its
 *    next call of that collective, e.g. between two barriers);
 *  - performance variables: the rank's point-to-point counters
 *    (pt2pt/p2p.h: messages and bytes by protocol, queue lengths), its
 *    scheduler counters (runtime/ult.h: parks, wake-ups, yields) and its
 *    calls per collective algorithm (coll/coll.h). All belong to the calling
 *    rank (each rank is an MPI process), bound to no object.
 * Counters are non-continuous, writable and resettable: a handle keeps its
 * own view (the value at its last start or reset, and what it counted while
 * started), so reading the layers' plain per-rank counters is all the tools
 * interface costs them; as only their rank changes them, and the rank is
 * the caller, MPI_T_pvar_readreset is atomic. Queue lengths and their
 * maxima are continuous and read-only.
 *
 * The interface's state (its initialization count, handles, sessions) is
 * per rank; it works before MPI_Init and after MPI_Finalize. Of the events
 * interface, Loom has the calls that count and list sources and events:
 * there are none (the rest, which needs an event or a handle, is absent).
 * As the standard says (15.3.10), errors are returned as MPI_T_ERR_* codes
 * (or MPI_SUCCESS) and never go to an error handler.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "mpi/mpi_impl.h"
#include "pt2pt/p2p.h"
#include "runtime/job.h"
#include "runtime/ult.h"
#include "util/options.h"

_Static_assert(LOOM_VERB_USER_BASIC == MPI_T_VERBOSITY_USER_BASIC &&
                   LOOM_VERB_TUNER_DETAIL == MPI_T_VERBOSITY_TUNER_DETAIL &&
                   LOOM_VERB_MPIDEV_ALL == MPI_T_VERBOSITY_MPIDEV_ALL,
               "options.h's verbosity levels are MPI_T's");

/* ---- the variables -------------------------------------------------------- */

/* Categories: the root, then one per layer (enum loom_opt_category + 1). */
enum { CAT_LOOM, CAT_RUNTIME, CAT_PT2PT, CAT_COLL, NCAT };
static const char *const cat_names[NCAT][2] = {
    {"loom", "all of Loom's variables, by layer"},
    {"runtime", "the job, the ranks' scheduler (user-level threads) and program loading"},
    {"pt2pt", "point-to-point messages: protocols, thresholds, queues"},
    {"coll", "collectives: the algorithm choice, the cost model and tuning table, algorithm use"},
};

struct LMPI_T_enum_s {
    char name[96];
    int n;
    const char **names;
    int *values;
};

enum cvar_kind { CV_SIZE, CV_FLAG, CV_STRING, CV_COLL };
struct cvar {
    char name[64];
    const char *desc;
    enum cvar_kind kind;
    int arg; /* enum loom_opt or enum loom_coll_kind */
    int verbosity, category, scope;
    MPI_T_enum e;
};

/* The sources of a performance variable's value: a point-to-point counter
 * (by protocol), a queue length, a scheduler count or an algorithm's calls. */
enum pvar_src {
    PV_SENT,
    PV_SENT_BYTES,
    PV_PROTO,
    PV_PROTO_BYTES,
    PV_RECVD,
    PV_RECVD_BYTES,
    PV_POSTED,
    PV_POSTED_MAX,
    PV_UNEXP,
    PV_UNEXP_MAX,
    PV_PARKS,
    PV_WAKEUPS,
    PV_YIELDS,
    PV_COLL,
};
struct pvar {
    char name[128];
    char desc[256];
    enum pvar_src src;
    int arg;
    int cls, verbosity, category;
    bool continuous, readonly;
};

static struct {
    int ncvar, npvar, nenum;
    struct cvar *cvars;
    struct pvar *pvars;
    struct LMPI_T_enum_s *enums;
    /* Members of each category, in index order. */
    int ncat_cvars[NCAT], ncat_pvars[NCAT];
    int *cat_cvars[NCAT], *cat_pvars[NCAT];
    bool ok;
} V;
static pthread_once_t v_once = PTHREAD_ONCE_INIT;

static void lower_into(char *dst, size_t cap, const char *prefix, const char *src)
{
    size_t n = 0;
    for (const char *p = prefix; *p && n + 1 < cap; p++)
        dst[n++] = *p;
    for (const char *p = src; *p && n + 1 < cap; p++)
        dst[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    dst[n] = 0;
}

static const char *const proto_names[LOOM_P2P_NPROTO][2] = {
    [LOOM_P2P_BOX] = {"box", "in the box (a cache line per pair of ranks)"},
    [LOOM_P2P_INBOX] = {"inbox", "in one inbox slot of the receiver (tiny messages)"},
    [LOOM_P2P_CELL] = {"cell", "in an eager cell named by an inbox slot (small messages)"},
    [LOOM_P2P_DIRECT] = {"direct", "by the sender's one copy into a posted receive"},
    [LOOM_P2P_EAGER] = {"eager", "in an eager cell on the receiver's unexpected queue"},
    [LOOM_P2P_RENDEZVOUS] = {"rendezvous", "by rendezvous: the receiver copied from the sender's "
                                           "buffer (large and synchronous sends)"},
};

static struct pvar *pv_add(int *n, enum pvar_src src, int arg, int cls, int cat, int verb)
{
    struct pvar *p = &V.pvars[(*n)++];
    p->src = src;
    p->arg = arg;
    p->cls = cls;
    p->category = cat;
    p->verbosity = verb;
    p->continuous = cls != MPI_T_PVAR_CLASS_COUNTER;
    p->readonly = cls != MPI_T_PVAR_CLASS_COUNTER;
    return p;
}

#define PV_NAME(p, ...) snprintf((p)->name, sizeof(p)->name, __VA_ARGS__)
#define PV_DESC(p, ...) snprintf((p)->desc, sizeof(p)->desc, __VA_ARGS__)

static int build_pvars(void)
{
    int nalg = loom_coll_nalgorithms();
    int cap = 6 + 2 * LOOM_P2P_NPROTO + 4 + 3 + nalg;
    V.pvars = calloc((size_t)cap, sizeof *V.pvars);
    if (!V.pvars)
        return -1;
    int n = 0;
    const int C = MPI_T_PVAR_CLASS_COUNTER;
    struct pvar *p;
    p = pv_add(&n, PV_SENT, 0, C, CAT_PT2PT, MPI_T_VERBOSITY_USER_BASIC);
    PV_NAME(p, "loom_p2p_sent_messages");
    PV_DESC(p, "point-to-point messages this rank sent (all protocols)");
    p = pv_add(&n, PV_SENT_BYTES, 0, C, CAT_PT2PT, MPI_T_VERBOSITY_USER_BASIC);
    PV_NAME(p, "loom_p2p_sent_bytes");
    PV_DESC(p, "bytes of the point-to-point messages this rank sent");
    p = pv_add(&n, PV_RECVD, 0, C, CAT_PT2PT, MPI_T_VERBOSITY_USER_BASIC);
    PV_NAME(p, "loom_p2p_received_messages");
    PV_DESC(p, "point-to-point messages this rank received (counted when a receive's status is "
               "handed out: MPI_Recv, a completing wait or test)");
    p = pv_add(&n, PV_RECVD_BYTES, 0, C, CAT_PT2PT, MPI_T_VERBOSITY_USER_BASIC);
    PV_NAME(p, "loom_p2p_received_bytes");
    PV_DESC(p, "bytes of the point-to-point messages this rank received");
    for (int k = 0; k < LOOM_P2P_NPROTO; k++) {
        p = pv_add(&n, PV_PROTO, k, C, CAT_PT2PT, MPI_T_VERBOSITY_TUNER_BASIC);
        PV_NAME(p, "loom_p2p_%s_messages", proto_names[k][0]);
        PV_DESC(p, "messages this rank sent %s", proto_names[k][1]);
        p = pv_add(&n, PV_PROTO_BYTES, k, C, CAT_PT2PT, MPI_T_VERBOSITY_TUNER_BASIC);
        PV_NAME(p, "loom_p2p_%s_bytes", proto_names[k][0]);
        PV_DESC(p, "bytes of the messages this rank sent %s", proto_names[k][1]);
    }
    p = pv_add(&n, PV_POSTED, 0, MPI_T_PVAR_CLASS_LEVEL, CAT_PT2PT, MPI_T_VERBOSITY_TUNER_DETAIL);
    PV_NAME(p, "loom_p2p_posted_queue");
    PV_DESC(p, "receives of this rank posted and not matched yet (messages in its inbox and boxes "
               "are matched when it merges them)");
    p = pv_add(&n, PV_POSTED_MAX, 0, MPI_T_PVAR_CLASS_HIGHWATERMARK, CAT_PT2PT,
               MPI_T_VERBOSITY_TUNER_DETAIL);
    PV_NAME(p, "loom_p2p_posted_queue_max");
    PV_DESC(p, "the most receives of this rank ever posted and not matched at once");
    p = pv_add(&n, PV_UNEXP, 0, MPI_T_PVAR_CLASS_LEVEL, CAT_PT2PT, MPI_T_VERBOSITY_TUNER_DETAIL);
    PV_NAME(p, "loom_p2p_unexpected_queue");
    PV_DESC(p, "messages to this rank on its unexpected queue (arrived before their receive)");
    p = pv_add(&n, PV_UNEXP_MAX, 0, MPI_T_PVAR_CLASS_HIGHWATERMARK, CAT_PT2PT,
               MPI_T_VERBOSITY_TUNER_DETAIL);
    PV_NAME(p, "loom_p2p_unexpected_queue_max");
    PV_DESC(p, "the most messages ever on this rank's unexpected queue at once");
    p = pv_add(&n, PV_PARKS, 0, C, CAT_RUNTIME, MPI_T_VERBOSITY_TUNER_BASIC);
    PV_NAME(p, "loom_rank_parks");
    PV_DESC(p, "times this rank parked (gave its worker up until woken)");
    p = pv_add(&n, PV_WAKEUPS, 0, C, CAT_RUNTIME, MPI_T_VERBOSITY_TUNER_BASIC);
    PV_NAME(p, "loom_rank_wakeups");
    PV_DESC(p, "times this rank was woken: resumed after a park, or woken before it parked");
    p = pv_add(&n, PV_YIELDS, 0, C, CAT_RUNTIME, MPI_T_VERBOSITY_TUNER_DETAIL);
    PV_NAME(p, "loom_rank_yields");
    PV_DESC(p, "times this rank, waiting, let another ready rank of its worker run");
    for (int a = 0; a < nalg; a++) {
        p = pv_add(&n, PV_COLL, a, C, CAT_COLL, MPI_T_VERBOSITY_TUNER_BASIC);
        char coll[64];
        lower_into(coll, sizeof coll, "", loom_coll_name(loom_coll_algorithm_kind(a)));
        PV_NAME(p, "loom_coll_%s_%s_calls", coll, loom_coll_algorithm_name(a));
        PV_DESC(p,
                "calls of MPI_%s (and its nonblocking and persistent forms) by this rank that "
                "ran the algorithm %s: %s",
                loom_coll_name(loom_coll_algorithm_kind(a)), loom_coll_algorithm_name(a),
                loom_coll_algorithm_summary(a));
    }
    V.npvar = n;
    return 0;
}

static int build_cvars(void)
{
    int nalg = loom_coll_nalgorithms();
    V.ncvar = LOOM_OPT_COUNT + LOOM_COLL_NKINDS;
    V.cvars = calloc((size_t)V.ncvar, sizeof *V.cvars);
    V.enums = calloc(LOOM_COLL_NKINDS, sizeof *V.enums);
    if (!V.cvars || !V.enums)
        return -1;
    for (int i = 0; i < LOOM_OPT_COUNT; i++) {
        const struct loom_opt_desc *d = loom_opt_desc((enum loom_opt)i);
        struct cvar *c = &V.cvars[i];
        lower_into(c->name, sizeof c->name, "", d->env);
        c->desc = d->summary;
        c->kind = d->kind == LOOM_OPT_SIZE   ? CV_SIZE
                  : d->kind == LOOM_OPT_FLAG ? CV_FLAG
                                             : CV_STRING;
        c->arg = i;
        c->verbosity = (int)d->verbosity;
        c->category = (int)d->category + 1;
        c->scope = MPI_T_SCOPE_CONSTANT;
    }
    for (int k = 0; k < LOOM_COLL_NKINDS; k++) {
        struct cvar *c = &V.cvars[LOOM_OPT_COUNT + k];
        struct LMPI_T_enum_s *e = &V.enums[k];
        lower_into(c->name, sizeof c->name, "loom_coll_", loom_coll_name((enum loom_coll_kind)k));
        c->desc = "the algorithm forced for this collective (LOOM_COLL_<COLLECTIVE>); auto: the "
                  "tuning table or the cost model chooses. Writing it changes the choice for "
                  "every rank of the process: all must write the same value before their next "
                  "call of the collective";
        c->kind = CV_COLL;
        c->arg = k;
        c->verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
        c->category = CAT_COLL;
        c->scope = MPI_T_SCOPE_ALL_EQ;
        c->e = e;
        snprintf(e->name, sizeof e->name, "%s_algorithms", c->name);
        e->names = calloc((size_t)nalg + 1, sizeof *e->names);
        e->values = calloc((size_t)nalg + 1, sizeof *e->values);
        if (!e->names || !e->values)
            return -1;
        e->names[0] = "auto";
        e->values[0] = -1;
        e->n = 1;
        for (int a = 0; a < nalg; a++)
            if ((int)loom_coll_algorithm_kind(a) == k) {
                e->names[e->n] = loom_coll_algorithm_name(a);
                e->values[e->n++] = a;
            }
    }
    V.nenum = LOOM_COLL_NKINDS;
    return 0;
}

static int build_categories(void)
{
    for (int c = 0; c < NCAT; c++) {
        V.cat_cvars[c] = malloc(((size_t)V.ncvar + 1) * sizeof(int));
        V.cat_pvars[c] = malloc(((size_t)V.npvar + 1) * sizeof(int));
        if (!V.cat_cvars[c] || !V.cat_pvars[c])
            return -1;
    }
    for (int i = 0; i < V.ncvar; i++) {
        int c = V.cvars[i].category;
        V.cat_cvars[c][V.ncat_cvars[c]++] = i;
    }
    for (int i = 0; i < V.npvar; i++) {
        int c = V.pvars[i].category;
        V.cat_pvars[c][V.ncat_pvars[c]++] = i;
    }
    return 0;
}

static void build(void)
{
    V.ok = build_cvars() == 0 && build_pvars() == 0 && build_categories() == 0;
}

/* ---- per-rank state ------------------------------------------------------- */

struct LMPI_T_cvar_handle_s {
    struct LMPI_T_cvar_handle_s *next;
    int index;
};

struct LMPI_T_pvar_handle_s {
    struct LMPI_T_pvar_handle_s *next;
    int index;
    bool running;
    uint64_t accum; /* counted before the last start, or written */
    uint64_t base;  /* the counter's value at the last start */
};

struct LMPI_T_pvar_session_s {
    struct LMPI_T_pvar_session_s *next;
    struct LMPI_T_pvar_handle_s *handles;
};

struct mpit_rank {
    int refs; /* MPI_T_init_thread calls not matched by MPI_T_finalize */
    int world_rank;
    struct LMPI_T_cvar_handle_s *cvars;
    struct LMPI_T_pvar_session_s *sessions;
};

/* Ranks of a job (by world rank), or the one state of a singleton or of a
 * program that is not (yet) a rank; reachable until the process ends. */
static struct mpit_rank **ranks;
static int nranks;
static struct mpit_rank solo;
static pthread_once_t ranks_once = PTHREAD_ONCE_INIT;

static void ranks_alloc(void)
{
    if (loom_job.nranks > 0 && !loom_job.singleton) {
        ranks = calloc((size_t)loom_job.nranks, sizeof *ranks);
        nranks = ranks ? loom_job.nranks : 0;
    }
}

/* The calling rank's state; NULL when out of memory. */
static struct mpit_rank *self(void)
{
    struct loom_rank *r = loom_rank_self();
    if (!r || loom_job.singleton || loom_job.nranks <= 0)
        return &solo; /* world rank 0 */
    pthread_once(&ranks_once, ranks_alloc);
    if (r->rank < 0 || r->rank >= nranks)
        return NULL;
    if (!ranks[r->rank]) {
        ranks[r->rank] = calloc(1, sizeof **ranks);
        if (ranks[r->rank])
            ranks[r->rank]->world_rank = r->rank;
    }
    return ranks[r->rank];
}

/* The caller's state if the interface is initialized for it: *err is
 * MPI_SUCCESS or why not. */
static struct mpit_rank *ready(int *err)
{
    struct mpit_rank *m = self();
    *err = m && m->refs > 0 ? MPI_SUCCESS : MPI_T_ERR_NOT_INITIALIZED;
    return *err ? NULL : m;
}

#define READY(m)                                                                                   \
    int err_;                                                                                      \
    struct mpit_rank *m = ready(&err_);                                                            \
    if (!m)                                                                                        \
    return err_

/* ---- init and finalize ------------------------------------------------------ */

int PMPI_T_init_thread(int required, int *provided)
{
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return MPI_T_ERR_INVALID;
    pthread_once(&v_once, build);
    struct mpit_rank *m = self();
    if (!m || !V.ok)
        return MPI_T_ERR_MEMORY;
    m->refs++;
    if (provided) /* as MPI_Init_thread: the rank's own ULT makes the calls */
        *provided = required < MPI_THREAD_FUNNELED ? required : MPI_THREAD_FUNNELED;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_init_thread);

static void free_session(struct LMPI_T_pvar_session_s *s)
{
    while (s->handles) {
        struct LMPI_T_pvar_handle_s *h = s->handles;
        s->handles = h->next;
        free(h);
    }
    free(s);
}

int PMPI_T_finalize(void)
{
    READY(m);
    if (--m->refs > 0)
        return MPI_SUCCESS;
    /* The last one: every handle and session goes. */
    while (m->cvars) {
        struct LMPI_T_cvar_handle_s *h = m->cvars;
        m->cvars = h->next;
        free(h);
    }
    while (m->sessions) {
        struct LMPI_T_pvar_session_s *s = m->sessions;
        m->sessions = s->next;
        free_session(s);
    }
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_finalize);

/* ---- strings and enumerations ----------------------------------------------- */

/* The standard's convention for returned strings (15.3.3): with len NULL
 * nothing is returned; with buf NULL or *len 0 only the length the string
 * needs (with its terminating null) goes to *len; else at most *len - 1
 * characters and a null go to buf, and *len is what was written (null
 * included). */
static void put_string(const char *s, char *buf, int *len)
{
    if (!len)
        return;
    size_t need = strlen(s) + 1;
    if (!buf || *len <= 0) {
        *len = (int)need;
        return;
    }
    size_t n = need <= (size_t)*len ? need - 1 : (size_t)*len - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    *len = (int)n + 1;
}

static bool enum_valid(MPI_T_enum e)
{
    return V.enums && e >= V.enums && e < V.enums + V.nenum;
}

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    READY(m);
    (void)m;
    if (!enum_valid(enumtype))
        return MPI_T_ERR_INVALID_HANDLE;
    if (num)
        *num = enumtype->n;
    put_string(enumtype->name, name, name_len);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_enum_get_info);

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    READY(m);
    (void)m;
    if (!enum_valid(enumtype))
        return MPI_T_ERR_INVALID_HANDLE;
    if (index < 0 || index >= enumtype->n)
        return MPI_T_ERR_INVALID_ITEM;
    if (value)
        *value = enumtype->values[index];
    put_string(enumtype->names[index], name, name_len);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_enum_get_item);

/* ---- control variables ------------------------------------------------------- */

int PMPI_T_cvar_get_num(int *num_cvar)
{
    READY(m);
    (void)m;
    if (!num_cvar)
        return MPI_T_ERR_INVALID;
    *num_cvar = V.ncvar;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_cvar_get_num);

static MPI_Datatype cvar_type(const struct cvar *c)
{
    switch (c->kind) {
    case CV_SIZE:
        return MPI_UNSIGNED_LONG;
    case CV_STRING:
        return MPI_CHAR;
    default:
        return MPI_INT;
    }
}

int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope)
{
    READY(m);
    (void)m;
    if (cvar_index < 0 || cvar_index >= V.ncvar)
        return MPI_T_ERR_INVALID_INDEX;
    const struct cvar *c = &V.cvars[cvar_index];
    put_string(c->name, name, name_len);
    if (verbosity)
        *verbosity = c->verbosity;
    if (datatype)
        *datatype = cvar_type(c);
    if (enumtype)
        *enumtype = c->e ? c->e : MPI_T_ENUM_NULL;
    put_string(c->desc, desc, desc_len);
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = c->scope;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_cvar_get_info);

int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    READY(m);
    (void)m;
    if (!name || !cvar_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < V.ncvar; i++)
        if (strcmp(V.cvars[i].name, name) == 0) {
            *cvar_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}
LOOM_MPI_ALIAS(T_cvar_get_index);

/* A STRING option's value as the variable shows it. */
static const char *cvar_string(const struct cvar *c)
{
    const char *s = loom_opt_str((enum loom_opt)c->arg);
    return s ? s : "";
}

int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count)
{
    READY(m);
    (void)obj_handle; /* every variable is bound to no object */
    if (cvar_index < 0 || cvar_index >= V.ncvar)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    struct LMPI_T_cvar_handle_s *h = calloc(1, sizeof *h);
    if (!h)
        return MPI_T_ERR_OUT_OF_HANDLES;
    h->index = cvar_index;
    h->next = m->cvars;
    m->cvars = h;
    const struct cvar *c = &V.cvars[cvar_index];
    *count = c->kind == CV_STRING ? (int)strlen(cvar_string(c)) + 1 : 1;
    *handle = h;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_cvar_handle_alloc);

/* The rank's cvar handle h, or NULL when it is not one. */
static struct LMPI_T_cvar_handle_s *cvar_handle(struct mpit_rank *m, MPI_T_cvar_handle h,
                                                struct LMPI_T_cvar_handle_s ***link_p)
{
    for (struct LMPI_T_cvar_handle_s **l = &m->cvars; *l; l = &(*l)->next)
        if (*l == h) {
            if (link_p)
                *link_p = l;
            return h;
        }
    return NULL;
}

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    READY(m);
    struct LMPI_T_cvar_handle_s **link;
    if (!handle || !cvar_handle(m, *handle, &link))
        return MPI_T_ERR_INVALID_HANDLE;
    *link = (*handle)->next;
    free(*handle);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_cvar_handle_free);

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    READY(m);
    if (!cvar_handle(m, handle, NULL))
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    const struct cvar *c = &V.cvars[handle->index];
    switch (c->kind) {
    case CV_SIZE:
        *(unsigned long *)buf = (unsigned long)loom_opt_size((enum loom_opt)c->arg);
        break;
    case CV_FLAG:
        *(int *)buf = loom_opt_flag((enum loom_opt)c->arg);
        break;
    case CV_STRING: {
        const char *s = cvar_string(c);
        memcpy(buf, s, strlen(s) + 1);
        break;
    }
    case CV_COLL:
        *(int *)buf = loom_coll_choice_get((enum loom_coll_kind)c->arg);
        break;
    }
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_cvar_read);

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    READY(m);
    if (!cvar_handle(m, handle, NULL))
        return MPI_T_ERR_INVALID_HANDLE;
    const struct cvar *c = &V.cvars[handle->index];
    if (c->scope == MPI_T_SCOPE_CONSTANT || c->scope == MPI_T_SCOPE_READONLY)
        return MPI_T_ERR_CVAR_SET_NEVER;
    if (!buf)
        return MPI_T_ERR_INVALID;
    /* CV_COLL: -1 (auto) or an algorithm of this collective. */
    int v = *(const int *)buf;
    if (v < -1 || loom_coll_choice_set((enum loom_coll_kind)c->arg, v) != LOOM_OK)
        return MPI_T_ERR_INVALID;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_cvar_write);

/* ---- performance variables ------------------------------------------------ */

int PMPI_T_pvar_get_num(int *num_pvar)
{
    READY(m);
    (void)m;
    if (!num_pvar)
        return MPI_T_ERR_INVALID;
    *num_pvar = V.npvar;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_pvar_get_num);

int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *readonly, int *continuous, int *atomic)
{
    READY(m);
    (void)m;
    if (pvar_index < 0 || pvar_index >= V.npvar)
        return MPI_T_ERR_INVALID_INDEX;
    const struct pvar *p = &V.pvars[pvar_index];
    put_string(p->name, name, name_len);
    if (verbosity)
        *verbosity = p->verbosity;
    if (var_class)
        *var_class = p->cls;
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    put_string(p->desc, desc, desc_len);
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly)
        *readonly = p->readonly;
    if (continuous)
        *continuous = p->continuous;
    if (atomic) /* a counter changes only on its rank, which makes this call */
        *atomic = !p->readonly;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_pvar_get_info);

int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    READY(m);
    (void)m;
    if (!name || !pvar_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < V.npvar; i++)
        if (V.pvars[i].cls == var_class && strcmp(V.pvars[i].name, name) == 0) {
            *pvar_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}
LOOM_MPI_ALIAS(T_pvar_get_index);

/* The current value of variable p for world rank `rank` (the caller). */
static uint64_t pvar_raw(const struct pvar *p, int rank)
{
    struct loom_p2p_stats st;
    uint64_t v = 0, parks, wakeups, yields;
    switch (p->src) {
    case PV_PARKS:
    case PV_WAKEUPS:
    case PV_YIELDS: {
        struct loom_ult *u =
            loom_job.ranks && rank < loom_job.nranks ? loom_job.ranks[rank].ult : NULL;
        loom_ult_stats(u, &parks, &wakeups, &yields);
        return p->src == PV_PARKS ? parks : p->src == PV_WAKEUPS ? wakeups : yields;
    }
    case PV_COLL:
        return loom_coll_uses(rank, p->arg);
    default:
        break;
    }
    /* Before the rank's MPI_Init it sent and received nothing, and the
     * point-to-point state may not exist yet (the first MPI_Init of the
     * job makes it). */
    struct loom_rank *r = loom_rank_self();
    if (!r || r->mpi_state == LOOM_MPI_NONE)
        return 0;
    loom_p2p_stats_read(rank, &st);
    switch (p->src) {
    case PV_SENT:
        for (int k = 0; k < LOOM_P2P_NPROTO; k++)
            v += st.sent[k];
        return v;
    case PV_SENT_BYTES:
        for (int k = 0; k < LOOM_P2P_NPROTO; k++)
            v += st.sent_bytes[k];
        return v;
    case PV_PROTO:
        return st.sent[p->arg];
    case PV_PROTO_BYTES:
        return st.sent_bytes[p->arg];
    case PV_RECVD:
        return st.recvd;
    case PV_RECVD_BYTES:
        return st.recvd_bytes;
    case PV_POSTED:
        return st.posted;
    case PV_POSTED_MAX:
        return st.posted_max;
    case PV_UNEXP:
        return st.unexp;
    case PV_UNEXP_MAX:
        return st.unexp_max;
    default:
        return 0;
    }
}

/* What handle h shows now. */
static uint64_t pvar_value(const struct mpit_rank *m, const struct LMPI_T_pvar_handle_s *h)
{
    const struct pvar *p = &V.pvars[h->index];
    if (p->continuous)
        return pvar_raw(p, m->world_rank);
    return h->accum + (h->running ? pvar_raw(p, m->world_rank) - h->base : 0);
}

int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    READY(m);
    if (!session)
        return MPI_T_ERR_INVALID;
    struct LMPI_T_pvar_session_s *s = calloc(1, sizeof *s);
    if (!s)
        return MPI_T_ERR_OUT_OF_SESSIONS;
    s->next = m->sessions;
    m->sessions = s;
    *session = s;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_pvar_session_create);

/* The rank's session s (and the link to it), or NULL. */
static struct LMPI_T_pvar_session_s *session_of(struct mpit_rank *m, MPI_T_pvar_session s,
                                                struct LMPI_T_pvar_session_s ***link_p)
{
    for (struct LMPI_T_pvar_session_s **l = &m->sessions; *l; l = &(*l)->next)
        if (*l == s) {
            if (link_p)
                *link_p = l;
            return s;
        }
    return NULL;
}

int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    READY(m);
    struct LMPI_T_pvar_session_s **link;
    if (!session || !session_of(m, *session, &link))
        return MPI_T_ERR_INVALID_SESSION;
    *link = (*session)->next;
    free_session(*session);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_pvar_session_free);

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    READY(m);
    (void)obj_handle; /* every variable is bound to no object */
    struct LMPI_T_pvar_session_s *s = session_of(m, session, NULL);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    if (pvar_index < 0 || pvar_index >= V.npvar)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    struct LMPI_T_pvar_handle_s *h = calloc(1, sizeof *h);
    if (!h)
        return MPI_T_ERR_OUT_OF_HANDLES;
    h->index = pvar_index;
    h->next = s->handles;
    s->handles = h;
    *handle = h;
    *count = 1;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_pvar_handle_alloc);

/* Handle h of session s (and the link to it), or NULL. */
static struct LMPI_T_pvar_handle_s *handle_of(struct LMPI_T_pvar_session_s *s, MPI_T_pvar_handle h,
                                              struct LMPI_T_pvar_handle_s ***link_p)
{
    for (struct LMPI_T_pvar_handle_s **l = &s->handles; *l; l = &(*l)->next)
        if (*l == h) {
            if (link_p)
                *link_p = l;
            return h;
        }
    return NULL;
}

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    READY(m);
    struct LMPI_T_pvar_session_s *s = session_of(m, session, NULL);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    struct LMPI_T_pvar_handle_s **link;
    if (!handle || !handle_of(s, *handle, &link))
        return MPI_T_ERR_INVALID_HANDLE;
    *link = (*handle)->next;
    free(*handle);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_pvar_handle_free);

/* The operations on handles, one at a time or all of a session's. */
enum pvar_op { OP_START, OP_STOP, OP_RESET };

/* Applies op to h; with `all`, variables it does not apply to are skipped
 * instead of failing (MPI_T_PVAR_ALL_HANDLES). */
static int pvar_apply(const struct mpit_rank *m, struct LMPI_T_pvar_handle_s *h, enum pvar_op op,
                      bool all)
{
    const struct pvar *p = &V.pvars[h->index];
    switch (op) {
    case OP_START:
    case OP_STOP:
        if (p->continuous)
            return all ? MPI_SUCCESS : MPI_T_ERR_PVAR_NO_STARTSTOP;
        if (op == OP_START && !h->running) {
            h->base = pvar_raw(p, m->world_rank);
            h->running = true;
        } else if (op == OP_STOP && h->running) {
            h->accum += pvar_raw(p, m->world_rank) - h->base;
            h->running = false;
        }
        return MPI_SUCCESS;
    case OP_RESET:
        if (p->readonly)
            return all ? MPI_SUCCESS : MPI_T_ERR_PVAR_NO_WRITE;
        h->accum = 0;
        h->base = pvar_raw(p, m->world_rank);
        return MPI_SUCCESS;
    }
    return MPI_SUCCESS;
}

static int pvar_op_call(MPI_T_pvar_session session, MPI_T_pvar_handle handle, enum pvar_op op)
{
    READY(m);
    struct LMPI_T_pvar_session_s *s = session_of(m, session, NULL);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        for (struct LMPI_T_pvar_handle_s *h = s->handles; h; h = h->next)
            (void)pvar_apply(m, h, op, true);
        return MPI_SUCCESS;
    }
    if (!handle_of(s, handle, NULL))
        return MPI_T_ERR_INVALID_HANDLE;
    return pvar_apply(m, handle, op, false);
}

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_op_call(session, handle, OP_START);
}
LOOM_MPI_ALIAS(T_pvar_start);

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_op_call(session, handle, OP_STOP);
}
LOOM_MPI_ALIAS(T_pvar_stop);

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_op_call(session, handle, OP_RESET);
}
LOOM_MPI_ALIAS(T_pvar_reset);

/* The rank's handle `handle` of session `session` for a read or write
 * (MPI_T_PVAR_ALL_HANDLES is not one); *err says why not. */
static struct LMPI_T_pvar_handle_s *one_handle(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                                               struct mpit_rank **m_p, int *err)
{
    struct mpit_rank *m = ready(err);
    if (!m)
        return NULL;
    struct LMPI_T_pvar_session_s *s = session_of(m, session, NULL);
    if (!s) {
        *err = MPI_T_ERR_INVALID_SESSION;
        return NULL;
    }
    if (handle == MPI_T_PVAR_ALL_HANDLES || !handle_of(s, handle, NULL)) {
        *err = MPI_T_ERR_INVALID_HANDLE;
        return NULL;
    }
    *m_p = m;
    return handle;
}

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    int err;
    struct mpit_rank *m;
    struct LMPI_T_pvar_handle_s *h = one_handle(session, handle, &m, &err);
    if (!h)
        return err;
    if (!buf)
        return MPI_T_ERR_INVALID;
    *(unsigned long long *)buf = pvar_value(m, h);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_pvar_read);

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    int err;
    struct mpit_rank *m;
    struct LMPI_T_pvar_handle_s *h = one_handle(session, handle, &m, &err);
    if (!h)
        return err;
    const struct pvar *p = &V.pvars[h->index];
    if (p->readonly)
        return MPI_T_ERR_PVAR_NO_WRITE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    /* The handle shows the value written, then counts on from it. */
    h->accum = *(const unsigned long long *)buf;
    h->base = pvar_raw(p, m->world_rank);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_pvar_write);

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    int err;
    struct mpit_rank *m;
    struct LMPI_T_pvar_handle_s *h = one_handle(session, handle, &m, &err);
    if (!h)
        return err;
    const struct pvar *p = &V.pvars[h->index];
    if (p->readonly)
        return MPI_T_ERR_PVAR_NO_WRITE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    /* Atomic: one read of the counter serves both, and only this rank,
     * which is making this call, changes it. */
    uint64_t raw = pvar_raw(p, m->world_rank);
    *(unsigned long long *)buf = h->accum + (h->running ? raw - h->base : 0);
    h->accum = 0;
    h->base = raw;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_pvar_readreset);

/* ---- categories ----------------------------------------------------------- */

int PMPI_T_category_get_num(int *num_cat)
{
    READY(m);
    (void)m;
    if (!num_cat)
        return MPI_T_ERR_INVALID;
    *num_cat = NCAT;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_category_get_num);

int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    READY(m);
    (void)m;
    if (cat_index < 0 || cat_index >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    put_string(cat_names[cat_index][0], name, name_len);
    put_string(cat_names[cat_index][1], desc, desc_len);
    if (num_cvars)
        *num_cvars = V.ncat_cvars[cat_index];
    if (num_pvars)
        *num_pvars = V.ncat_pvars[cat_index];
    if (num_categories)
        *num_categories = cat_index == CAT_LOOM ? NCAT - 1 : 0;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_category_get_info);

int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    READY(m);
    (void)m;
    if (!name || !cat_index)
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < NCAT; i++)
        if (strcmp(cat_names[i][0], name) == 0) {
            *cat_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}
LOOM_MPI_ALIAS(T_category_get_index);

/* Copies the first len of the n members into indices. */
static int put_members(int cat_index, int len, int indices[], const int *members, int n)
{
    if (cat_index < 0 || cat_index >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    for (int i = 0; i < len && i < n; i++)
        indices[i] = members[i];
    return MPI_SUCCESS;
}

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    READY(m);
    (void)m;
    bool ok = cat_index >= 0 && cat_index < NCAT;
    return put_members(cat_index, len, indices, ok ? V.cat_cvars[cat_index] : NULL,
                       ok ? V.ncat_cvars[cat_index] : 0);
}
LOOM_MPI_ALIAS(T_category_get_cvars);

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    READY(m);
    (void)m;
    bool ok = cat_index >= 0 && cat_index < NCAT;
    return put_members(cat_index, len, indices, ok ? V.cat_pvars[cat_index] : NULL,
                       ok ? V.ncat_pvars[cat_index] : 0);
}
LOOM_MPI_ALIAS(T_category_get_pvars);

int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    READY(m);
    (void)m;
    static const int subs[NCAT - 1] = {CAT_RUNTIME, CAT_PT2PT, CAT_COLL};
    return put_members(cat_index, len, indices, subs, cat_index == CAT_LOOM ? NCAT - 1 : 0);
}
LOOM_MPI_ALIAS(T_category_get_categories);

int PMPI_T_category_changed(int *update_number)
{
    READY(m);
    (void)m;
    if (!update_number)
        return MPI_T_ERR_INVALID;
    *update_number = 0; /* the categories are fixed once the interface starts */
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_category_changed);

/* ---- events: Loom has no event sources and no events ------------------------- */

int PMPI_T_source_get_num(int *num_sources)
{
    READY(m);
    (void)m;
    if (!num_sources)
        return MPI_T_ERR_INVALID;
    *num_sources = 0;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_source_get_num);

int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                           MPI_Count *max_ticks, MPI_Info *info)
{
    READY(m);
    (void)m, (void)source_index, (void)name, (void)name_len, (void)desc, (void)desc_len;
    (void)ordering, (void)ticks_per_second, (void)max_ticks, (void)info;
    return MPI_T_ERR_INVALID_INDEX; /* every index: there is no source */
}
LOOM_MPI_ALIAS(T_source_get_info);

int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    READY(m);
    (void)m, (void)source_index, (void)timestamp;
    return MPI_T_ERR_INVALID_INDEX; /* every index: there is no source */
}
LOOM_MPI_ALIAS(T_source_get_timestamp);

int PMPI_T_event_get_num(int *num_events)
{
    READY(m);
    (void)m;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_event_get_num);

int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    READY(m);
    (void)m;
    if (cat_index < 0 || cat_index >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(T_category_get_num_events);

int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    READY(m);
    (void)m;
    return put_members(cat_index, len, indices, NULL, 0);
}
LOOM_MPI_ALIAS(T_category_get_events);
