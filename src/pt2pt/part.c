/*
 * Partitioned point-to-point: the channel of a matched pair of partitioned
 * requests, its rounds and its copies (see part.h).
 */
#include "pt2pt/part.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "datatype/datatype.h"

enum { SEND, RECV };
enum { NOT_READY, READY, COPIED }; /* a send partition in the current round */

/* One side of a channel. */
struct part_half {
    struct loom_part *ch;
    loom_req *req; /* NULL before it is matched and once freed */
    void *buf;
    struct loom_type *type;
    int partitions;
    size_t part_bytes, total;
    uint64_t round; /* MPI_Start calls so far */
    uint64_t done_round;
    unsigned char *ready; /* send: [partitions] */
    _Atomic size_t *got;  /* receive: [partitions] bytes arrived this round */
};

struct loom_part {
    pthread_mutex_t lock;   /* rounds, ready marks, copies, completion */
    struct loom_part *next; /* unmatched channels */
    bool listed;
    bool proc_null; /* the peer is MPI_PROC_NULL: never matched, rounds end at start */
    uint32_t ctx;
    int sender, receiver, sender_rank, tag;
    int sides;  /* halves initialized and not freed */
    int copied; /* send partitions copied this round */
    struct part_half half[2];
};

/* Channels with one side only, oldest first; matching takes the first. */
static pthread_mutex_t unmatched_lock = PTHREAD_MUTEX_INITIALIZER;
static struct loom_part *unmatched;

static struct part_half *half_of(const loom_req *req)
{
    return req->ext;
}

static bool matched(const struct loom_part *ch)
{
    return ch->half[SEND].type && ch->half[RECV].type;
}

/* Both sides are in the same round, and it is open. */
static bool same_round(const struct loom_part *ch)
{
    return matched(ch) && ch->half[SEND].round == ch->half[RECV].round &&
           ch->half[SEND].round > ch->half[SEND].done_round;
}

/* Copies ready send partition i into the receive buffer (lock held). */
static void copy_partition(struct loom_part *ch, int i)
{
    struct part_half *s = &ch->half[SEND], *r = &ch->half[RECV];
    size_t off = (size_t)i * s->part_bytes;
    if (off < r->total && s->part_bytes) {
        size_t n = s->part_bytes < r->total - off ? s->part_bytes : r->total - off;
        loom_type_copy(r->buf, r->type, s->buf, s->type, off, n);
        /* The receive partitions that [off, off + n) covers. */
        for (size_t j = off / r->part_bytes; j < (size_t)r->partitions; j++) {
            size_t lo = j * r->part_bytes, hi = lo + r->part_bytes;
            if (lo >= off + n)
                break;
            size_t a = lo > off ? lo : off, b = hi < off + n ? hi : off + n;
            /* Publish the copied bytes before the count MPI_Parrived reads. */
            atomic_fetch_add_explicit(&r->got[j], b - a, memory_order_release);
        }
    }
    s->ready[i] = COPIED;
    ch->copied++;
}

/* Completes both requests once every send partition of the round is
 * copied (lock held). */
static void maybe_complete(struct loom_part *ch)
{
    struct part_half *s = &ch->half[SEND], *r = &ch->half[RECV];
    if (!same_round(ch) || ch->copied < s->partitions)
        return;
    s->done_round = s->round;
    r->done_round = r->round;
    if (r->req) {
        loom_req *q = r->req;
        q->status_source = ch->sender_rank;
        q->status_tag = ch->tag;
        q->status_bytes = s->total < r->total ? s->total : r->total;
        q->status_error = s->total > r->total ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
        q->count = s->total; /* a truncated receive: the message's bytes */
        q->bytes = r->total;
        loom_req_complete_async(q);
    }
    if (s->req) {
        s->req->status_error = MPI_SUCCESS;
        loom_req_complete_async(s->req);
    }
}

/* Copies what the sender made ready before the receiver started the round. */
static void copy_pending(struct loom_part *ch)
{
    if (!same_round(ch))
        return;
    struct part_half *s = &ch->half[SEND];
    for (int i = 0; i < s->partitions; i++)
        if (s->ready[i] == READY)
            copy_partition(ch, i);
    maybe_complete(ch);
}

static int half_setup(struct part_half *h, bool send, const struct loom_part_args *a)
{
    h->buf = a->buf;
    h->partitions = a->partitions;
    h->part_bytes = a->count * a->type->size;
    h->total = h->part_bytes * (size_t)a->partitions;
    if (send)
        h->ready = calloc((size_t)a->partitions, 1);
    else
        h->got = calloc((size_t)a->partitions, sizeof *h->got);
    if (send ? !h->ready : !h->got)
        return LOOM_ERR_NOMEM;
    h->type = a->type;
    loom_type_retain(a->type);
    return LOOM_OK;
}

static void channel_destroy(struct loom_part *ch)
{
    for (int k = SEND; k <= RECV; k++) {
        if (ch->half[k].type)
            loom_type_release(ch->half[k].type);
        free(ch->half[k].ready);
        free((void *)ch->half[k].got);
    }
    pthread_mutex_destroy(&ch->lock);
    free(ch);
}

int loom_part_init(loom_req *req, bool send, const struct loom_part_args *a)
{
    int side = send ? SEND : RECV;
    bool proc_null = a->sender < 0 || a->receiver < 0;
    pthread_mutex_lock(&unmatched_lock);
    struct loom_part **pp = &unmatched, *ch = NULL;
    for (; *pp && !proc_null; pp = &(*pp)->next) {
        struct loom_part *c = *pp;
        if (!c->half[side].type && c->ctx == a->ctx && c->sender == a->sender &&
            c->receiver == a->receiver && c->tag == a->tag) {
            ch = c;
            break;
        }
    }
    bool fresh = !ch;
    if (fresh) {
        ch = calloc(1, sizeof *ch);
        if (!ch) {
            pthread_mutex_unlock(&unmatched_lock);
            return LOOM_ERR_NOMEM;
        }
        pthread_mutex_init(&ch->lock, NULL);
        ch->ctx = a->ctx;
        ch->sender = a->sender;
        ch->receiver = a->receiver;
        ch->sender_rank = a->sender_rank;
        ch->tag = a->tag;
        ch->proc_null = proc_null;
        ch->half[SEND].ch = ch->half[RECV].ch = ch;
    }
    pthread_mutex_lock(&ch->lock);
    int rc = half_setup(&ch->half[side], send, a);
    if (rc) {
        pthread_mutex_unlock(&ch->lock);
        pthread_mutex_unlock(&unmatched_lock);
        if (fresh)
            channel_destroy(ch);
        return rc;
    }
    ch->half[side].req = req;
    ch->sides++;
    req->ext = &ch->half[side];
    if (proc_null) {
        /* Not listed: nothing matches it. */
    } else if (fresh) {
        /* Appended: matching takes the oldest. */
        while (*pp)
            pp = &(*pp)->next;
        *pp = ch;
        ch->listed = true;
    } else {
        *pp = ch->next;
        ch->listed = false;
    }
    pthread_mutex_unlock(&ch->lock);
    pthread_mutex_unlock(&unmatched_lock);
    return LOOM_OK;
}

void loom_part_start(loom_req *req)
{
    struct part_half *h = half_of(req);
    struct loom_part *ch = h->ch;
    pthread_mutex_lock(&ch->lock);
    req->active = true;
    req->status_error = MPI_SUCCESS;
    req->status_bytes = 0;
    atomic_store_explicit(&req->done, 0, memory_order_relaxed);
    h->round++;
    if (ch->proc_null) {
        for (int i = 0; h->ready && i < h->partitions; i++)
            h->ready[i] = NOT_READY;
        req->status_source = MPI_PROC_NULL;
        req->status_tag = MPI_ANY_TAG;
        atomic_store_explicit(&req->done, 1, memory_order_release);
    } else if (h == &ch->half[SEND]) {
        for (int i = 0; i < h->partitions; i++)
            h->ready[i] = NOT_READY;
        ch->copied = 0;
    } else {
        for (int i = 0; i < h->partitions; i++)
            atomic_store_explicit(&h->got[i], 0, memory_order_relaxed);
        copy_pending(ch);
    }
    pthread_mutex_unlock(&ch->lock);
}

int loom_part_ready(loom_req *req, int i)
{
    struct part_half *h = half_of(req);
    struct loom_part *ch = h->ch;
    pthread_mutex_lock(&ch->lock);
    int rc = LOOM_OK;
    if (h->ready[i] != NOT_READY) {
        rc = LOOM_ERR_INVALID;
    } else {
        h->ready[i] = READY;
        if (same_round(ch)) {
            copy_partition(ch, i);
            maybe_complete(ch);
        }
    }
    pthread_mutex_unlock(&ch->lock);
    return rc;
}

bool loom_part_arrived(loom_req *req, int i)
{
    if (loom_req_done(req))
        return true;
    struct part_half *h = half_of(req);
    /* Acquire: the copied bytes are visible once their count is. */
    return h->part_bytes && atomic_load_explicit(&h->got[i], memory_order_acquire) >= h->part_bytes;
}

int loom_part_partitions(const loom_req *req)
{
    return half_of(req)->partitions;
}

bool loom_part_is_send(const loom_req *req)
{
    const struct part_half *h = half_of(req);
    return h == &h->ch->half[SEND];
}

void loom_part_free(loom_req *req)
{
    struct part_half *h = half_of(req);
    struct loom_part *ch = h->ch;
    pthread_mutex_lock(&unmatched_lock);
    pthread_mutex_lock(&ch->lock);
    h->req = NULL;
    req->ext = NULL;
    bool last = --ch->sides == 0;
    if (last && ch->listed) {
        struct loom_part **pp = &unmatched;
        while (*pp != ch)
            pp = &(*pp)->next;
        *pp = ch->next;
        ch->listed = false;
    }
    pthread_mutex_unlock(&ch->lock);
    pthread_mutex_unlock(&unmatched_lock);
    if (last)
        channel_destroy(ch);
}
