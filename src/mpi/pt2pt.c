/*
 * Point-to-point entry points: argument checks with clear messages, then the
 * engine in src/pt2pt (p2p.h). Blocking calls are a start plus a wait on a
 * pooled request. Buffered sends copy into the attached buffer and send from
 * there; persistent requests keep their arguments between starts.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "datatype/datatype.h"
#include "mpi/mpi_impl.h"
#include "pt2pt/p2p.h"
#include "pt2pt/part.h"
#include "util/log.h"

#define TAG_UB INT_MAX

/* The most bytes one message may have (2^48: more than any machine
 * addresses); larger counts are MPI_ERR_COUNT, so count * size never wraps. */
#define LOOM_MAX_BYTES (1ull << 48)

/* ---- argument checks --------------------------------------------------- */

/* The calling rank's world rank in *me_p, if MPI is initialized on it. */
static inline int check_rank(const char *fn, int *me_p)
{
    struct loom_rank *r = loom_rank_self();
    if (LOOM_UNLIKELY(!r || r->mpi_state != LOOM_MPI_INITIALIZED))
        return loom_mpi_check_init(fn);
    *me_p = r->rank;
    return MPI_SUCCESS;
}

/* What check_buf() found wrong. */
static LOOM_NOINLINE int buf_error(const char *fn, MPI_Comm comm, const void *buf, MPI_Count count,
                                   MPI_Datatype type)
{
    if (count < 0)
        return loom_mpi_err(comm, MPI_ERR_COUNT, fn, "count %lld is negative", (long long)count);
    struct loom_type *t = loom_type_get(type);
    if (!t) {
        if (type == MPI_DATATYPE_NULL)
            return loom_mpi_err(comm, MPI_ERR_TYPE, fn, "the datatype is MPI_DATATYPE_NULL");
        return loom_mpi_err(comm, MPI_ERR_TYPE, fn, "invalid or freed datatype handle 0x%x",
                            (unsigned)type);
    }
    if (!t->committed)
        return loom_mpi_err(comm, MPI_ERR_TYPE, fn, "the datatype is not committed");
    if (t->size && (uint64_t)count > LOOM_MAX_BYTES / t->size)
        return loom_mpi_err(comm, MPI_ERR_COUNT, fn,
                            "count %lld of a datatype of %zu bytes is more than this machine "
                            "can address",
                            (long long)count, t->size);
    return loom_mpi_err(
        comm, MPI_ERR_BUFFER, fn,
        "buffer is NULL for %lld elements of a datatype with relative displacements",
        (long long)count);
}

/* Checks a message buffer (count elements of type at buf); *t_p: the type. */
static inline int check_buf(const char *fn, MPI_Comm comm, const void *buf, MPI_Count count,
                            MPI_Datatype type, struct loom_type **t_p)
{
    struct loom_type *t = loom_type_get(type);
    uint64_t bytes;
    if (LOOM_UNLIKELY(count < 0 || !t || !t->committed ||
                      (!buf && count > 0 && t->size > 0 && t->true_lb == 0) ||
                      __builtin_mul_overflow((uint64_t)count, (uint64_t)t->size, &bytes) ||
                      bytes > LOOM_MAX_BYTES))
        return buf_error(fn, comm, buf, count, type);
    *t_p = t;
    return MPI_SUCCESS;
}

static LOOM_NOINLINE int dest_error(const char *fn, MPI_Comm comm, const struct loom_comm *c,
                                    int dest, int tag)
{
    if (dest != MPI_PROC_NULL && (dest < 0 || dest >= loom_comm_peer_size(c)))
        return loom_mpi_err(comm, MPI_ERR_RANK, fn, "rank %d is not in %s of size %d", dest,
                            loom_comm_is_inter(c) ? "the remote group" : "a communicator",
                            loom_comm_peer_size(c));
    return loom_mpi_err(comm, MPI_ERR_TAG, fn, "tag %d is negative", tag);
}

static inline int check_dest(const char *fn, MPI_Comm comm, const struct loom_comm *c, int dest,
                             int tag)
{
    /* (unsigned): a negative rank is out of range too */
    if (LOOM_UNLIKELY((unsigned)dest >= (unsigned)loom_comm_peer_size(c) &&
                      dest != MPI_PROC_NULL) ||
        LOOM_UNLIKELY(tag < 0))
        return dest_error(fn, comm, c, dest, tag);
    return MPI_SUCCESS;
}

static LOOM_NOINLINE int source_error(const char *fn, MPI_Comm comm, const struct loom_comm *c,
                                      int src, int tag)
{
    if (src != MPI_PROC_NULL && src != MPI_ANY_SOURCE && (src < 0 || src >= loom_comm_peer_size(c)))
        return loom_mpi_err(comm, MPI_ERR_RANK, fn, "rank %d is not in %s of size %d", src,
                            loom_comm_is_inter(c) ? "the remote group" : "a communicator",
                            loom_comm_peer_size(c));
    return loom_mpi_err(comm, MPI_ERR_TAG, fn, "tag %d is negative and not MPI_ANY_TAG", tag);
}

static inline int check_source(const char *fn, MPI_Comm comm, const struct loom_comm *c, int src,
                               int tag)
{
    if (LOOM_UNLIKELY((unsigned)src >= (unsigned)loom_comm_peer_size(c) && src != MPI_PROC_NULL &&
                      src != MPI_ANY_SOURCE) ||
        LOOM_UNLIKELY(tag < 0 && tag != MPI_ANY_TAG))
        return source_error(fn, comm, c, src, tag);
    return MPI_SUCCESS;
}

static void empty_status(MPI_Status *st)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    st->loom_cancelled = 0;
    st->loom_count = 0;
}

static void set_status(MPI_Status *st, int src, int tag, int err, bool cancelled, size_t bytes)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    st->MPI_SOURCE = src;
    st->MPI_TAG = tag;
    st->MPI_ERROR = err;
    st->loom_cancelled = cancelled;
    st->loom_count = (long long)bytes;
}

static void proc_null_status(MPI_Status *st)
{
    set_status(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, false, 0);
}

/* A generalized request's callbacks (MPI_Grequest_start). */
struct loom_mpi_greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
    bool user_freed; /* MPI_Request_free came before MPI_Grequest_complete */
};

/* A done generalized request's status: its query function's, whose return
 * code becomes the request's error. */
static void greq_query(loom_req *r, MPI_Status *st)
{
    struct loom_mpi_greq *g = r->ext;
    MPI_Status tmp, *s = st == MPI_STATUS_IGNORE ? &tmp : st;
    set_status(s, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, false, 0);
    int rc = g->query ? g->query(g->extra, s) : MPI_SUCCESS;
    r->status_error = rc;
    if (rc)
        s->MPI_ERROR = rc;
}

static void fill_status(loom_req *r, MPI_Status *st)
{
    if (LOOM_UNLIKELY(r->kind == LOOM_REQ_GREQ)) {
        greq_query(r, st);
        return;
    }
    set_status(st, r->status_source, r->status_tag, r->status_error, r->cancelled, r->status_bytes);
}

/* Runs a generalized request's free function once; its return code. */
static int greq_free_fn(loom_req *r)
{
    struct loom_mpi_greq *g = r->ext;
    MPI_Grequest_free_function *f = g->free_fn;
    g->free_fn = NULL;
    return f ? f(g->extra) : MPI_SUCCESS;
}

/* MPI_ERR_TRUNCATE on comm: `bytes` from rank src (tag) for `cap`. */
static int truncated(const char *fn, MPI_Comm comm, size_t bytes, int src, int tag, size_t cap)
{
    return loom_mpi_err(comm, MPI_ERR_TRUNCATE, fn,
                        "message of %zu bytes from rank %d (tag %d) truncated to the receive "
                        "buffer's %zu bytes",
                        bytes, src, tag, cap);
}

/* Raises a completed request's error on its communicator: a collective's
 * with the text it left, a receive's truncation with the sizes. */
static int raise_req_error(const char *fn, const loom_req *r)
{
    if (r->kind == LOOM_REQ_GREQ)
        return loom_mpi_err(MPI_COMM_SELF, r->status_error, fn,
                            "a callback of the generalized request returned error %d",
                            r->status_error);
    if (r->kind == LOOM_REQ_GENERIC)
        return loom_mpi_err(r->comm->handle, r->status_error, fn, "%s",
                            r->why ? r->why : "the request failed");
    if (r->kind == LOOM_REQ_NBR)
        return loom_mpi_err(r->comm->handle, r->status_error, fn,
                            "a neighbour sent more than its receive block holds");
    if (r->status_error == MPI_ERR_TRUNCATE)
        return truncated(fn, r->comm->handle, r->count, r->status_source, r->status_tag, r->bytes);
    return loom_mpi_err(r->comm->handle, r->status_error, fn, "the request failed");
}

/* ---- requests ------------------------------------------------------------ */

static loom_req *new_req(const char *fn, MPI_Comm comm, struct loom_comm *c, void *buf,
                         MPI_Count count, struct loom_type *t, int peer, int tag,
                         enum loom_req_kind kind, enum loom_send_mode mode)
{
    loom_req *r = loom_req_alloc_rank(c->owner);
    if (!r)
        return NULL;
    r->kind = (uint8_t)kind;
    r->mode = (uint8_t)mode;
    r->buf = buf;
    r->count = (size_t)count;
    r->type = t;
    loom_type_retain(t);
    r->bytes = (size_t)count * t->size;
    r->peer = peer;
    r->tag = tag;
    r->ctx = c->sh->context_id;
    r->comm = c;
    return r;
}

/* Starts (or restarts) a request; PROC_NULL completes at once. */
static int bsend_start(loom_req *r);

static int start(loom_req *r)
{
    if (r->kind == LOOM_REQ_GENERIC) /* a persistent collective */
        return loom_mpi_coll_start_persistent(r, "MPI_Start");
    if (r->kind == LOOM_REQ_PART) {
        loom_part_start(r);
        return MPI_SUCCESS;
    }
    if (r->kind == LOOM_REQ_NBR)
        return loom_mpi_nbr_start(r, "MPI_Start");
    r->active = true;
    r->cancelled = false;
    r->status_error = MPI_SUCCESS;
    r->status_bytes = 0;
    atomic_store_explicit(&r->done, 0, memory_order_relaxed);
    if (r->peer == MPI_PROC_NULL) {
        r->status_source = MPI_PROC_NULL;
        r->status_tag = MPI_ANY_TAG;
        atomic_store_explicit(&r->done, 1, memory_order_relaxed);
        return MPI_SUCCESS;
    }
    if (r->kind == LOOM_REQ_RECV) {
        loom_p2p_start_recv(r);
        return MPI_SUCCESS;
    }
    if (r->mode == LOOM_MODE_BUFFERED)
        return bsend_start(r);
    loom_p2p_start_send(r, r->comm->rank);
    return MPI_SUCCESS;
}

static void req_free(loom_req *r);

/* Counts a done receive (or MPI_Isendrecv) that the caller hands out, for
 * the tools interface's received-message counters. */
static inline void count_recv(const loom_req *r)
{
    if ((r->kind == LOOM_REQ_RECV || r->kind == LOOM_REQ_PAIR) && !r->cancelled &&
        r->status_source != MPI_PROC_NULL)
        loom_p2p_count_recv(r->owner, r->status_bytes);
}

/* Finishes a done request: status out, then freed or made inactive. */
static int finish(const char *fn, loom_req **rp, MPI_Status *st)
{
    loom_req *r = *rp;
    count_recv(r);
    fill_status(r, st);
    int err = r->status_error;
    if (r->persistent) {
        r->active = false;
    } else {
        if (r->kind == LOOM_REQ_GREQ) {
            int ferr = greq_free_fn(r);
            if (!err && ferr)
                err = r->status_error = ferr;
        }
        if (err) {
            /* Freed after: the handler may abort, and the text goes with it. */
            err = raise_req_error(fn, r);
            req_free(r);
            *rp = MPI_REQUEST_NULL;
            return err;
        }
        req_free(r);
        *rp = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    return err ? raise_req_error(fn, r) : MPI_SUCCESS;
}

/* Checks a request handle of the calling rank (world rank me). */
static int check_req(const char *fn, MPI_Request r, int me)
{
    if (r->magic != LOOM_REQ_MAGIC)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, fn, "invalid or freed request");
    if (r->owner != me)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, fn, "the request belongs to rank %d",
                            r->owner);
    return MPI_SUCCESS;
}

/* A request that is null, or persistent and inactive, counts as complete
 * with an empty status. */
static bool is_inactive(MPI_Request r)
{
    return r == MPI_REQUEST_NULL || (r->persistent && !r->active);
}

/* ---- MPI_Isendrecv: a request of two halves ------------------------------ */

/* A PAIR request's halves; tmp: Isendrecv_replace's packed copy of the
 * message, which the send reads until it completes. */
struct loom_mpi_pair {
    loom_req *send, *recv;
    void *tmp;
    struct loom_mpi_pair *next; /* freed while the send was active: kept until it is done */
};

/* True once both halves are done; then marks the pair done too. */
static bool pair_done(loom_req *r)
{
    if (loom_req_done(r))
        return true;
    struct loom_mpi_pair *p = r->ext;
    if (!loom_req_done(p->send) || !loom_req_done(p->recv))
        return false;
    /* The status is the receive's; an error of either half fails the pair. */
    loom_req *rr = p->recv;
    r->status_source = rr->status_source;
    r->status_tag = rr->status_tag;
    r->status_bytes = rr->status_bytes;
    r->status_error = rr->status_error ? rr->status_error : p->send->status_error;
    r->cancelled = rr->cancelled;
    r->count = rr->count;
    r->bytes = rr->bytes;
    atomic_store_explicit(&r->done, 1, memory_order_relaxed); /* the owner's own view */
    return true;
}

/* loom_req_done, loom_req_test and loom_req_wait for any request of the
 * MPI layer, pairs included. */
static inline bool req_done(loom_req *r)
{
    return LOOM_LIKELY(r->kind != LOOM_REQ_PAIR) ? loom_req_done(r) : pair_done(r);
}

static inline bool req_test(loom_req *r)
{
    if (LOOM_LIKELY(r->kind != LOOM_REQ_PAIR))
        return loom_req_test(r);
    return pair_done(r) || (loom_p2p_progress() && pair_done(r));
}

static void req_wait(loom_req *r)
{
    if (LOOM_LIKELY(r->kind != LOOM_REQ_PAIR)) {
        loom_req_wait(r);
        return;
    }
    struct loom_mpi_pair *p = r->ext;
    loom_req_wait(p->send);
    loom_req_wait(p->recv);
    pair_done(r);
}

/* Blocks until one of the count requests (inactive ones skipped) is done:
 * a pair's pending halves stand for it. */
static void wait_any(int count, MPI_Request reqs[])
{
    loom_req *set[2 * count + 1];
    int n = 0;
    for (int k = 0; k < count; k++) {
        loom_req *r = reqs[k];
        if (is_inactive(r))
            continue;
        if (r->kind != LOOM_REQ_PAIR) {
            set[n++] = r;
            continue;
        }
        if (pair_done(r))
            return;
        struct loom_mpi_pair *p = r->ext;
        set[n++] = loom_req_done(p->send) ? p->recv : p->send;
    }
    loom_req_wait_any(set, n);
}

/* The calling rank's pairs freed before their sends completed. */
static struct loom_mpi_pair *freed_pairs(void)
{
    return loom_mpi_self()->freed_pairs;
}

/* Frees a pair's memory and halves (the send's copy only once it is done). */
static void pair_release(struct loom_mpi_pair *p)
{
    loom_req_free(p->recv);
    if (p->tmp && !loom_req_done(p->send)) {
        p->next = freed_pairs();
        loom_mpi_self()->freed_pairs = p;
        return;
    }
    loom_req_free(p->send);
    free(p->tmp);
    free(p);
}

/* Frees the kept pairs whose sends are done. */
static void pairs_reclaim(void)
{
    for (struct loom_mpi_pair **pp = &loom_mpi_self()->freed_pairs; *pp;) {
        struct loom_mpi_pair *p = *pp;
        if (loom_req_done(p->send)) {
            *pp = p->next;
            loom_req_free(p->send);
            free(p->tmp);
            free(p);
        } else {
            pp = &p->next;
        }
    }
}

/* Frees a request of the MPI layer: a pair with its halves. */
static void req_free(loom_req *r)
{
    if (r->kind == LOOM_REQ_GREQ) {
        free(r->ext);
        r->ext = NULL;
    }
    if (r->kind == LOOM_REQ_PAIR) {
        pair_release(r->ext);
        r->ext = NULL;
        atomic_store_explicit(&r->done, 1, memory_order_relaxed); /* straight back to the pool */
    }
    loom_req_free(r);
}

/* ---- blocking and nonblocking sends and receives -------------------- */

/* The checks of a send; sets *c_p and *t_p. */
static int check_send(const char *fn, const void *buf, MPI_Count count, MPI_Datatype type, int dest,
                      int tag, MPI_Comm comm, struct loom_comm **c_p, struct loom_type **t_p)
{
    int rc = loom_mpi_comm_enter(fn, comm, c_p);
    if (rc || (rc = check_buf(fn, comm, buf, count, type, t_p)) ||
        (rc = check_dest(fn, comm, *c_p, dest, tag)))
        return rc;
    if (tag > TAG_UB)
        return loom_mpi_err(comm, MPI_ERR_TAG, fn, "tag %d is above MPI_TAG_UB", tag);
    return MPI_SUCCESS;
}

static int post_send(const char *fn, const void *buf, MPI_Count count, MPI_Datatype type, int dest,
                     int tag, MPI_Comm comm, enum loom_send_mode mode, bool persistent,
                     MPI_Request *req_p)
{
    struct loom_comm *c = NULL;
    struct loom_type *t = NULL;
    int rc = check_send(fn, buf, count, type, dest, tag, comm, &c, &t);
    if (rc)
        return rc;
    if (!req_p)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "request is NULL");
    loom_req *r = new_req(fn, comm, c, (void *)buf, count, t, dest, tag, LOOM_REQ_SEND, mode);
    if (!r)
        return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory for requests");
    r->persistent = persistent;
    *req_p = r;
    if (persistent)
        return MPI_SUCCESS;
    rc = start(r);
    if (rc) {
        loom_req_free(r);
        *req_p = MPI_REQUEST_NULL;
    }
    return rc;
}

/* The checks of a receive's arguments; *c_p and *t_p: its communicator and
 * datatype. */
static int check_recv(const char *fn, void *buf, MPI_Count count, MPI_Datatype type, int src,
                      int tag, MPI_Comm comm, struct loom_comm **c_p, struct loom_type **t_p)
{
    int rc = loom_mpi_comm_enter(fn, comm, c_p);
    if (rc || (rc = check_buf(fn, comm, buf, count, type, t_p)))
        return rc;
    return check_source(fn, comm, *c_p, src, tag);
}

/* A receive whose arguments check_recv() accepted. */
static int post_checked_recv(const char *fn, void *buf, MPI_Count count, struct loom_comm *c,
                             struct loom_type *t, int src, int tag, MPI_Comm comm, bool persistent,
                             MPI_Request *req_p)
{
    if (!req_p)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "request is NULL");
    loom_req *r = new_req(fn, comm, c, buf, count, t, src, tag, LOOM_REQ_RECV, LOOM_MODE_STANDARD);
    if (!r)
        return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory for requests");
    r->persistent = persistent;
    *req_p = r;
    if (!persistent)
        start(r);
    return MPI_SUCCESS;
}

static int post_recv(const char *fn, void *buf, MPI_Count count, MPI_Datatype type, int src,
                     int tag, MPI_Comm comm, bool persistent, MPI_Request *req_p)
{
    struct loom_comm *c = NULL;
    struct loom_type *t = NULL;
    int rc = check_recv(fn, buf, count, type, src, tag, comm, &c, &t);
    if (rc)
        return rc;
    return post_checked_recv(fn, buf, count, c, t, src, tag, comm, persistent, req_p);
}

static int blocking_send(const char *fn, const void *buf, MPI_Count count, MPI_Datatype type,
                         int dest, int tag, MPI_Comm comm, enum loom_send_mode mode)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = post_send(fn, buf, count, type, dest, tag, comm, mode, false, &r);
    if (rc)
        return rc;
    loom_req_wait(r);
    return finish(fn, &r, MPI_STATUS_IGNORE);
}

/* A standard or ready send: a tiny message goes into the pair's box or the
 * receiver's inbox without a request. */
static inline int send_standard(const char *fn, const void *buf, MPI_Count count, MPI_Datatype type,
                                int dest, int tag, MPI_Comm comm, enum loom_send_mode mode)
{
    struct loom_comm *c = NULL;
    struct loom_type *t = NULL;
    int rc = check_send(fn, buf, count, type, dest, tag, comm, &c, &t);
    if (LOOM_UNLIKELY(rc))
        return rc;
    size_t bytes = (size_t)count * t->size;
    if (LOOM_LIKELY(bytes <= LOOM_P2P_FAST_BYTES && dest != MPI_PROC_NULL) &&
        loom_p2p_send_tiny(c, buf, t, bytes, dest, tag))
        return MPI_SUCCESS;
    return blocking_send(fn, buf, count, type, dest, tag, comm, mode);
}

/* A blocking send and its large-count form (_c). */
#define BLOCKING_SEND(Name, how, mode)                                                             \
    int PMPI_##Name(const void *buf, int count, MPI_Datatype type, int dest, int tag,              \
                    MPI_Comm comm)                                                                 \
    {                                                                                              \
        return how("MPI_" #Name, buf, count, type, dest, tag, comm, mode);                         \
    }                                                                                              \
    LOOM_MPI_ALIAS(Name);                                                                          \
    int PMPI_##Name##_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,    \
                        MPI_Comm comm)                                                             \
    {                                                                                              \
        return how("MPI_" #Name "_c", buf, count, type, dest, tag, comm, mode);                    \
    }                                                                                              \
    LOOM_MPI_ALIAS(Name##_c)

BLOCKING_SEND(Send, send_standard, LOOM_MODE_STANDARD);
BLOCKING_SEND(Ssend, blocking_send, LOOM_MODE_SYNC);
BLOCKING_SEND(Rsend, send_standard, LOOM_MODE_READY);
BLOCKING_SEND(Bsend, blocking_send, LOOM_MODE_BUFFERED);

/* A nonblocking or persistent send and its large-count form (_c): the same
 * call of post_send but for the count's type and the name. */
#define POSTED_SEND(Name, mode, persistent)                                                        \
    int PMPI_##Name(const void *buf, int count, MPI_Datatype type, int dest, int tag,              \
                    MPI_Comm comm, MPI_Request *req)                                               \
    {                                                                                              \
        return post_send("MPI_" #Name, buf, count, type, dest, tag, comm, mode, persistent, req);  \
    }                                                                                              \
    LOOM_MPI_ALIAS(Name);                                                                          \
    int PMPI_##Name##_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,    \
                        MPI_Comm comm, MPI_Request *req)                                           \
    {                                                                                              \
        return post_send("MPI_" #Name "_c", buf, count, type, dest, tag, comm, mode, persistent,   \
                         req);                                                                     \
    }                                                                                              \
    LOOM_MPI_ALIAS(Name##_c)

POSTED_SEND(Isend, LOOM_MODE_STANDARD, false);
POSTED_SEND(Issend, LOOM_MODE_SYNC, false);
POSTED_SEND(Irsend, LOOM_MODE_READY, false);
POSTED_SEND(Ibsend, LOOM_MODE_BUFFERED, false);
POSTED_SEND(Send_init, LOOM_MODE_STANDARD, true);
POSTED_SEND(Ssend_init, LOOM_MODE_SYNC, true);
POSTED_SEND(Rsend_init, LOOM_MODE_READY, true);
POSTED_SEND(Bsend_init, LOOM_MODE_BUFFERED, true);

static int recv_impl(const char *fn, void *buf, MPI_Count count, MPI_Datatype type, int src,
                     int tag, MPI_Comm comm, MPI_Status *status)
{
    struct loom_comm *c = NULL;
    struct loom_type *t = NULL;
    int rc = check_recv(fn, buf, count, type, src, tag, comm, &c, &t);
    if (rc)
        return rc;
    /* A tiny message in the box from src or at the head of an otherwise
     * idle inbox: no request. */
    struct loom_probe m;
    size_t cap = (size_t)count * t->size;
    if (LOOM_LIKELY(src != MPI_PROC_NULL) && loom_p2p_recv_tiny(c, buf, t, cap, src, tag, &m)) {
        if (LOOM_LIKELY(m.bytes <= cap)) {
            set_status(status, m.src, m.tag, MPI_SUCCESS, false, m.bytes);
            return MPI_SUCCESS;
        }
        set_status(status, m.src, m.tag, MPI_ERR_TRUNCATE, false, cap);
        return truncated(fn, comm, m.bytes, m.src, m.tag, cap);
    }
    MPI_Request r = MPI_REQUEST_NULL;
    rc = post_checked_recv(fn, buf, count, c, t, src, tag, comm, false, &r);
    if (rc)
        return rc;
    loom_req_wait(r);
    return finish(fn, &r, status);
}
int PMPI_Recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    return recv_impl("MPI_Recv", buf, count, type, src, tag, comm, status);
}
LOOM_MPI_ALIAS(Recv);

int PMPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    return post_recv("MPI_Irecv", buf, count, type, src, tag, comm, false, req);
}
LOOM_MPI_ALIAS(Irecv);

int PMPI_Recv_init(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    return post_recv("MPI_Recv_init", buf, count, type, src, tag, comm, true, req);
}
LOOM_MPI_ALIAS(Recv_init);

static int sendrecv_impl(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                         int dest, int stag, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                         int src, int rtag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Request rr = MPI_REQUEST_NULL, sr = MPI_REQUEST_NULL;
    int rc = post_recv(fn, rbuf, rcount, rtype, src, rtag, comm, false, &rr);
    if (rc)
        return rc;
    rc = post_send(fn, sbuf, scount, stype, dest, stag, comm, LOOM_MODE_STANDARD, false, &sr);
    if (rc) {
        loom_p2p_cancel(rr);
        loom_req_free(rr);
        return rc;
    }
    loom_req_wait(sr);
    loom_req_wait(rr);
    rc = finish(fn, &sr, MPI_STATUS_IGNORE);
    int rc2 = finish(fn, &rr, status);
    return rc ? rc : rc2;
}
int PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                  int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                  MPI_Status *status)
{
    return sendrecv_impl("MPI_Sendrecv", sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src,
                         rtag, comm, status);
}
LOOM_MPI_ALIAS(Sendrecv);

static int sendrecv_replace_impl(const char *fn, void *buf, MPI_Count count, MPI_Datatype type,
                                 int dest, int stag, int src, int rtag, MPI_Comm comm,
                                 MPI_Status *status)
{
    struct loom_comm *c = NULL;
    struct loom_type *t = NULL;
    int rc = loom_mpi_comm_enter(fn, comm, &c);
    if (rc || (rc = check_buf(fn, comm, buf, count, type, &t)))
        return rc;
    /* Send from a packed copy so the receive can land in place. */
    size_t bytes = (size_t)count * t->size;
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
    if (bytes)
        loom_type_pack(tmp, buf, t, 0, bytes);
    rc = sendrecv_impl(fn, tmp, (MPI_Count)bytes, MPI_BYTE, dest, stag, buf, count, type, src, rtag,
                       comm, status);
    free(tmp);
    return rc;
}
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag, int src,
                          int rtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_replace_impl("MPI_Sendrecv_replace", buf, count, type, dest, stag, src, rtag,
                                 comm, status);
}
LOOM_MPI_ALIAS(Sendrecv_replace);

/* Starts an MPI_Isendrecv(_replace): the receive, then the send (from tmp
 * when not NULL: the replace's packed copy, owned by the pair). */
static int post_pair(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                     int dest, int stag, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src,
                     int rtag, MPI_Comm comm, void *tmp, MPI_Request *req_p)
{
    struct loom_comm *c = NULL;
    int rc = loom_mpi_comm_enter(fn, comm, &c);
    if (rc)
        goto err;
    if (!req_p) {
        rc = loom_mpi_err(comm, MPI_ERR_ARG, fn, "request is NULL");
        goto err;
    }
    pairs_reclaim();
    struct loom_mpi_pair *p = calloc(1, sizeof *p);
    loom_req *r = loom_req_alloc_rank(c->owner);
    if (!p || !r) {
        rc = loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory for requests");
        goto err_free;
    }
    rc = post_recv(fn, rbuf, rcount, rtype, src, rtag, comm, false, &p->recv);
    if (rc)
        goto err_free;
    rc = post_send(fn, sbuf, scount, stype, dest, stag, comm, LOOM_MODE_STANDARD, false, &p->send);
    if (rc)
        goto err_cancel;
    p->tmp = tmp;
    r->kind = LOOM_REQ_PAIR;
    r->comm = c;
    r->active = true;
    r->ext = p;
    *req_p = r;
    return MPI_SUCCESS;

err_cancel:
    loom_p2p_cancel(p->recv);
    loom_req_free(p->recv);
err_free:
    if (r) {
        atomic_store_explicit(&r->done, 1, memory_order_relaxed);
        loom_req_free(r);
    }
    free(p);
err:
    free(tmp);
    return rc;
}

int PMPI_Isendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf,
                   int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                   MPI_Request *req)
{
    return post_pair("MPI_Isendrecv", sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src,
                     rtag, comm, NULL, req);
}
LOOM_MPI_ALIAS(Isendrecv);

static int isendrecv_replace_impl(const char *fn, void *buf, MPI_Count count, MPI_Datatype type,
                                  int dest, int stag, int src, int rtag, MPI_Comm comm,
                                  MPI_Request *req)
{
    struct loom_comm *c = NULL;
    struct loom_type *t = NULL;
    int rc = loom_mpi_comm_enter(fn, comm, &c);
    if (rc || (rc = check_buf(fn, comm, buf, count, type, &t)))
        return rc;
    /* The send reads a packed copy, so the receive can land in place
     * whatever the order in which the halves progress. */
    size_t bytes = (size_t)count * t->size;
    void *tmp = malloc(bytes ? bytes : 1);
    if (!tmp)
        return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
    if (bytes)
        loom_type_pack(tmp, buf, t, 0, bytes);
    return post_pair(fn, tmp, (MPI_Count)bytes, MPI_BYTE, dest, stag, buf, count, type, src, rtag,
                     comm, tmp, req);
}
int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag, int src,
                           int rtag, MPI_Comm comm, MPI_Request *req)
{
    return isendrecv_replace_impl("MPI_Isendrecv_replace", buf, count, type, dest, stag, src, rtag,
                                  comm, req);
}
LOOM_MPI_ALIAS(Isendrecv_replace);

/* ---- large counts (MPI-4: the _c forms, counts as MPI_Count) --------------- */

int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                MPI_Status *status)
{
    return recv_impl("MPI_Recv_c", buf, count, type, src, tag, comm, status);
}
LOOM_MPI_ALIAS(Recv_c);

int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                 MPI_Request *req)
{
    return post_recv("MPI_Irecv_c", buf, count, type, src, tag, comm, false, req);
}
LOOM_MPI_ALIAS(Irecv_c);

int PMPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                     MPI_Request *req)
{
    return post_recv("MPI_Recv_init_c", buf, count, type, src, tag, comm, true, req);
}
LOOM_MPI_ALIAS(Recv_init_c);

int PMPI_Sendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
                    void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag,
                    MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_impl("MPI_Sendrecv_c", sbuf, scount, stype, dest, stag, rbuf, rcount, rtype,
                         src, rtag, comm, status);
}
LOOM_MPI_ALIAS(Sendrecv_c);

int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype type, int dest, int stag,
                            int src, int rtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_replace_impl("MPI_Sendrecv_replace_c", buf, count, type, dest, stag, src, rtag,
                                 comm, status);
}
LOOM_MPI_ALIAS(Sendrecv_replace_c);

int PMPI_Isendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, int dest, int stag,
                     void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int src, int rtag,
                     MPI_Comm comm, MPI_Request *req)
{
    return post_pair("MPI_Isendrecv_c", sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src,
                     rtag, comm, NULL, req);
}
LOOM_MPI_ALIAS(Isendrecv_c);

int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype type, int dest, int stag,
                             int src, int rtag, MPI_Comm comm, MPI_Request *req)
{
    return isendrecv_replace_impl("MPI_Isendrecv_replace_c", buf, count, type, dest, stag, src,
                                  rtag, comm, req);
}
LOOM_MPI_ALIAS(Isendrecv_replace_c);

/* ---- completion ----------------------------------------------------------- */

int PMPI_Wait(MPI_Request *req, MPI_Status *status)
{
    int me = -1;
    int rc = check_rank("MPI_Wait", &me);
    if (rc)
        return rc;
    if (!req)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Wait", "request is NULL");
    if (is_inactive(*req)) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    if ((rc = check_req("MPI_Wait", *req, me)))
        return rc;
    req_wait(*req);
    return finish("MPI_Wait", req, status);
}
LOOM_MPI_ALIAS(Wait);

int PMPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    int me = -1;
    int rc = check_rank("MPI_Test", &me);
    if (rc)
        return rc;
    if (!req || !flag)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test", "request or flag is NULL");
    if (is_inactive(*req)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    if ((rc = check_req("MPI_Test", *req, me)))
        return rc;
    *flag = req_test(*req);
    if (!*flag) {
        loom_ult_yield();
        return MPI_SUCCESS;
    }
    return finish("MPI_Test", req, status);
}
LOOM_MPI_ALIAS(Test);

static int check_array(const char *fn, int count, MPI_Request reqs[])
{
    int me = -1;
    int rc = check_rank(fn, &me);
    if (rc)
        return rc;
    if (count < 0)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_COUNT, fn, "count %d is negative", count);
    if (count > 0 && !reqs)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "the request array is NULL");
    for (int i = 0; i < count; i++)
        if (!is_inactive(reqs[i]) && (rc = check_req(fn, reqs[i], me)))
            return rc;
    return MPI_SUCCESS;
}

/* Finishes reqs[i] into statuses[i] for the array calls: errors are reported
 * in the status and the call returns MPI_ERR_IN_STATUS. */
static int finish_in_array(MPI_Request *rp, MPI_Status *st, bool *failed)
{
    loom_req *r = *rp;
    count_recv(r);
    fill_status(r, st);
    int err = r->status_error;
    if (r->persistent) {
        r->active = false;
    } else {
        if (r->kind == LOOM_REQ_GREQ) {
            int ferr = greq_free_fn(r);
            if (!err && ferr && st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = ferr;
            if (!err)
                err = ferr;
        }
        req_free(r);
        *rp = MPI_REQUEST_NULL;
    }
    if (err)
        *failed = true;
    return err;
}

static MPI_Status *status_at(MPI_Status *statuses, int i)
{
    return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    int rc = check_array("MPI_Waitall", count, reqs);
    if (rc)
        return rc;
    bool failed = false;
    for (int i = 0; i < count; i++) {
        if (is_inactive(reqs[i])) {
            empty_status(status_at(statuses, i));
            continue;
        }
        req_wait(reqs[i]);
        finish_in_array(&reqs[i], status_at(statuses, i), &failed);
    }
    if (failed)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_IN_STATUS, "MPI_Waitall",
                            "a request failed; see the statuses");
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Waitall);

int PMPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    int rc = check_array("MPI_Testall", count, reqs);
    if (rc)
        return rc;
    if (!flag)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Testall", "flag is NULL");
    loom_p2p_progress();
    for (int i = 0; i < count; i++)
        if (!is_inactive(reqs[i]) && !req_done(reqs[i])) {
            *flag = 0;
            loom_ult_yield();
            return MPI_SUCCESS;
        }
    *flag = 1;
    bool failed = false;
    for (int i = 0; i < count; i++) {
        if (is_inactive(reqs[i]))
            empty_status(status_at(statuses, i));
        else
            finish_in_array(&reqs[i], status_at(statuses, i), &failed);
    }
    if (failed)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_IN_STATUS, "MPI_Testall",
                            "a request failed; see the statuses");
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Testall);

/* Index of a done active request, -1 if none, MPI_UNDEFINED if none active. */
static int find_done(int count, MPI_Request reqs[])
{
    int active = 0;
    for (int i = 0; i < count; i++) {
        if (is_inactive(reqs[i]))
            continue;
        active++;
        if (req_done(reqs[i]))
            return i;
    }
    return active ? -1 : MPI_UNDEFINED;
}

int PMPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    int rc = check_array("MPI_Waitany", count, reqs);
    if (rc)
        return rc;
    if (!index)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Waitany", "index is NULL");
    int i;
    while ((i = find_done(count, reqs)) == -1)
        wait_any(count, reqs);
    *index = i;
    if (i == MPI_UNDEFINED) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    return finish("MPI_Waitany", &reqs[i], status);
}
LOOM_MPI_ALIAS(Waitany);

int PMPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    int rc = check_array("MPI_Testany", count, reqs);
    if (rc)
        return rc;
    if (!index || !flag)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Testany", "index or flag is NULL");
    loom_p2p_progress();
    int i = find_done(count, reqs);
    if (i == -1) {
        *flag = 0;
        *index = MPI_UNDEFINED;
        loom_ult_yield();
        return MPI_SUCCESS;
    }
    *flag = 1;
    *index = i;
    if (i == MPI_UNDEFINED) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    return finish("MPI_Testany", &reqs[i], status);
}
LOOM_MPI_ALIAS(Testany);

static int collect_done(const char *fn, int incount, MPI_Request reqs[], int *outcount,
                        int indices[], MPI_Status statuses[])
{
    int n = 0, active = 0;
    bool failed = false;
    for (int i = 0; i < incount; i++) {
        if (is_inactive(reqs[i]))
            continue;
        active++;
        if (req_done(reqs[i])) {
            indices[n] = i;
            finish_in_array(&reqs[i], status_at(statuses, n), &failed);
            n++;
        }
    }
    *outcount = active ? n : MPI_UNDEFINED;
    if (failed)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_IN_STATUS, fn,
                            "a request failed; see the statuses");
    return MPI_SUCCESS;
}

int PMPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    int rc = check_array("MPI_Waitsome", incount, reqs);
    if (rc)
        return rc;
    if (!outcount || (incount > 0 && !indices))
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Waitsome",
                            "outcount or indices is NULL");
    while (find_done(incount, reqs) == -1)
        wait_any(incount, reqs);
    return collect_done("MPI_Waitsome", incount, reqs, outcount, indices, statuses);
}
LOOM_MPI_ALIAS(Waitsome);

int PMPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    int rc = check_array("MPI_Testsome", incount, reqs);
    if (rc)
        return rc;
    if (!outcount || (incount > 0 && !indices))
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Testsome",
                            "outcount or indices is NULL");
    loom_p2p_progress();
    rc = collect_done("MPI_Testsome", incount, reqs, outcount, indices, statuses);
    if (*outcount == 0)
        loom_ult_yield();
    return rc;
}
LOOM_MPI_ALIAS(Testsome);

int PMPI_Request_free(MPI_Request *req)
{
    int me = -1;
    int rc = check_rank("MPI_Request_free", &me);
    if (rc)
        return rc;
    if (!req || *req == MPI_REQUEST_NULL)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Request_free",
                            "the request is MPI_REQUEST_NULL");
    if ((rc = check_req("MPI_Request_free", *req, me)))
        return rc;
    if ((*req)->kind == LOOM_REQ_GENERIC && (*req)->persistent) {
        if ((*req)->active)
            return loom_mpi_err((*req)->comm->handle, MPI_ERR_REQUEST, "MPI_Request_free",
                                "the persistent collective request is active (complete it first)");
        loom_mpi_coll_free_persistent(*req);
    } else if ((*req)->kind == LOOM_REQ_NBR) {
        if ((*req)->active)
            return loom_mpi_err((*req)->comm->handle, MPI_ERR_REQUEST, "MPI_Request_free",
                                "the persistent collective request is active (complete it first)");
        loom_mpi_nbr_free(*req);
    } else if ((*req)->kind == LOOM_REQ_PART) {
        if ((*req)->active)
            return loom_mpi_err((*req)->comm->handle, MPI_ERR_REQUEST, "MPI_Request_free",
                                "the partitioned request is active (complete it first)");
        loom_part_free(*req);
    } else if ((*req)->kind == LOOM_REQ_GREQ) {
        loom_req *r = *req;
        *req = MPI_REQUEST_NULL;
        if (!loom_req_done(r)) {
            /* MPI_Grequest_complete runs the free function and frees it. */
            ((struct loom_mpi_greq *)r->ext)->user_freed = true;
            return MPI_SUCCESS;
        }
        int ferr = greq_free_fn(r);
        req_free(r);
        if (ferr)
            return loom_mpi_err(MPI_COMM_SELF, ferr, "MPI_Request_free",
                                "the generalized request's free function returned error %d", ferr);
        return MPI_SUCCESS;
    }
    req_free(*req);
    *req = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Request_free);

int PMPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
    int me = -1;
    int rc = check_rank("MPI_Request_get_status", &me);
    if (rc)
        return rc;
    if (!flag)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Request_get_status", "flag is NULL");
    if (is_inactive(req)) {
        *flag = 1;
        empty_status(status);
        return MPI_SUCCESS;
    }
    if ((rc = check_req("MPI_Request_get_status", req, me)))
        return rc;
    *flag = req_test(req);
    if (*flag)
        fill_status(req, status);
    else
        loom_ult_yield();
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Request_get_status);

/* MPI-4.1's MPI_Request_get_status_all/any/some: MPI_Testall/any/some
 * that leave the requests as they are (neither freed nor made inactive). */
int PMPI_Request_get_status_all(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    const char *fn = "MPI_Request_get_status_all";
    int rc = check_array(fn, count, reqs);
    if (rc)
        return rc;
    if (!flag)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "flag is NULL");
    loom_p2p_progress();
    for (int i = 0; i < count; i++)
        if (!is_inactive(reqs[i]) && !req_done(reqs[i])) {
            *flag = 0;
            loom_ult_yield();
            return MPI_SUCCESS;
        }
    *flag = 1;
    bool failed = false;
    for (int i = 0; i < count; i++) {
        if (is_inactive(reqs[i])) {
            empty_status(status_at(statuses, i));
            continue;
        }
        fill_status(reqs[i], status_at(statuses, i));
        failed |= reqs[i]->status_error != MPI_SUCCESS;
    }
    if (failed)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_IN_STATUS, fn,
                            "a request failed; see the statuses");
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Request_get_status_all);

int PMPI_Request_get_status_any(int count, MPI_Request reqs[], int *index, int *flag,
                                MPI_Status *status)
{
    const char *fn = "MPI_Request_get_status_any";
    int rc = check_array(fn, count, reqs);
    if (rc)
        return rc;
    if (!index || !flag)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "index or flag is NULL");
    loom_p2p_progress();
    int i = find_done(count, reqs);
    if (i == -1) {
        *flag = 0;
        *index = MPI_UNDEFINED;
        loom_ult_yield();
        return MPI_SUCCESS;
    }
    *flag = 1;
    *index = i;
    if (i == MPI_UNDEFINED) {
        empty_status(status);
        return MPI_SUCCESS;
    }
    fill_status(reqs[i], status);
    return reqs[i]->status_error ? raise_req_error(fn, reqs[i]) : MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Request_get_status_any);

int PMPI_Request_get_status_some(int incount, MPI_Request reqs[], int *outcount, int indices[],
                                 MPI_Status statuses[])
{
    const char *fn = "MPI_Request_get_status_some";
    int rc = check_array(fn, incount, reqs);
    if (rc)
        return rc;
    if (!outcount || (incount > 0 && !indices))
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "outcount or indices is NULL");
    loom_p2p_progress();
    int n = 0, active = 0;
    bool failed = false;
    for (int i = 0; i < incount; i++) {
        if (is_inactive(reqs[i]))
            continue;
        active++;
        if (req_done(reqs[i])) {
            indices[n] = i;
            fill_status(reqs[i], status_at(statuses, n));
            failed |= reqs[i]->status_error != MPI_SUCCESS;
            n++;
        }
    }
    *outcount = active ? n : MPI_UNDEFINED;
    if (n == 0)
        loom_ult_yield();
    if (failed)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_IN_STATUS, fn,
                            "a request failed; see the statuses");
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Request_get_status_some);

/* ---- generalized requests (MPI-4.1 13.2) ----------------------------------- */

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    const char *fn = "MPI_Grequest_start";
    int me = -1;
    int rc = check_rank(fn, &me);
    if (rc)
        return rc;
    if (!request)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "request is NULL");
    struct loom_comm *self = loom_comm_lookup(MPI_COMM_SELF);
    struct loom_mpi_greq *g = calloc(1, sizeof *g);
    loom_req *r = g ? loom_req_alloc_rank(me) : NULL;
    if (!r) {
        free(g);
        return loom_mpi_err(MPI_COMM_SELF, MPI_ERR_NO_MEM, fn, "out of memory for requests");
    }
    g->query = query_fn;
    g->free_fn = free_fn;
    g->cancel = cancel_fn;
    g->extra = extra_state;
    r->kind = LOOM_REQ_GREQ;
    r->mode = LOOM_MODE_STANDARD;
    r->comm = self;
    r->peer = MPI_PROC_NULL;
    r->bytes = 0;
    r->ext = g;
    *request = r;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Grequest_start);

int PMPI_Grequest_complete(MPI_Request request)
{
    const char *fn = "MPI_Grequest_complete";
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (request == MPI_REQUEST_NULL)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, fn, "the request is MPI_REQUEST_NULL");
    if (request->magic != LOOM_REQ_MAGIC || request->kind != LOOM_REQ_GREQ)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, fn,
                            "the request is not a generalized request (MPI_Grequest_start)");
    if (loom_req_done(request))
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, fn,
                            "the generalized request is complete already");
    struct loom_mpi_greq *g = request->ext;
    if (g->user_freed) {
        /* Freed by MPI_Request_free while pending: nobody waits for it. */
        atomic_store_explicit(&request->done, 1, memory_order_relaxed);
        int ferr = greq_free_fn(request);
        req_free(request);
        if (ferr)
            return loom_mpi_err(MPI_COMM_SELF, ferr, fn,
                                "the generalized request's free function returned error %d", ferr);
        return MPI_SUCCESS;
    }
    loom_req_complete_async(request);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Grequest_complete);

int PMPI_Start(MPI_Request *req)
{
    int me = -1;
    int rc = check_rank("MPI_Start", &me);
    if (rc)
        return rc;
    if (!req || *req == MPI_REQUEST_NULL)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Start", "the request is null");
    if ((rc = check_req("MPI_Start", *req, me)))
        return rc;
    if (!(*req)->persistent)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Start",
                            "the request is not persistent");
    if ((*req)->active)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Start",
                            "the request is already active");
    return start(*req);
}
LOOM_MPI_ALIAS(Start);

int PMPI_Startall(int count, MPI_Request reqs[])
{
    int rc = loom_mpi_check_init("MPI_Startall");
    if (rc)
        return rc;
    if (count < 0 || (count > 0 && !reqs))
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Startall",
                            "bad count or request array");
    for (int i = 0; i < count; i++)
        if ((rc = PMPI_Start(&reqs[i])))
            return rc;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Startall);

int PMPI_Cancel(MPI_Request *req)
{
    int me = -1;
    int rc = check_rank("MPI_Cancel", &me);
    if (rc)
        return rc;
    if (!req || *req == MPI_REQUEST_NULL)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Cancel", "the request is null");
    if ((rc = check_req("MPI_Cancel", *req, me)))
        return rc;
    if ((*req)->kind == LOOM_REQ_GENERIC || (*req)->kind == LOOM_REQ_NBR)
        return loom_mpi_err((*req)->comm->handle, MPI_ERR_REQUEST, "MPI_Cancel",
                            "a collective's request cannot be cancelled");
    if ((*req)->kind == LOOM_REQ_GREQ) {
        struct loom_mpi_greq *g = (*req)->ext;
        int crc = g->cancel ? g->cancel(g->extra, loom_req_done(*req)) : MPI_SUCCESS;
        if (crc)
            return loom_mpi_err(MPI_COMM_SELF, crc, "MPI_Cancel",
                                "the generalized request's cancel function returned error %d", crc);
        return MPI_SUCCESS;
    }
    if ((*req)->kind == LOOM_REQ_PART)
        return loom_mpi_err((*req)->comm->handle, MPI_ERR_REQUEST, "MPI_Cancel",
                            "Loom does not cancel partitioned requests");
    if ((*req)->kind == LOOM_REQ_PAIR) {
        struct loom_mpi_pair *p = (*req)->ext;
        loom_p2p_cancel(p->recv);
        loom_p2p_cancel(p->send);
    } else if ((*req)->active || !(*req)->persistent) {
        loom_p2p_cancel(*req);
    }
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Cancel);

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (!status || status == MPI_STATUS_IGNORE || !flag)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test_cancelled",
                            "status or flag is NULL");
    *flag = status->loom_cancelled;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Test_cancelled);

/* ---- probe and matched receives -------------------------------------- */

static int probe_common(const char *fn, int src, int tag, MPI_Comm comm, bool block, bool remove,
                        int *flag, MPI_Message *msg, MPI_Status *status)
{
    struct loom_comm *c = NULL;
    int rc = loom_mpi_comm_enter(fn, comm, &c);
    if (rc || (rc = check_source(fn, comm, c, src, tag)))
        return rc;
    if (src == MPI_PROC_NULL) {
        if (flag)
            *flag = 1;
        if (msg)
            *msg = MPI_MESSAGE_NO_PROC;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    struct loom_probe seen;
    int me = loom_rank_self()->rank;
    struct loom_envelope *e =
        block ? loom_p2p_probe_wait(me, c->sh->context_id, src, tag, remove, &seen)
              : loom_p2p_probe(me, c->sh->context_id, src, tag, remove, &seen);
    if (flag)
        *flag = e != NULL;
    if (!e) {
        if (msg)
            *msg = MPI_MESSAGE_NULL;
        loom_ult_yield();
        return MPI_SUCCESS;
    }
    if (msg)
        *msg = (MPI_Message)e;
    if (status != MPI_STATUS_IGNORE) {
        status->MPI_SOURCE = seen.src;
        status->MPI_TAG = seen.tag;
        status->MPI_ERROR = MPI_SUCCESS;
        status->loom_cancelled = 0;
        status->loom_count = (long long)seen.bytes;
    }
    return MPI_SUCCESS;
}

int PMPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *status)
{
    return probe_common("MPI_Probe", src, tag, comm, true, false, NULL, NULL, status);
}
LOOM_MPI_ALIAS(Probe);

int PMPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    if (!flag)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Iprobe", "flag is NULL");
    return probe_common("MPI_Iprobe", src, tag, comm, false, false, flag, NULL, status);
}
LOOM_MPI_ALIAS(Iprobe);

int PMPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status)
{
    if (!msg)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Mprobe", "message is NULL");
    return probe_common("MPI_Mprobe", src, tag, comm, true, true, NULL, msg, status);
}
LOOM_MPI_ALIAS(Mprobe);

int PMPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg, MPI_Status *status)
{
    if (!flag || !msg)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Improbe", "flag or message is NULL");
    return probe_common("MPI_Improbe", src, tag, comm, false, true, flag, msg, status);
}
LOOM_MPI_ALIAS(Improbe);

static int matched_recv(const char *fn, void *buf, MPI_Count count, MPI_Datatype type,
                        MPI_Message *msg, MPI_Request *req_p)
{
    int me = -1;
    int rc = check_rank(fn, &me);
    if (rc)
        return rc;
    if (!msg || *msg == MPI_MESSAGE_NULL)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, fn, "the message is MPI_MESSAGE_NULL");
    struct loom_comm *world = loom_comm_lookup(MPI_COMM_WORLD);
    struct loom_type *t = NULL;
    if ((rc = check_buf(fn, MPI_COMM_WORLD, buf, count, type, &t)))
        return rc;
    loom_req *r = loom_req_alloc_rank(me);
    if (!r)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_NO_MEM, fn, "out of memory for requests");
    r->kind = LOOM_REQ_RECV;
    r->buf = buf;
    r->count = (size_t)count;
    r->type = t;
    loom_type_retain(t);
    r->bytes = (size_t)count * t->size;
    r->comm = world;
    r->active = true;
    if (*msg == MPI_MESSAGE_NO_PROC) {
        r->status_source = MPI_PROC_NULL;
        atomic_store_explicit(&r->done, 1, memory_order_relaxed);
    } else {
        struct loom_envelope *e = (struct loom_envelope *)*msg;
        if (e->magic != LOOM_ENV_MAGIC) {
            loom_req_free(r);
            return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, fn,
                                "invalid or already received message");
        }
        loom_p2p_recv_envelope(r, e);
    }
    *msg = MPI_MESSAGE_NULL;
    *req_p = r;
    return MPI_SUCCESS;
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg, MPI_Status *status)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = matched_recv("MPI_Mrecv", buf, count, type, msg, &r);
    if (rc)
        return rc;
    loom_req_wait(r);
    return finish("MPI_Mrecv", &r, status);
}
LOOM_MPI_ALIAS(Mrecv);

int PMPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *msg, MPI_Request *req)
{
    if (!req)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Imrecv", "request is NULL");
    return matched_recv("MPI_Imrecv", buf, count, type, msg, req);
}
LOOM_MPI_ALIAS(Imrecv);

int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *msg,
                 MPI_Status *status)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = matched_recv("MPI_Mrecv_c", buf, count, type, msg, &r);
    if (rc)
        return rc;
    loom_req_wait(r);
    return finish("MPI_Mrecv_c", &r, status);
}
LOOM_MPI_ALIAS(Mrecv_c);

int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *msg, MPI_Request *req)
{
    if (!req)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Imrecv_c", "request is NULL");
    return matched_recv("MPI_Imrecv_c", buf, count, type, msg, req);
}
LOOM_MPI_ALIAS(Imrecv_c);

/* ---- buffered mode --------------------------------------------------------- */

/* The attached buffer of one rank: chunks in use, in address order. */
struct bchunk {
    char *at;
    size_t len;
    loom_req *send; /* the internal send from this chunk */
    struct bchunk *next;
};

struct bsend_state {
    char *buf;
    size_t size;
    struct bchunk *used;
};

static struct bsend_state *_Atomic bsend_states;

static struct bsend_state *bsend_self(void)
{
    struct bsend_state *all = atomic_load_explicit(&bsend_states, memory_order_acquire);
    if (!all) {
        static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
        pthread_mutex_lock(&m);
        all = atomic_load_explicit(&bsend_states, memory_order_relaxed);
        if (!all) {
            all = calloc((size_t)loom_job.nranks, sizeof *all);
            atomic_store_explicit(&bsend_states, all, memory_order_release);
        }
        pthread_mutex_unlock(&m);
    }
    return &all[loom_rank_self()->rank];
}

/* Frees the chunks whose sends have completed. */
static void bsend_reclaim(struct bsend_state *b)
{
    for (struct bchunk **pp = &b->used; *pp;) {
        struct bchunk *c = *pp;
        if (loom_req_done(c->send)) {
            *pp = c->next;
            loom_req_free(c->send);
            free(c);
        } else {
            pp = &c->next;
        }
    }
}

static int bsend_start(loom_req *r)
{
    struct bsend_state *b = bsend_self();
    bsend_reclaim(b);
    size_t need = r->bytes + MPI_BSEND_OVERHEAD;
    /* First fit between the chunks in use. */
    char *at = b->buf;
    struct bchunk **pp = &b->used;
    for (; *pp; pp = &(*pp)->next) {
        if ((size_t)((*pp)->at - at) >= need)
            break;
        at = (*pp)->at + (*pp)->len;
    }
    if (!b->buf || (!*pp && (size_t)(b->buf + b->size - at) < need))
        return loom_mpi_err(r->comm->handle, MPI_ERR_BUFFER, "MPI_Bsend",
                            "the attached buffer (%zu bytes) has no room for a message of %zu "
                            "bytes plus MPI_BSEND_OVERHEAD",
                            b->size, r->bytes);
    struct bchunk *c = malloc(sizeof *c);
    loom_req *s = loom_req_alloc_rank(r->owner);
    if (!c || !s) {
        free(c);
        return loom_mpi_err(r->comm->handle, MPI_ERR_NO_MEM, "MPI_Bsend", "out of memory");
    }
    c->at = at;
    c->len = need;
    c->send = s;
    c->next = *pp;
    *pp = c;
    if (r->bytes)
        loom_type_pack(at, r->buf, r->type, 0, r->bytes);
    s->kind = LOOM_REQ_SEND;
    s->mode = LOOM_MODE_STANDARD;
    s->buf = at;
    s->count = r->bytes;
    s->type = loom_type_get(MPI_BYTE);
    s->bytes = r->bytes;
    s->peer = r->peer;
    s->tag = r->tag;
    s->ctx = r->ctx;
    s->comm = r->comm;
    loom_p2p_start_send(s, r->comm->rank);
    /* The buffered send is complete once its data is in the buffer. */
    atomic_store_explicit(&r->done, 1, memory_order_release);
    return MPI_SUCCESS;
}

static int buffer_attach(const char *fn, void *buffer, MPI_Count size)
{
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (size < 0 || (!buffer && size > 0))
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_BUFFER, fn, "invalid buffer (%p, %lld bytes)",
                            buffer, (long long)size);
    struct bsend_state *b = bsend_self();
    if (b->buf)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_BUFFER, fn, "a buffer is already attached");
    b->buf = buffer;
    b->size = (size_t)size;
    return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void *buffer, int size)
{
    return buffer_attach("MPI_Buffer_attach", buffer, size);
}
LOOM_MPI_ALIAS(Buffer_attach);

int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    return buffer_attach("MPI_Buffer_attach_c", buffer, size);
}
LOOM_MPI_ALIAS(Buffer_attach_c);

/* Detaches the rank's buffer once every message in it is delivered; an int
 * size that cannot hold the buffer's is an error before anything changes. */
static int buffer_detach(const char *fn, void *buffer_addr, MPI_Count *size, bool fits_int)
{
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (!buffer_addr || !size)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "NULL argument");
    struct bsend_state *b = bsend_self();
    if (fits_int && b->size > INT_MAX)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_BUFFER, fn,
                            "the attached buffer has %zu bytes, more than an int holds: detach it "
                            "with MPI_Buffer_detach_c",
                            b->size);
    /* Blocks until every message in the buffer has been delivered. */
    for (struct bchunk *c = b->used; c; c = c->next)
        loom_req_wait(c->send);
    bsend_reclaim(b);
    *(void **)buffer_addr = b->buf;
    *size = (MPI_Count)b->size;
    b->buf = NULL;
    b->size = 0;
    return MPI_SUCCESS;
}

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    MPI_Count n = 0;
    int rc = buffer_detach("MPI_Buffer_detach", buffer_addr, size ? &n : NULL, true);
    if (rc == MPI_SUCCESS)
        *size = (int)n;
    return rc;
}
LOOM_MPI_ALIAS(Buffer_detach);

int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    return buffer_detach("MPI_Buffer_detach_c", buffer_addr, size, false);
}
LOOM_MPI_ALIAS(Buffer_detach_c);

/* ---- status fields (MPI-4.1 3.2.5) ---------------------------------------- */

#define STATUS_FIELD(Name, field)                                                                  \
    int PMPI_Status_get_##Name(MPI_Status *status, int *value)                                     \
    {                                                                                              \
        if (!status || status == MPI_STATUS_IGNORE || !value)                                      \
            return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_get_" #Name,              \
                                "status or the result is NULL");                                   \
        *value = status->field;                                                                    \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    LOOM_MPI_ALIAS(Status_get_##Name);                                                             \
    int PMPI_Status_set_##Name(MPI_Status *status, int value)                                      \
    {                                                                                              \
        if (!status || status == MPI_STATUS_IGNORE)                                                \
            return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_set_" #Name,              \
                                "status is NULL");                                                 \
        status->field = value;                                                                     \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    LOOM_MPI_ALIAS(Status_set_##Name)

STATUS_FIELD(source, MPI_SOURCE);
STATUS_FIELD(tag, MPI_TAG);
STATUS_FIELD(error, MPI_ERROR);
