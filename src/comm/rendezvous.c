/*
 * Collective agreement through shared memory: the members of a
 * communicator-creating call meet in a job-wide table keyed by (parent's
 * context id, WHOLE + the parent's creation sequence number | CREATE + that
 * number + the member list | GROUP + tag + the member list). The first to arrive creates the entry;
 * each member deposits its contribution; the last to arrive computes every member's result, marks
 * the entry done and wakes the others, each through its own waiter slot; the last to leave frees
 * the entry. Only entries still waiting for members match, so back-to-back calls with the same key
 * never mix.
 *
 * Nonblocking duplication (MPI_Comm_idup) meets in the same table under the
 * same keys (its place in the parent's creation sequence) but waits for
 * nobody: a duplicate needs nothing from the members but their arrival, so
 * the first to arrive makes the new shared part, every member takes it at
 * once, and the last to arrive calls every member's completion callback and
 * frees the entry. Blocking and nonblocking entries never match each other.
 * Cost: one lock per member, O(n) work (O(n log n) for split) on the last.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm_impl.h"
#include "runtime/job.h"
#include "runtime/ult.h"

struct slot {
    loom_waiter_slot waiter;
} LOOM_ALIGNED_CL;

/* A member of a nonblocking agreement: what to call when all have arrived. */
struct arrival {
    loom_rdv_done_fn fn;
    void *arg;
};

struct rdv {
    struct rdv *next;
    uint32_t context_id;
    int kind, seq_or_tag, n;
    int *members;      /* GROUP: copy of the key's member list */
    int arrived, left; /* under the bucket lock */
    _Atomic int done;
    int rc;
    struct loom_rdv_in *in;
    struct loom_rdv_out *out;
    struct slot *slots;
    /* Nonblocking (loom_rdv_arrive): the new shared part and each member's
     * completion callback; in, out and slots are not used. */
    bool nonblocking;
    struct loom_comm_shared *sh;
    struct arrival *arrivals;
    /* An intercommunicator's duplicate: sh is side A's, sh_b side B's. */
    struct loom_comm_shared *sh_b, *bridge;
    int na;
};

#define NBUCKETS 64
static struct bucket {
    pthread_mutex_t lock;
    struct rdv *head;
} buckets[NBUCKETS];
static pthread_once_t buckets_once = PTHREAD_ONCE_INIT;

static void buckets_init(void)
{
    for (int i = 0; i < NBUCKETS; i++)
        pthread_mutex_init(&buckets[i].lock, NULL);
}

static bool key_matches(const struct rdv *e, const struct loom_rdv_key *k, bool nonblocking)
{
    if (e->context_id != k->context_id || e->kind != k->kind || e->seq_or_tag != k->seq_or_tag ||
        e->n != k->n || e->arrived == e->n || e->nonblocking != nonblocking)
        return false;
    return k->kind == LOOM_RDV_WHOLE ||
           memcmp(e->members, k->members, (size_t)k->n * sizeof *k->members) == 0;
}

static void rdv_free(struct rdv *e)
{
    free(e->members);
    free(e->in);
    free(e->out);
    free(e->slots);
    free(e->arrivals);
    free(e);
}

/* An entry for key k, zeroed but for the key. */
static struct rdv *rdv_alloc(const struct loom_rdv_key *k)
{
    struct rdv *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->context_id = k->context_id;
    e->kind = k->kind;
    e->seq_or_tag = k->seq_or_tag;
    e->n = k->n;
    return e;
}

/* A blocking call's entry: room for every member's input, result and
 * waiter slot. */
static struct rdv *rdv_new(const struct loom_rdv_key *k)
{
    struct rdv *e = rdv_alloc(k);
    if (!e)
        return NULL;
    e->in = calloc((size_t)k->n, sizeof *e->in);
    e->out = calloc((size_t)k->n, sizeof *e->out);
    e->slots = aligned_alloc(LOOM_CACHE_LINE, (size_t)k->n * sizeof *e->slots);
    if (k->kind != LOOM_RDV_WHOLE) {
        e->members = malloc((size_t)k->n * sizeof *e->members);
        if (e->members)
            memcpy(e->members, k->members, (size_t)k->n * sizeof *e->members);
    }
    if (!e->in || !e->out || !e->slots || (k->kind != LOOM_RDV_WHOLE && !e->members)) {
        rdv_free(e);
        return NULL;
    }
    memset(e->slots, 0, (size_t)k->n * sizeof *e->slots);
    return e;
}

static bool rdv_done(const void *arg)
{
    const struct rdv *e = arg;
    return atomic_load_explicit(&e->done, memory_order_acquire) != 0;
}

/* Unlinks e from b (locked). */
static void rdv_unlink(struct bucket *b, struct rdv *e)
{
    struct rdv **pe = &b->head;
    while (*pe != e)
        pe = &(*pe)->next;
    *pe = e->next;
}

/* Counts the caller out; the last to leave unlinks and frees the entry. */
static void rdv_leave(struct bucket *b, struct rdv *e)
{
    pthread_mutex_lock(&b->lock);
    bool last = ++e->left == e->n;
    if (last)
        rdv_unlink(b, e);
    pthread_mutex_unlock(&b->lock);
    if (last)
        rdv_free(e);
}

/* The bucket of key's entries (the table is set up on first use). */
static struct bucket *bucket_of(const struct loom_rdv_key *key)
{
    pthread_once(&buckets_once, buckets_init);
    return &buckets[(key->context_id / 2) % NBUCKETS];
}

/* The entry still waiting for members under key, or NULL; b locked. */
static struct rdv *rdv_find(struct bucket *b, const struct loom_rdv_key *key, bool nonblocking)
{
    struct rdv *e = b->head;
    while (e && !key_matches(e, key, nonblocking))
        e = e->next;
    return e;
}

/* What a member waiting here waits for (deadlock detection). */
static void rdv_describe(const struct loom_mpi_wait *w, char *buf, size_t n)
{
    const struct loom_rdv_key *k = w->arg;
    snprintf(buf, n,
             "in a call that creates a communicator (MPI_Comm_dup, _split, _create, "
             "MPI_Intercomm_create...) with %d members, on context %u",
             k->n, k->context_id);
}

static int rdv_peers(const struct loom_mpi_wait *w, int *world, int max)
{
    const struct loom_rdv_key *k = w->arg;
    if (!k->members)
        return -1;
    int n = k->n < max ? k->n : max;
    memcpy(world, k->members, (size_t)n * sizeof *world);
    return n;
}

int loom_rdv_run(const struct loom_rdv_key *key, int me, const struct loom_rdv_in *in,
                 loom_rdv_compute_fn compute, const void *arg, struct loom_rdv_out *out_p)
{
    struct bucket *b = bucket_of(key);
    pthread_mutex_lock(&b->lock);
    struct rdv *e = rdv_find(b, key, false);
    if (!e) {
        e = rdv_new(key);
        if (!e) {
            /* Other members would wait forever: out of memory here is fatal
             * for the call on every member, so report it and let the caller
             * abort (MPI_ERR_NO_MEM under MPI_ERRORS_RETURN would hang). */
            pthread_mutex_unlock(&b->lock);
            return LOOM_ERR_NOMEM;
        }
        e->next = b->head;
        b->head = e;
    }
    e->in[me] = *in;
    bool last = ++e->arrived == e->n;
    pthread_mutex_unlock(&b->lock);

    if (last) {
        e->rc = compute(e->n, e->in, e->out, arg);
        /* seq_cst: results and rc are published before `done`, and `done`
         * before we look at the waiter slots (Dekker with loom_ult_wait). */
        atomic_store_explicit(&e->done, 1, memory_order_seq_cst);
        for (int i = 0; i < e->n; i++)
            if (i != me)
                loom_ult_notify(&e->slots[i].waiter);
    } else {
        struct loom_mpi_wait dw = {rdv_describe, rdv_peers, key,
                                   (uint64_t)(uintptr_t)e | 1ull << 63, false};
        loom_mpi_wait_enter(&dw);
        loom_ult_wait(rdv_done, e, &e->slots[me].waiter);
        loom_mpi_wait_leave();
    }
    int rc = e->rc;
    if (rc == LOOM_OK)
        *out_p = e->out[me];
    /* The notifier leaves only after its last notify, so the slots stay
     * mapped while it touches them. */
    rdv_leave(b, e);
    return rc;
}

/* A nonblocking duplicate's entry, with the new shared part over world[]. */
static struct rdv *rdv_new_dup(const struct loom_rdv_key *k, const int *world)
{
    struct rdv *e = rdv_alloc(k);
    if (!e)
        return NULL;
    e->nonblocking = true;
    e->arrivals = calloc((size_t)k->n, sizeof *e->arrivals);
    /* The shared part last: nothing can fail after it (its n references
     * belong to the members). */
    if (!e->arrivals || !(e->sh = loom_comm_shared_new(k->n))) {
        rdv_free(e);
        return NULL;
    }
    memcpy(e->sh->world_of, world, (size_t)k->n * sizeof *world);
    return e;
}

/* An intercommunicator duplicate's entry (na > 0), with its three shared
 * parts over world[]. */
static struct rdv *rdv_new_inter_dup(const struct loom_rdv_key *k, const int *world, int na)
{
    struct rdv *e = rdv_alloc(k);
    if (!e)
        return NULL;
    e->nonblocking = true;
    e->na = na;
    e->arrivals = calloc((size_t)k->n, sizeof *e->arrivals);
    if (!e->arrivals ||
        loom_comm_inter_shared(k->n, na, world, &e->sh, &e->sh_b, &e->bridge) != LOOM_OK) {
        rdv_free(e);
        return NULL;
    }
    return e;
}

/* The arrival part of loom_rdv_arrive(): na > 0 for an intercommunicator. */
static int arrive(const struct loom_rdv_key *key, int me, const int *world, int na,
                  loom_rdv_done_fn done, void *done_arg, struct loom_rdv_out *out_p)
{
    struct bucket *b = bucket_of(key);
    pthread_mutex_lock(&b->lock);
    struct rdv *e = rdv_find(b, key, true);
    if (!e) {
        e = na ? rdv_new_inter_dup(key, world, na) : rdv_new_dup(key, world);
        if (!e) {
            /* Fatal for the call on every member, as in loom_rdv_run. */
            pthread_mutex_unlock(&b->lock);
            return LOOM_ERR_NOMEM;
        }
        e->next = b->head;
        b->head = e;
    }
    e->arrivals[me] = (struct arrival){done, done_arg};
    struct loom_rdv_out out = {e->sh, me, NULL, 0};
    if (na)
        out = me < na ? (struct loom_rdv_out){e->sh, me, e->bridge, me}
                      : (struct loom_rdv_out){e->sh_b, me - na, e->bridge, me};
    bool last = ++e->arrived == e->n;
    if (last)
        rdv_unlink(b, e);
    pthread_mutex_unlock(&b->lock);

    if (last) {
        /* Every arrival was recorded under the lock we took after it; each
         * callback publishes its own completion. */
        for (int i = 0; i < e->n; i++)
            if (e->arrivals[i].fn)
                e->arrivals[i].fn(e->arrivals[i].arg);
        rdv_free(e);
    }
    *out_p = out;
    return LOOM_OK;
}

int loom_rdv_arrive(const struct loom_rdv_key *key, int me, const int *world, loom_rdv_done_fn done,
                    void *done_arg, struct loom_comm_shared **sh_p)
{
    struct loom_rdv_out out;
    int rc = arrive(key, me, world, 0, done, done_arg, &out);
    if (rc == LOOM_OK)
        *sh_p = out.sh;
    return rc;
}

int loom_rdv_arrive_inter(const struct loom_rdv_key *key, int me, const int *world, int na,
                          loom_rdv_done_fn done, void *done_arg, struct loom_rdv_out *out_p)
{
    return arrive(key, me, world, na, done, done_arg, out_p);
}
