/*
 * Point-to-point between the ranks of a Loom process: one copy per message.
 *
 * Every rank has one matching state: a FIFO of posted receives and a FIFO of
 * unexpected messages, under the rank's own lock (no global lock), and an
 * inbox: a ring of 64 one-cache-line slots that any rank may fill without
 * the lock, and a box with each rank it talks to often: one cache line per
 * pair of ranks, half for each direction. A sender:
 *  - up to LOOM_P2P_FAST_BYTES, once the pair has a box (opened after
 *    LOOM_P2P_BOX_AFTER tiny messages, at most LOOM_P2P_BOXES per
 *    receiver) and its half is free: writes envelope and payload into its
 *    half and publishes them with one store that also acknowledges what it
 *    took from the other half, so a reply travels in the line its request
 *    came in and nothing else moves. The receiver polls its boxes with its
 *    inbox and acknowledges in its next store to the line.
 *  - tiny message (<= LOOM_P2P_INBOX_BYTES, not synchronous mode): claims an
 *    inbox slot of the receiver, writes envelope and payload into that one
 *    line and publishes it. The receiver merges its inbox (matching posted
 *    receives, else moving the message to the unexpected queue) whenever it
 *    posts, probes, waits or tests. One cache-line transfer per message; the
 *    sender never reads the receiver's state. A small message (up to
 *    LOOM_P2P_INBOX_CELL, 256 bytes by default) goes the same way with its
 *    payload in an eager cell of the sender's pool, whose address the slot
 *    carries: two copies, but no lock that the receiver also takes (a
 *    stream of them ran 2-3x faster than by the locked path below).
 *  - otherwise takes the receiver's lock, merges the inbox first (so a
 *    sender's earlier tiny messages are matched before this one), and:
 *    - finds a matching posted receive: unlinks it, drops the lock and copies
 *      straight into the receive buffer (layout to layout), then completes it;
 *    - else, for a small message: copies it into an eager cell from its own
 *      pool and appends it to the unexpected queue (two copies, but the
 *      sender never waits);
 *    - else (large, or synchronous mode): appends a descriptor of its buffer
 *      (rendezvous); the receiver copies directly from the sender's buffer
 *      when it matches, and completes the send request.
 * Messages from one sender to one receiver enter the receiver's queues in
 * the order they were sent (inbox positions are claimed in program order and
 * merged in position order; a sender uses its box only once its inbox
 * messages are merged, a message in the box goes before the sender's later
 * inbox messages, and the locked path takes the sender's box message and
 * merges the whole inbox before it matches), and matching scans in FIFO
 * order, so MPI's non-overtaking rule holds with wildcards too. Requests, envelopes and cells come
 * from pools (no malloc once warm).
 *
 * Waiting: only a rank's own ULT waits for its requests (one waiter per
 * rank). It spins while alone on its worker, merging its inbox, else parks
 * in its one per-rank waiter slot; whoever completes one of its requests,
 * fills its inbox or queues an unexpected message for it wakes it in O(1). Waits must go through
 * loom_req_wait, loom_req_wait_any or loom_p2p_probe_wait, and polling through loom_req_test, so
 * that the inbox is merged.
 *
 * Depends on: util, runtime, datatype, comm.
 */
#ifndef LOOM_P2P_H
#define LOOM_P2P_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/ult.h"
#include "util/common.h"

struct loom_type;
struct loom_comm;
struct loom_envelope;

/* GENERIC: work other than a message (a collective, MPI_Comm_idup), completed
 * with loom_req_complete_async. PAIR: the MPI layer's MPI_Isendrecv, done
 * when both of its halves are (the MPI layer tracks them: this layer never
 * sees a PAIR request but to allocate and free it). PART: one side of a
 * partitioned operation (part.h), persistent, ext its side of the channel,
 * completed with loom_req_complete_async by whoever copies its last part.
 * GREQ: the MPI layer's generalized request (MPI_Grequest_start), ext its
 * callbacks, completed by MPI_Grequest_complete. NBR: the MPI layer's
 * persistent neighbourhood collective, ext its saved call; each start makes
 * it a compound request with fresh children (which the MPI layer frees). */
enum loom_req_kind {
    LOOM_REQ_SEND = 1,
    LOOM_REQ_RECV,
    LOOM_REQ_GENERIC,
    LOOM_REQ_PAIR,
    LOOM_REQ_PART,
    LOOM_REQ_GREQ,
    LOOM_REQ_NBR
};
enum loom_send_mode { LOOM_MODE_STANDARD, LOOM_MODE_SYNC, LOOM_MODE_READY, LOOM_MODE_BUFFERED };

#define LOOM_REQ_MAGIC 0x4c52u /* a live request */
#define LOOM_REQ_FREED 0xdeadu

/* MPI_Request points at one of these. The first cache line holds all that
 * a matching sender reads and writes: the match fields, the buffer, the
 * completion flag and the status (status_error and count are written only on
 * truncation), so completing a posted receive writes one line. */
struct LMPI_Request_s {
    /* line 1: matching (receives) and completion */
    uint32_t ctx;
    int peer; /* source (recv) or destination (send), comm rank */
    int tag;
    _Atomic uint32_t done; /* set last by whoever completes the request */
    void *buf;
    struct loom_type *type;
    struct LMPI_Request_s *next; /* posted queue */
    size_t bytes;                /* message bytes (send) or capacity (recv) */
    size_t status_bytes;
    int status_source, status_tag;
    /* line 2: the owner's side */
    int status_error; /* MPI_SUCCESS unless truncated */
    uint16_t magic;
    uint8_t kind; /* enum loom_req_kind */
    uint8_t mode; /* enum loom_send_mode */
    size_t count; /* a truncated receive: the message's bytes */
    bool cancelled;
    bool persistent, active, orphan;
    int owner; /* world rank that owns the request */
    struct loom_comm *comm;
    union {
        struct loom_envelope *env; /* a rendezvous send's envelope while queued */
        void *ext; /* GENERIC and PAIR: the MPI layer's (a persistent collective's call, the
                      halves of an MPI_Isendrecv); NULL from the allocation */
    };
    int dest_world; /* send: the receiver's world rank */
    union {
        void *bsend_chunk; /* buffered send: the chunk to release */
        char *why;         /* generic (a collective): what failed, malloc'd */
    };
    struct LMPI_Request_s *pool_next;
    /* Compound requests (a neighbourhood collective): a child send or
     * receive names its parent; the parent counts its children not yet done
     * (+ COMPOUND_HOLD while they are being started) and owns them. */
    struct LMPI_Request_s *parent;
    _Atomic int pending;
    int nchildren;
    struct LMPI_Request_s **children;
} LOOM_ALIGNED_CL;

typedef struct LMPI_Request_s loom_req;

/* Envelope of an unexpected message; MPI_Message points at one. */
struct loom_envelope {
    struct loom_envelope *next;
    uint32_t ctx;
    int src, tag; /* comm rank of the sender */
    size_t bytes;
    loom_req *sreq; /* rendezvous and synchronous sends: the sender */
    bool rndv;
    uint8_t cls;        /* pool class: 0 small, 1 eager-sized */
    int owner;          /* world rank whose pool holds it */
    uint16_t magic;     /* LOOM_ENV_MAGIC while live */
    char *data;         /* eager payload */
    char inline_data[]; /* small payloads live here */
};
#define LOOM_ENV_MAGIC 0x4c45u

/* Per-rank state: set up by loom_p2p_rank_init (MPI_Init). */
int loom_p2p_rank_init(int world_rank) LOOM_MUST_CHECK;
void loom_p2p_rank_fini(int world_rank);
int loom_p2p_job_init(int nranks) LOOM_MUST_CHECK;

/* Starts a send or receive on an allocated request whose fields (buf, type,
 * count, peer, tag, ctx, comm, mode, kind) are set. A receive may complete
 * at once; a send completes at once unless it is a rendezvous. */
void loom_p2p_start_send(loom_req *req, int my_comm_rank);
void loom_p2p_start_recv(loom_req *req);

/* Request pool of the calling rank; _rank when the caller knows its world
 * rank (saves a look-up of the running ULT). */
loom_req *loom_req_alloc(void);
loom_req *loom_req_alloc_rank(int me);
/* A request of the owner of comm for work other than a message (a
 * nonblocking collective, MPI_Comm_idup): active, empty status, not done;
 * NULL when out of memory. Complete it with loom_req_complete_async. */
loom_req *loom_req_alloc_generic(struct loom_comm *comm);
void loom_req_free(loom_req *req);
/* Blocks until req (the caller's own) is done: spins while alone on the
 * worker, else parks; merges the inbox meanwhile. */
void loom_req_wait(loom_req *req);
/* True when req is done; no progress (see loom_req_test). */
static inline bool loom_req_done(const loom_req *req)
{
    return atomic_load_explicit(&req->done, memory_order_acquire) != 0;
}
/* Completes req from any ULT or thread (a nonblocking collective's runner):
 * the caller has written its results (status_error, ...); wakes the owner
 * if it waits. */
void loom_req_complete_async(loom_req *req);
/* Merges the calling rank's inbox if a message waits there (cheap when
 * empty); true if it merged something. */
bool loom_p2p_progress(void);
/* loom_req_done with progress: for polling loops (MPI_Test and friends). */
static inline bool loom_req_test(const loom_req *req)
{
    return loom_req_done(req) || (loom_p2p_progress() && loom_req_done(req));
}

/* Tiny messages (<= this many bytes) travel in one inbox slot. */
#define LOOM_P2P_INBOX_BYTES 40
/* ... or, up to this many, in the header line of the box of the pair of
 * ranks; up to LOOM_P2P_FAST_BYTES (and LOOM_EAGER_MAX) in its data area. */
#define LOOM_P2P_BOX_BYTES  16
#define LOOM_P2P_FAST_BYTES 2048
/* What a probe or a request-free receive saw of a message. */
struct loom_probe {
    int src, tag;
    size_t bytes;
};

/* A standard or ready send of a small message (bytes <= LOOM_P2P_FAST_BYTES
 * of type at buf) to rank dest of c (not MPI_PROC_NULL) by c's owner,
 * without a request: true when it went into their box or dest's inbox (up
 * to LOOM_P2P_INBOX_BYTES in the slot, up to LOOM_P2P_INBOX_CELL in a cell;
 * the send is complete), false when neither could take it (use a request). */
bool loom_p2p_send_tiny(const struct loom_comm *c, const void *buf, const struct loom_type *type,
                        size_t bytes, int dest, int tag);

/* A blocking receive from src (a rank of c or MPI_ANY_SOURCE) by c's owner
 * without a request, into cap bytes of type at buf: while the rank has no
 * posted receive and no unexpected message, the oldest message for it is
 * in the box from src or at the head of its inbox. Takes it when it
 * matches: copies it and fills *got (bytes: the sender's size; more than
 * cap: truncated to cap) and returns true. Returns false, having consumed
 * nothing, when the general path must do the receive: something is posted
 * or unexpected, the message does not match, a message arrived the locked
 * way, other ranks of the worker are ready, or nothing came within the
 * spin budget. */
bool loom_p2p_recv_tiny(const struct loom_comm *c, void *buf, const struct loom_type *type,
                        size_t cap, int src, int tag, struct loom_probe *got);

/* Probing: finds (and with remove, takes) the first unexpected message that
 * matches; NULL if none. *seen is filled while the queue is locked. */
struct loom_envelope *loom_p2p_probe(int world_rank, uint32_t ctx, int src, int tag, bool remove,
                                     struct loom_probe *seen);
/* Blocks until a matching unexpected message exists. */
struct loom_envelope *loom_p2p_probe_wait(int world_rank, uint32_t ctx, int src, int tag,
                                          bool remove, struct loom_probe *seen);
/* Blocks until one of the n requests (NULL entries skipped) is done. */
void loom_req_wait_any(loom_req *const *reqs, int n);
/* Receives a message taken with loom_p2p_probe(remove) into req. */
void loom_p2p_recv_envelope(loom_req *req, struct loom_envelope *env);

/* Compound requests: a generic request (loom_req_alloc_generic) that
 * completes once every child is done, set by whoever completes the last
 * child; no progress of the owner is needed. loom_req_compound_init() gives
 * it room for n children (false: out of memory); each child, a send or
 * receive request of the same rank with its fields set and not started, is
 * added with loom_req_compound_add() before the caller starts it; after the
 * last start loom_req_compound_release() drops the starter's hold. A child
 * that ends with an error (truncation) makes the parent's status_error
 * MPI_ERR_TRUNCATE. Freeing the parent frees its children (once done). */
bool loom_req_compound_init(loom_req *parent, int n);
void loom_req_compound_add(loom_req *parent, loom_req *child);
void loom_req_compound_release(loom_req *parent);

/* Cancels a pending request if it has not matched; true when cancelled. */
bool loom_p2p_cancel(loom_req *req);

/* What a rank sent and received, for the tools interface (MPI_T
 * performance variables, src/mpi/mpit.c). Sends count by how their payload
 * travelled: in a box, in an inbox slot, in an eager cell by an inbox slot,
 * copied by the sender into a posted receive (direct), into an eager cell
 * on the unexpected queue, or by rendezvous (the receiver copies from the
 * sender's buffer). Each counter is written only by the rank it belongs to
 * (plain increments); the queue lengths are kept under the rank's lock. */
enum loom_p2p_proto {
    LOOM_P2P_BOX,
    LOOM_P2P_INBOX,
    LOOM_P2P_CELL,
    LOOM_P2P_DIRECT,
    LOOM_P2P_EAGER,
    LOOM_P2P_RENDEZVOUS,
    LOOM_P2P_NPROTO
};
struct loom_p2p_stats {
    uint64_t sent[LOOM_P2P_NPROTO], sent_bytes[LOOM_P2P_NPROTO];
    uint64_t recvd, recvd_bytes;
    /* Posted receives and unexpected messages queued now, and the most. */
    uint32_t posted, posted_max, unexp, unexp_max;
};
/* World rank rank's counters (zeros before the job's point-to-point state
 * exists). */
void loom_p2p_stats_read(int rank, struct loom_p2p_stats *st);
/* Counts a message received by world rank me (its own call: the MPI layer
 * when it hands out a receive's status). */
void loom_p2p_count_recv(int me, size_t bytes);

/* Eager threshold in bytes (LOOM_EAGER_MAX). */
extern size_t loom_p2p_eager_max;

#endif
