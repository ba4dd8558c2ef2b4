/*
 * Matching and the three protocols (see p2p.h): direct copy into a posted
 * receive, eager cells for small unexpected messages, rendezvous for large
 * or synchronous ones. Pools: requests are owned by their rank (no locks);
 * envelopes are owned by the sending rank and come back through a lock-free
 * return stack when the receiver is done with them.
 */
#include "pt2pt/p2p.h"

#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "datatype/datatype.h"
#include "runtime/job.h"
#include "util/log.h"

#define ENV_SMALL  256 /* payload bytes kept in a small envelope */
#define POOL_CHUNK 64

size_t loom_p2p_eager_max = 16384;

/* The matching state of one rank. The first line is what senders touch. */
struct p2p_rank {
    _Atomic int lock;
    loom_req *posted_head, *posted_tail;
    struct loom_envelope *unexp_head, *unexp_tail;
    _Atomic uint32_t unexp_seq; /* bumped on each unexpected arrival */
    loom_waiter_slot probe_waiter LOOM_ALIGNED_CL;
    /* Envelopes this rank sent that receivers have finished with. */
    _Atomic(struct loom_envelope *) env_returned[2] LOOM_ALIGNED_CL;
    /* Owner only. */
    struct loom_envelope *env_free[2] LOOM_ALIGNED_CL;
    loom_req *req_free;
    loom_req *orphans;
} LOOM_ALIGNED_CL;

static struct p2p_rank *ranks;
static int nranks;

static inline void lock(struct p2p_rank *p)
{
    for (;;) {
        /* acquire: the queues as the last holder left them. */
        if (!atomic_exchange_explicit(&p->lock, 1, memory_order_acquire))
            return;
        while (atomic_load_explicit(&p->lock, memory_order_relaxed))
            loom_cpu_relax();
    }
}

static inline void unlock(struct p2p_rank *p)
{
    /* release: our queue changes before the next holder's reads. */
    atomic_store_explicit(&p->lock, 0, memory_order_release);
}

int loom_p2p_job_init(int n)
{
    const char *e = getenv("LOOM_EAGER_MAX");
    if (e && *e)
        loom_p2p_eager_max = (size_t)loom_env_size("LOOM_EAGER_MAX", 16384);
    ranks = aligned_alloc(LOOM_CACHE_LINE, (size_t)n * sizeof *ranks);
    if (!ranks)
        return LOOM_ERR_NOMEM;
    memset(ranks, 0, (size_t)n * sizeof *ranks);
    nranks = n;
    return LOOM_OK;
}

int loom_p2p_rank_init(int world_rank)
{
    return LOOM_OK;
}

void loom_p2p_rank_fini(int world_rank) {}

/* ---- pools -------------------------------------------------------------- */

static struct p2p_rank *self_state(void)
{
    return &ranks[loom_rank_self()->rank];
}

loom_req *loom_req_alloc(void)
{
    struct p2p_rank *p = self_state();
    if (LOOM_UNLIKELY(!p->req_free)) {
        /* Reclaim requests freed while active, once they have completed. */
        for (loom_req **pp = &p->orphans; *pp;) {
            loom_req *r = *pp;
            if (loom_req_done(r)) {
                *pp = r->pool_next;
                r->pool_next = p->req_free;
                p->req_free = r;
            } else {
                pp = &r->pool_next;
            }
        }
    }
    if (LOOM_UNLIKELY(!p->req_free)) {
        loom_req *chunk = aligned_alloc(LOOM_CACHE_LINE, POOL_CHUNK * sizeof(loom_req));
        if (!chunk)
            return NULL;
        memset(chunk, 0, POOL_CHUNK * sizeof(loom_req));
        for (int i = 0; i < POOL_CHUNK; i++) {
            chunk[i].pool_next = p->req_free;
            p->req_free = &chunk[i];
        }
    }
    loom_req *r = p->req_free;
    p->req_free = r->pool_next;
    r->magic = LOOM_REQ_MAGIC;
    atomic_store_explicit(&r->done, 0, memory_order_relaxed);
    r->next = NULL;
    r->status_source = MPI_ANY_SOURCE;
    r->status_tag = MPI_ANY_TAG;
    r->status_error = MPI_SUCCESS;
    r->status_bytes = 0;
    r->cancelled = false;
    r->persistent = r->active = r->orphan = false;
    r->env = NULL;
    r->bsend_chunk = NULL;
    r->type = NULL;
    r->owner = loom_rank_self()->rank;
    return r;
}

void loom_req_free(loom_req *r)
{
    struct p2p_rank *p = self_state();
    r->magic = LOOM_REQ_FREED;
    if (r->type)
        loom_type_release(r->type);
    r->type = NULL;
    if (!loom_req_done(r)) {
        r->orphan = true;
        r->pool_next = p->orphans;
        p->orphans = r;
        return;
    }
    r->pool_next = p->req_free;
    p->req_free = r;
}

static bool req_is_done(const void *arg)
{
    return loom_req_done(arg);
}

void loom_req_wait(loom_req *r)
{
    if (!loom_req_done(r))
        loom_ult_wait(req_is_done, r, &r->waiter);
}

/* Completes r: results first, then the flag, then the wake-up. */
static inline void complete(loom_req *r)
{
    /* seq_cst: the results and data are visible before done, and done is
     * ordered before our look at the waiter slot (pairs with the waiter's
     * store to the slot before it re-checks done). */
    atomic_store_explicit(&r->done, 1, memory_order_seq_cst);
    loom_ult_notify(&r->waiter);
}

/* An envelope from the calling (sending) rank's pool of the given class. */
static struct loom_envelope *env_alloc(int owner, int cls)
{
    struct p2p_rank *p = &ranks[owner];
    struct loom_envelope *e = p->env_free[cls];
    if (LOOM_UNLIKELY(!e)) {
        /* acquire: the receivers' last reads of these envelopes are done. */
        e = atomic_exchange_explicit(&p->env_returned[cls], NULL, memory_order_acquire);
        if (!e) {
            size_t payload = cls ? loom_p2p_eager_max : ENV_SMALL;
            size_t sz = (sizeof(struct loom_envelope) + payload + LOOM_CACHE_LINE - 1) &
                        ~(size_t)(LOOM_CACHE_LINE - 1);
            char *chunk = aligned_alloc(LOOM_CACHE_LINE, sz * 16);
            if (!chunk)
                loom_fatal("out of memory for message envelopes");
            for (int i = 0; i < 16; i++) {
                struct loom_envelope *n = (struct loom_envelope *)(chunk + sz * (size_t)i);
                n->next = e;
                e = n;
            }
        }
    }
    p->env_free[cls] = e->next;
    e->cls = (uint8_t)cls;
    e->owner = owner;
    e->magic = LOOM_ENV_MAGIC;
    e->data = e->inline_data;
    e->sreq = NULL;
    e->rndv = false;
    return e;
}

/* Gives an envelope back to its owner's pool; any rank may call it. */
static void env_release(struct loom_envelope *e)
{
    int cls = e->cls;
    struct p2p_rank *p = &ranks[e->owner];
    e->magic = 0;
    struct loom_envelope *head = atomic_load_explicit(&p->env_returned[cls], memory_order_relaxed);
    do {
        e->next = head;
        /* release: we are done reading the payload before the owner reuses it. */
    } while (!atomic_compare_exchange_weak_explicit(&p->env_returned[cls], &head, e,
                                                    memory_order_release, memory_order_relaxed));
}

/* ---- matching ---------------------------------------------------------- */

static inline bool matches(uint32_t ctx, int src, int tag, uint32_t mctx, int msrc, int mtag)
{
    return ctx == mctx && (src == MPI_ANY_SOURCE || src == msrc) &&
           (tag == MPI_ANY_TAG || tag == mtag);
}

/* Copies the message (src layout) into the receive (req), with truncation. */
static void deliver(loom_req *rr, const void *sbuf, const struct loom_type *st, size_t bytes,
                    int src, int tag)
{
    size_t n = bytes;
    rr->status_error = MPI_SUCCESS;
    if (n > rr->bytes) {
        n = rr->bytes;
        rr->status_error = MPI_ERR_TRUNCATE;
    }
    if (n) {
        const struct loom_type *dt = rr->type;
        if (LOOM_LIKELY(dt->contig && st->contig))
            memcpy((char *)rr->buf + dt->true_lb, (const char *)sbuf + st->true_lb, n);
        else
            loom_type_copy(rr->buf, dt, sbuf, st, 0, n);
    }
    rr->status_source = src;
    rr->status_tag = tag;
    rr->status_bytes = n;
    /* a truncated receive reports the sender's size in the error path */
    if (rr->status_error)
        rr->count = bytes;
}

void loom_p2p_start_send(loom_req *req, int me)
{
    int dest_world = loom_comm_world_rank(req->comm, req->peer);
    struct p2p_rank *p = &ranks[dest_world];
    uint32_t ctx = req->ctx;
    int tag = req->tag;
    req->dest_world = dest_world;
    lock(p);
    loom_req *r = p->posted_head, *prev = NULL;
    for (; r; prev = r, r = r->next)
        if (matches(r->ctx, r->peer, r->tag, ctx, me, tag))
            break;
    if (r) {
        if (prev)
            prev->next = r->next;
        else
            p->posted_head = r->next;
        if (p->posted_tail == r)
            p->posted_tail = prev;
        unlock(p);
        deliver(r, req->buf, req->type, req->bytes, me, tag);
        complete(r);
        complete(req);
        return;
    }
    struct loom_envelope *e;
    if (req->mode != LOOM_MODE_SYNC && req->bytes <= loom_p2p_eager_max) {
        /* Eager: copy into a cell while holding the lock, so the message is
         * whole before anyone can match it, and stays in order. */
        e = env_alloc(req->owner, req->bytes > ENV_SMALL);
        e->bytes = req->bytes;
        if (req->bytes) {
            if (req->type->contig)
                memcpy(e->data, (const char *)req->buf + req->type->true_lb, req->bytes);
            else
                loom_type_pack(e->data, req->buf, req->type, 0, req->bytes);
        }
    } else {
        e = env_alloc(req->owner, 0);
        e->bytes = req->bytes;
        e->rndv = true;
        e->sreq = req;
        req->env = e;
    }
    e->ctx = ctx;
    e->src = me;
    e->tag = tag;
    e->next = NULL;
    if (p->unexp_tail)
        p->unexp_tail->next = e;
    else
        p->unexp_head = e;
    p->unexp_tail = e;
    atomic_store_explicit(&p->unexp_seq,
                          atomic_load_explicit(&p->unexp_seq, memory_order_relaxed) + 1,
                          memory_order_seq_cst);
    unlock(p);
    loom_ult_notify(&p->probe_waiter);
    if (!e->rndv)
        complete(req);
}

void loom_p2p_recv_envelope(loom_req *req, struct loom_envelope *e)
{
    if (e->rndv) {
        loom_req *s = e->sreq;
        deliver(req, s->buf, s->type, e->bytes, e->src, e->tag);
        s->env = NULL;
        env_release(e);
        complete(s);
    } else {
        size_t n = e->bytes;
        req->status_error = MPI_SUCCESS;
        if (n > req->bytes) {
            n = req->bytes;
            req->status_error = MPI_ERR_TRUNCATE;
            req->count = e->bytes;
        }
        if (n) {
            if (req->type->contig)
                memcpy((char *)req->buf + req->type->true_lb, e->data, n);
            else
                loom_type_unpack(req->buf, req->type, e->data, 0, n);
        }
        req->status_source = e->src;
        req->status_tag = e->tag;
        req->status_bytes = n;
        env_release(e);
    }
    complete(req);
}

/* Unlinks and returns the first unexpected message matching; lock held. */
static struct loom_envelope *take_unexpected(struct p2p_rank *p, uint32_t ctx, int src, int tag,
                                             bool remove)
{
    struct loom_envelope *e = p->unexp_head, *prev = NULL;
    for (; e; prev = e, e = e->next)
        if (matches(ctx, src, tag, e->ctx, e->src, e->tag))
            break;
    if (e && remove) {
        if (prev)
            prev->next = e->next;
        else
            p->unexp_head = e->next;
        if (p->unexp_tail == e)
            p->unexp_tail = prev;
        e->next = NULL;
    }
    return e;
}

void loom_p2p_start_recv(loom_req *req)
{
    struct p2p_rank *p = &ranks[req->owner];
    lock(p);
    struct loom_envelope *e = take_unexpected(p, req->ctx, req->peer, req->tag, true);
    if (!e) {
        req->next = NULL;
        if (p->posted_tail)
            p->posted_tail->next = req;
        else
            p->posted_head = req;
        p->posted_tail = req;
        unlock(p);
        return;
    }
    unlock(p);
    loom_p2p_recv_envelope(req, e);
}

struct loom_envelope *loom_p2p_probe(int world_rank, uint32_t ctx, int src, int tag, bool remove,
                                     struct loom_probe *seen)
{
    struct p2p_rank *p = &ranks[world_rank];
    lock(p);
    struct loom_envelope *e = take_unexpected(p, ctx, src, tag, remove);
    if (e) {
        seen->src = e->src;
        seen->tag = e->tag;
        seen->bytes = e->bytes;
    }
    unlock(p);
    return e;
}

struct seq_wait {
    struct p2p_rank *p;
    uint32_t seq;
};

static bool seq_moved(const void *arg)
{
    const struct seq_wait *w = arg;
    return atomic_load_explicit(&w->p->unexp_seq, memory_order_acquire) != w->seq;
}

struct loom_envelope *loom_p2p_probe_wait(int world_rank, uint32_t ctx, int src, int tag,
                                          bool remove, struct loom_probe *seen)
{
    struct p2p_rank *p = &ranks[world_rank];
    for (;;) {
        struct seq_wait w = {p, atomic_load_explicit(&p->unexp_seq, memory_order_acquire)};
        struct loom_envelope *e = loom_p2p_probe(world_rank, ctx, src, tag, remove, seen);
        if (e)
            return e;
        loom_ult_wait(seq_moved, &w, &p->probe_waiter);
    }
}

bool loom_p2p_cancel(loom_req *req)
{
    if (loom_req_done(req))
        return false;
    if (req->kind == LOOM_REQ_RECV) {
        struct p2p_rank *p = &ranks[req->owner];
        lock(p);
        loom_req *r = p->posted_head, *prev = NULL;
        for (; r && r != req; prev = r, r = r->next)
            ;
        if (r) {
            if (prev)
                prev->next = r->next;
            else
                p->posted_head = r->next;
            if (p->posted_tail == r)
                p->posted_tail = prev;
        }
        unlock(p);
        if (!r)
            return false;
    } else {
        struct p2p_rank *p = &ranks[req->dest_world];
        lock(p);
        struct loom_envelope *e = p->unexp_head, *prev = NULL;
        for (; e && !(e->rndv && e->sreq == req); prev = e, e = e->next)
            ;
        if (e) {
            if (prev)
                prev->next = e->next;
            else
                p->unexp_head = e->next;
            if (p->unexp_tail == e)
                p->unexp_tail = prev;
        }
        unlock(p);
        if (!e)
            return false;
        req->env = NULL;
        env_release(e);
    }
    req->cancelled = true;
    complete(req);
    return true;
}

static bool any_done(loom_req *const *reqs, int n)
{
    for (int i = 0; i < n; i++)
        if (reqs[i] && loom_req_done(reqs[i]))
            return true;
    return false;
}

void loom_req_wait_any(loom_req *const *reqs, int n)
{
    struct loom_ult *self = loom_ult_self();
    for (int spins = 0;; spins++) {
        if (any_done(reqs, n))
            return;
        if (!self || (spins < 4096 && !loom_sched_others_ready())) {
            loom_cpu_relax();
            continue;
        }
        /* seq_cst: registered in every slot before the last look at done;
         * a completer that misses us has set done before we look. */
        for (int i = 0; i < n; i++)
            if (reqs[i])
                atomic_store_explicit(&reqs[i]->waiter, self, memory_order_seq_cst);
        atomic_thread_fence(memory_order_seq_cst);
        if (any_done(reqs, n))
            return;
        loom_ult_park();
    }
}
