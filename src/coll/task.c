/*
 * Nonblocking collectives: MPI_Ibcast and friends take their place in the
 * communicator's call order at once (their sequence number) and are run, in
 * that order, by a runner: a ULT per (rank, communicator) on the rank's own
 * worker, created at the first nonblocking call and parked while it has no
 * work. The runner executes the same algorithms as the blocking calls, with
 * the call's own context, and completes the request (waking the rank if it
 * waits on it).
 *
 * Progress: MPI_I<coll> lets the runner start at once (it publishes the
 * call and goes as far as it can without waiting), and the runner continues
 * whenever the rank's worker is free: while the rank waits in any MPI call
 * (point-to-point, other collectives, MPI_Wait/Test), and while other ranks of
 * the worker wait. A rank that computes without calling MPI holds its worker,
 * so its runner waits too; the calls are built not to need it: they use
 * INDEPENDENT algorithms (algorithms.def), and a publisher exposes copies of
 * what peers read (coll_expose), so the others complete meanwhile. A
 * finished call's task stays with its post (member.held) until the post is
 * reused, since peers may still read its arguments (docs/collectives.md).
 *
 * The rank and its runners share one worker, so the queues need no locks:
 * ULTs of one worker switch only where they wait or yield.
 *
 * A blocking collective on a communicator with nonblocking calls still
 * queued waits for them first (calls run in the order they were made).
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll_impl.h"
#include "pt2pt/p2p.h"
#include "runtime/job.h"

struct coll_task {
    struct coll_task *next;
    uint64_t seq;
    enum loom_coll_kind kind;
    struct loom_coll_args args;
    loom_req *req;
    struct loom_type **types; /* Alltoallw: copies of the type arrays */
    int *arrays;              /* copies of the count and displacement arrays */
};

struct coll_runner {
    struct coll_task *head, *tail;
    loom_waiter_slot waiter;       /* the runner, waiting for work */
    loom_waiter_slot drain_waiter; /* a blocking call waiting for the queue */
    struct coll_shared *sh;
    int rank;
    bool stop;
    struct coll_runner *next_of_rank;
};

/* Runners of each world rank, for MPI_Finalize (touched by the rank's own
 * worker only). */
static struct coll_runner **runners_of;

static bool has_work(const void *arg)
{
    const struct coll_runner *r = arg;
    return r->head || r->stop;
}

static bool drained(const void *arg)
{
    const struct coll_runner *r = arg;
    return !r->head;
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

static void run_task(struct coll_runner *rn, struct coll_task *t)
{
    struct coll_shared *sh = rn->sh;
    struct coll_ctx x = {
        .sh = sh,
        .me = &sh->m[rn->rank],
        .rank = rn->rank,
        .size = sh->size,
        .seq = t->seq,
        .kind = t->kind,
        .a = &t->args,
        .nonblocking = true,
    };
    coll_reclaim(&x);
    const struct coll_algorithm *alg = coll_select(&x);
    int rc = alg->run(&x);
    coll_finish(sh, rn->rank, x.seq);
    t->req->status_error = rc;
    /* Its post may still be read (coll_expose): keep the arguments. */
    x.me->held[coll_ring_index(&x)] = t;
}

static void runner_main(void *arg)
{
    struct coll_runner *rn = arg;
    for (;;) {
        loom_ult_wait(has_work, rn, &rn->waiter);
        struct coll_task *t = rn->head;
        if (!t)
            break; /* stopped */
        run_task(rn, t);
        rn->head = t->next;
        if (!rn->head)
            rn->tail = NULL;
        loom_req_complete_async(t->req);
        loom_ult_notify(&rn->drain_waiter);
    }
    free(rn);
}

static struct coll_runner *runner_get(struct coll_ctx *x)
{
    if (x->me->runner)
        return x->me->runner;
    struct loom_rank *rk = loom_rank_self();
    int worker = loom_sched_worker_self();
    if (!rk || worker < 0 || !loom_ult_self())
        return NULL; /* no scheduler (singleton): run in place */
    if (!__atomic_load_n(&runners_of, __ATOMIC_ACQUIRE)) {
        /* Every rank allocates on first use; CAS so that one array wins. */
        struct coll_runner **arr = calloc((size_t)loom_job.nranks, sizeof *arr);
        if (!arr)
            return NULL;
        struct coll_runner **expected = NULL;
        if (!__atomic_compare_exchange_n(&runners_of, &expected, arr, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            free(arr);
    }
    struct coll_runner *rn = calloc(1, sizeof *rn);
    if (!rn)
        return NULL;
    rn->sh = x->sh;
    rn->rank = x->rank;
    struct loom_ult *u;
    if (loom_ult_create(runner_main, rn, worker, 256 * 1024, &u) != 0) {
        free(rn);
        return NULL;
    }
    loom_ult_set_data(u, rk); /* user ops called by the runner see the rank */
    struct coll_runner **list = __atomic_load_n(&runners_of, __ATOMIC_ACQUIRE);
    rn->next_of_rank = list[rk->rank];
    list[rk->rank] = rn;
    x->me->runner = rn;
    return rn;
}

void coll_drain(struct coll_ctx *x)
{
    struct coll_runner *rn = x->me->runner;
    if (rn && rn->head)
        loom_ult_wait(drained, rn, &rn->drain_waiter);
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
    t->seq = x->seq;
    t->kind = x->kind;
    t->args = *x->a;
    t->req = req;
    int rc = retain_args(t, x->size);
    if (rc) {
        coll_task_free(t);
        x->why = "out of memory for a nonblocking collective";
        return rc;
    }
    struct coll_runner *rn = runner_get(x);
    if (!rn) {
        /* No scheduler: run now; the request completes at once. */
        x->a = &t->args;
        coll_reclaim(x);
        const struct coll_algorithm *alg = coll_select(x);
        req->status_error = alg->run(x);
        coll_finish(x->sh, x->rank, x->seq);
        coll_task_free(t);
        loom_req_complete_async(req);
        return MPI_SUCCESS;
    }
    if (rn->tail)
        rn->tail->next = t;
    else
        rn->head = t;
    rn->tail = t;
    loom_ult_notify(&rn->waiter);
    loom_ult_yield(); /* let the runner publish the call now */
    return MPI_SUCCESS;
}

void loom_coll_rank_fini(int world_rank)
{
    struct coll_runner **list = __atomic_load_n(&runners_of, __ATOMIC_ACQUIRE);
    if (!list)
        return;
    for (struct coll_runner *rn = list[world_rank], *next; rn; rn = next) {
        next = rn->next_of_rank;
        rn->stop = true; /* its communicator may be gone: touch only rn */
        loom_ult_notify(&rn->waiter);
    }
    list[world_rank] = NULL;
    loom_ult_yield(); /* let them end */
}
