/*
 * Intercommunicator collectives (MPI-4.1 6.2.2 and each collective's
 * intercommunicator paragraph), run on the intercommunicator's bridge: one
 * internal communicator over side A's members then side B's
 * (src/comm/inter.c), whose collective state they use like any algorithm,
 * so that the nonblocking forms run on the same runners (task.c). The MPI
 * layer passes the caller's arguments as they are (arrays indexed by remote
 * rank) and the root as LOOM_COLL_INTER_ROOT - side with the root's bridge
 * rank in inter_root (coll.h).
 *
 * One shape, direct reads: a member publishes its arguments (and, when a
 * nonblocking call or the copy-in cell needs it, a copy of its data), and
 * each member copies what it receives straight from the posts of the
 * members of the other group that send to it, then counts itself done with
 * them; a publisher waits for its readers (a nonblocking one does not: it
 * exposed a copy). No member needs another of its own group, and a member
 * of the root's group other than the root (MPI_PROC_NULL) does nothing.
 * Reductions fold the other group's inputs in their rank order
 * (coll_fold()), so user operations need not commute.
 * Cost: each member reads the m bytes of each of the other group's members
 * that it receives from: N * line + N * m / copy for a root, M * m / copy
 * for the all-to-all family and the all-reductions (M: the other group's
 * size). A simple algorithm, not tuned: intercommunicator collectives are
 * rare in practice.
 */
#include <stdlib.h>

#include "coll/coll_impl.h"

/* Where member r stands: its group's first bridge rank and size, the other
 * group's, and its rank in its group. */
struct side {
    int base, size, rbase, rsize, local;
};

static struct side side_of(const struct coll_shared *sh, int r)
{
    int na = sh->inter_a;
    bool b = r >= na;
    struct side s = {b ? na : 0, b ? sh->size - na : na, b ? 0 : na, b ? na : sh->size - na, 0};
    s.local = r - s.base;
    return s;
}

int coll_args_len(const struct coll_shared *sh, int rank, enum loom_coll_kind kind)
{
    if (!sh->inter_a)
        return sh->size;
    struct side s = side_of(sh, rank);
    return kind == LOOM_COLL_REDUCE_SCATTER ? s.size : s.rsize;
}

/* Wakes every member of the other group. */
static void notify_remote(struct coll_ctx *x, const struct side *s)
{
    for (int i = 0; i < s->rsize; i++)
        coll_notify(x, s->rbase + i);
}

/* Member r's post of this call, or NULL after a mismatch (x->err set; the
 * caller is counted as done with it). */
static const struct coll_post *remote_post(struct coll_ctx *x, int r)
{
    const struct coll_post *p = coll_peer_post(x, r);
    if (!p)
        coll_peer_release(x, r);
    return p;
}

/* Adds the bytes block b (relative to base) covers to [*lo, *hi). */
static void span_add(struct coll_block b, const void *base, MPI_Aint *lo, MPI_Aint *hi, bool *any)
{
    if (!b.count)
        return;
    const struct loom_type *t = b.type;
    MPI_Aint ext = t->ub - t->lb, last = (MPI_Aint)(b.count - 1) * ext;
    MPI_Aint off = (const char *)b.buf - (const char *)base;
    MPI_Aint l = off + t->true_lb + (ext < 0 ? last : 0);
    MPI_Aint h = off + t->true_ub + (ext < 0 ? 0 : last);
    if (!*any || l < *lo)
        *lo = l;
    if (!*any || h > *hi)
        *hi = h;
    *any = true;
}

/* Publishes the caller's send blocks toward each member of the other group
 * (the whole send buffer for the Allgathers, Gathers and Reduces), for
 * `readers` readers. */
static struct coll_post *publish_send(struct coll_ctx *x, const struct side *s, int readers)
{
    const struct loom_coll_args *a = x->a;
    struct coll_post *p = coll_publish_begin(x);
    MPI_Aint lo = 0, hi = 0;
    bool any = false;
    for (int j = 0; j < s->rsize; j++)
        span_add(coll_send_block(x->kind, a, a->sbuf, j), a->sbuf, &lo, &hi, &any);
    coll_expect_reads(x, p, readers);
    p->data = coll_expose_span(x, p, a->sbuf, lo, hi, false);
    coll_publish_done(x, p, false);
    notify_remote(x, s);
    return p;
}

/* Every member of each group has entered once the caller has seen the other
 * group's posts (copy-in posts: nobody reads the publisher's buffers). */
static int barrier(struct coll_ctx *x)
{
    struct side s = side_of(x->sh, x->rank);
    struct coll_post *p = coll_publish_cell(x);
    p->copied_in = true;
    coll_publish_done(x, p, false);
    notify_remote(x, &s);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < s.rsize; i++)
        if (!remote_post(x, s.rbase + i))
            rc = x->err;
    return rc;
}

/* Bcast: the root publishes its buffer (small ones in the copy-in cell);
 * each member of the other group copies it. */
static int bcast(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    int root = a->inter_root;
    if (root < 0)
        return MPI_SUCCESS;
    struct side s = side_of(x->sh, x->rank);
    if (x->rank == root) {
        size_t nb = a->rcount * a->rtype->size;
        struct coll_post *p = coll_publish_begin(x);
        p->nbytes = nb;
        p->copied_in = nb <= COLL_CELL;
        if (p->copied_in) {
            loom_type_pack(coll_post_cell(p, nb), a->rbuf, a->rtype, 0, nb);
        } else {
            coll_expect_reads(x, p, s.rsize);
            p->data = coll_expose(x, p, a->rbuf, a->rcount, a->rtype, false);
        }
        coll_publish_done(x, p, false);
        notify_remote(x, &s);
        if (!p->copied_in)
            coll_await_reads(x, p);
        return MPI_SUCCESS;
    }
    const struct coll_post *p = remote_post(x, root);
    if (!p)
        return x->err;
    struct coll_block d = {a->rbuf, a->rcount, a->rtype};
    if (p->copied_in)
        return coll_unpack(x, d, coll_post_cell(p, p->nbytes), p->nbytes);
    int rc = coll_copy(x, a->rbuf, a->rcount, a->rtype, p->data, p->args.rcount, p->args.rtype);
    coll_read_done(x, p, root);
    return rc;
}

/* Gather(v): each member of the other group publishes its block; the root
 * copies them into place (gather/direct's receiving part). */
static int gather(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    int root = a->inter_root, rc = MPI_SUCCESS;
    if (root < 0)
        return MPI_SUCCESS;
    struct side s = side_of(x->sh, x->rank);
    if (x->rank != root) {
        size_t nb = a->scount * a->stype->size;
        struct coll_post *p = coll_publish_begin(x);
        p->nbytes = nb;
        p->copied_in = nb <= COLL_CELL;
        if (p->copied_in)
            loom_type_pack(coll_post_cell(p, nb), a->sbuf, a->stype, 0, nb);
        else
            p->data = coll_expose(x, p, a->sbuf, a->scount, a->stype, false);
        coll_publish_done(x, p, false);
        coll_notify(x, root);
        if (!p->copied_in && !p->detached)
            coll_wait(x, &x->me->release, x->seq);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < s.rsize; i++) {
        int r = s.rbase + i;
        const struct coll_post *p = coll_peer_post(x, r);
        int e = p ? coll_gather_direct_receive(x, r, coll_recv_block(x->kind, a, i), p) : x->err;
        if (e && !rc)
            rc = e;
    }
    return rc;
}

/* Scatter(v): the root publishes its send blocks; each member of the other
 * group copies its own. */
static int scatter(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    int root = a->inter_root;
    if (root < 0)
        return MPI_SUCCESS;
    struct side s = side_of(x->sh, x->rank);
    if (x->rank == root) {
        struct coll_post *p = publish_send(x, &s, s.rsize);
        coll_await_reads(x, p);
        return MPI_SUCCESS;
    }
    const struct coll_post *p = remote_post(x, root);
    if (!p)
        return x->err;
    struct coll_block b = coll_send_block(x->kind, &p->args, p->data, s.local);
    int rc = coll_copy(x, a->rbuf, a->rcount, a->rtype, b.buf, b.count, b.type);
    coll_read_done(x, p, root);
    return rc;
}

/* Allgather(v), Alltoall(v, w): everyone publishes, and copies from each
 * member of the other group the block that member sends it. */
static int all(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    struct side s = side_of(x->sh, x->rank);
    struct coll_post *mine = publish_send(x, &s, s.rsize);
    int rc = MPI_SUCCESS;
    for (int k = 0; k < s.rsize; k++) {
        int i = (s.local + k) % s.rsize; /* members start on different peers */
        int r = s.rbase + i;
        const struct coll_post *p = remote_post(x, r);
        if (!p) {
            rc = rc ? rc : x->err;
            continue;
        }
        struct coll_block b = coll_send_block(x->kind, &p->args, p->data, s.local);
        struct coll_block d = coll_recv_block(x->kind, a, i);
        int e = coll_copy(x, (void *)d.buf, d.count, d.type, b.buf, b.count, b.type);
        if (e && !rc)
            rc = e;
        coll_read_done(x, p, r);
    }
    coll_await_reads(x, mine);
    return rc;
}

/* Elements [e0, e0 + ne) of the reduction, over count elements, of the
 * other group's inputs (their posts' data, in rank order) into out (a
 * buffer of ne elements). */
static int fold_remote(struct coll_ctx *x, const struct side *s, size_t count, size_t e0, size_t ne,
                       void *out)
{
    const struct loom_coll_args *a = x->a;
    struct loom_type *t = a->rtype;
    const void **in = malloc((size_t)s->rsize * sizeof *in);
    if (!in)
        return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < s->rsize; i++) {
        const struct coll_post *p = remote_post(x, s->rbase + i);
        in[i] = p ? p->data : NULL;
        if (!p && !rc)
            rc = x->err;
    }
    if (!rc) {
        if (s->rsize == 1) {
            rc = coll_copy(x, out, ne, t, coll_elem(in[0], t, e0), ne, t);
        } else if (e0 == 0 && ne == count) {
            rc = coll_fold(x, a->op, t, in, s->rsize, out, -1, 0, ne);
        } else {
            void *tmp = coll_tempbuf(x, 0, count, t);
            rc = tmp ? coll_fold(x, a->op, t, in, s->rsize, tmp, -1, e0, ne) : MPI_ERR_NO_MEM;
            if (!rc)
                rc = coll_copy(x, out, ne, t, coll_elem(tmp, t, e0), ne, t);
        }
    }
    for (int i = 0; i < s->rsize; i++)
        if (in[i])
            coll_read_done(x, &x->sh->m[s->rbase + i].post[coll_ring_index(x)], s->rbase + i);
    free(in);
    return rc;
}

/* Publishes the caller's reduction input (count elements) for `readers`. */
static struct coll_post *publish_input(struct coll_ctx *x, const struct side *s, size_t count,
                                       int readers)
{
    const struct loom_coll_args *a = x->a;
    struct coll_post *p = coll_publish_begin(x);
    coll_expect_reads(x, p, readers);
    p->data = coll_expose(x, p, a->sbuf, count, a->rtype, false);
    coll_publish_done(x, p, false);
    notify_remote(x, s);
    return p;
}

/* Reduce: the other group's members publish their inputs; the root folds
 * them. */
static int reduce(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    int root = a->inter_root;
    if (root < 0)
        return MPI_SUCCESS;
    struct side s = side_of(x->sh, x->rank);
    if (x->rank != root) {
        coll_await_reads(x, publish_input(x, &s, a->rcount, 1));
        return MPI_SUCCESS;
    }
    return fold_remote(x, &s, a->rcount, 0, a->rcount, a->rbuf);
}

/* Allreduce, Reduce_scatter(_block): everyone publishes its input and folds
 * its part of the other group's. */
static int allreduce(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    struct side s = side_of(x->sh, x->rank);
    size_t count = a->rcount, e0 = 0, ne = a->rcount;
    if (x->kind == LOOM_COLL_REDUCE_SCATTER_BLOCK) {
        count = a->rcount * (size_t)s.size;
        e0 = a->rcount * (size_t)s.local;
    } else if (x->kind == LOOM_COLL_REDUCE_SCATTER) {
        count = 0;
        for (int i = 0; i < s.size; i++) {
            if (i == s.local)
                e0 = count;
            count += (size_t)a->rcounts[i];
        }
    }
    struct coll_post *mine = publish_input(x, &s, count, s.rsize);
    int rc = fold_remote(x, &s, count, e0, ne, a->rbuf);
    coll_await_reads(x, mine);
    return rc;
}

/* Scan and Exscan are not defined on intercommunicators (the MPI layer
 * raises MPI_ERR_COMM before a call gets here). */
static int undefined(struct coll_ctx *x)
{
    x->why = "not defined on an intercommunicator";
    return MPI_ERR_COMM;
}

static double no_cost(const struct coll_ctx *x, size_t nbytes)
{
    (void)x;
    (void)nbytes;
    return 0;
}

/* Not in algorithms.def, so no MPI_T use counter (id COLL_NALG: coll_select
 * returns them before it counts). */
#define INTER(KIND, fn)                                                                            \
    [LOOM_COLL_##KIND] = {LOOM_COLL_##KIND, COLL_NALG, "inter", fn, no_cost, true, NULL}
static const struct coll_algorithm inter_algorithms[LOOM_COLL_NKINDS] = {
    INTER(BARRIER, barrier),
    INTER(BCAST, bcast),
    INTER(GATHER, gather),
    INTER(GATHERV, gather),
    INTER(SCATTER, scatter),
    INTER(SCATTERV, scatter),
    INTER(ALLGATHER, all),
    INTER(ALLGATHERV, all),
    INTER(ALLTOALL, all),
    INTER(ALLTOALLV, all),
    INTER(ALLTOALLW, all),
    INTER(REDUCE, reduce),
    INTER(ALLREDUCE, allreduce),
    INTER(REDUCE_SCATTER, allreduce),
    INTER(REDUCE_SCATTER_BLOCK, allreduce),
    INTER(SCAN, undefined),
    INTER(EXSCAN, undefined),
};

const struct coll_algorithm *coll_inter_algorithm(enum loom_coll_kind kind)
{
    return &inter_algorithms[kind];
}
