/*
 * Inside the collective layer: the communicator's shared collective state,
 * one call's context, and the synchronization and copy helpers every
 * algorithm is built from.
 *
 * Synchronization is by monotonic flags: each member counts the collective
 * calls it makes on the communicator (seq = 1, 2, ...), and every flag holds
 * the last call (or a value derived from it) it was set for, so a flag never
 * needs resetting and "reached" is flag >= value. A waiting rank spins while
 * it is alone on its worker, else parks in its waiter slot; whoever sets a
 * flag notifies the ranks the algorithm knows wait for it.
 *
 * Publication: a member publishes a call's arguments in post[seq % COLL_RING].
 * A member can run at most one call ahead of a reader of its post except when
 * an algorithm lets the publisher return before its readers are done (small * copy-in paths: a root
 * may then run up to COLL_RING calls ahead). Copy-in readers do nothing more than read: every
 * member publishes the last call it is done with (member.finished, a plain store in its own line),
 * and a publisher reuses a copy-in post only when every member is done with the call that used it
 * (checked against a cached lower bound, so the other members' lines are read about once every
 * COLL_RING calls). Readers of a publisher's own buffers count themselves in post.reads, and the
 * publisher waits for them before it returns.
 */
#ifndef LOOM_COLL_IMPL_H
#define LOOM_COLL_IMPL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"
#include "coll/op.h"
#include "runtime/ult.h"
#include "util/common.h"

/* Bytes of a post's copy-in cell: small messages are copied into it so that
 * their publisher does not wait for readers. */
#define COLL_CELL 1024
/* Posts per member: how many calls a copy-in publisher may run ahead. */
#define COLL_RING 8
/* Bytes processed at a time by strip-mined loops (kept in L1/L2). */
#define COLL_STRIP (32 * 1024)
/* A member's progress flag holds seq << COLL_PROGRESS_BITS | what it has
 * done of call seq (chunks, or chunk stages): monotonic across calls. */
#define COLL_PROGRESS_BITS 20
/* Bytes a pipelined algorithm passes on at a time, at least. */
#define COLL_CHUNK (64 * 1024)
/* Most rounds a dissemination algorithm takes (2^24 ranks). */
#define COLL_MAX_ROUNDS 24

/* How long a waiting member waits before it first looks for mismatched
 * calls; the wait doubles after each look, up to COLL_STALL_MAX_NS (so that
 * many members stalled for long, by one that computes, cost little). */
#define COLL_STALL_NS     (200 * 1000 * 1000ull)
#define COLL_STALL_MAX_NS (3200 * 1000 * 1000ull)

/* Bytes of copy-in data that travel in the post's first cache line, with
 * the flag: a small message costs the reader one line. */
#define COLL_INLINE LOOM_COLL_SMALL_BYTES

struct coll_post {
    /* Line 0: what a copy-in reader needs. */
    _Atomic uint64_t seq LOOM_ALIGNED_CL; /* the call published here */
    int kind;                             /* enum loom_coll_kind: mismatches are caught */
    int root;
    size_t nbytes;                      /* copy-in: bytes of data (per block for Scatter) */
    bool copied_in;                     /* the data is in the post; the publisher may be gone */
    _Alignas(16) char inl[COLL_INLINE]; /* aligned for any basic type */
    /* Then what readers of the publisher's own buffers need. */
    struct loom_coll_args args LOOM_ALIGNED_CL;
    int sig_basic;    /* debug builds: the call's type signature (reductions, */
    size_t sig_elems; /* Bcast): basic type (0: mixed) and basic elements */
    const void *data; /* algorithm-defined */
    bool detached;    /* readers copy from a copy the post keeps (coll_expose) */
    _Atomic uint64_t reads LOOM_ALIGNED_CL; /* readers done with this post (all calls) */
    _Atomic uint64_t reads_target;          /* reads when this call's last reader is done */
    char cell[COLL_CELL] LOOM_ALIGNED_CL;
};

_Static_assert(offsetof(struct coll_post, inl) + COLL_INLINE <= LOOM_CACHE_LINE,
               "a small copy-in travels in the post's first line");

/* Where copy-in data of n bytes (in all) goes in post p. */
static inline char *coll_post_cell(const struct coll_post *p, size_t n)
{
    return n <= COLL_INLINE ? (char *)p->inl : (char *)p->cell;
}

/* What one running call keeps between its waits, besides its context: a
 * blocking call uses its member's, a nonblocking call its runner's (task.c),
 * so that calls running at the same time do not share it. */
struct coll_ws {
    const void **inputs; /* coll_collect()'s array, grow-only */
    int inputs_cap;
    void *scratch[3]; /* grow-only */
    size_t scratch_len[3];
    char whybuf[256];
};

/* A member's part of the shared state (one per member, cache-line apart). */
struct coll_member {
    loom_waiter_slot waiter LOOM_ALIGNED_CL; /* a call waiting */
    _Atomic unsigned nb_parked;              /* bit i: nb_waiter[i] may hold a waiting call */
    /* Further nonblocking calls waiting while one waits in `waiter`, by post
     * (one call per post at a time). */
    loom_waiter_slot nb_waiter[COLL_RING] LOOM_ALIGNED_CL;
    _Atomic uint64_t ready LOOM_ALIGNED_CL;    /* algorithm-defined progress */
    _Atomic uint64_t release LOOM_ALIGNED_CL;  /* set for this member by others */
    _Atomic uint64_t progress LOOM_ALIGNED_CL; /* pipelines: seq << COLL_PROGRESS_BITS | chunks */
    _Atomic uint64_t finished LOOM_ALIGNED_CL; /* last call this member is done with */
    _Atomic uint64_t round[COLL_MAX_ROUNDS] LOOM_ALIGNED_CL; /* dissemination */
    /* The member's recent calls (by seq % COLL_RING), recorded as each
     * starts, in lines only it writes: a member stalled in a call compares
     * them with its own (coll_wait), so that mismatched calls end the job
     * with a message instead of hanging. */
    struct coll_call {
        _Atomic uint64_t seq;
        _Atomic int kind, root;
    } calls[COLL_RING] LOOM_ALIGNED_CL;
    struct coll_post post[COLL_RING];
    /* Private to the member. */
    uint64_t seq LOOM_ALIGNED_CL;     /* calls made on the communicator */
    uint64_t expect_reads[COLL_RING]; /* copy-in readers to wait for, per post */
    uint64_t reads_seen[COLL_RING];   /* post.reads known to have reached this */
    uint64_t copyin_seq[COLL_RING];   /* the post's last call if copied in or detached, else 0 */
    uint64_t fences;                  /* coll_fence calls made */
    uint64_t *uses; /* the member's rank's calls per algorithm ([COLL_NALG], coll_uses_of) */
    /* Nonblocking calls (task.c): the rank's runners, the calls started and
     * not finished, `finished` while they run, the calls after it already
     * finished (bit i: call nb_finished + 1 + i), and the runners waiting for
     * earlier calls to finish. */
    struct rank_runners *runners;
    int nb_running;
    bool waiter_taken; /* one of them waits in `waiter` */
    uint64_t nb_finished;
    uint64_t nb_done_ahead;
    struct coll_runner *nb_waiting;
    loom_waiter_slot drain_waiter;     /* a blocking call waiting for them */
    struct coll_task *held[COLL_RING]; /* a finished nonblocking call whose post */
    void *exposed[COLL_RING];          /* may still be read: its arguments and */
    size_t exposed_len[COLL_RING];     /* copies, kept until the post's next use */
    uint64_t min_finished;             /* a lower bound of every member's finished */
    struct coll_memo {                 /* the selector's last choice per collective */
        const struct coll_algorithm *alg;
        size_t nbytes;
        int root, flags;
        unsigned gen; /* the overrides' generation it was chosen under */
    } memo[LOOM_COLL_NKINDS];
    struct coll_ws ws; /* blocking calls' */
};

struct coll_shared {
    int size;
    int inter_a; /* an intercommunicator's bridge: members [0, inter_a) are side A (inter.c) */
    int *worker; /* [size] the worker each member runs on */
    int *numa;   /* [size] its NUMA node (0 when unknown) */
    int ngroups; /* two-stage groups: NUMA nodes if several, else workers */
    int *group;  /* [size] a member's group, 0..ngroups-1 */
    int *leader; /* [ngroups] lowest member of each group */
    int *order;  /* [size] members sorted by group (trees follow it) */
    int *pos;    /* [size] a member's index in order */
    int max_per_worker;       /* most members sharing one worker */
    int nlocal;               /* workers the members run on */
    int *local_of;            /* [size] a member's worker, 0..nlocal-1 */
    int *local_idx;           /* [size] its index in its worker's members */
    struct coll_local *local; /* [nlocal] per-worker stage (local.c) */
    /* Memory domains: NUMA nodes when the members span several, else
     * packages when they span several, else the machine (ndom = 1). */
    int ndom;
    int *dom;        /* [size] a member's domain, 0..ndom-1 (numbered by first member) */
    int *dom_idx;    /* [size] its index among its domain's members */
    int *dom_start;  /* [ndom + 1] domain d's members: dom_list[dom_start[d]..dom_start[d+1]) */
    int *dom_list;   /* [size] the members by domain, each domain in rank order */
    int dom_max;     /* most members in one domain */
    bool dom_contig; /* every domain is a range of consecutive ranks */
    int *spread;     /* [size] members taking the domains in turn: copy order */
    int *spread_pos; /* [size] a member's index in spread */
    _Atomic uint64_t rep_arrived LOOM_ALIGNED_CL; /* representatives' barrier */
    _Atomic uint64_t rep_gen LOOM_ALIGNED_CL;
    _Atomic uint64_t arrived LOOM_ALIGNED_CL; /* central barrier */
    _Atomic uint64_t gen LOOM_ALIGNED_CL;
    struct coll_member *m; /* [size] */
};

/* The ranks of one worker in a communicator: they run one at a time, so
 * they combine here with no synchronization beyond program order (atomics
 * only so that the sanitizers see the order); the last to arrive represents
 * them in the inter-worker stage and wakes the others. */
struct coll_local {
    _Atomic uint64_t arrived LOOM_ALIGNED_CL; /* members arrived, all calls */
    _Atomic uint64_t posted;                  /* call whose acc is complete */
    _Atomic uint64_t done;                    /* call whose res is complete */
    _Atomic int rep;                          /* this call's representative */
    int size;                                 /* members on this worker */
    int *members;                             /* [size] in rank order */
    /* Fixed order (allreduce_perworker.c): each member's input and receive
     * buffer (data start) and the call it left them for; per run of
     * consecutive members, the call and how many of its members are folded;
     * the call in which each node of the tree over the runs (heap numbering,
     * [4 size]) was complete; the worker's combined input. */
    const char **slot_in, **slot_out;
    uint64_t *slot_seq, *run_seq, *node_seq;
    int *run_folded;
    const char *combined;
    uint64_t rep_calls; /* inter-worker stages run */
    /* The current call as its first member here made it (local.c): the
     * worker's later members compare theirs with it, so that mismatched
     * calls are reported, not misread as this call's state. */
    int call_kind, call_root, call_first;
    void *acc, *res; /* combined input, result */
    size_t acc_cap, res_cap;
};

/* One call. */
struct coll_ctx {
    struct coll_shared *sh;
    struct coll_member *me;
    int rank, size;
    uint64_t seq;
    enum loom_coll_kind kind;
    const struct loom_coll_args *a;
    struct coll_ws *ws;
    bool nonblocking; /* MPI_I<coll>: INDEPENDENT algorithms only */
    bool arrival;     /* reductions may combine in arrival order (coll_reduce_arrival) */
    const char *why;  /* message of the error being returned */
    int err;          /* its class, when coll_peer_post() failed */
    /* A blocking call's description for the deadlock detector, which
     * coll_wait() announces while it parks (NULL: none). */
    const struct loom_mpi_wait *dl;
};

/* A call's context, with the communicator's collective state at hand: the
 * blocking call x of member `rank`, of kind with arguments a, takes its seq
 * (its place in the communicator's order) and records it for coll_wait's
 * mismatch check. (core.c's ctx_begin() also creates the state.) */
static inline void coll_ctx_init(struct coll_ctx *x, struct coll_shared *sh, int rank,
                                 enum loom_coll_kind kind, const struct loom_coll_args *a)
{
    struct coll_member *me = &sh->m[rank];
    x->sh = sh;
    x->me = me;
    x->rank = rank;
    x->size = sh->size;
    x->kind = kind;
    x->a = a;
    x->ws = &me->ws;
    x->nonblocking = false;
    x->arrival = false;
    x->why = NULL;
    x->err = MPI_SUCCESS;
    x->dl = NULL;
    x->seq = ++me->seq;
    /* A seqlock's write: a reader that sees seq before and after sees its
     * kind and root. */
    struct coll_call *rec = &me->calls[x->seq % COLL_RING];
    atomic_store_explicit(&rec->seq, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&rec->kind, (int)kind, memory_order_relaxed);
    atomic_store_explicit(&rec->root, a->root, memory_order_relaxed);
    atomic_store_explicit(&rec->seq, x->seq, memory_order_release);
}

/* ---- synchronization (core.c) ---- */

/* The post this call uses. */
static inline int coll_ring_index(const struct coll_ctx *x)
{
    return (int)(x->seq % COLL_RING);
}

/* Waits until *flag >= value (spin while alone on the worker, else park).
 * Stalled for COLL_STALL_NS, it compares the members' records of this call
 * and ends the job if they name different collectives or roots. */
void coll_wait(struct coll_ctx *x, _Atomic uint64_t *flag, uint64_t value);
/* Sets *flag = value (release) and wakes `who` if it waits. */
void coll_set(struct coll_ctx *x, _Atomic uint64_t *flag, uint64_t value, int who);
/* Wakes `who` if it waits (after a flag it may wait for changed). */
void coll_notify(struct coll_ctx *x, int who);
/* Adds 1 to *counter and wakes `who` when it reaches `value`. */
void coll_count(struct coll_ctx *x, _Atomic uint64_t *counter, uint64_t value, int who);

/* Publishes the caller's arguments (and data) for this call in its post;
 * waits first for copy-in readers of that post's previous use. Returns the
 * post (its cell may be filled before coll_publish_done()). */
struct coll_post *coll_publish_begin(struct coll_ctx *x);
/* coll_publish_begin() for a post whose readers need only its first line
 * (kind, root, copy-in data): the publisher's arguments, data and detached
 * are left as the post's last use left them. */
struct coll_post *coll_publish_cell(struct coll_ctx *x);
/* Makes the post visible; wakes every other member when wake_all (else the
 * algorithm notifies those that wait for it). */
void coll_publish_done(struct coll_ctx *x, struct coll_post *p, bool wake_all);
/* Waits for member r's post of this call; NULL (and x->why set) when r made
 * a different collective call or gave another root. */
const struct coll_post *coll_peer_post(struct coll_ctx *x, int r);
/* After coll_peer_post(x, r) failed: counts the caller as done with r's
 * post anyway, so that r does not wait for it forever. */
void coll_peer_release(struct coll_ctx *x, int r);
/* Before coll_publish_done(): `readers` members will read the caller's own
 * buffers through post p and count themselves with coll_read_done(). */
void coll_expect_reads(struct coll_ctx *x, struct coll_post *p, int readers);
/* Waits until they all have (the caller may then reuse its buffers). */
void coll_await_reads(struct coll_ctx *x, struct coll_post *p);
/* Counts the caller as a reader done with post p of member r; the last one
 * wakes r. */
void coll_read_done(struct coll_ctx *x, const struct coll_post *p, int r);
/* coll_read_done() on the posts of this call of members 0..n-1 but the
 * caller (after coll_collect() of as many). */
void coll_read_done_upto(struct coll_ctx *x, int n);

/* The buffer readers of the caller's post p copy from in place of the bytes
 * [lo, hi) around buf (offsets from buf): buf itself, or a copy when `copy`
 * (an in-place call about to overwrite it) or when the call is nonblocking.
 * A nonblocking call's copy stays with the post until its next use, so the
 * caller's request completes without waiting for its readers
 * (coll_await_reads() returns at once, p->detached). Returns the pointer
 * that plays buf's role; NULL when out of memory. */
const void *coll_expose_span(struct coll_ctx *x, struct coll_post *p, const void *buf, MPI_Aint lo,
                             MPI_Aint hi, bool copy);
/* The same for the bytes count x t at buf covers (its true extent). */
const void *coll_expose(struct coll_ctx *x, struct coll_post *p, const void *buf, size_t count,
                        const struct loom_type *t, bool copy);
/* The same for the blocks of a gather/scatter/allgather/alltoall family
 * call: the send blocks (send) around a->sbuf or the receive blocks around
 * a->rbuf, for every member. */
const void *coll_expose_blocks(struct coll_ctx *x, struct coll_post *p, bool send, bool copy);
/* Before a call runs: frees what the previous user of its post kept (a
 * nonblocking call's arguments and copies) once that post's readers are
 * done. */
void coll_reclaim(struct coll_ctx *x);
/* task.c: releases a finished nonblocking call (its types, op, arrays). */
void coll_task_free(struct coll_task *t);

/* Every member arrives, then leaves: the central counter barrier. */
void coll_fence(struct coll_ctx *x);

/* Scratch memory `which` (0: algorithms, 1: coll_expose, 2: coll_fold) of
 * at least len bytes, the caller's, valid until its next collective call;
 * NULL when out of memory. */
void *coll_scratch(struct coll_ctx *x, int which, size_t len);

/* ---- data (core.c) ---- */

/* Copies a message of scount x stype from src into dcount x dtype at dst;
 * MPI_ERR_TRUNCATE when it does not fit. */
int coll_copy(struct coll_ctx *x, void *dst, size_t dcount, struct loom_type *dt, const void *src,
              size_t scount, struct loom_type *st);

/* What coll_collect() takes from each peer's post. */
enum coll_pick {
    COLL_PICK_INPUT, /* the reduction input it published (coll_input of its args) */
    COLL_PICK_DATA,  /* post.data (a snapshot or an accumulator) */
    COLL_PICK_CELL,  /* its copied-in rcount x rtype, as a buffer of rtype */
};
/* Waits for the posts of members 0..n-1 of this call and sets (*in_p)[r] to
 * what `pick` takes from member r's post; the caller's own entry (if
 * x->rank < n) is self. A peer whose post does not match this call gets
 * self too, and its error class is returned; MPI_ERR_NO_MEM when the
 * array cannot grow. The array is the caller's until its next call. */
int coll_collect(struct coll_ctx *x, int n, const void *self, enum coll_pick pick,
                 const void *const **in_p);
/* The reduction inputs of the members of the caller's memory domain, in
 * domain order, into in[0..q): waits for their posts; a member whose post
 * does not match gets the caller's input, and its error class is
 * returned. */
int coll_collect_domain(struct coll_ctx *x, const void **in);

/* Sets x->why for a message of n bytes arriving in a buffer of cap bytes and
 * returns MPI_ERR_TRUNCATE. */
int coll_truncated(struct coll_ctx *x, size_t n, size_t cap);

/* Bytes per chunk of a pipelined message of nbytes: at least COLL_CHUNK,
 * few enough chunks for the progress flag's low bits. */
static inline size_t coll_chunk_bytes(size_t nbytes)
{
    size_t c = COLL_CHUNK;
    while (nbytes / c >= ((size_t)1 << COLL_PROGRESS_BITS) - 1)
        c *= 2;
    return c;
}

/* Byte address of element e of a buffer of type t. */
static inline char *coll_elem(const void *buf, const struct loom_type *t, size_t e)
{
    return (char *)buf + (ptrdiff_t)e * (t->ub - t->lb);
}

/* out = in[0] op in[1] op ... op in[n-1] over elements [e0, e0 + ne) of
 * buffers of count elements of type t, in rank order. alias: index of the
 * input that out is (in place), or -1. Strip-mined. */
int coll_fold(struct coll_ctx *x, const struct loom_op *op, const struct loom_type *t,
              const void *const *in, int n, void *out, int alias, size_t e0, size_t ne);

/* A buffer of count elements of type t for count x t (the pointer plays the
 * role of a user buffer: element 0 starts there), in scratch `which`. */
void *coll_tempbuf(struct coll_ctx *x, int which, size_t count, const struct loom_type *t);

/* One block of the gather/scatter/allgather/alltoall families. */
struct coll_block {
    const void *buf;
    size_t count;
    struct loom_type *type;
};
/* The block the member with arguments pa sends to member j; base replaces
 * pa->sbuf (in-place calls send from a snapshot). */
struct coll_block coll_send_block(enum loom_coll_kind kind, const struct loom_coll_args *pa,
                                  const void *base, int j);
/* The block the member with arguments pa receives from member i. */
struct coll_block coll_recv_block(enum loom_coll_kind kind, const struct loom_coll_args *pa, int i);

/* Unpacks nb packed bytes at src (a copy-in cell) into block d;
 * MPI_ERR_TRUNCATE when they do not fit. */
int coll_unpack(struct coll_ctx *x, struct coll_block d, const void *src, size_t nb);

/* The k-th member (0 <= k <= size; k = 0 and k = size: r itself) that
 * member r copies from or to in the direct algorithms. Members of one
 * domain take the domains in turn, each starting at a different one, so at
 * every step each domain's memory serves about the same number of readers;
 * with one domain this is (r + k) mod size, the right neighbour first. */
static inline int coll_peer(const struct coll_shared *sh, int r, int k)
{
    int i = sh->spread_pos[r] + k;
    return sh->spread[i < sh->size ? i : i - sh->size];
}

/* Member i of domain d (i below the domain's member count). */
static inline int coll_dom_member(const struct coll_shared *sh, int d, int i)
{
    return sh->dom_list[sh->dom_start[d] + i];
}

/* Members of domain d. */
static inline int coll_dom_size(const struct coll_shared *sh, int d)
{
    return sh->dom_start[d + 1] - sh->dom_start[d];
}

/* The tiles of the domain algorithms (allreduce_numa.c, reduce_numa.c): the
 * vector is cut into chunks of ntiles = dom_max tiles; in each domain of q
 * members, member j mod q owns tile j of every chunk. A tile is at most
 * COLL_STRIP bytes and, when the type's extent divides a cache line, a whole
 * number of lines from the buffer's start: a chunk's work stays in cache
 * (strip mining) and owners of neighbouring tiles do not share lines. */
struct coll_tiles {
    size_t count;     /* elements of the vector */
    size_t tile;      /* elements of a tile (the last ones may be short or empty) */
    size_t chunk;     /* elements of a chunk: ntiles * tile */
    uint64_t nchunks; /* at least 1: a call of no elements still synchronizes */
    int ntiles;
};
/* Most chunks: a stage of a chunk is signalled in a member's progress flag
 * as seq << COLL_PROGRESS_BITS | (chunk * 4 + stage), stage 1..3; FINAL
 * after them all. */
#define COLL_TILES_MAX_CHUNKS ((uint64_t)1 << 17)
#define COLL_TILES_FINAL      (((uint64_t)1 << COLL_PROGRESS_BITS) - 1)

void coll_tiles_init(const struct coll_shared *sh, const struct loom_type *t, size_t count,
                     struct coll_tiles *tl);

/* Elements [*e0_p, *e0_p + return value) of tile j of chunk c. */
static inline size_t coll_tile(const struct coll_tiles *tl, uint64_t c, int j, size_t *e0_p)
{
    size_t e0 = (size_t)c * tl->chunk + (size_t)j * tl->tile;
    *e0_p = e0;
    if (e0 >= tl->count)
        return 0;
    return tl->count - e0 < tl->tile ? tl->count - e0 : tl->tile;
}

/* The input of a reduction: the receive buffer when in place. */
static inline const void *coll_input(const struct loom_coll_args *a)
{
    return a->in_place ? a->rbuf : a->sbuf;
}

/* ---- the per-worker stage (local.c) ---- */

/* Arrival at the per-worker stage: the caller's index among its worker's
 * members in this call (the last one, size - 1, represents them). The caller
 * contributes, then calls coll_local_arrived(), without waiting in between. */
int coll_local_arrive(struct coll_ctx *x, struct coll_local **loc_p);
void coll_local_arrived(struct coll_local *loc);
/* The representatives' barrier (one per worker). */
void coll_local_rep_barrier(struct coll_ctx *x, struct coll_local *loc);
/* x's call and rank r's (kind, root) differ where the algorithm cannot go
 * on: ends the job with the mismatch message, whatever the error handler
 * (core.c's stall check and the per-worker stage). */
LOOM_NORETURN void coll_mismatch_abort(struct coll_ctx *x, int r, int kind, int root);
/* The representative: marks the call done for its worker and wakes the
 * others; the others: wait for that. */
void coll_local_release(struct coll_ctx *x, struct coll_local *loc);
void coll_local_wait(struct coll_ctx *x, struct coll_local *loc);

/* ---- calls ---- */

/* The algorithm for this call (select.c). */
/* The calls that world rank `rank` made per algorithm (the MPI_T
 * performance variables coll_<collective>_<name>_calls): [COLL_NALG] counters
 * that only the rank's own ULTs (itself and its runners, all on its worker)
 * write. Never NULL (a shared dummy once memory ran out). */
uint64_t *coll_uses_of(int rank);
const struct coll_algorithm *coll_select(struct coll_ctx *x);

/* Bumped by each loom_coll_force() override: every memo expires. */
extern _Atomic unsigned coll_select_gen;

/* The part of a call's shape besides its size and root that the choice
 * depends on. */
static inline int coll_memo_flags(const struct loom_op *op, const struct loom_type *t,
                                  bool nonblocking)
{
    return (op && op->commutative) | (t && t->contig) << 1 | nonblocking << 2;
}

/* The selector's last choice for a call of this shape on this member, or
 * NULL when it has none (coll_select() then chooses). */
static inline const struct coll_algorithm *coll_memo_lookup(const struct coll_member *me,
                                                            enum loom_coll_kind kind, size_t nbytes,
                                                            int root, int flags)
{
    const struct coll_memo *memo = &me->memo[kind];
    unsigned gen = atomic_load_explicit(&coll_select_gen, memory_order_relaxed);
    if (LOOM_LIKELY(memo->alg != NULL) && memo->gen == gen && memo->nbytes == nbytes &&
        memo->root == root && memo->flags == flags)
        return memo->alg;
    return NULL;
}
/* Starts the call x (its seq taken) on a runner of its own, which publishes
 * it before this returns; req completes when it is done (task.c). */
int coll_start(struct coll_ctx *x, struct LMPI_Request_s *req);
/* Marks the caller done with call seq (after its last read of that call). */
void coll_finish(struct coll_shared *sh, int rank, uint64_t seq);
/* Waits until the member's nonblocking calls have finished. */
void coll_drain(struct coll_ctx *x);

/* ---- algorithms ---- */

/* An intercommunicator's collectives (inter.c), run on its bridge: the
 * algorithm for every call there, whatever the kind. */
const struct coll_algorithm *coll_inter_algorithm(enum loom_coll_kind kind);
/* Entries of the count, displacement and type arrays of call kind by member
 * rank: the communicator's size, or on a bridge the remote group's size
 * (the local group's for Reduce_scatter). */
int coll_args_len(const struct coll_shared *sh, int rank, enum loom_coll_kind kind);

/* bcast/direct's part at a member other than the root, once the root's post
 * p is there (also small.c's, for a root that published otherwise). */
int coll_bcast_direct_receive(struct coll_ctx *x, const struct coll_post *p);
/* gather/direct's part at the root for member r's post p, whose block goes
 * to d; scatter/direct's at a member other than the root (both also
 * small.c's, for posts it does not read itself). */
int coll_gather_direct_receive(struct coll_ctx *x, int r, struct coll_block d,
                               const struct coll_post *p);
int coll_scatter_direct_receive(struct coll_ctx *x, const struct coll_post *p);
/* allgather/direct's and alltoall/direct's part for member r's post p. */
int coll_allgather_direct_receive(struct coll_ctx *x, int r, const struct coll_post *p);
int coll_alltoall_direct_receive(struct coll_ctx *x, int r, const struct coll_post *p);

typedef int (*coll_fn)(struct coll_ctx *x);
/* Predicted time in seconds; negative: not applicable to this call. */
typedef double (*coll_cost_fn)(const struct coll_ctx *x, size_t nbytes);

/* Every algorithm's number: COLL_ALG_<collective>_<name>, in list order. */
enum coll_algorithm_id {
#define LOOM_COLL_ALGORITHM(KIND, kind, name, progress, summary) COLL_ALG_##kind##_##name,
#include "coll/algorithms.def"
#undef LOOM_COLL_ALGORITHM
    COLL_NALG
};

struct coll_algorithm {
    enum loom_coll_kind kind;
    enum coll_algorithm_id id;
    const char *name;
    coll_fn run;
    coll_cost_fn cost;
    bool independent; /* algorithms.def: INDEPENDENT */
    const char *summary;
};

/* Counts a call of alg by member me. */
static inline void coll_count_use(struct coll_member *me, const struct coll_algorithm *alg)
{
    me->uses[alg->id]++;
}

#define LOOM_COLL_ALGORITHM(KIND, kind, name, progress, summary)                                   \
    int coll_##kind##_##name(struct coll_ctx *x);                                                  \
    double coll_##kind##_##name##_cost(const struct coll_ctx *x, size_t nbytes);
#include "coll/algorithms.def"
#undef LOOM_COLL_ALGORITHM

/* The model's machine parameters (model.c: built-in, calibrated on this
 * machine, or from LOOM_COLL_MODEL; see coll/model.h). */
struct coll_model {
    double line_s;       /* one cache-line transfer between cores */
    double wake_s;       /* parking and waking a rank (across workers) */
    double local_wake_s; /* waking a rank of the same worker */
    double copy_bps;     /* one core's copy bandwidth, bytes/s */
    double mem_bps;      /* the memory system's bandwidth, all cores */
};
extern struct coll_model coll_model;

/* Message bytes of a call, as the selector sees it (the same on every rank). */
size_t coll_call_bytes(const struct coll_ctx *x);
/* Members that share a worker with another member (oversubscription). */
int coll_max_per_worker(const struct coll_shared *sh);
/* Whether the user lets reductions combine floating-point and user
 * operations in arrival order: the communicator's info key
 * loom_reduce_order ("arrival" or "fixed", the same on every member), else
 * LOOM_COLL_REDUCE_ORDER, else no (docs/collectives.md#reproducible-reductions).
 * info: the calling member's hints on the communicator, or NULL. */
struct loom_info;
bool coll_reduce_arrival(const struct loom_info *info);
/* Seconds for each of `at_once` cores to copy `bytes` at the same time, out
 * of `distinct` bytes they read in all: one core's copy bandwidth, unless the
 * distinct bytes overflow the last-level caches and the cores then share
 * the memory's bandwidth. */
double coll_parallel_copy_s(double at_once, double bytes, double distinct);
/* Seconds for `bytes` to reach one memory domain from the others, all of
 * its members' remote reads at once: a domain's link is taken to carry its
 * memory's share of the machine's bandwidth, mem / D. 0 with one domain. */
double coll_remote_s(const struct coll_shared *sh, double bytes);

#endif
