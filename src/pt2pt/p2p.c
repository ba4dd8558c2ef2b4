/*
 * Matching and the protocols (see p2p.h): pair boxes and the inbox for tiny
 * messages, direct copy into a posted receive, eager cells for small
 * unexpected messages, rendezvous for large or synchronous ones. Pools:
 * requests are owned by their rank (no locks); envelopes are owned by the
 * rank that took them and come back through a lock-free return stack.
 *
 * Cache lines that move between two workers, per message (docs/pt2pt-perf.md):
 *  - box send: the pair's line, once; a reply in the same line carries the
 *    acknowledgement of the request, so a ping-pong moves one line back
 *    and forth as bench/cacheline.c does.
 *  - tiny send, receiver waiting: the sender claims a position on the
 *    receiver's tail line (it stays with the sender while it is the only
 *    one sending there) and writes one slot line; the receiver's poll reads
 *    that line back. One transfer on the critical path. The merge, the copy
 *    into the user buffer and the completion are local to the receiver, and
 *    the sender's look at the receiver's waiter slot hits a shared line.
 *  - larger send to a posted receive: the receiver's lock line, then the
 *    request's first line (match fields, buffer, status, done), the buffer
 *    lines, then the receiver's poll reads the request line back.
 * Completions and wake-ups use plain release stores, then a look at the
 * waiter slot. Between workers that look is ordered after the store by
 * loom_notify_fence(): a compiler barrier when waiters park watched (their
 * worker re-checks their condition, see runtime/ult.c), else a full fence,
 * paired with the parking side's exchange on its waiter slot (Dekker).
 */
#include "pt2pt/p2p.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "datatype/datatype.h"
#include "runtime/job.h"
#include "util/log.h"
#include "util/options.h"

#define ENV_SMALL   256 /* payload bytes kept in a small envelope */
#define POOL_CHUNK  64
#define INBOX_SLOTS 64u /* a power of two */
#define INBOX_MASK  (INBOX_SLOTS - 1)

size_t loom_p2p_eager_max = 16384;
static uint64_t spin_ns = 50000;
/* Boxes a rank takes messages from at most (LOOM_P2P_BOXES; 0: no boxes),
 * the messages a sender sends through its box to one receiver before it
 * opens a box to it (LOOM_P2P_BOX_AFTER), and the largest such message
 * (BOX_DATA, at most LOOM_EAGER_MAX: a box message is buffered). */
static uint32_t box_cap = 32, box_after = 16;
static size_t box_max = LOOM_P2P_FAST_BYTES;
/* Demote a box line after a store to it for a peer on another worker
 * (LOOM_P2P_DEMOTE): 1 (default) while our worker has no other rank ready,
 * 2 always, 0 never; 0 where the CPU lacks CLDEMOTE. */
static int box_demote = 1;
/* The largest message the inbox takes: up to LOOM_P2P_INBOX_BYTES in the
 * slot, and above that (up to LOOM_P2P_INBOX_CELL, at most LOOM_EAGER_MAX
 * and LOOM_P2P_FAST_BYTES; 0: none) in an eager cell of its sender's pool.
 * The default keeps to the small cells (ENV_SMALL): with the eager-sized
 * ones (LOOM_EAGER_MAX apart), a window of 1 KiB messages at 16 ranks ran
 * slower than by the locked path. */
static size_t inbox_max = ENV_SMALL;

/* One message: envelope and payload in one cache line; or, for a message of
 * more than LOOM_P2P_INBOX_BYTES (at most inbox_max), the envelope
 * and the address of an eager cell that holds the payload (slot_cell). */
struct inbox_slot {
    /* (position + 1) mod 2^32 once it holds that position's message: a slot
     * is reused every INBOX_SLOTS positions, far below the wrap. */
    _Atomic uint32_t seq;
    uint32_t ctx;
    int src, tag; /* src: comm rank of the sender */
    int world;    /* world rank of the sender (its box, if any, goes first) */
    uint32_t bytes;
    char data[LOOM_P2P_INBOX_BYTES];
} LOOM_ALIGNED_CL;
_Static_assert(sizeof(struct inbox_slot) == LOOM_CACHE_LINE, "an inbox slot is one cache line");

/* The eager cell that holds the payload of the message in slot s, or NULL
 * when the slot holds it. */
static inline struct loom_envelope *slot_cell(const struct inbox_slot *s)
{
    struct loom_envelope *e = NULL;
    if (s->bytes > LOOM_P2P_INBOX_BYTES)
        memcpy(&e, s->data, sizeof e);
    return e;
}

/* One rank's half of the box of a pair of ranks: its last message to the
 * other rank, and how many of the other's messages it has taken. Only that
 * rank writes its half. */
struct box_half {
    /* BOX_BYTES(w): the last message's bytes; BOX_COUNT(w): messages sent
     * through this half; BOX_ACK(w): messages of the other half taken. Both
     * counts are mod 256: a half holds one message, so a reader's view of a
     * count lags the writer's by at most one. Stored last. */
    _Atomic uint32_t word;
    uint32_t ctx;
    int src, tag; /* src: comm rank of the sender */
    /* The payload up to LOOM_P2P_BOX_BYTES, else in the half's data area. */
    char data[LOOM_P2P_BOX_BYTES];
};
#define BOX_BYTES(w) ((w)&0xfffu)
#define BOX_COUNT(w) (((w) >> 12) & 0xffu)
#define BOX_ACK(w)   (((w) >> 20) & 0xffu)
#define BOX_ACK_MASK (0xffu << 20)
#define BOX_SET      0x80000000u /* in every stored word: never 0 (box_msg) */
/* Bytes a box carries: a half's data area (at most LOOM_EAGER_MAX). */
#define BOX_DATA LOOM_P2P_FAST_BYTES
_Static_assert(BOX_DATA <= 0xfff, "a box message's size fits its word");

/* The box of a pair of ranks: both halves share one cache line, and a rank
 * acknowledges the other's message in the same store that publishes its
 * own, so a reply travels in the line its request came in and nothing
 * else moves (one transfer each way, as bench/cacheline.c bounces one
 * line; a per-receiver inbox moves a different line each way). A message
 * of more than LOOM_P2P_BOX_BYTES goes into the sending half's data area,
 * whose lines move in parallel with the header's: an eager cell that needs
 * no lock, no queue and no allocation. */
struct pair_box {
    struct box_half half[2]; /* [0]: written by the lower world rank */
    char data[2][BOX_DATA];  /* [i]: the data area of half[i] */
} LOOM_ALIGNED_CL;
_Static_assert(offsetof(struct pair_box, data) == LOOM_CACHE_LINE,
               "a pair's box header is one line");

/* The other half of h's line. */
static inline struct box_half *box_other(struct box_half *h)
{
    return (struct box_half *)((uintptr_t)h ^ sizeof(struct box_half));
}

/* Where the payload of a message of `bytes` in half h is. */
static inline char *box_payload(struct box_half *h, size_t bytes)
{
    if (LOOM_LIKELY(bytes <= LOOM_P2P_BOX_BYTES))
        return h->data;
    uintptr_t i = ((uintptr_t)h / sizeof(struct box_half)) & 1;
    struct pair_box *line = (struct pair_box *)((uintptr_t)h & ~(uintptr_t)(LOOM_CACHE_LINE - 1));
    return line->data[i];
}

/* A rank's own state for its half of the box with one peer. */
struct box_out {
    struct box_half *half; /* our half; NULL while the pair has no box */
    bool open;             /* the peer takes messages from our half (else acks only) */
    bool pending;          /* our last message there may not be taken yet */
    uint32_t word;         /* what we last stored in half->word */
    /* Inbox position + 1 that the peer's inbox head must pass before the
     * box may carry our next message (0: none of ours is unmerged). */
    uint64_t inbox_until;
    uint32_t sent; /* tiny messages sent to the peer while it had no box */
    bool no_room;  /* the peer had no room for another box */
    /* Messages still to send by the inbox or the locked path before the
     * box is tried again, and how many after the next failed try (doubling
     * from 16 to 256, halved by a success): a stream fills the box at once,
     * and each try reads lines the receiver keeps writing (its
     * acknowledgement, its inbox head); a ping-pong never fails a try. */
    uint16_t skip, backoff;
    /* The envelope our half holds (box_send stores only what changed). */
    uint32_t ctx;
    int src, tag;
};

/* The receiving side of a box: where the sender writes, and how many of
 * its messages were taken. Changed under the receiver's lock (by whoever
 * takes a message); the receiver acknowledges them in its own half. */
struct box_rx {
    struct box_half *half;
    _Atomic uint32_t taken;
    int from; /* world rank of the sender */
};
_Static_assert(offsetof(loom_req, status_tag) + sizeof(int) <= LOOM_CACHE_LINE,
               "what a matching sender touches fits the request's first cache line");

/* The matching state of one rank. */
struct p2p_rank {
    /* Lock holders: the owner, and senders on the locked path. */
    _Atomic int lock;
    _Atomic bool ack_stale;      /* a box message taken, not yet acknowledged */
    _Atomic uint64_t inbox_head; /* next inbox position to merge */
    /* The heads are stored with set_head() under the lock and read
     * without it by the owner (queues_idle). */
    loom_req *posted_head, *posted_tail;
    struct loom_envelope *unexp_head, *unexp_tail;
    _Atomic uint32_t unexp_seq; /* bumped on each unexpected arrival */
    /* Queue lengths and their maxima (MPI_T): written under the lock, read
     * without it by the owner's tools calls. */
    uint32_t n_posted, max_posted, n_unexp, max_unexp;
    /* Inbox producers: the next position to claim, and a value inbox_head
     * had (a lower bound of the free room, so claims rarely read the lock line). */
    _Atomic uint64_t inbox_tail LOOM_ALIGNED_CL;
    _Atomic uint64_t inbox_room;
    /* Boxes into this rank, set up under the lock and read by anyone:
     * box_in[world rank of the sender] (NULL: none), the first n_rx of rx. */
    _Atomic(_Atomic(struct box_rx *) *) box_in LOOM_ALIGNED_CL;
    struct box_rx *rx;
    _Atomic uint32_t n_rx;
    /* Written by the owner when it parks, read by whoever wakes it. */
    loom_waiter_slot waiter LOOM_ALIGNED_CL;
    int worker; /* the worker that runs the rank (fixed) */
    /* Envelopes this rank took that others have finished with. */
    _Atomic(struct loom_envelope *) env_returned[2] LOOM_ALIGNED_CL;
    /* Owner only. */
    struct loom_envelope *env_free[2] LOOM_ALIGNED_CL;
    loom_req *req_free;
    loom_req *orphans;
    struct box_out *box_out; /* per peer (world rank); NULL until first needed */
    struct box_rx *ack_due;  /* a box we took from without acknowledging yet */
    /* What this rank sent and received (loom_p2p_stats_read). */
    uint64_t sent[LOOM_P2P_NPROTO] LOOM_ALIGNED_CL;
    uint64_t sent_bytes[LOOM_P2P_NPROTO];
    uint64_t recvd, recvd_bytes;
    struct inbox_slot inbox[INBOX_SLOTS];
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

/* Stores a queue head (lock held): an atomic store, as the owner reads the
 * heads without the lock. */
#define set_head(h, v) __atomic_store_n((h), (v), __ATOMIC_RELAXED)

/* True when p (the caller's own state) has no posted receive and no
 * unexpected message. Exact under the lock; without it a look may only err
 * towards busy for a receive, as only the owner posts receives, and an
 * unexpected message that comes after the look bumps unexp_seq. */
static inline bool queues_idle(struct p2p_rank *p)
{
    return !__atomic_load_n(&p->posted_head, __ATOMIC_RELAXED) &&
           !__atomic_load_n(&p->unexp_head, __ATOMIC_RELAXED);
}

/* The deadlock report's list of what rank r was sent and has not received
 * (its unexpected queue; tiny messages still in a pair box are not seen). */
static void unreceived(int r, char *buf, size_t n)
{
    struct p2p_rank *p = &ranks[r];
    lock(p);
    size_t len = 0;
    int count = 0, listed = 0;
    for (const struct loom_envelope *e = p->unexp_head; e; e = e->next) {
        if (e->ctx & 1)
            continue; /* a collective's own traffic (its context id + 1) */
        if (count++ > listed || listed == 4 || len + 96 >= n)
            continue;
        char from[64];
        if (e->ctx == 0)
            snprintf(from, sizeof from, "rank %d", e->src);
        else
            snprintf(from, sizeof from, "rank %d of context %u", e->src, e->ctx);
        len += (size_t)snprintf(buf + len, n - len, "%s%s (tag %d, %zu bytes)", listed ? ", " : "",
                                from, e->tag, e->bytes);
        listed++;
    }
    unlock(p);
    if (count > listed && len + 32 < n)
        snprintf(buf + len, n - len, " and %d more", count - listed);
    if (count) {
        char head[40];
        snprintf(head, sizeof head, "%d message%s: from ", count, count == 1 ? "" : "s");
        size_t hl = strlen(head), bl = strlen(buf);
        if (hl + bl < n) {
            memmove(buf + hl, buf, bl + 1);
            memcpy(buf, head, hl);
        }
    }
}

int loom_p2p_job_init(int n)
{
    loom_p2p_eager_max = (size_t)loom_opt_size(LOOM_OPT_EAGER_MAX);
    /* The runtime's spin budget for a lone waiter, read the same way. */
    spin_ns = (uint64_t)loom_opt_size(LOOM_OPT_SPIN_NS);
    box_cap = (uint32_t)loom_opt_size(LOOM_OPT_P2P_BOXES);
    box_after = (uint32_t)loom_opt_size(LOOM_OPT_P2P_BOX_AFTER);
    box_demote = loom_cpu_can_demote() ? (int)loom_opt_size(LOOM_OPT_P2P_DEMOTE) : 0;
    inbox_max = (size_t)loom_opt_size(LOOM_OPT_P2P_INBOX_CELL);
    if (inbox_max > loom_p2p_eager_max)
        inbox_max = loom_p2p_eager_max;
    if (inbox_max > LOOM_P2P_FAST_BYTES)
        inbox_max = LOOM_P2P_FAST_BYTES;
    if (inbox_max < LOOM_P2P_INBOX_BYTES)
        inbox_max = LOOM_P2P_INBOX_BYTES;
    box_max = loom_p2p_eager_max < BOX_DATA ? loom_p2p_eager_max : BOX_DATA;
    if (box_max < LOOM_P2P_BOX_BYTES)
        box_max = LOOM_P2P_BOX_BYTES;
    ranks = aligned_alloc(LOOM_CACHE_LINE, (size_t)n * sizeof *ranks);
    if (!ranks)
        return LOOM_ERR_NOMEM;
    memset(ranks, 0, (size_t)n * sizeof *ranks);
    for (int i = 0; i < n; i++)
        ranks[i].worker = loom_job.ranks ? loom_job.ranks[i].worker : 0;
    nranks = n;
    /* Release: the ranks' state before the deadlock report may read it. */
    atomic_store_explicit(&loom_deadlock_unreceived, unreceived, memory_order_release);
    return LOOM_OK;
}

int loom_p2p_rank_init(int world_rank)
{
    (void)world_rank;
    return LOOM_OK;
}

void loom_p2p_rank_fini(int world_rank)
{
    (void)world_rank;
}

static inline int self_rank(void)
{
    return loom_rank_self()->rank;
}

/* ---- completion and wake-up -------------------------------------------- */

/* Wakes rank p's ULT if it is parked in a p2p wait. The caller made its
 * condition true first (a release store); from another worker our look at
 * the slot follows loom_notify_fence() (Dekker with rank_wait). */
static inline void wake_rank(struct p2p_rank *p, bool same_worker)
{
    struct loom_ult *u;
    if (same_worker) {
        /* The owner runs on our thread, so it is not between its
         * registration and its last look; no read-modify-write needed. A
         * waker on another worker may take the slot at the same time: both
         * wake the owner, which only leaves it a permit. */
        u = atomic_load_explicit(&p->waiter, memory_order_relaxed);
        if (!u)
            return;
        atomic_store_explicit(&p->waiter, NULL, memory_order_relaxed);
    } else {
        loom_notify_fence();
        if (!atomic_load_explicit(&p->waiter, memory_order_relaxed))
            return;
        u = atomic_exchange_explicit(&p->waiter, NULL, memory_order_acq_rel);
        if (!u)
            return;
    }
    loom_ult_wake(u);
}

/* Completes r (its results are written) as world rank me. The owner may
 * be me and still parked: another ULT of its worker (a collective's runner)
 * may complete its requests. */
static void child_done(loom_req *parent, bool failed);

static inline void complete(loom_req *r, int me)
{
    struct p2p_rank *p = &ranks[r->owner];
    bool same = p->worker == ranks[me].worker;
    /* Read before done: the owner may recycle r once it is set. */
    loom_req *parent = r->parent;
    bool failed = r->status_error != MPI_SUCCESS;
    /* Results and data before done. r may be freed once done is set. */
    atomic_store_explicit(&r->done, 1, memory_order_release);
    if (LOOM_UNLIKELY(parent)) {
        /* The owner waits on the parent, whose completion wakes it. */
        child_done(parent, failed);
        return;
    }
    wake_rank(p, same);
}

/* ---- compound requests ------------------------------------------------ */

/* The starter's hold on a compound request's count, and the flag a failed
 * child sets in it. */
#define COMPOUND_HOLD   1
#define COMPOUND_FAILED (1 << 30)

/* A child of parent is done: the last one completes the parent. */
static void child_done(loom_req *parent, bool failed)
{
    if (failed)
        atomic_fetch_or_explicit(&parent->pending, COMPOUND_FAILED, memory_order_relaxed);
    /* acq_rel: every child's results are visible to the one that completes
     * the parent, and through its release store to the owner. */
    int old = atomic_fetch_sub_explicit(&parent->pending, 1, memory_order_acq_rel);
    if ((old & ~COMPOUND_FAILED) != 1)
        return;
    if (old & COMPOUND_FAILED) {
        parent->status_error = MPI_ERR_TRUNCATE;
        /* The text MPI_Wait raises (NULL when out of memory: a generic one). */
        parent->why = strdup("a message of the call was longer than its receive block");
    }
    loom_req_complete_async(parent);
}

bool loom_req_compound_init(loom_req *parent, int n)
{
    parent->children = n ? malloc((size_t)n * sizeof *parent->children) : NULL;
    if (n && !parent->children)
        return false;
    parent->nchildren = 0;
    atomic_store_explicit(&parent->pending, COMPOUND_HOLD, memory_order_relaxed);
    return true;
}

void loom_req_compound_add(loom_req *parent, loom_req *child)
{
    child->parent = parent;
    parent->children[parent->nchildren++] = child;
    atomic_fetch_add_explicit(&parent->pending, 1, memory_order_relaxed);
}

void loom_req_compound_release(loom_req *parent)
{
    child_done(parent, false);
}

/* A done generic request's own allocations: its error text, its children. */
static void generic_release(loom_req *r)
{
    free(r->why);
    r->why = NULL;
    for (int i = 0; i < r->nchildren; i++)
        loom_req_free(r->children[i]);
    free(r->children);
    r->children = NULL;
    r->nchildren = 0;
}

/* ---- pools -------------------------------------------------------------- */

static loom_req *req_alloc(struct p2p_rank *p, int me)
{
    if (LOOM_UNLIKELY(!p->req_free)) {
        /* Reclaim requests freed while active, once they have completed. */
        for (loom_req **pp = &p->orphans; *pp;) {
            loom_req *r = *pp;
            if (loom_req_done(r)) {
                if (r->type)
                    loom_type_release(r->type);
                r->type = NULL;
                if (r->kind == LOOM_REQ_GENERIC)
                    generic_release(r);
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
    r->owner = me;
    r->parent = NULL;
    r->children = NULL;
    r->nchildren = 0;
    return r;
}

loom_req *loom_req_alloc_rank(int me)
{
    return req_alloc(&ranks[me], me);
}

loom_req *loom_req_alloc_generic(struct loom_comm *comm)
{
    loom_req *r = loom_req_alloc_rank(comm->owner);
    if (!r)
        return NULL;
    r->kind = LOOM_REQ_GENERIC;
    r->mode = LOOM_MODE_STANDARD;
    r->comm = comm;
    r->peer = MPI_PROC_NULL;
    r->bytes = 0;
    r->active = true;
    return r;
}

loom_req *loom_req_alloc(void)
{
    int me = self_rank();
    return req_alloc(&ranks[me], me);
}

void loom_req_free(loom_req *r)
{
    struct p2p_rank *p = &ranks[r->owner];
    r->magic = LOOM_REQ_FREED;
    if (!loom_req_done(r)) {
        /* A receive still posted copies with its type when it matches: the
         * type (and a generic one's error text) go with it later. */
        r->orphan = true;
        r->pool_next = p->orphans;
        p->orphans = r;
        return;
    }
    if (r->type)
        loom_type_release(r->type);
    r->type = NULL;
    if (r->kind == LOOM_REQ_GENERIC)
        generic_release(r);
    r->pool_next = p->req_free;
    p->req_free = r;
}

/* An envelope from the pool of rank `owner` (the caller) of the given class. */
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

/* ---- copies --------------------------------------------------------------- */

/* memcpy, without a call for the 4 to 16 bytes of a tiny message. */
static inline void copy_tiny(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n) {
        memcpy(d, s, n);
    }
}

/* Bytes a receive takes of a message of `bytes`; records a truncation. */
static inline size_t recv_room(loom_req *rr, size_t bytes)
{
    if (LOOM_LIKELY(bytes <= rr->bytes))
        return bytes;
    rr->status_error = MPI_ERR_TRUNCATE;
    rr->count = bytes; /* the error message reports the sender's size */
    return rr->bytes;
}

/* Copies the message (the sender's layout) into the receive rr. */
static void deliver(loom_req *rr, const void *sbuf, const struct loom_type *st, size_t bytes,
                    int src, int tag)
{
    size_t n = recv_room(rr, bytes);
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
}

/* Copies a packed message (an inbox slot or an eager cell) into rr. */
static inline void deliver_packed(loom_req *rr, const char *data, size_t bytes, int src, int tag)
{
    size_t n = recv_room(rr, bytes);
    if (n) {
        const struct loom_type *dt = rr->type;
        if (LOOM_LIKELY(dt->contig)) {
            if (n <= LOOM_P2P_INBOX_BYTES)
                copy_tiny((char *)rr->buf + dt->true_lb, data, n);
            else
                memcpy((char *)rr->buf + dt->true_lb, data, n);
        } else {
            loom_type_unpack(rr->buf, dt, data, 0, n);
        }
    }
    rr->status_source = src;
    rr->status_tag = tag;
    rr->status_bytes = n;
}

/* ---- matching ---------------------------------------------------------- */

static inline bool matches(uint32_t ctx, int src, int tag, uint32_t mctx, int msrc, int mtag)
{
    return ctx == mctx && (src == MPI_ANY_SOURCE || src == msrc) &&
           (tag == MPI_ANY_TAG || tag == mtag);
}

/* Queue length counters (lock held): a store the owner may read without
 * the lock. */
#define set_count(c, v) __atomic_store_n((c), (v), __ATOMIC_RELAXED)
static inline void count_in(uint32_t *n, uint32_t *max)
{
    set_count(n, *n + 1);
    if (*n > *max)
        set_count(max, *n);
}

/* Counts a message sent by p (the caller's own state). */
static inline void count_sent(struct p2p_rank *p, enum loom_p2p_proto proto, size_t bytes)
{
    p->sent[proto]++;
    p->sent_bytes[proto] += bytes;
}

/* Unlinks posted receive r (after prev, NULL at the head) from p; lock held. */
static inline void unlink_posted(struct p2p_rank *p, loom_req *r, loom_req *prev)
{
    set_count(&p->n_posted, p->n_posted - 1);
    if (prev)
        prev->next = r->next;
    else
        set_head(&p->posted_head, r->next);
    if (p->posted_tail == r)
        p->posted_tail = prev;
}

/* Unlinks unexpected message e (after prev, NULL at the head) from p; lock
 * held. */
static inline void unlink_unexpected(struct p2p_rank *p, struct loom_envelope *e,
                                     struct loom_envelope *prev)
{
    set_count(&p->n_unexp, p->n_unexp - 1);
    if (prev)
        prev->next = e->next;
    else
        set_head(&p->unexp_head, e->next);
    if (p->unexp_tail == e)
        p->unexp_tail = prev;
}

/* Unlinks and returns the first posted receive of p that matches a message
 * (ctx, src, tag); lock held. */
static inline loom_req *take_posted(struct p2p_rank *p, uint32_t ctx, int src, int tag)
{
    loom_req *r = p->posted_head, *prev = NULL;
    for (; r; prev = r, r = r->next)
        if (matches(r->ctx, r->peer, r->tag, ctx, src, tag))
            break;
    if (r)
        unlink_posted(p, r, prev);
    return r;
}

/* Appends e to p's unexpected queue and says so to probers; lock held. */
static inline void append_unexpected(struct p2p_rank *p, struct loom_envelope *e)
{
    e->next = NULL;
    if (p->unexp_tail)
        p->unexp_tail->next = e;
    else
        set_head(&p->unexp_head, e);
    p->unexp_tail = e;
    count_in(&p->n_unexp, &p->max_unexp);
    /* seq_cst: ordered before the waker's look at the owner's waiter slot
     * (a prober waits for unexp_seq to move). */
    atomic_store_explicit(&p->unexp_seq,
                          atomic_load_explicit(&p->unexp_seq, memory_order_relaxed) + 1,
                          memory_order_seq_cst);
}

/* ---- boxes ------------------------------------------------------------------ */

/* The box from world rank src into p, or NULL. */
static inline struct box_rx *box_from(struct p2p_rank *p, int src)
{
    /* acquire: the array's and the record's set-up by their opener. */
    _Atomic(struct box_rx *) *in = atomic_load_explicit(&p->box_in, memory_order_acquire);
    return in ? atomic_load_explicit(&in[src], memory_order_acquire) : NULL;
}

/* The word of box x's sender half if it holds a message not yet taken, else 0. */
static inline uint32_t box_msg(struct box_rx *x, memory_order mo)
{
    uint32_t w = atomic_load_explicit(&x->half->word, mo);
    uint32_t taken = atomic_load_explicit(&x->taken, memory_order_relaxed);
    return BOX_COUNT(w) != (taken & 0xffu) ? w : 0;
}

/* True when one of p's boxes holds a message. */
static inline bool boxes_ready(struct p2p_rank *p)
{
    /* acquire: the records below n_rx. */
    uint32_t n = atomic_load_explicit(&p->n_rx, memory_order_acquire);
    for (uint32_t k = 0; k < n; k++)
        /* seq_cst: a parking owner's last look (Dekker with box_send). */
        if (box_msg(&p->rx[k], memory_order_seq_cst))
            return true;
    return false;
}

/* Counts the message in x's sender half as taken; lock held. */
static inline void box_taken(struct box_rx *x)
{
    /* release: our reads of the message before the acknowledgement that
     * lets its sender reuse the half (box_ack reads this). */
    atomic_store_explicit(&x->taken, atomic_load_explicit(&x->taken, memory_order_relaxed) + 1,
                          memory_order_release);
}

/* Takes the message in box x into p's queues as rank me, if there is one:
 * matches a posted receive, else queues it as unexpected. The sender's
 * older messages are in p's queues already (its inbox messages are merged
 * before it uses the box). Lock held. Returns true when the message went
 * to the unexpected queue. */
static bool box_take(struct p2p_rank *p, struct box_rx *x, int me)
{
    /* acquire: the envelope and payload its sender wrote. */
    uint32_t w = box_msg(x, memory_order_acquire);
    if (!w)
        return false;
    struct box_half *b = x->half;
    size_t bytes = BOX_BYTES(w);
    const char *data = box_payload(b, bytes);
    bool queued = false;
    loom_req *r = take_posted(p, b->ctx, b->src, b->tag);
    if (r) {
        deliver_packed(r, data, bytes, b->src, b->tag);
        complete(r, me);
    } else {
        struct loom_envelope *e = env_alloc(me, bytes > ENV_SMALL);
        e->ctx = b->ctx;
        e->src = b->src;
        e->tag = b->tag;
        e->bytes = bytes;
        copy_tiny(e->data, data, bytes);
        append_unexpected(p, e);
        queued = true;
    }
    box_taken(x);
    /* The owner acknowledges it at its next look (acks_flush). */
    atomic_store_explicit(&p->ack_stale, true, memory_order_relaxed);
    return queued;
}

/* ---- the inbox ------------------------------------------------------------ */

/* True when the next inbox position of p holds a published message. */
static inline bool inbox_ready(struct p2p_rank *p)
{
    uint64_t h = atomic_load_explicit(&p->inbox_head, memory_order_relaxed);
    /* seq_cst: a parking owner's last look (Dekker with inbox_send). */
    return atomic_load_explicit(&p->inbox[h & INBOX_MASK].seq, memory_order_seq_cst) ==
           (uint32_t)(h + 1);
}

/* True when a message waits in p's inbox or boxes. */
static inline bool msgs_ready(struct p2p_rank *p)
{
    return inbox_ready(p) || boxes_ready(p);
}

/* Merges the inbox of p into its queues, as rank me, in position order: up
 * to the first position not yet published, or (all) up to every position
 * claimed so far, waiting for its claimer to publish it (claimers never
 * block between claim and publish). A message in its sender's box goes
 * first: the sender used the inbox because the box was in use. Lock held.
 * Returns true when a message went to the unexpected queue. */
static bool inbox_merge(struct p2p_rank *p, int me, bool all)
{
    uint64_t h0 = atomic_load_explicit(&p->inbox_head, memory_order_relaxed), h = h0;
    /* Our own earlier claims are below the tail we read (program order). */
    uint64_t end = all ? atomic_load_explicit(&p->inbox_tail, memory_order_relaxed) : UINT64_MAX;
    bool queued = false, boxes = atomic_load_explicit(&p->n_rx, memory_order_relaxed) != 0;
    for (; h < end; h++) {
        struct inbox_slot *s = &p->inbox[h & INBOX_MASK];
        /* acquire: the envelope and payload its producer wrote. */
        while (atomic_load_explicit(&s->seq, memory_order_acquire) != (uint32_t)(h + 1)) {
            if (!all)
                goto done;
            loom_cpu_relax();
        }
        if (boxes) {
            struct box_rx *x = box_from(p, s->world);
            if (x)
                queued |= box_take(p, x, me);
        }
        struct loom_envelope *cell = slot_cell(s);
        loom_req *r = take_posted(p, s->ctx, s->src, s->tag);
        if (r) {
            deliver_packed(r, cell ? cell->data : s->data, s->bytes, s->src, s->tag);
            complete(r, me);
            if (cell)
                env_release(cell);
            continue;
        }
        if (cell) {
            append_unexpected(p, cell);
            queued = true;
            continue;
        }
        struct loom_envelope *e = env_alloc(me, 0);
        e->ctx = s->ctx;
        e->src = s->src;
        e->tag = s->tag;
        e->bytes = s->bytes;
        copy_tiny(e->data, s->data, s->bytes);
        append_unexpected(p, e);
        queued = true;
    }
done:
    if (h != h0)
        /* release: our reads of these slots are done before producers reuse
         * them, and a sender that sees the head past its message knows it
         * merged. */
        atomic_store_explicit(&p->inbox_head, h, memory_order_release);
    return queued;
}

/* Claims the next inbox position of p; false when the inbox is full. */
static inline bool inbox_claim(struct p2p_rank *p, uint64_t *pos_p)
{
    uint64_t t = atomic_load_explicit(&p->inbox_tail, memory_order_relaxed);
    for (;;) {
        /* acquire: whoever stored it had acquired inbox_head, after the
         * merger's reads of the slot we may reuse. */
        uint64_t room = atomic_load_explicit(&p->inbox_room, memory_order_acquire);
        if (LOOM_UNLIKELY(t - room >= INBOX_SLOTS)) {
            /* acquire: the merger's reads of slots below head are done. */
            uint64_t h = atomic_load_explicit(&p->inbox_head, memory_order_acquire);
            if (t - h >= INBOX_SLOTS)
                return false;
            /* release: passes on what our acquire of inbox_head gave us. */
            atomic_store_explicit(&p->inbox_room, h, memory_order_release);
        }
        if (atomic_compare_exchange_weak_explicit(&p->inbox_tail, &t, t + 1, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *pos_p = t;
            return true;
        }
    }
}

/* Sends a message of up to inbox_max bytes into dest's inbox as world
 * rank me (the caller); false when the inbox is full. *pos_p: the position
 * it took. */
static inline bool inbox_send(int dest, int me, uint32_t ctx, int src, int tag, const void *buf,
                              const struct loom_type *t, size_t bytes, uint64_t *pos_p)
{
    struct p2p_rank *p = &ranks[dest];
    uint64_t pos;
    if (!inbox_claim(p, &pos))
        return false;
    struct inbox_slot *s = &p->inbox[pos & INBOX_MASK];
    /* The next slot is likely ours too (a stream): ask for its line now.
     * The receiver read it a lap ago, so our stores there would wait for
     * its ownership, and the next claim's locked instruction for them (a
     * stream of 8 B messages, 2 ranks: 10.5-11.3 M/s without, 12.4-13.1 M/s
     * with; docs/pt2pt-perf.md). */
    loom_prefetch_write(&p->inbox[(pos + 1) & INBOX_MASK]);
    s->ctx = ctx;
    s->src = src;
    s->tag = tag;
    s->world = me;
    s->bytes = (uint32_t)bytes;
    char *data = s->data;
    if (bytes > LOOM_P2P_INBOX_BYTES) {
        /* A cell of our pool, filled before the slot is published: the
         * merger matches it or queues the cell itself as unexpected. */
        int cls = bytes > ENV_SMALL;
        struct loom_envelope *e = env_alloc(me, cls);
        /* As the slot below: the next cell's lines are likely the next
         * message's (64-256 B streams at 2 ranks: 6.0-6.6 -> 6.6-7.4 M/s). */
        struct loom_envelope *next = ranks[me].env_free[cls];
        if (next) {
            loom_prefetch_write(next);
            for (size_t k = 0; k < bytes; k += LOOM_CACHE_LINE)
                loom_prefetch_write(next->inline_data + k);
        }
        e->ctx = ctx;
        e->src = src;
        e->tag = tag;
        e->bytes = bytes;
        memcpy(s->data, &e, sizeof e);
        data = e->data;
    }
    if (bytes) {
        if (LOOM_LIKELY(t->contig))
            copy_tiny(data, (const char *)buf + t->true_lb, bytes);
        else
            loom_type_pack(data, buf, t, 0, bytes);
    }
    bool same = p->worker == ranks[me].worker;
    /* Publish the envelope and payload before the sequence number that tells
     * the merger they are there. */
    atomic_store_explicit(&s->seq, (uint32_t)(pos + 1), memory_order_release);
    wake_rank(p, same);
    *pos_p = pos;
    return true;
}

/* ---- our half of a box ------------------------------------------------------ */

/* Zeroed memory in whole cache lines of its own: one rank's state shares
 * no line with another's (a shared line would move with every message). */
static void *zalloc_lines(size_t n)
{
    n = (n + LOOM_CACHE_LINE - 1) & ~(size_t)(LOOM_CACHE_LINE - 1);
    void *p = aligned_alloc(LOOM_CACHE_LINE, n);
    if (p)
        memset(p, 0, n);
    return p;
}

/* Our (rank s's) state for the box with peer; NULL when boxes are off or
 * out of memory. Owner only. */
static inline struct box_out *box_out_of(struct p2p_rank *s, int peer)
{
    if (LOOM_UNLIKELY(!s->box_out)) {
        if (!box_cap)
            return NULL;
        s->box_out = zalloc_lines((size_t)nranks * sizeof *s->box_out);
        if (!s->box_out)
            return NULL;
    }
    return &s->box_out[peer];
}

/* Starts o on a new (zeroed) half, of which we are the only writer. */
static void box_out_take_half(struct box_out *o, struct box_half *half)
{
    o->half = half;
    o->word = 0;
    o->ctx = 0;
    o->src = o->tag = 0;
}

/* Makes half (of the box with peer) ours to write: for acknowledgements,
 * and for messages once the peer takes them from it (open). Our tiny
 * messages sent to peer so far may sit in its inbox: the box carries none
 * until its merger has passed every position claimed now. */
static void box_attach(struct box_out *o, struct box_half *half, int peer, bool open)
{
    if (!o->half)
        box_out_take_half(o, half);
    if (open && !o->open) {
        o->open = true;
        o->inbox_until = atomic_load_explicit(&ranks[peer].inbox_tail, memory_order_relaxed);
    }
}

/* Stores in our half (o) that we took `taken` messages from the peer (on
 * another worker: demote). */
static inline void box_ack(struct box_out *o, uint32_t taken, bool demote)
{
    uint32_t w = (o->word & ~BOX_ACK_MASK) | (taken & 0xffu) << 20 | BOX_SET;
    if (w == o->word)
        return;
    o->word = w;
    /* release: our reads of the messages acknowledged before the sender
     * reuses its half (it reads this with acquire). */
    atomic_store_explicit(&o->half->word, w, memory_order_release);
    if (demote)
        loom_cache_demote(o->half);
}

/* Acknowledges what was taken from box x into rank s (the caller). */
static void box_ack_rx(struct p2p_rank *s, struct box_rx *x)
{
    struct box_out *o = box_out_of(s, x->from);
    if (!o)
        return;
    if (!o->half)
        box_attach(o, box_other(x->half), x->from, false);
    /* acquire: the taker's reads of the messages are done. */
    box_ack(o, atomic_load_explicit(&x->taken, memory_order_acquire),
            box_demote && ranks[x->from].worker != s->worker);
}

/* Acknowledges what was taken from s's boxes; owner only. */
static void box_ack_all(struct p2p_rank *s)
{
    s->ack_due = NULL;
    atomic_store_explicit(&s->ack_stale, false, memory_order_relaxed);
    uint32_t n = atomic_load_explicit(&s->n_rx, memory_order_acquire);
    for (uint32_t k = 0; k < n; k++)
        box_ack_rx(s, &s->rx[k]);
}

/* Acknowledges box messages taken by s (the caller) or by others for it
 * and not yet acknowledged, so that their senders may use the boxes again. */
static inline void acks_flush(struct p2p_rank *s)
{
    if (LOOM_UNLIKELY(s->ack_due || atomic_load_explicit(&s->ack_stale, memory_order_relaxed)))
        box_ack_all(s);
}

/* ---- merging --------------------------------------------------------------- */

/* Merges what waits in p's boxes and inbox into its queues, as rank me;
 * lock held. Returns true when a message went to the unexpected queue. */
static bool drain(struct p2p_rank *p, int me)
{
    bool queued = false;
    uint32_t n = atomic_load_explicit(&p->n_rx, memory_order_relaxed);
    for (uint32_t k = 0; k < n; k++)
        queued |= box_take(p, &p->rx[k], me);
    return inbox_merge(p, me, false) || queued;
}

/* Merges the calling rank's (me, state p) boxes and inbox if a message
 * waits there, and acknowledges what it took from its boxes. */
static inline bool msgs_poll(struct p2p_rank *p, int me)
{
    if (LOOM_LIKELY(!msgs_ready(p)))
        return false;
    lock(p);
    drain(p, me);
    unlock(p);
    acks_flush(p);
    return true;
}

/* ---- opening a box ----------------------------------------------------------- */

/* Sets up p's box arrays (lock held); false when out of memory. */
static bool box_arrays(struct p2p_rank *p)
{
    if (atomic_load_explicit(&p->box_in, memory_order_relaxed))
        return true;
    _Atomic(struct box_rx *) *in = zalloc_lines((size_t)nranks * sizeof *in);
    struct box_rx *rx = zalloc_lines(box_cap * sizeof *rx);
    if (!in || !rx) {
        free(in);
        free(rx);
        return false;
    }
    p->rx = rx;
    /* release: the zeroed array before readers use it. */
    atomic_store_explicit(&p->box_in, in, memory_order_release);
    return true;
}

/* Registers half as the box from world rank `from` into p; lock held. */
static void box_register(struct p2p_rank *p, struct box_half *half, int from)
{
    uint32_t n = atomic_load_explicit(&p->n_rx, memory_order_relaxed);
    struct box_rx *x = &p->rx[n];
    x->half = half;
    x->from = from;
    atomic_store_explicit(&x->taken,
                          BOX_COUNT(atomic_load_explicit(&half->word, memory_order_relaxed)),
                          memory_order_relaxed);
    _Atomic(struct box_rx *) *in = atomic_load_explicit(&p->box_in, memory_order_relaxed);
    /* release: the record before readers find it. */
    atomic_store_explicit(&in[from], x, memory_order_release);
    atomic_store_explicit(&p->n_rx, n + 1, memory_order_release);
}

/* True when p can take one more box (lock held). */
static bool box_room(struct p2p_rank *p)
{
    return atomic_load_explicit(&p->n_rx, memory_order_relaxed) < box_cap && box_arrays(p);
}

/* Opens the box of world ranks me and dest (me != dest; o: our state for
 * it) for both directions where each has room: one line, registered with
 * both under their locks (the lower rank's first). Our earlier tiny
 * messages are merged into dest's queues first, so the box's come after
 * them. Leaves o->half NULL (and o->no_room set) when dest has no room. */
static void box_open(int me, int dest, struct box_out *o)
{
    struct p2p_rank *p = &ranks[dest], *s = &ranks[me];
    struct p2p_rank *first = me < dest ? s : p, *second = me < dest ? p : s;
    lock(first);
    lock(second);
    if (box_from(p, me) || !box_room(p)) {
        /* No room, or the box exists (dest opened it; we attach lazily). */
        struct box_rx *back = box_from(s, dest);
        unlock(second);
        unlock(first);
        if (back && box_from(p, me))
            box_attach(o, box_other(back->half), dest, true);
        else
            o->no_room = true;
        return;
    }
    struct pair_box *line = aligned_alloc(LOOM_CACHE_LINE, sizeof *line);
    if (!line) {
        unlock(second);
        unlock(first);
        o->no_room = true;
        return;
    }
    memset(line, 0, sizeof *line);
    struct box_half *mine = &line->half[me < dest ? 0 : 1];
    bool queued = inbox_merge(p, me, true);
    box_register(p, mine, me);
    if (!box_from(s, dest) && box_room(s))
        box_register(s, box_other(mine), dest);
    unlock(second);
    unlock(first);
    if (queued)
        wake_rank(p, p->worker == s->worker);
    box_out_take_half(o, mine);
    o->open = true;
    o->inbox_until = 0;
}

/* ---- sending through a box --------------------------------------------------- */

/* Sends a tiny message through our half o of the box with dest, as world
 * rank me; false when our last message there is not taken yet, or one of
 * ours may still sit in dest's inbox (the box would overtake it). */
static inline __attribute__((always_inline)) bool box_send(struct box_out *o, int dest, int me,
                                                           uint32_t ctx, int src, int tag,
                                                           const void *buf,
                                                           const struct loom_type *t, size_t bytes)
{
    struct p2p_rank *p = &ranks[dest], *s = &ranks[me];
    if (LOOM_UNLIKELY(o->inbox_until)) {
        /* acquire: the merge of our inbox messages is done. */
        if (atomic_load_explicit(&p->inbox_head, memory_order_acquire) < o->inbox_until)
            return false;
        o->inbox_until = 0;
    }
    struct box_half *b = o->half;
    /* acquire: whoever took our last message there has finished reading it. */
    if (BOX_ACK(atomic_load_explicit(&box_other(b)->word, memory_order_acquire)) !=
        BOX_COUNT(o->word))
        return false;
    /* The receiver polls this line while we write it, and a store that
     * finds the line taken back costs another transfer of it: the envelope
     * is stored only where it changed (docs/pt2pt-perf.md). */
    if (LOOM_UNLIKELY(o->ctx != ctx || o->src != src || o->tag != tag)) {
        b->ctx = o->ctx = ctx;
        b->src = o->src = src;
        b->tag = o->tag = tag;
    }
    if (bytes) {
        char *data = box_payload(b, bytes);
        if (LOOM_LIKELY(t->contig))
            copy_tiny(data, (const char *)buf + t->true_lb, bytes);
        else
            loom_type_pack(data, buf, t, 0, bytes);
    }
    /* The same store acknowledges what we took from dest's half: the line
     * moves once for both (a reply carries the ack of its request). */
    uint32_t ack = BOX_ACK(o->word);
    struct box_rx *x = s->ack_due;
    if (x && x->from == dest) {
        ack = atomic_load_explicit(&x->taken, memory_order_relaxed) & 0xffu;
        s->ack_due = NULL;
    }
    uint32_t w = (uint32_t)bytes | ((BOX_COUNT(o->word) + 1) & 0xffu) << 12 | ack << 20 | BOX_SET;
    o->word = w;
    o->pending = true;
    /* Publish the message before the word that tells the receiver it is there. */
    atomic_store_explicit(&b->word, w, memory_order_release);
    bool same = p->worker == s->worker;
    /* A peer on another core reads the line from the shared cache, and our
     * next look at it does not pull it back (one on our core reads it here).
     * Not while our worker has other ranks to run: their turns come before
     * our next look, and each look would then fetch the line back. */
    if (box_demote && !same && (box_demote > 1 || !loom_sched_others_ready()))
        loom_cache_demote(b);
    wake_rank(p, same);
    return true;
}

/* Sends a tiny message from world rank me to dest: through their box when
 * it is open and free, else into dest's inbox (opening the box after
 * box_after messages). False when neither had room (use a request). */
static inline __attribute__((always_inline)) bool tiny_send(int dest, int me, uint32_t ctx, int src,
                                                            int tag, const void *buf,
                                                            const struct loom_type *t, size_t bytes)
{
    struct p2p_rank *self = &ranks[me];
    struct box_out *o = dest != me ? box_out_of(self, dest) : NULL;
    /* (17 to 40 bytes: one inbox line beats the box's header and data lines) */
    if (LOOM_LIKELY(o != NULL) && bytes <= box_max &&
        (bytes <= LOOM_P2P_BOX_BYTES || bytes > LOOM_P2P_INBOX_BYTES)) {
        if (LOOM_UNLIKELY(!o->open)) {
            struct box_rx *back = box_from(&ranks[me], dest);
            if (back && box_from(&ranks[dest], me))
                box_attach(o, box_other(back->half), dest, true); /* dest opened it */
            else if (!o->no_room && ++o->sent >= box_after)
                box_open(me, dest, o);
        }
        if (LOOM_LIKELY(o->open)) {
            if (LOOM_UNLIKELY(o->skip)) {
                o->skip--;
            } else if (box_send(o, dest, me, ctx, src, tag, buf, t, bytes)) {
                count_sent(self, LOOM_P2P_BOX, bytes);
                o->backoff /= 2;
                return true;
            } else {
                o->backoff = o->backoff ? (o->backoff < 256 ? o->backoff * 2 : 256) : 16;
                o->skip = o->backoff;
            }
        }
    }
    uint64_t pos;
    if (bytes > inbox_max || !inbox_send(dest, me, ctx, src, tag, buf, t, bytes, &pos))
        return false;
    count_sent(self, bytes > LOOM_P2P_INBOX_BYTES ? LOOM_P2P_CELL : LOOM_P2P_INBOX, bytes);
    if (o && o->open)
        o->inbox_until = pos + 1;
    return true;
}

bool loom_p2p_send_tiny(const struct loom_comm *c, const void *buf, const struct loom_type *type,
                        size_t bytes, int dest, int tag)
{
    return tiny_send(loom_comm_peer_world(c, dest), c->owner, c->sh->context_id, c->rank, tag, buf,
                     type, bytes);
}

/* ---- receiving without a request ------------------------------------------ */

/* Copies a tiny message out to the user's buffer. */
static inline void take_out(void *buf, const struct loom_type *t, size_t cap, const char *data,
                            size_t bytes)
{
    size_t n = bytes < cap ? bytes : cap;
    if (n) {
        if (LOOM_LIKELY(t->contig))
            copy_tiny((char *)buf + t->true_lb, data, n);
        else
            loom_type_unpack(buf, t, data, 0, n);
    }
}

/* Takes the message (word w) in box x for a receive (ctx, src, tag)
 * straight into buf if it matches; lock held. It is acknowledged later
 * (box_send carries it back with the reply). */
static inline __attribute__((always_inline)) bool
take_box(struct p2p_rank *p, struct box_rx *x, uint32_t w, void *buf, const struct loom_type *t,
         size_t cap, uint32_t ctx, int src, int tag, struct loom_probe *got)
{
    struct box_half *b = x->half;
    if (!matches(ctx, src, tag, b->ctx, b->src, b->tag))
        return false;
    take_out(buf, t, cap, box_payload(b, BOX_BYTES(w)), BOX_BYTES(w));
    got->src = b->src;
    got->tag = b->tag;
    got->bytes = BOX_BYTES(w);
    box_taken(x);
    p->ack_due = x;
    return true;
}

/* Takes the oldest message for a receive (ctx, src, tag) straight into buf
 * if it is there and matches: the one in box x (from the receive's source;
 * NULL for none or a wildcard source), else the head of the inbox unless
 * its sender's box holds an older one; for a wildcard source, else the
 * first box whose message matches (a box holds its sender's oldest message:
 * the sender's inbox messages were merged before it used the box, and p has
 * no unexpected message). p (rank me) has no posted receive and no
 * unexpected message. Lock held. */
static inline __attribute__((always_inline)) bool take_tiny(struct p2p_rank *p, struct box_rx *x,
                                                            void *buf, const struct loom_type *t,
                                                            size_t cap, uint32_t ctx, int src,
                                                            int tag, struct loom_probe *got)
{
    if (x) {
        /* acquire: the envelope and payload its sender wrote. */
        uint32_t w = box_msg(x, memory_order_acquire);
        if (w)
            return take_box(p, x, w, buf, t, cap, ctx, src, tag, got);
    }
    /* acquire: the box records below n_rx. */
    uint32_t n = atomic_load_explicit(&p->n_rx, memory_order_acquire);
    uint64_t h = atomic_load_explicit(&p->inbox_head, memory_order_relaxed);
    struct inbox_slot *s = &p->inbox[h & INBOX_MASK];
    /* acquire: the envelope and payload its producer wrote. */
    if (atomic_load_explicit(&s->seq, memory_order_acquire) == (uint32_t)(h + 1) &&
        matches(ctx, src, tag, s->ctx, s->src, s->tag)) {
        struct box_rx *sx = n ? box_from(p, s->world) : NULL;
        if (!sx || !box_msg(sx, memory_order_relaxed)) {
            struct loom_envelope *cell = slot_cell(s);
            take_out(buf, t, cap, cell ? cell->data : s->data, s->bytes);
            got->src = s->src;
            got->tag = s->tag;
            got->bytes = s->bytes;
            /* release: our reads of the slot are done before producers reuse it. */
            atomic_store_explicit(&p->inbox_head, h + 1, memory_order_release);
            if (cell)
                env_release(cell);
            return true;
        }
        /* else the box's message is older: the boxes below, for a wildcard */
    }
    if (x || src >= 0)
        return false;
    for (uint32_t k = 0; k < n; k++) {
        struct box_rx *bx = &p->rx[k];
        /* acquire: the envelope and payload its sender wrote. */
        uint32_t w = box_msg(bx, memory_order_acquire);
        if (w && take_box(p, bx, w, buf, t, cap, ctx, src, tag, got))
            return true;
    }
    return false;
}

/* True when a message for a receive may have arrived: in x (the box from
 * its source), else in the inbox or, without x, in any box (a wildcard's
 * message, or a box opened meanwhile: take_tiny then leaves it to the
 * general path). */
static inline bool tiny_arrived(struct p2p_rank *p, struct box_rx *x)
{
    if (x)
        return box_msg(x, memory_order_acquire) || inbox_ready(p);
    return inbox_ready(p) || boxes_ready(p);
}

bool loom_p2p_recv_tiny(const struct loom_comm *c, void *buf, const struct loom_type *type,
                        size_t cap, int src, int tag, struct loom_probe *got)
{
    int me = c->owner, src_world = src >= 0 ? loom_comm_peer_world(c, src) : -1;
    uint32_t ctx = c->sh->context_id;
    struct p2p_rank *p = &ranks[me];
    acks_flush(p); /* what no reply carried back */
    struct box_rx *x = src_world >= 0 ? box_from(p, src_world) : NULL;
    uint32_t useq = atomic_load_explicit(&p->unexp_seq, memory_order_acquire);
    bool arrived = tiny_arrived(p, x);
    if (!arrived && loom_sched_others_ready()) {
        /* Let the worker's other ranks run a few rounds (a switch costs a
         * few ns; the general path would post a request and park), then
         * park by the general path if nothing came. */
        for (int k = loom_sched_wait_yields(); k > 0 && loom_sched_others_ready(); k--) {
            loom_ult_yield();
            if (tiny_arrived(p, x) ||
                atomic_load_explicit(&p->unexp_seq, memory_order_relaxed) != useq)
                break;
        }
        if (!tiny_arrived(p, x))
            return false;
        arrived = true;
    }
    if (!arrived) {
        /* Wait for the box or the inbox while alone on the worker, without
         * the lock: its locked instruction, just after our last store into
         * a box line, would wait for that line (docs/pt2pt-perf.md).
         * Anything else (a posted receive or an unexpected message, one
         * queued meanwhile by a locked-path sender, a box opened meanwhile,
         * another rank to run, a long wait that should park) goes to the
         * general path. */
        if (!queues_idle(p))
            return false;
        uint64_t t0 = 0;
        for (unsigned i = 1;; i++) {
            if (tiny_arrived(p, x))
                break;
            if (atomic_load_explicit(&p->unexp_seq, memory_order_relaxed) != useq)
                return false;
            if ((i & 255) == 0) {
                if (loom_sched_others_ready())
                    return false;
                uint64_t now = loom_time_ns();
                if (!t0)
                    t0 = now;
                else if (now - t0 >= spin_ns)
                    return false;
            }
            if (i > LOOM_WAIT_FAST_POLLS) /* see ult.h */
                loom_cpu_relax();
        }
    }
    /* A locked-path sender may have merged the inbox (older messages, now
     * unexpected) and appended its own since our look at unexp_seq: the
     * head is then not the oldest message. */
    lock(p);
    bool ok = queues_idle(p) && take_tiny(p, x, buf, type, cap, ctx, src, tag, got);
    unlock(p);
    if (ok) { /* (a truncated message counts whole: MPI_Recv raises it) */
        p->recvd++;
        p->recvd_bytes += got->bytes;
    }
    return ok;
}

void loom_p2p_count_recv(int me, size_t bytes)
{
    ranks[me].recvd++;
    ranks[me].recvd_bytes += bytes;
}

void loom_p2p_stats_read(int rank, struct loom_p2p_stats *st)
{
    memset(st, 0, sizeof *st);
    if (!ranks || rank < 0 || rank >= nranks)
        return;
    const struct p2p_rank *p = &ranks[rank];
    memcpy(st->sent, p->sent, sizeof st->sent);
    memcpy(st->sent_bytes, p->sent_bytes, sizeof st->sent_bytes);
    st->recvd = p->recvd;
    st->recvd_bytes = p->recvd_bytes;
    st->posted = __atomic_load_n(&p->n_posted, __ATOMIC_RELAXED);
    st->posted_max = __atomic_load_n(&p->max_posted, __ATOMIC_RELAXED);
    st->unexp = __atomic_load_n(&p->n_unexp, __ATOMIC_RELAXED);
    st->unexp_max = __atomic_load_n(&p->max_unexp, __ATOMIC_RELAXED);
}

void loom_req_complete_async(loom_req *r)
{
    struct p2p_rank *p = &ranks[r->owner];
    bool same = p->worker == loom_sched_worker_self();
    atomic_store_explicit(&r->done, 1, memory_order_release);
    wake_rank(p, same);
}

bool loom_p2p_progress(void)
{
    struct loom_rank *r = loom_rank_self();
    if (!r || !ranks)
        return false;
    return msgs_poll(&ranks[r->rank], r->rank);
}

/* ---- waiting ---------------------------------------------------------------- */

typedef bool (*wait_cond)(const void *arg);

/* What a parked rank_wait() waits for, as its worker re-checks it. */
struct rank_watch {
    struct p2p_rank *p;
    wait_cond cond;
    const void *arg;
};

static bool rank_watch_ready(const void *arg)
{
    const struct rank_watch *w = arg;
    return w->cond(w->arg) || msgs_ready(w->p);
}

/* Waits, as rank me (state p), until cond(arg), merging the inbox meanwhile:
 * spins while alone on the worker (for at most spin_ns), else registers in
 * p's waiter slot and parks. cond must read with seq_cst (Dekker with the
 * wakers: our exchange on the slot, then cond; their seq_cst store, then
 * their look at the slot). Stale wake-ups are harmless: we look again. */
static inline __attribute__((always_inline)) void rank_wait(struct p2p_rank *p, int me,
                                                            wait_cond cond, const void *arg)
{
    acks_flush(p);
    struct loom_ult *self = loom_ult_self();
    if (!self) {
        /* Not a ULT (a singleton's main thread): nothing to switch to. */
        for (unsigned i = 1; !cond(arg); i++)
            if (!msgs_poll(p, me)) {
                if (i < 4096)
                    loom_cpu_relax();
                else
                    sched_yield();
            }
        return;
    }
    bool registered = false;
    for (;;) {
        /* Spin while no other ULT could use the worker. */
        uint64_t t0 = 0;
        for (unsigned i = 1;; i++) {
            if (cond(arg))
                goto out;
            if (msgs_poll(p, me))
                continue;
            if ((i & 63) == 1 && loom_sched_others_ready())
                break;
            if ((i & 1023) == 0) {
                /* The clock is slow to read (tens of ns): rarely. */
                uint64_t now = loom_time_ns();
                if (!t0)
                    t0 = now;
                else if (now - t0 >= spin_ns)
                    break;
            }
            if (i > LOOM_WAIT_FAST_POLLS)
                loom_cpu_relax();
        }
        /* seq_cst: registered before cond's and msgs_ready's last look. */
        atomic_exchange_explicit(&p->waiter, self, memory_order_seq_cst);
        registered = true;
        if (cond(arg))
            break;
        if (msgs_ready(p))
            continue;
        struct rank_watch rw = {p, cond, arg};
        loom_ult_park_watched(rank_watch_ready, &rw);
    }
out:
    /* Leave the slot if it still names us: fewer stale wake-ups. Only we
     * store ourselves there, so a load and a store do (a waker that takes
     * the slot meanwhile leaves us a permit at worst). */
    if (registered && atomic_load_explicit(&p->waiter, memory_order_relaxed) == self)
        atomic_store_explicit(&p->waiter, NULL, memory_order_relaxed);
}

static bool req_cond(const void *arg)
{
    const loom_req *r = arg;
    return atomic_load_explicit(&r->done, memory_order_seq_cst) != 0;
}

/* ---- what a waiting rank waits for (deadlock detection) ------------------ */

/* "16 MPI_DOUBLE (128 bytes)" for a predefined datatype, else "128 bytes"
 * (a derived datatype may already be freed: MPI lets a program free it
 * while a request that uses it is pending). */
static void amount_text(const loom_req *r, char *buf, size_t n)
{
    const struct loom_type *t = r->type;
    char name[MPI_MAX_OBJECT_NAME];
    if (t && t->predefined && t->size > 0 && r->bytes % t->size == 0 &&
        loom_type_get_name(t, name) > 0)
        snprintf(buf, n, "%zu %.40s (%zu bytes)", r->bytes / t->size, name, r->bytes);
    else
        snprintf(buf, n, "%zu bytes", r->bytes);
}

static void req_text(const loom_req *r, char *buf, size_t n)
{
    char comm[96] = "no communicator", tag[24], src[24], amount[96];
    if (r->comm)
        loom_comm_describe(r->comm, comm, sizeof comm);
    if (r->tag == MPI_ANY_TAG)
        snprintf(tag, sizeof tag, "any tag");
    else
        snprintf(tag, sizeof tag, "tag %d", r->tag);
    switch (r->kind) {
    case LOOM_REQ_RECV:
        if (r->peer == MPI_ANY_SOURCE)
            snprintf(src, sizeof src, "any source");
        else
            snprintf(src, sizeof src, "rank %d", loom_comm_peer_world(r->comm, r->peer));
        amount_text(r, amount, sizeof amount);
        snprintf(buf, n, "a receive from %s (%s, %s, up to %s)", src, tag, comm, amount);
        break;
    case LOOM_REQ_SEND:
        amount_text(r, amount, sizeof amount);
        snprintf(buf, n, "a%s send to rank %d (%s, %s, %s) to be received",
                 r->mode == LOOM_MODE_SYNC ? " synchronous" : "", r->dest_world, tag, comm, amount);
        break;
    case LOOM_REQ_GREQ:
        snprintf(buf, n, "a generalized request");
        break;
    case LOOM_REQ_PART:
        snprintf(buf, n, "a partitioned transfer with rank %d (%s)",
                 r->comm && r->peer >= 0 ? loom_comm_peer_world(r->comm, r->peer) : -1, comm);
        break;
    default:
        snprintf(buf, n, "a nonblocking collective or communicator call");
        break;
    }
}

/* The world rank r waits for, or -1. */
static int req_peer(const loom_req *r)
{
    if (r->kind == LOOM_REQ_RECV && r->peer >= 0 && r->comm)
        return loom_comm_peer_world(r->comm, r->peer);
    if (r->kind == LOOM_REQ_SEND)
        return r->dest_world;
    return -1;
}

static void req_describe(const struct loom_mpi_wait *w, char *buf, size_t n)
{
    char what[320];
    req_text(w->arg, what, sizeof what);
    snprintf(buf, n, "waits for %s", what);
}

static int req_peers(const struct loom_mpi_wait *w, int *world, int max)
{
    int p = req_peer(w->arg);
    if (p < 0 || max < 1)
        return -1;
    world[0] = p;
    return 1;
}

void loom_req_wait(loom_req *r)
{
    if (loom_req_done(r))
        return;
    struct loom_mpi_wait dw = {req_describe, req_peers, r, 0, r->kind == LOOM_REQ_GREQ};
    loom_mpi_wait_enter(&dw);
    rank_wait(&ranks[r->owner], r->owner, req_cond, r);
    loom_mpi_wait_leave();
}

struct any_arg {
    loom_req *const *reqs;
    int n;
};

static bool any_cond(const void *arg)
{
    const struct any_arg *a = arg;
    for (int i = 0; i < a->n; i++)
        if (a->reqs[i] && req_cond(a->reqs[i]))
            return true;
    return false;
}

static void any_describe(const struct loom_mpi_wait *w, char *buf, size_t n)
{
    const struct any_arg *a = w->arg;
    int pending = 0;
    const loom_req *first = NULL;
    for (int i = 0; i < a->n; i++)
        if (a->reqs[i]) {
            pending++;
            if (!first)
                first = a->reqs[i];
        }
    char what[320] = "nothing";
    if (first)
        req_text(first, what, sizeof what);
    snprintf(buf, n, "waits for any of %d requests, the first %s", pending, what);
}

static int any_peers(const struct loom_mpi_wait *w, int *world, int max)
{
    const struct any_arg *a = w->arg;
    int k = 0;
    for (int i = 0; i < a->n && k < max; i++) {
        if (!a->reqs[i])
            continue;
        int p = req_peer(a->reqs[i]);
        if (p < 0)
            return -1; /* any source, or not a message: it may come from anyone */
        world[k++] = p;
    }
    return k;
}

void loom_req_wait_any(loom_req *const *reqs, int n)
{
    struct any_arg a = {reqs, n};
    if (any_cond(&a))
        return;
    bool external = false;
    for (int i = 0; i < n; i++)
        external |= reqs[i] && reqs[i]->kind == LOOM_REQ_GREQ;
    struct loom_mpi_wait dw = {any_describe, any_peers, &a, 0, external};
    loom_mpi_wait_enter(&dw);
    int me = self_rank();
    rank_wait(&ranks[me], me, any_cond, &a);
    loom_mpi_wait_leave();
}

/* ---- sends and receives ------------------------------------------------ */

void loom_p2p_start_send(loom_req *req, int my_comm_rank)
{
    int me = req->owner;
    int dest = loom_comm_peer_world(req->comm, req->peer);
    req->dest_world = dest;
    if (req->mode != LOOM_MODE_SYNC && req->bytes <= LOOM_P2P_FAST_BYTES &&
        tiny_send(dest, me, req->ctx, my_comm_rank, req->tag, req->buf, req->type, req->bytes)) {
        if (LOOM_UNLIKELY(req->parent)) {
            complete(req, me);
            return;
        }
        atomic_store_explicit(&req->done, 1, memory_order_release);
        return;
    }
    struct p2p_rank *p = &ranks[dest];
    uint32_t ctx = req->ctx;
    int tag = req->tag;
    struct box_out *o = ranks[me].box_out ? &ranks[me].box_out[dest] : NULL;
    lock(p);
    /* Our earlier tiny messages are matched first: the one in our box,
     * then the inbox (where other senders' boxes go before their slots). */
    struct box_rx *x = o && o->pending ? box_from(p, me) : NULL;
    bool queued = x && box_take(p, x, me);
    if (o)
        o->pending = false;
    queued |= inbox_merge(p, me, true);
    if (o)
        o->inbox_until = 0;
    loom_req *r = take_posted(p, ctx, my_comm_rank, tag);
    if (r) {
        unlock(p);
        if (queued && dest != me)
            wake_rank(p, p->worker == ranks[me].worker);
        deliver(r, req->buf, req->type, req->bytes, my_comm_rank, tag);
        count_sent(&ranks[me], LOOM_P2P_DIRECT, req->bytes);
        complete(r, me);
        complete(req, me);
        return;
    }
    struct loom_envelope *e;
    if (req->mode != LOOM_MODE_SYNC && req->bytes <= loom_p2p_eager_max) {
        /* Eager: copy into a cell while holding the lock, so the message is
         * whole before anyone can match it, and stays in order. */
        e = env_alloc(me, req->bytes > ENV_SMALL);
        e->bytes = req->bytes;
        if (req->bytes) {
            if (req->type->contig)
                memcpy(e->data, (const char *)req->buf + req->type->true_lb, req->bytes);
            else
                loom_type_pack(e->data, req->buf, req->type, 0, req->bytes);
        }
    } else {
        e = env_alloc(me, 0);
        e->bytes = req->bytes;
        e->rndv = true;
        e->sreq = req;
        req->env = e;
    }
    e->ctx = ctx;
    e->src = my_comm_rank;
    e->tag = tag;
    bool rndv = e->rndv; /* e may be taken and released once we unlock */
    count_sent(&ranks[me], rndv ? LOOM_P2P_RENDEZVOUS : LOOM_P2P_EAGER, req->bytes);
    append_unexpected(p, e);
    unlock(p);
    if (dest != me)
        wake_rank(p, p->worker == ranks[me].worker);
    if (!rndv)
        complete(req, me);
}

void loom_p2p_recv_envelope(loom_req *req, struct loom_envelope *e)
{
    int me = req->owner;
    if (e->rndv) {
        loom_req *s = e->sreq;
        deliver(req, s->buf, s->type, e->bytes, e->src, e->tag);
        s->env = NULL;
        env_release(e);
        complete(s, me);
    } else {
        deliver_packed(req, e->data, e->bytes, e->src, e->tag);
        env_release(e);
    }
    complete(req, me);
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
        unlink_unexpected(p, e, prev);
        e->next = NULL;
    }
    return e;
}

void loom_p2p_start_recv(loom_req *req)
{
    int me = req->owner;
    struct p2p_rank *p = &ranks[me];
    lock(p);
    struct loom_envelope *e =
        p->unexp_head ? take_unexpected(p, req->ctx, req->peer, req->tag, true) : NULL;
    if (e) {
        unlock(p);
        loom_p2p_recv_envelope(req, e);
        return;
    }
    req->next = NULL;
    if (p->posted_tail)
        p->posted_tail->next = req;
    else
        set_head(&p->posted_head, req);
    p->posted_tail = req;
    count_in(&p->n_posted, &p->max_posted);
    /* Messages already in the boxes and inbox count as arriving after this
     * receive was posted (each sender's order holds: see inbox_merge);
     * merging now can match this receive without an envelope. */
    if (msgs_ready(p))
        drain(p, me);
    unlock(p);
    acks_flush(p);
}

struct loom_envelope *loom_p2p_probe(int world_rank, uint32_t ctx, int src, int tag, bool remove,
                                     struct loom_probe *seen)
{
    struct p2p_rank *p = &ranks[world_rank];
    lock(p);
    if (msgs_ready(p))
        drain(p, world_rank);
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
    return atomic_load_explicit(&w->p->unexp_seq, memory_order_seq_cst) != w->seq;
}

struct probe_wait {
    uint32_t ctx;
    int src, tag;
};

static void probe_describe(const struct loom_mpi_wait *w, char *buf, size_t n)
{
    const struct probe_wait *p = w->arg;
    char src[48], tag[24];
    if (p->src == MPI_ANY_SOURCE)
        snprintf(src, sizeof src, "any source");
    else
        snprintf(src, sizeof src, "rank %d of the communicator", p->src);
    if (p->tag == MPI_ANY_TAG)
        snprintf(tag, sizeof tag, "any tag");
    else
        snprintf(tag, sizeof tag, "tag %d", p->tag);
    snprintf(buf, n, "probes for a message from %s (%s, context %u)", src, tag, p->ctx);
}

struct loom_envelope *loom_p2p_probe_wait(int world_rank, uint32_t ctx, int src, int tag,
                                          bool remove, struct loom_probe *seen)
{
    struct p2p_rank *p = &ranks[world_rank];
    struct probe_wait pw = {ctx, src, tag};
    struct loom_mpi_wait dw = {probe_describe, NULL, &pw, 0, false};
    for (;;) {
        struct seq_wait w = {p, atomic_load_explicit(&p->unexp_seq, memory_order_acquire)};
        struct loom_envelope *e = loom_p2p_probe(world_rank, ctx, src, tag, remove, seen);
        if (e)
            return e;
        loom_mpi_wait_enter(&dw);
        rank_wait(p, world_rank, seq_moved, &w);
        loom_mpi_wait_leave();
    }
}

bool loom_p2p_cancel(loom_req *req)
{
    if (loom_req_done(req))
        return false;
    int me = req->owner;
    if (req->kind == LOOM_REQ_RECV) {
        struct p2p_rank *p = &ranks[me];
        lock(p);
        /* A message waiting in a box or the inbox for this receive matches it. */
        if (msgs_ready(p))
            drain(p, me);
        loom_req *r = p->posted_head, *prev = NULL;
        for (; r && r != req; prev = r, r = r->next)
            ;
        if (r)
            unlink_posted(p, r, prev);
        unlock(p);
        if (!r)
            return false;
    } else {
        struct p2p_rank *p = &ranks[req->dest_world];
        lock(p);
        struct loom_envelope *e = p->unexp_head, *prev = NULL;
        for (; e && !(e->rndv && e->sreq == req); prev = e, e = e->next)
            ;
        if (e)
            unlink_unexpected(p, e, prev);
        unlock(p);
        if (!e)
            return false;
        req->env = NULL;
        env_release(e);
    }
    req->cancelled = true;
    complete(req, me);
    return true;
}
