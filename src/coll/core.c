/*
 * The collective layer's core: the shared state of a communicator, one call's
 * context, flags and waiting, publication, copies and folds (coll_impl.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_impl.h"
#include "comm/comm_impl.h"
#include "runtime/job.h"
#include "runtime/topo.h"
#include "util/log.h"

/* ---- shared state ------------------------------------------------------ */

static void shared_free(struct coll_shared *sh)
{
    if (!sh)
        return;
    if (sh->m)
        for (int i = 0; i < sh->size; i++) {
            for (int k = 0; k < 3; k++)
                free(sh->m[i].ws.scratch[k]);
            free(sh->m[i].ws.inputs);
            for (int k = 0; k < COLL_RING; k++) {
                coll_task_free(sh->m[i].held[k]);
                free(sh->m[i].exposed[k]);
            }
        }
    free(sh->m);
    if (sh->local)
        for (int g = 0; g < sh->nlocal; g++) {
            free(sh->local[g].members);
            free(sh->local[g].slot_in);
            free(sh->local[g].slot_out);
            free(sh->local[g].node_seq);
            free(sh->local[g].slot_seq);
            free(sh->local[g].run_seq);
            free(sh->local[g].run_folded);
            free(sh->local[g].acc);
            free(sh->local[g].res);
        }
    free(sh->local);
    free(sh->local_of);
    free(sh->local_idx);
    free(sh->worker);
    free(sh->numa);
    free(sh->group);
    free(sh->leader);
    free(sh->order);
    free(sh->pos);
    free(sh->dom);
    free(sh->dom_idx);
    free(sh->dom_start);
    free(sh->dom_list);
    free(sh->spread);
    free(sh->spread_pos);
    free(sh);
}

static void shared_fini_hook(struct loom_comm_shared *csh)
{
    shared_free(csh->coll);
    csh->coll = NULL;
}

__attribute__((constructor)) static void install_hook(void)
{
    loom_comm_shared_fini_hook = shared_fini_hook;
}

/* Dense renumbering of keys[0..n) in order of first appearance. */
static int compact(int *keys, int n)
{
    int *seen = malloc((size_t)n * sizeof *seen);
    int nseen = 0;
    for (int i = 0; i < n; i++) {
        int j = 0;
        while (j < nseen && seen[j] != keys[i])
            j++;
        if (j == nseen)
            seen[nseen++] = keys[i];
        keys[i] = j;
    }
    free(seen);
    return nseen;
}

/* The memory domains and the copy order (coll_impl.h), from the workers. */
static void domains_init(struct coll_shared *sh)
{
    int n = sh->size;
    const int *w = sh->worker;
    for (int lv = LOOM_LEVEL_NUMA; lv <= LOOM_LEVEL_PACKAGE; lv++) {
        for (int i = 0; i < n; i++)
            sh->dom_idx[i] = loom_job.worker_domain ? loom_job.worker_domain[lv][w[i]] : 0;
        if (compact(sh->dom_idx, n) > 1)
            break;
    }
    memcpy(sh->dom, sh->dom_idx, (size_t)n * sizeof(int));
    sh->ndom = 0;
    for (int i = 0; i < n; i++)
        if (sh->dom[i] + 1 > sh->ndom)
            sh->ndom = sh->dom[i] + 1;
    /* Members by domain (a counting sort keeps rank order inside each). */
    memset(sh->dom_start, 0, (size_t)(sh->ndom + 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        sh->dom_start[sh->dom[i] + 1]++;
    sh->dom_max = 0;
    for (int d = 0; d < sh->ndom; d++) {
        if (sh->dom_start[d + 1] > sh->dom_max)
            sh->dom_max = sh->dom_start[d + 1];
        sh->dom_start[d + 1] += sh->dom_start[d];
    }
    int *next = sh->spread_pos; /* [ndom] cursors, until the copy order below */
    for (int d = 0; d < sh->ndom; d++)
        next[d] = sh->dom_start[d];
    for (int i = 0; i < n; i++) {
        int d = sh->dom[i];
        sh->dom_idx[i] = next[d] - sh->dom_start[d];
        sh->dom_list[next[d]++] = i;
    }
    sh->dom_contig = true;
    for (int i = 1; i < n; i++)
        if (sh->dom[i] != sh->dom[i - 1] && sh->dom[i] != sh->dom[i - 1] + 1)
            sh->dom_contig = false;
    /* Copy order: member k of every domain in turn, k = 0, 1, ... (a
     * domain with fewer members drops out when it runs out). */
    int s = 0;
    for (int k = 0; s < n; k++)
        for (int d = 0; d < sh->ndom; d++)
            if (k < coll_dom_size(sh, d)) {
                int r = coll_dom_member(sh, d, k);
                sh->spread_pos[r] = s;
                sh->spread[s++] = r;
            }
}

static struct coll_shared *shared_new(const struct loom_comm_shared *csh)
{
    int n = csh->size;
    struct coll_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return NULL;
    sh->size = n;
    sh->m = aligned_alloc(LOOM_CACHE_LINE, (size_t)n * sizeof *sh->m);
    sh->worker = malloc((size_t)n * sizeof(int));
    sh->numa = malloc((size_t)n * sizeof(int));
    sh->group = malloc((size_t)n * sizeof(int));
    sh->leader = malloc((size_t)n * sizeof(int));
    sh->order = malloc((size_t)n * sizeof(int));
    sh->pos = malloc((size_t)n * sizeof(int));
    sh->dom = malloc((size_t)n * sizeof(int));
    sh->dom_idx = malloc((size_t)n * sizeof(int));
    sh->dom_start = malloc((size_t)(n + 1) * sizeof(int));
    sh->dom_list = malloc((size_t)n * sizeof(int));
    sh->spread = malloc((size_t)n * sizeof(int));
    sh->spread_pos = malloc((size_t)n * sizeof(int));
    if (!sh->m || !sh->worker || !sh->numa || !sh->group || !sh->leader || !sh->order || !sh->pos ||
        !sh->dom || !sh->dom_idx || !sh->dom_start || !sh->dom_list || !sh->spread ||
        !sh->spread_pos) {
        shared_free(sh);
        return NULL;
    }
    memset(sh->m, 0, (size_t)n * sizeof *sh->m);
    sh->inter_a = csh->inter_a;
    for (int i = 0; i < n; i++) {
        int w = loom_job.worker_of_rank ? loom_job.worker_of_rank[csh->world_of[i]] : 0;
        sh->worker[i] = w;
        sh->numa[i] = loom_job.worker_domain ? loom_job.worker_domain[LOOM_LEVEL_NUMA][w] : 0;
        sh->m[i].uses = coll_uses_of(csh->world_of[i]);
    }
    /* Two-stage groups: NUMA nodes when the members span several, else
     * workers (ranks sharing a worker read from one leader's cached copy). */
    memcpy(sh->group, sh->numa, (size_t)n * sizeof(int));
    sh->ngroups = compact(sh->group, n);
    if (sh->ngroups == 1) {
        memcpy(sh->group, sh->worker, (size_t)n * sizeof(int));
        sh->ngroups = compact(sh->group, n);
    }
    /* Per-worker stage: members grouped by worker. */
    sh->local_of = malloc((size_t)n * sizeof(int));
    sh->local_idx = malloc((size_t)n * sizeof(int));
    if (!sh->local_of || !sh->local_idx) {
        shared_free(sh);
        return NULL;
    }
    memcpy(sh->local_of, sh->worker, (size_t)n * sizeof(int));
    sh->nlocal = compact(sh->local_of, n);
    sh->local = aligned_alloc(LOOM_CACHE_LINE, (size_t)sh->nlocal * sizeof *sh->local);
    if (!sh->local) {
        shared_free(sh);
        return NULL;
    }
    memset(sh->local, 0, (size_t)sh->nlocal * sizeof *sh->local);
    for (int i = 0; i < n; i++)
        sh->local[sh->local_of[i]].size++;
    for (int g = 0; g < sh->nlocal; g++) {
        sh->local[g].members = malloc((size_t)sh->local[g].size * sizeof(int));
        struct coll_local *l = &sh->local[g];
        l->slot_in = calloc((size_t)l->size, sizeof(char *));
        l->slot_out = calloc((size_t)l->size, sizeof(char *));
        l->node_seq = calloc(4 * (size_t)l->size, sizeof(uint64_t));
        l->slot_seq = calloc((size_t)l->size, sizeof(uint64_t));
        l->run_seq = calloc((size_t)l->size, sizeof(uint64_t));
        l->run_folded = calloc((size_t)l->size, sizeof(int));
        if (!l->members || !l->slot_in || !l->slot_out || !l->node_seq || !l->slot_seq ||
            !l->run_seq || !l->run_folded) {
            shared_free(sh);
            return NULL;
        }
        sh->local[g].size = 0;
    }
    for (int i = 0; i < n; i++) {
        struct coll_local *l = &sh->local[sh->local_of[i]];
        sh->local_idx[i] = l->size;
        l->members[l->size++] = i;
    }
    sh->max_per_worker = 1;
    for (int g = 0; g < sh->nlocal; g++)
        if (sh->local[g].size > sh->max_per_worker)
            sh->max_per_worker = sh->local[g].size;
    for (int g = 0; g < sh->ngroups; g++)
        sh->leader[g] = -1;
    for (int i = 0; i < n; i++)
        if (sh->leader[sh->group[i]] < 0)
            sh->leader[sh->group[i]] = i;
    int k = 0;
    for (int g = 0; g < sh->ngroups; g++)
        for (int i = 0; i < n; i++)
            if (sh->group[i] == g)
                sh->order[k++] = i;
    for (int i = 0; i < n; i++)
        sh->pos[sh->order[i]] = i;
    domains_init(sh);
    return sh;
}

/* The communicator's collective state, created by whichever member gets
 * there first. */
static struct coll_shared *shared_get(struct loom_comm_shared *csh)
{
    _Atomic(void *) *slot = (_Atomic(void *) *)&csh->coll;
    void *cur = atomic_load_explicit(slot, memory_order_acquire);
    if (LOOM_LIKELY(cur != NULL))
        return cur;
    struct coll_shared *sh = shared_new(csh);
    if (!sh)
        return NULL;
    void *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(slot, &expected, sh, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        shared_free(sh);
        return expected;
    }
    return sh;
}

/* ---- flags ------------------------------------------------------------- */

struct flag_wait {
    _Atomic uint64_t *flag;
    uint64_t value;
};

static bool flag_reached(const void *arg)
{
    const struct flag_wait *w = arg;
    return atomic_load_explicit(w->flag, memory_order_acquire) >= w->value;
}

static const char *call_name(const struct coll_ctx *x, char buf[32]);

/* Called when x has waited COLL_STALL_NS: a member whose record of this call
 * names another collective or another root will never do what x waits for.
 * Ends the job then (whatever the error handler: the call cannot return
 * with the algorithm half done); returns otherwise (a slow member). */
static void stalled(struct coll_ctx *x)
{
    const struct coll_call *mine = &x->me->calls[coll_ring_index(x)];
    if (atomic_load_explicit(&mine->seq, memory_order_relaxed) != x->seq ||
        atomic_load_explicit(&mine->kind, memory_order_relaxed) != (int)x->kind)
        return; /* an inner step of a composite algorithm: no record */
    for (int r = 0; r < x->size; r++) {
        const struct coll_call *c = &x->sh->m[r].calls[coll_ring_index(x)];
        if (atomic_load_explicit(&c->seq, memory_order_acquire) != x->seq)
            continue; /* not there yet, or gone on */
        int kind = atomic_load_explicit(&c->kind, memory_order_relaxed);
        int root = atomic_load_explicit(&c->root, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&c->seq, memory_order_relaxed) != x->seq)
            continue; /* rewritten meanwhile */
        if (kind == (int)x->kind && root == x->a->root)
            continue;
        coll_mismatch_abort(x, r, kind, root);
    }
}

void coll_mismatch_abort(struct coll_ctx *x, int r, int kind, int root)
{
    char buf[32];
    const char *name = call_name(x, buf);
    struct loom_rank *rk = loom_rank_self();
    /* The texts of coll_peer_post(), which finds these when it can. */
    if (kind != (int)x->kind)
        loom_log_error("rank %d: MPI_%s: mismatched collective calls: rank %d called MPI_%s "
                       "while rank %d called MPI_%s (MPI_ERR_OTHER); ending the job",
                       rk ? rk->rank : x->rank, name, x->rank, name, r,
                       loom_coll_name((enum loom_coll_kind)kind));
    else
        loom_log_error("rank %d: MPI_%s: mismatched roots in MPI_%s: rank %d gave root %d, "
                       "rank %d gave root %d (MPI_ERR_ROOT); ending the job",
                       rk ? rk->rank : x->rank, name, name, x->rank, x->a->root, r, root);
    loom_job_abort(kind != (int)x->kind ? MPI_ERR_OTHER : MPI_ERR_ROOT);
}

void coll_wait(struct coll_ctx *x, _Atomic uint64_t *flag, uint64_t value)
{
    if (atomic_load_explicit(flag, memory_order_acquire) >= value)
        return;
    struct flag_wait w = {flag, value};
    struct coll_member *me = x->me;
    loom_waiter_slot *slot = &me->waiter;
    unsigned bit = 0;
    if (LOOM_UNLIKELY(x->nonblocking)) {
        if (!me->waiter_taken) {
            /* The member's slot is free (no other nonblocking call of the
             * member waits in it): the notifier finds it in the line it
             * reads. */
            me->waiter_taken = true;
        } else {
            /* Several nonblocking calls of the member wait at once: the
             * others each in the slot of its post, announced in nb_parked.
             * Only the member's worker writes nb_parked, one ULT at a time:
             * plain stores, which the wait's fence orders before its look at
             * the flag (a notify missed all the same is caught by the
             * scheduler's watch, as any lazy notify). */
            bit = 1u << coll_ring_index(x);
            slot = &me->nb_waiter[coll_ring_index(x)];
            unsigned parked = atomic_load_explicit(&me->nb_parked, memory_order_relaxed);
            atomic_store_explicit(&me->nb_parked, parked | bit, memory_order_relaxed);
        }
    }
    if (x->dl)
        loom_mpi_wait_enter(x->dl);
    for (uint64_t t = COLL_STALL_NS; !loom_ult_wait_for(flag_reached, &w, slot, t);) {
        stalled(x);
        if (t < COLL_STALL_MAX_NS)
            t *= 2;
    }
    if (x->dl)
        loom_mpi_wait_leave();
    if (LOOM_UNLIKELY(x->nonblocking)) {
        if (!bit) {
            me->waiter_taken = false;
        } else {
            unsigned parked = atomic_load_explicit(&me->nb_parked, memory_order_relaxed);
            atomic_store_explicit(&me->nb_parked, parked & ~bit, memory_order_relaxed);
        }
    }
}

void coll_notify(struct coll_ctx *x, int who)
{
    struct coll_member *m = &x->sh->m[who];
    loom_ult_notify(&m->waiter);
    /* In the slot's line: no extra transfer. */
    unsigned parked = atomic_load_explicit(&m->nb_parked, memory_order_relaxed);
    if (LOOM_UNLIKELY(parked))
        for (int i = 0; i < COLL_RING; i++)
            if (parked & (1u << i))
                loom_ult_notify(&m->nb_waiter[i]);
}

void coll_set(struct coll_ctx *x, _Atomic uint64_t *flag, uint64_t value, int who)
{
    /* Release: coll_notify() orders its look at the slot (loom_notify_fence). */
    atomic_store_explicit(flag, value, memory_order_release);
    coll_notify(x, who);
}

void coll_count(struct coll_ctx *x, _Atomic uint64_t *counter, uint64_t value, int who)
{
    if (atomic_fetch_add_explicit(counter, 1, memory_order_seq_cst) + 1 >= value)
        coll_notify(x, who);
}

void coll_fence(struct coll_ctx *x)
{
    struct coll_shared *sh = x->sh;
    if (x->size == 1)
        return;
    uint64_t f = ++x->me->fences;
    if (atomic_fetch_add_explicit(&sh->arrived, 1, memory_order_acq_rel) + 1 ==
        f * (uint64_t)x->size) {
        atomic_store_explicit(&sh->gen, f, memory_order_release);
        for (int i = 0; i < x->size; i++)
            if (i != x->rank)
                coll_notify(x, i);
        return;
    }
    coll_wait(x, &sh->gen, f);
}

/* ---- publication ------------------------------------------------------- */

#ifndef NDEBUG
/* The type signature of a call whose data is count x type on every member
 * (Bcast and the reductions but Reduce_scatter): checked in debug builds. */
static void signature(const struct coll_ctx *x, const struct loom_coll_args *a, int *basic_p,
                      size_t *elems_p)
{
    *basic_p = 0;
    *elems_p = 0;
    if (x->sh->inter_a)
        return; /* an intercommunicator's groups may split the data differently */
    switch (x->kind) {
    case LOOM_COLL_BCAST:
    case LOOM_COLL_REDUCE:
    case LOOM_COLL_ALLREDUCE:
    case LOOM_COLL_SCAN:
    case LOOM_COLL_EXSCAN:
    case LOOM_COLL_REDUCE_SCATTER_BLOCK:
        if (a->rtype) {
            *basic_p = a->rtype->basic;
            *elems_p = a->rcount * (size_t)a->rtype->nbasic;
        }
        break;
    default:
        break;
    }
}

#endif

void coll_finish(struct coll_shared *sh, int rank, uint64_t seq)
{
    atomic_store_explicit(&sh->m[rank].finished, seq, memory_order_release);
    /* The next call may publish in the next post, whose first line others
     * last read COLL_RING - 1 calls ago: fetch it for writing now, so that
     * its stores need not wait for that transfer. */
    loom_prefetch_write(&sh->m[rank].post[(seq + 1) % COLL_RING]);
}

/* Waits until every member is done with call s (copy-in readers of a post
 * reused now). Polls, yielding to the worker's other ranks: the members it
 * waits for have all of their own work to do first. */
static void wait_finished(struct coll_ctx *x, uint64_t s)
{
    if (x->me->min_finished >= s)
        return;
    for (unsigned spins = 0;; spins++) {
        uint64_t min = UINT64_MAX;
        for (int r = 0; r < x->size; r++)
            if (r != x->rank) {
                uint64_t f = atomic_load_explicit(&x->sh->m[r].finished, memory_order_acquire);
                if (f < min)
                    min = f;
            }
        if (min >= s) {
            x->me->min_finished = min;
            return;
        }
        if (loom_sched_others_ready() || (spins & 63) == 63)
            loom_ult_yield();
        else
            loom_cpu_relax();
    }
}

/* Waits until the readers of the caller's post par counted so far are done
 * (post.reads reached expect_reads); remembers it, so that the post's shared
 * line is read again only when more readers are expected. */
static void await_post_reads(struct coll_ctx *x, int par)
{
    struct coll_member *me = x->me;
    if (me->reads_seen[par] >= me->expect_reads[par])
        return;
    coll_wait(x, &me->post[par].reads, me->expect_reads[par]);
    me->reads_seen[par] = me->expect_reads[par];
}

struct coll_post *coll_publish_cell(struct coll_ctx *x)
{
    /* What the post's last use left to wait for comes from the member's
     * private copies: the post's first line has been read by others since,
     * and a load from it would wait for that line to come back. */
    int par = coll_ring_index(x);
    struct coll_member *me = x->me;
    struct coll_post *p = &me->post[par];
    if (me->copyin_seq[par])
        wait_finished(x, me->copyin_seq[par]);
    await_post_reads(x, par);
    p->kind = (int)x->kind;
    p->root = x->a->root;
    p->nbytes = 0;
    p->copied_in = false;
#ifndef NDEBUG
    signature(x, x->a, &p->sig_basic, &p->sig_elems);
#endif
    return p;
}

struct coll_post *coll_publish_begin(struct coll_ctx *x)
{
    struct coll_post *p = coll_publish_cell(x);
    p->args = *x->a;
    p->data = NULL;
    p->detached = false;
    return p;
}

void coll_publish_done(struct coll_ctx *x, struct coll_post *p, bool wake_all)
{
    /* A copy-in or detached post (a nonblocking publisher that does not
     * wait for its readers, coll_expose) is reused only once every member
     * is done with this call: a reader may be more than COLL_RING calls
     * behind the publisher. */
    x->me->copyin_seq[coll_ring_index(x)] = p->copied_in || p->detached ? x->seq : 0;
    /* Release: the notifies order their looks (loom_notify_fence). */
    atomic_store_explicit(&p->seq, x->seq, memory_order_release);
    if (wake_all)
        for (int i = 0; i < x->size; i++)
            if (i != x->rank)
                coll_notify(x, i);
}

/* The caller's MPI function, for messages: "Bcast" or "Ibcast". */
static const char *call_name(const struct coll_ctx *x, char buf[32])
{
    const char *name = loom_coll_name(x->kind);
    if (!x->nonblocking)
        return name;
    snprintf(buf, 32, "I%c%s", tolower((unsigned char)name[0]), name + 1);
    return buf;
}

const struct coll_post *coll_peer_post(struct coll_ctx *x, int r)
{
    char name[32];
    struct coll_post *p = &x->sh->m[r].post[coll_ring_index(x)];
    coll_wait(x, &p->seq, x->seq);
    if (LOOM_UNLIKELY(p->kind != (int)x->kind)) {
        snprintf(x->ws->whybuf, sizeof x->ws->whybuf,
                 "mismatched collective calls: rank %d called MPI_%s while rank %d called MPI_%s",
                 x->rank, call_name(x, name), r, loom_coll_name((enum loom_coll_kind)p->kind));
        x->why = x->ws->whybuf;
        x->err = MPI_ERR_OTHER;
        return NULL;
    }
    if (LOOM_UNLIKELY(p->root != x->a->root)) {
        snprintf(x->ws->whybuf, sizeof x->ws->whybuf,
                 "mismatched roots in MPI_%s: rank %d gave root %d, rank %d gave root %d",
                 call_name(x, name), x->rank, x->a->root, r, p->root);
        x->why = x->ws->whybuf;
        x->err = MPI_ERR_ROOT;
        return NULL;
    }
#ifndef NDEBUG
    int basic;
    size_t elems;
    signature(x, x->a, &basic, &elems);
    if (LOOM_UNLIKELY(basic && p->sig_basic && (basic != p->sig_basic || elems != p->sig_elems))) {
        snprintf(x->ws->whybuf, sizeof x->ws->whybuf,
                 "mismatched type signatures in MPI_%s: rank %d has %zu elements of basic type "
                 "0x%x, rank %d has %zu of 0x%x",
                 call_name(x, name), x->rank, elems, (unsigned)basic, r, p->sig_elems,
                 (unsigned)p->sig_basic);
        x->why = x->ws->whybuf;
        x->err = MPI_ERR_TYPE;
        return NULL;
    }
#endif
    return p;
}

void coll_peer_release(struct coll_ctx *x, int r)
{
    coll_read_done(x, &x->sh->m[r].post[coll_ring_index(x)], r);
}

int coll_collect(struct coll_ctx *x, int n, const void *self, enum coll_pick pick,
                 const void *const **in_p)
{
    struct coll_ws *ws = x->ws;
    if (ws->inputs_cap < n) {
        const void **a = realloc(ws->inputs, (size_t)n * sizeof *a);
        if (!a)
            return MPI_ERR_NO_MEM;
        ws->inputs = a;
        ws->inputs_cap = n;
    }
    const struct loom_type *t = x->a->rtype;
    int rc = MPI_SUCCESS;
    for (int r = 0; r < n; r++) {
        const struct coll_post *p = r == x->rank ? NULL : coll_peer_post(x, r);
        if (r != x->rank && !p)
            rc = x->err;
        if (!p)
            ws->inputs[r] = self;
        else if (pick == COLL_PICK_INPUT)
            ws->inputs[r] = coll_input(&p->args);
        else if (pick == COLL_PICK_DATA)
            ws->inputs[r] = p->data;
        else
            ws->inputs[r] = coll_post_cell(p, x->a->rcount * t->size) - t->true_lb;
    }
    *in_p = ws->inputs;
    return rc;
}

void coll_expect_reads(struct coll_ctx *x, struct coll_post *p, int readers)
{
    uint64_t *expect = &x->me->expect_reads[coll_ring_index(x)];
    *expect += (uint64_t)readers;
    atomic_store_explicit(&p->reads_target, *expect, memory_order_relaxed);
}

void coll_await_reads(struct coll_ctx *x, struct coll_post *p)
{
    if (!p->detached)
        await_post_reads(x, coll_ring_index(x));
}

const void *coll_expose_span(struct coll_ctx *x, struct coll_post *p, const void *buf, MPI_Aint lo,
                             MPI_Aint hi, bool copy)
{
    if (!x->nonblocking && !copy)
        return buf;
    p->detached = x->nonblocking;
    if (hi <= lo)
        return buf; /* nothing to read */
    size_t len = (size_t)(hi - lo);
    char *s;
    if (x->nonblocking) {
        struct coll_member *me = x->me;
        int par = coll_ring_index(x);
        if (me->exposed_len[par] < len) {
            free(me->exposed[par]);
            me->exposed[par] = malloc(len);
            me->exposed_len[par] = me->exposed[par] ? len : 0;
        }
        s = me->exposed[par];
    } else {
        s = coll_scratch(x, 1, len);
    }
    if (!s) {
        p->detached = false;
        return copy ? NULL : buf; /* nonblocking: readers use buf after all */
    }
    memcpy(s, (const char *)buf + lo, len);
    return s - lo;
}

/* The bytes [*lo, *hi) that count (> 0) x t covers, from its start. */
static void span_of(size_t count, const struct loom_type *t, MPI_Aint *lo, MPI_Aint *hi)
{
    MPI_Aint ext = t->ub - t->lb, last = (MPI_Aint)(count - 1) * ext;
    *lo = t->true_lb + (ext < 0 ? last : 0);
    *hi = t->true_ub + (ext < 0 ? 0 : last);
}

const void *coll_expose(struct coll_ctx *x, struct coll_post *p, const void *buf, size_t count,
                        const struct loom_type *t, bool copy)
{
    MPI_Aint lo = 0, hi = 0;
    if (count)
        span_of(count, t, &lo, &hi);
    return coll_expose_span(x, p, buf, lo, hi, copy);
}

const void *coll_expose_blocks(struct coll_ctx *x, struct coll_post *p, bool send, bool copy)
{
    const struct loom_coll_args *a = x->a;
    const char *base = send ? a->sbuf : a->rbuf;
    MPI_Aint lo = 0, hi = 0;
    bool any = false;
    for (int i = 0; i < x->size; i++) {
        struct coll_block b =
            send ? coll_send_block(x->kind, a, base, i) : coll_recv_block(x->kind, a, i);
        if (!b.count)
            continue;
        MPI_Aint off = (const char *)b.buf - base, l, h;
        span_of(b.count, b.type, &l, &h);
        if (!any || off + l < lo)
            lo = off + l;
        if (!any || off + h > hi)
            hi = off + h;
        any = true;
    }
    return coll_expose_span(x, p, base, lo, hi, copy);
}

void coll_reclaim(struct coll_ctx *x)
{
    struct coll_member *me = x->me;
    int par = coll_ring_index(x);
    if (!me->held[par] && !me->exposed[par])
        return;
    if (me->copyin_seq[par]) /* detached: its readers may not be done */
        wait_finished(x, me->copyin_seq[par]);
    await_post_reads(x, par);
    coll_task_free(me->held[par]);
    me->held[par] = NULL;
    free(me->exposed[par]);
    me->exposed[par] = NULL;
    me->exposed_len[par] = 0;
}

int coll_collect_domain(struct coll_ctx *x, const void **in)
{
    const struct coll_shared *sh = x->sh;
    int d = sh->dom[x->rank], rc = MPI_SUCCESS;
    for (int k = 0; k < coll_dom_size(sh, d); k++) {
        int r = coll_dom_member(sh, d, k);
        const struct coll_post *p = r == x->rank ? NULL : coll_peer_post(x, r);
        if (r != x->rank && !p && !rc)
            rc = x->err;
        in[k] = p ? coll_input(&p->args) : coll_input(x->a);
    }
    return rc;
}

void coll_read_done(struct coll_ctx *x, const struct coll_post *p, int r)
{
    struct coll_post *q = (struct coll_post *)p;
    /* Only the last reader wakes the publisher (a stale target after a
     * mismatch only wakes it early: it checks its count again). */
    uint64_t target = atomic_load_explicit(&q->reads_target, memory_order_relaxed);
    if (atomic_fetch_add_explicit(&q->reads, 1, memory_order_seq_cst) + 1 >= target)
        coll_notify(x, r);
}

void coll_read_done_upto(struct coll_ctx *x, int n)
{
    int par = coll_ring_index(x);
    for (int r = 0; r < n; r++)
        if (r != x->rank)
            coll_read_done(x, &x->sh->m[r].post[par], r);
}

void *coll_scratch(struct coll_ctx *x, int which, size_t len)
{
    struct coll_ws *ws = x->ws;
    if (ws->scratch_len[which] >= len)
        return ws->scratch[which];
    size_t cap = len < 4096 ? 4096 : len;
    void *p = aligned_alloc(LOOM_CACHE_LINE, (cap + LOOM_CACHE_LINE - 1) & ~(size_t)63);
    if (!p)
        return NULL;
    free(ws->scratch[which]);
    ws->scratch[which] = p;
    ws->scratch_len[which] = cap;
    return p;
}

double coll_parallel_copy_s(double at_once, double bytes, double distinct)
{
    static size_t llc; /* the same for every caller; a race stores it twice */
    if (!__atomic_load_n(&llc, __ATOMIC_RELAXED)) {
        size_t b = loom_topo_llc_total_bytes();
        __atomic_store_n(&llc, b ? b : (size_t)8 << 20, __ATOMIC_RELAXED);
    }
    const struct coll_model *m = &coll_model;
    double per_core = 1 / m->copy_bps, shared = at_once / m->mem_bps;
    if (distinct <= (double)__atomic_load_n(&llc, __ATOMIC_RELAXED) || per_core >= shared)
        return bytes * per_core;
    return bytes * shared;
}

double coll_remote_s(const struct coll_shared *sh, double bytes)
{
    return sh->ndom > 1 ? bytes * sh->ndom / coll_model.mem_bps : 0;
}

void coll_tiles_init(const struct coll_shared *sh, const struct loom_type *t, size_t count,
                     struct coll_tiles *tl)
{
    MPI_Aint ext = t->ub - t->lb;
    size_t line = ext > 0 && LOOM_CACHE_LINE % ext == 0 ? LOOM_CACHE_LINE / (size_t)ext : 1;
    size_t nt = (size_t)sh->dom_max;
    size_t tile = ext > 0 ? COLL_STRIP / (size_t)ext : count;
    tile = tile / line * line;
    if (tile < line)
        tile = line;
    if (count < nt * tile) { /* one chunk: tiles as even as lines allow */
        tile = (count + nt - 1) / nt;
        tile = (tile + line - 1) / line * line;
        if (tile == 0)
            tile = 1;
    }
    uint64_t nchunks = (count + nt * tile - 1) / (nt * tile);
    if (nchunks > COLL_TILES_MAX_CHUNKS) {
        tile *= (size_t)((nchunks + COLL_TILES_MAX_CHUNKS - 1) / COLL_TILES_MAX_CHUNKS);
        nchunks = (count + nt * tile - 1) / (nt * tile);
    }
    *tl = (struct coll_tiles){.count = count,
                              .tile = tile,
                              .chunk = nt * tile,
                              .nchunks = nchunks ? nchunks : 1,
                              .ntiles = (int)nt};
}

/* ---- data -------------------------------------------------------------- */

int coll_copy(struct coll_ctx *x, void *dst, size_t dcount, struct loom_type *dt, const void *src,
              size_t scount, struct loom_type *st)
{
    size_t n = scount * st->size;
    if (LOOM_UNLIKELY(n > dcount * dt->size))
        return coll_truncated(x, n, dcount * dt->size);
    if (n)
        loom_type_copy(dst, dt, src, st, 0, n);
    return MPI_SUCCESS;
}

int coll_unpack(struct coll_ctx *x, struct coll_block d, const void *src, size_t nb)
{
    size_t cap = d.count * d.type->size;
    if (nb > cap)
        return coll_truncated(x, nb, cap);
    loom_type_unpack((void *)d.buf, d.type, src, 0, nb);
    return MPI_SUCCESS;
}

int coll_truncated(struct coll_ctx *x, size_t n, size_t cap)
{
    char name[32];
    snprintf(x->ws->whybuf, sizeof x->ws->whybuf,
             "message truncated in MPI_%s: %zu bytes arrived for a buffer of %zu bytes",
             call_name(x, name), n, cap);
    x->why = x->ws->whybuf;
    return MPI_ERR_TRUNCATE;
}

/* out = a op b over elements [e0, e0 + n); out may be b. */
static void reduce3(const struct loom_op *op, const struct loom_type *t, const void *a,
                    const void *b, void *out, size_t e0, size_t n)
{
    if (t->contig || t->predefined) {
        loom_op_reduce3(op, coll_elem(a, t, e0), coll_elem(b, t, e0), coll_elem(out, t, e0), n, t);
        return;
    }
    if (out != b)
        loom_type_copy(out, t, b, t, e0 * t->size, n * t->size);
    loom_op_apply(op, coll_elem(a, t, e0), coll_elem(out, t, e0), n, t);
}

int coll_fold(struct coll_ctx *x, const struct loom_op *op, const struct loom_type *t,
              const void *const *in, int n, void *out, int alias, size_t e0, size_t ne)
{
    MPI_Aint ext = t->ub - t->lb;
    size_t step = ext > 0 ? COLL_STRIP / (size_t)ext : ne;
    if (step == 0)
        step = 1;
    if (n == 2 && alias < 0 && ne <= step) {
        /* Two inputs in one strip (two ranks, small vectors): one pass. */
        reduce3(op, t, in[0], in[1], out, e0, ne);
        return MPI_SUCCESS;
    }
    const void *stack_in[16];
    const void **v =
        (size_t)n <= LOOM_ARRAY_SIZE(stack_in) ? stack_in : malloc((size_t)n * sizeof *v);
    if (!v)
        return MPI_ERR_NO_MEM;
    memcpy(v, in, (size_t)n * sizeof *v);
    /* Out holding input `alias` may be folded into as it is only when the
     * grouping cannot change the bits (loom_op_exact); otherwise that input
     * is kept aside, so that the order is the same as without an alias. */
    bool into_alias = alias >= 0 && alias < n - 1 && loom_op_exact(op, t);
    int rc = MPI_SUCCESS;
    for (size_t c0 = e0; c0 < e0 + ne; c0 += step) {
        size_t cn = e0 + ne - c0 < step ? e0 + ne - c0 : step;
        if (n == 1) {
            if (v[0] != out)
                loom_type_copy(out, t, v[0], t, c0 * t->size, cn * t->size);
            continue;
        }
        if (alias >= 0 && alias < n - 1) {
            if (into_alias) {
                /* out holds input `alias` already: fold the others into it. */
                for (int k = n - 1; k >= 0; k--)
                    if (k != alias)
                        loom_op_apply(op, coll_elem(v[k], t, c0), coll_elem(out, t, c0), cn, t);
                continue;
            }
            /* Keep input `alias` aside before out is overwritten. */
            MPI_Aint lo = (MPI_Aint)c0 * ext + t->true_lb;
            size_t span = (size_t)((MPI_Aint)(cn - 1) * ext + t->true_ub - t->true_lb);
            char *tmp = coll_scratch(x, 2, span);
            if (!tmp) {
                rc = MPI_ERR_NO_MEM;
                break;
            }
            memcpy(tmp, (const char *)out + lo, span);
            v[alias] = tmp - lo;
        }
        reduce3(op, t, v[n - 2], v[n - 1], out, c0, cn);
        for (int k = n - 3; k >= 0; k--)
            loom_op_apply(op, coll_elem(v[k], t, c0), coll_elem(out, t, c0), cn, t);
        if (alias >= 0 && alias < n - 1)
            v[alias] = in[alias];
    }
    if (v != stack_in)
        free(v);
    return rc;
}

/* ---- entry ------------------------------------------------------------- */

const char *loom_coll_name(enum loom_coll_kind kind)
{
    static const char *const names[] = {
#define LOOM_COLL_NAME(K, N) #N,
        LOOM_COLL_KINDS(LOOM_COLL_NAME)
#undef LOOM_COLL_NAME
    };
    return (unsigned)kind < LOOM_COLL_NKINDS ? names[kind] : "?";
}

/* Begins a call: its context, the communicator's collective state (created
 * on first use) and the call's place in the communicator's order. */
static int ctx_begin(struct loom_comm *c, enum loom_coll_kind kind, const struct loom_coll_args *a,
                     struct coll_ctx *x, const char **why)
{
    struct coll_shared *sh = shared_get(c->sh);
    if (!sh) {
        *why = "out of memory for the communicator's collective state";
        return MPI_ERR_NO_MEM;
    }
    coll_ctx_init(x, sh, c->rank, kind, a);
    x->arrival = coll_reduce_arrival(loom_comm_priv(c)->info);
    return MPI_SUCCESS;
}

/* A blocking collective call, for the deadlock detector. */
struct call_desc {
    const struct loom_comm *c;
    enum loom_coll_kind kind;
};

static void call_describe(const struct loom_mpi_wait *w, char *buf, size_t n)
{
    const struct call_desc *d = w->arg;
    char comm[96];
    loom_comm_describe(d->c, comm, sizeof comm);
    snprintf(buf, n, "in MPI_%s on %s", loom_coll_name(d->kind), comm);
}

static int call_peers(const struct loom_mpi_wait *w, int *world, int max)
{
    const struct call_desc *d = w->arg;
    int n = d->c->sh->size < max ? d->c->sh->size : max;
    memcpy(world, d->c->sh->world_of, (size_t)n * sizeof *world);
    return n;
}

int loom_coll_run(struct loom_comm *c, enum loom_coll_kind kind, const struct loom_coll_args *a,
                  const char **why)
{
    struct coll_ctx x;
    int rc = ctx_begin(c, kind, a, &x, why);
    if (rc)
        return rc;
    struct call_desc desc = {c, kind};
    struct loom_mpi_wait dw = {call_describe, call_peers, &desc,
                               ((uint64_t)c->sh->context_id << 32) | ((x.seq & 0xffffff) << 8) |
                                   (uint64_t)kind | 1u << 7,
                               false};
    x.dl = &dw;
    coll_drain(&x);
    coll_reclaim(&x);
    const struct coll_algorithm *alg = coll_select(&x);
    rc = alg->run(&x);
    coll_finish(x.sh, x.rank, x.seq); /* x.seq: composite algorithms take two */
    *why = x.why;
    return rc;
}

int loom_coll_start(struct loom_comm *c, enum loom_coll_kind kind, const struct loom_coll_args *a,
                    struct LMPI_Request_s *req, const char **why)
{
    struct coll_ctx x;
    int rc = ctx_begin(c, kind, a, &x, why);
    if (rc)
        return rc;
    rc = coll_start(&x, req);
    *why = x.why;
    return rc;
}

void *coll_tempbuf(struct coll_ctx *x, int which, size_t count, const struct loom_type *t)
{
    if (count == 0)
        return coll_scratch(x, which, 1);
    MPI_Aint ext = t->ub - t->lb;
    MPI_Aint span = (MPI_Aint)(count - 1) * ext + t->true_ub - t->true_lb;
    char *s = coll_scratch(x, which, (size_t)span);
    return s ? s - t->true_lb : NULL;
}

static inline MPI_Aint extent(const struct loom_type *t)
{
    return t->ub - t->lb;
}

struct coll_block coll_send_block(enum loom_coll_kind kind, const struct loom_coll_args *pa,
                                  const void *base, int j)
{
    const char *b = base;
    switch (kind) {
    case LOOM_COLL_SCATTER:
    case LOOM_COLL_ALLTOALL:
        return (struct coll_block){b + (MPI_Aint)j * (MPI_Aint)pa->scount * extent(pa->stype),
                                   pa->scount, pa->stype};
    case LOOM_COLL_SCATTERV:
    case LOOM_COLL_ALLTOALLV:
        return (struct coll_block){b + (MPI_Aint)pa->sdispls[j] * extent(pa->stype),
                                   (size_t)pa->scounts[j], pa->stype};
    case LOOM_COLL_ALLTOALLW:
        return (struct coll_block){b + pa->sdispls[j], (size_t)pa->scounts[j], pa->stypes[j]};
    default: /* the gathers send their whole buffer */
        return (struct coll_block){b, pa->scount, pa->stype};
    }
}

struct coll_block coll_recv_block(enum loom_coll_kind kind, const struct loom_coll_args *pa, int i)
{
    char *b = pa->rbuf;
    switch (kind) {
    case LOOM_COLL_GATHER:
    case LOOM_COLL_ALLGATHER:
    case LOOM_COLL_ALLTOALL:
        return (struct coll_block){b + (MPI_Aint)i * (MPI_Aint)pa->rcount * extent(pa->rtype),
                                   pa->rcount, pa->rtype};
    case LOOM_COLL_GATHERV:
    case LOOM_COLL_ALLGATHERV:
    case LOOM_COLL_ALLTOALLV:
        return (struct coll_block){b + (MPI_Aint)pa->rdispls[i] * extent(pa->rtype),
                                   (size_t)pa->rcounts[i], pa->rtype};
    case LOOM_COLL_ALLTOALLW:
        return (struct coll_block){b + pa->rdispls[i], (size_t)pa->rcounts[i], pa->rtypes[i]};
    default: /* the scatters receive into their whole buffer */
        return (struct coll_block){b, pa->rcount, pa->rtype};
    }
}
