/*
 * Nonblocking collectives: MPI_Ibcast and friends take their place in the
 * communicator's call order at once (their sequence number) and each runs
 * on a runner of its own: a ULT on the rank's worker, taken from the rank's
 * pool of idle runners (created when the pool is empty, kept for later
 * calls). The runner executes the same algorithms as the blocking calls,
 * with the call's own context and workspace, and completes the request
 * (waking the rank if it waits on it).
 *
 * Progress: MPI_I<coll> switches to the runner at once, so the call is
 * published (and goes as far as it can without waiting) before MPI_I<coll>
 * returns, every call, not only the first of several queued ones. The
 * runners continue whenever the rank's worker is free: while the rank waits
 * in any MPI call and while other ranks of the worker wait. A rank that
 * computes without calling MPI holds its worker, so its runners wait too; the
 * calls are built not to need them: they use INDEPENDENT algorithms
 * (algorithms.def), and a publisher exposes copies of what peers read
 * (coll_expose), so the others complete meanwhile.
 *
 * Calls of one member run at the same time, and may end in any order. What
 * they share is kept apart by post: a call uses post seq % COLL_RING, and it
 * starts only once the member's call COLL_RING before it (the post's
 * previous user) has finished, so one call at a time owns a post, its
 * bookkeeping and its waiter slot. The member's `finished` advances only
 * over calls finished without a gap, since copy-in publishers reuse posts by
 * it. A finished call's task stays with its post (member.held) until the
 * post is reused, since peers may still read its arguments
 * (docs/collectives.md).
 *
 * The rank and its runners share one worker, so the pool and the member's
 * private fields need no locks: ULTs of one worker switch only where they
 * wait or yield.
 *
 * A blocking collective on a communicator with nonblocking calls still
 * running waits for them first.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_impl.h"
#include "pt2pt/p2p.h"
#include "runtime/job.h"

struct coll_task {
    struct coll_shared *sh;
    int rank; /* in the communicator */
    uint64_t seq;
    enum loom_coll_kind kind;
    struct loom_coll_args args;
    loom_req *req;
    struct loom_type **types; /* Alltoallw: copies of the type arrays */
    int *arrays;              /* copies of the count and displacement arrays */
};

struct coll_runner {
    struct coll_task *task;  /* the call it runs; NULL while idle */
    loom_waiter_slot waiter; /* the runner, idle */
    struct loom_ult *ult;
    struct coll_ws ws;
    bool stop;
    struct rank_runners *pool;
    struct coll_runner *next_idle, *next_of_rank;
    struct coll_runner *next_waiting; /* member.nb_waiting */
};

/* Each world rank's runners (touched by the rank's own worker only). */
struct rank_runners {
    struct coll_runner *idle, *all;
};
static struct rank_runners *runners_of;

static bool has_work(const void *arg)
{
    const struct coll_runner *r = arg;
    return r->task || r->stop;
}

static bool drained(const void *arg)
{
    const struct coll_member *me = arg;
    return me->nb_running == 0;
}

/* Waits until the member has finished every call up to seq. Those calls run
 * on this worker, and finish() wakes the runners waiting here: park at once
 * (nothing to spin for, no switch between the look and the park). */
static void await_own(struct coll_runner *rn, struct coll_member *me, uint64_t seq)
{
    if (me->nb_finished >= seq)
        return;
    rn->next_waiting = me->nb_waiting;
    me->nb_waiting = rn;
    while (me->nb_finished < seq)
        loom_ult_park();
    struct coll_runner **pp = &me->nb_waiting;
    while (*pp != rn)
        pp = &(*pp)->next_waiting;
    *pp = rn->next_waiting;
}

void coll_task_free(struct coll_task *t)
{
    if (!t)
        return;
    struct loom_coll_args *a = &t->args;
    if (a->stype)
        loom_type_release(a->stype);
    if (a->rtype)
        loom_type_release(a->rtype);
    if (t->types) {
        for (int i = 0; t->types[i]; i++)
            loom_type_release(t->types[i]);
        free(t->types);
    }
    if (a->op)
        loom_op_release(a->op);
    free(t->arrays);
    free(t);
}

/* Marks call x finished: `finished` advances over every call finished
 * without a gap; wakes the runners waiting for it. */
static void finish(struct coll_ctx *x)
{
    struct coll_member *me = x->me;
    uint64_t f = me->nb_finished;
    uint64_t bits = me->nb_done_ahead | (uint64_t)1 << (x->seq - f - 1);
    if (!(bits & 1)) {
        me->nb_done_ahead = bits;
        return;
    }
    while (bits & 1) {
        bits >>= 1;
        f++;
    }
    me->nb_done_ahead = bits;
    me->nb_finished = f;
    coll_finish(x->sh, x->rank, f);
    for (struct coll_runner *w = me->nb_waiting; w; w = w->next_waiting)
        loom_ult_wake(w->ult);
}

static void run_task(struct coll_runner *rn, struct coll_task *t)
{
    struct coll_member *me = &t->sh->m[t->rank];
    struct coll_ctx x = {
        .sh = t->sh,
        .me = me,
        .rank = t->rank,
        .size = t->sh->size,
        .seq = t->seq,
        .kind = t->kind,
        .a = &t->args,
        .ws = &rn->ws,
        .nonblocking = true,
    };
    int par = coll_ring_index(&x);
    /* The post's previous call must have finished. */
    uint64_t after = t->seq > COLL_RING ? t->seq - COLL_RING : 0;
    await_own(rn, me, after);
    coll_reclaim(&x);
    const struct coll_algorithm *alg = coll_select(&x);
    int rc = alg->run(&x);
    finish(&x);
    t->req->status_error = rc;
    if (rc && x.why)
        t->req->why = strdup(x.why); /* MPI_Wait raises it (NULL: a generic text) */
    /* Its post may still be read (coll_expose): keep the arguments. */
    me->held[par] = t;
    if (--me->nb_running == 0)
        loom_ult_notify(&me->drain_waiter);
    loom_req_complete_async(t->req);
}

static void runner_main(void *arg)
{
    struct coll_runner *rn = arg;
    struct rank_runners *pool = rn->pool;
    for (;;) {
        loom_ult_wait(has_work, rn, &rn->waiter);
        if (!rn->task)
            break; /* stopped */
        run_task(rn, rn->task);
        rn->task = NULL;
        rn->next_idle = pool->idle;
        pool->idle = rn;
    }
    for (int k = 0; k < 3; k++)
        free(rn->ws.scratch[k]);
    free(rn->ws.inputs);
    free(rn);
}

/* The calling rank's runners (remembered by the member); NULL without a
 * scheduler (singleton: *singleton_p set) or memory. */
static struct rank_runners *pool_of(struct coll_member *me, bool *singleton_p)
{
    if (LOOM_LIKELY(me->runners != NULL))
        return me->runners;
    struct loom_rank *rk = loom_rank_self();
    *singleton_p = !rk || loom_sched_worker_self() < 0 || !loom_ult_self();
    if (*singleton_p)
        return NULL;
    if (!__atomic_load_n(&runners_of, __ATOMIC_ACQUIRE)) {
        /* Every rank allocates on first use; CAS so that one array wins. */
        struct rank_runners *arr = calloc((size_t)loom_job.nranks, sizeof *arr);
        if (!arr)
            return NULL;
        struct rank_runners *expected = NULL;
        if (!__atomic_compare_exchange_n(&runners_of, &expected, arr, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            free(arr);
    }
    me->runners = &__atomic_load_n(&runners_of, __ATOMIC_ACQUIRE)[rk->rank];
    return me->runners;
}

/* An idle runner of the pool, or a new one; NULL when out of memory. */
static struct coll_runner *runner_get(struct rank_runners *pool)
{
    struct coll_runner *rn = pool->idle;
    if (LOOM_LIKELY(rn != NULL)) {
        pool->idle = rn->next_idle;
        return rn;
    }
    rn = calloc(1, sizeof *rn);
    if (!rn)
        return NULL;
    rn->pool = pool;
    if (loom_ult_create(runner_main, rn, loom_sched_worker_self(), 256 * 1024, &rn->ult) != 0) {
        free(rn);
        return NULL;
    }
    loom_ult_set_data(rn->ult, loom_rank_self()); /* user ops called by the runner see the rank */
    rn->next_of_rank = pool->all;
    pool->all = rn;
    return rn;
}

void coll_drain(struct coll_ctx *x)
{
    if (x->me->nb_running)
        loom_ult_wait(drained, x->me, &x->me->drain_waiter);
}

/* Takes a reference on every type of an argument set that the call uses and
 * copies its arrays: peers may read them after the caller's request is
 * complete (coll_expose). */
static int retain_args(struct coll_task *t, int size)
{
    struct loom_coll_args *a = &t->args;
    if (a->stype)
        loom_type_retain(a->stype);
    if (a->rtype)
        loom_type_retain(a->rtype);
    if (a->op)
        loom_op_retain(a->op);
    if (a->stypes || a->rtypes) {
        t->types = calloc(2 * (size_t)size + 1, sizeof *t->types);
        if (!t->types)
            return MPI_ERR_NO_MEM;
        int k = 0;
        for (int i = 0; a->stypes && i < size; i++)
            t->types[k++] = a->stypes[i];
        for (int i = 0; a->rtypes && i < size; i++)
            t->types[k++] = a->rtypes[i];
        for (int i = 0; i < k; i++)
            loom_type_retain(t->types[i]);
        if (a->stypes)
            a->stypes = t->types;
        if (a->rtypes)
            a->rtypes = t->types + (a->stypes ? size : 0);
    }
    const int **arrays[] = {&a->scounts, &a->sdispls, &a->rcounts, &a->rdispls};
    size_t narrays = 0;
    for (size_t i = 0; i < LOOM_ARRAY_SIZE(arrays); i++)
        narrays += *arrays[i] != NULL;
    if (narrays) {
        t->arrays = malloc(narrays * (size_t)size * sizeof *t->arrays);
        if (!t->arrays)
            return MPI_ERR_NO_MEM;
        int *next = t->arrays;
        for (size_t i = 0; i < LOOM_ARRAY_SIZE(arrays); i++)
            if (*arrays[i]) {
                memcpy(next, *arrays[i], (size_t)size * sizeof *next);
                *arrays[i] = next;
                next += size;
            }
    }
    return MPI_SUCCESS;
}

int coll_start(struct coll_ctx *x, loom_req *req)
{
    x->nonblocking = true;
    struct coll_task *t = calloc(1, sizeof *t);
    if (!t) {
        x->why = "out of memory for a nonblocking collective";
        return MPI_ERR_NO_MEM;
    }
    t->sh = x->sh;
    t->rank = x->rank;
    t->seq = x->seq;
    t->kind = x->kind;
    t->args = *x->a;
    t->req = req;
    int rc = retain_args(t, coll_args_len(x->sh, x->rank, x->kind));
    if (rc) {
        coll_task_free(t);
        x->why = "out of memory for a nonblocking collective";
        return rc;
    }
    bool singleton = false;
    struct rank_runners *pool = pool_of(x->me, &singleton);
    if (singleton) {
        /* No scheduler: run now; the request completes at once. */
        x->a = &t->args;
        coll_reclaim(x);
        const struct coll_algorithm *alg = coll_select(x);
        req->status_error = alg->run(x);
        if (req->status_error && x->why)
            req->why = strdup(x->why);
        coll_finish(x->sh, x->rank, x->seq);
        coll_task_free(t);
        loom_req_complete_async(req);
        return MPI_SUCCESS;
    }
    struct coll_runner *rn = pool ? runner_get(pool) : NULL;
    if (!rn) {
        coll_task_free(t);
        x->why = "out of memory for a nonblocking collective's thread";
        return MPI_ERR_NO_MEM;
    }
    if (x->me->nb_running++ == 0)
        x->me->nb_finished = x->seq - 1; /* every earlier call, blocking ones too */
    rn->task = t;
    loom_ult_notify(&rn->waiter);
    loom_ult_yield(); /* let the runner publish the call now */
    return MPI_SUCCESS;
}

/* A saved call: a task that is never run itself, only copied by each start. */
struct loom_coll_call {
    struct loom_comm *c;
    struct coll_task *t;
};

int loom_coll_save(struct loom_comm *c, enum loom_coll_kind kind, const struct loom_coll_args *a,
                   struct loom_coll_call **call_p)
{
    struct loom_coll_call *call = malloc(sizeof *call);
    struct coll_task *t = calloc(1, sizeof *t);
    if (!call || !t) {
        free(call);
        free(t);
        return MPI_ERR_NO_MEM;
    }
    t->kind = kind;
    t->args = *a;
    int rc = retain_args(t, c->sh->size);
    if (rc) {
        coll_task_free(t);
        free(call);
        return rc;
    }
    call->c = c;
    call->t = t;
    *call_p = call;
    return MPI_SUCCESS;
}

int loom_coll_start_saved(struct loom_coll_call *call, loom_req *req, const char **why)
{
    return loom_coll_start(call->c, call->t->kind, &call->t->args, req, why);
}

void loom_coll_call_free(struct loom_coll_call *call)
{
    if (!call)
        return;
    coll_task_free(call->t);
    free(call);
}

void loom_coll_rank_fini(int world_rank)
{
    struct rank_runners *pools = __atomic_load_n(&runners_of, __ATOMIC_ACQUIRE);
    if (!pools)
        return;
    struct rank_runners *pool = &pools[world_rank];
    for (struct coll_runner *rn = pool->all, *next; rn; rn = next) {
        next = rn->next_of_rank;
        rn->stop = true; /* idle: every request is complete */
        loom_ult_notify(&rn->waiter);
    }
    pool->all = pool->idle = NULL;
    loom_ult_yield(); /* let them end */
}
