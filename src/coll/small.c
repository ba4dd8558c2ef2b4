/*
 * The small-message path of the copy-in algorithms: blocking Bcast, Reduce
 * and Allreduce of at most COLL_INLINE bytes of a predefined contiguous
 * datatype (and a predefined op), once the selector has chosen the copy-in
 * algorithm for calls of this shape (its memo: bcast/direct,
 * reduce/direct, allreduce/allread); and Gather, Scatter, Allgather and
 * Alltoall of blocks of predefined contiguous datatypes that travel copied
 * in (their direct algorithms). The data travels in the first line of
 * the posts as those algorithms' small case does, with the same posts,
 * flags, fold order and mismatch checks, so that members on either path
 * meet; what it skips is the general path's work around them: the context
 * and argument set built for every algorithm, the drain of nonblocking
 * calls (none run), the reclaim of kept posts (none kept), the selector
 * and the layout-generic packing and folding. At 8 bytes on 2 ranks that
 * was about two thirds of an Allreduce's instructions (callgrind).
 * Anything else returns LOOM_COLL_GENERAL before the call begins.
 */
#include <string.h>

#include "coll/coll_impl.h"

static bool aligned_to(const void *p, size_t align)
{
    return ((uintptr_t)p & (align - 1)) == 0;
}

/* The copy-in data of member r's post number par. */
static const char *cell_of(const struct coll_ctx *x, int par, int r)
{
    return x->sh->m[r].post[par].inl;
}

/* out = in[0] op (in[1] op (... op in[n-1])), the order of coll_fold();
 * input r is own when r == self, else member r's cell. */
static void fold(const struct coll_ctx *x, const struct loom_op_kernels *k, const void *own,
                 int self, void *out, size_t count)
{
    int n = x->size, par = coll_ring_index(x);
    const void *b = n - 1 == self ? own : cell_of(x, par, n - 1);
    const void *a = n - 2 == self ? own : cell_of(x, par, n - 2);
    k->three(a, b, out, count);
    for (int r = n - 3; r >= 0; r--)
        k->two(r == self ? own : cell_of(x, par, r), out, count);
}

/* Publishes nb bytes of data in the caller's post (copy-in). */
static void publish(struct coll_ctx *x, const void *data, size_t nb, bool wake_all)
{
    struct coll_post *p = coll_publish_cell(x);
    if (nb)
        memcpy(p->inl, data, nb);
    p->nbytes = nb;
    p->copied_in = true;
    coll_publish_done(x, p, wake_all);
}

/* Waits for every other member's post of this call (all of them, as
 * coll_collect() does, also after a mismatch). */
static int await_posts(struct coll_ctx *x)
{
    int rc = MPI_SUCCESS;
    for (int r = 0; r < x->size; r++)
        if (r != x->rank && !coll_peer_post(x, r))
            rc = x->err;
    return rc;
}

static int allreduce(struct coll_ctx *x, const struct loom_op_kernels *k, const void *in, void *out,
                     size_t count, size_t nb)
{
    publish(x, in, nb, true);
    int rc = await_posts(x);
    if (rc == MPI_SUCCESS && count)
        fold(x, k, cell_of(x, coll_ring_index(x), x->rank), x->rank, out, count);
    return rc;
}

static int reduce(struct coll_ctx *x, const struct loom_op_kernels *k, const void *in, void *out,
                  size_t count, size_t nb, int root)
{
    if (x->rank != root) {
        publish(x, in, nb, false);
        coll_notify(x, root);
        return MPI_SUCCESS;
    }
    /* The root's input may be out itself (in place): kept aside. */
    _Alignas(16) char own[COLL_INLINE];
    if (nb)
        memcpy(own, in, nb);
    int rc = await_posts(x);
    if (rc == MPI_SUCCESS && count)
        fold(x, k, own, root, out, count);
    return rc;
}

static int bcast(struct coll_ctx *x, void *buf, size_t nb, int root)
{
    if (x->rank == root) {
        publish(x, buf, nb, true);
        return MPI_SUCCESS;
    }
    const struct coll_post *p = coll_peer_post(x, root);
    if (!p) {
        coll_peer_release(x, root);
        return x->err;
    }
    if (LOOM_UNLIKELY(!p->copied_in || p->nbytes != nb))
        return coll_bcast_direct_receive(x, p); /* another count at the root */
    if (nb)
        memcpy(buf, p->inl, nb);
    return MPI_SUCCESS;
}

/* The algorithm of each collective whose small case this path does. */
static const coll_fn copy_in[LOOM_COLL_NKINDS] = {
    [LOOM_COLL_BCAST] = coll_bcast_direct,          [LOOM_COLL_REDUCE] = coll_reduce_direct,
    [LOOM_COLL_ALLREDUCE] = coll_allreduce_allread, [LOOM_COLL_GATHER] = coll_gather_direct,
    [LOOM_COLL_SCATTER] = coll_scatter_direct,      [LOOM_COLL_ALLGATHER] = coll_allgather_direct,
    [LOOM_COLL_ALLTOALL] = coll_alltoall_direct,
};

/* Whether member `rank` may take the path for a call of this shape: the
 * selector chose the copy-in algorithm for it, no nonblocking call of the
 * member runs and the post the call uses keeps nothing. */
static const struct coll_algorithm *may_take(const struct coll_shared *sh, int rank,
                                             enum loom_coll_kind kind, size_t nbytes, int root,
                                             int flags)
{
    const struct coll_member *me = &sh->m[rank];
    const struct coll_algorithm *alg = coll_memo_lookup(me, kind, nbytes, root, flags);
    int par = (int)((me->seq + 1) % COLL_RING);
    bool ok =
        alg && alg->run == copy_in[kind] && !me->nb_running && !me->held[par] && !me->exposed[par];
    return ok ? alg : NULL;
}

int loom_coll_small(struct loom_comm *c, enum loom_coll_kind kind, const void *in, void *out,
                    size_t count, struct loom_type *t, struct loom_op *op, int root,
                    const char **why)
{
    struct coll_shared *sh =
        atomic_load_explicit((_Atomic(void *) *)&c->sh->coll, memory_order_acquire);
    size_t nb = count * t->size;
    if (!sh || sh->size == 1 || nb > COLL_INLINE || !t->predefined || !t->contig)
        return LOOM_COLL_GENERAL; /* (the first call creates the state) */
    const struct coll_algorithm *alg =
        may_take(sh, c->rank, kind, nb, root, coll_memo_flags(op, t, false));
    if (!alg)
        return LOOM_COLL_GENERAL;
    const struct loom_op_kernels *k = NULL;
    if (op && (!(k = loom_op_kernels_for(op, t)) || !aligned_to(out, k->align)))
        return LOOM_COLL_GENERAL;
    struct loom_coll_args a = {.sbuf = in,
                               .rbuf = out,
                               .scount = count,
                               .rcount = count,
                               .stype = t,
                               .rtype = t,
                               .op = op,
                               .root = root};
    struct coll_ctx x;
    coll_ctx_init(&x, sh, c->rank, kind, &a);
    coll_count_use(x.me, alg);
    int rc;
    if (kind == LOOM_COLL_BCAST)
        rc = bcast(&x, out, nb, root);
    else if (kind == LOOM_COLL_REDUCE)
        rc = reduce(&x, k, in, out, count, nb, root);
    else
        rc = allreduce(&x, k, in, out, count, nb);
    coll_finish(sh, x.rank, x.seq);
    *why = x.why;
    return rc;
}

/* Gather: members other than the root copy their block into their post;
 * the root copies each into place, in coll_peer() order as gather/direct. */
static int gather(struct coll_ctx *x, const void *sbuf, size_t sb, void *rbuf, size_t rb,
                  bool in_place)
{
    int root = x->a->root;
    if (x->rank != root) {
        publish(x, sbuf, sb, false);
        coll_notify(x, root);
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    for (int k = 0; k < x->size; k++) {
        int r = coll_peer(x->sh, root, 1 + k);
        char *dst = (char *)rbuf + (size_t)r * rb;
        int e = MPI_SUCCESS;
        if (r == root) {
            if (!in_place && sb)
                memcpy(dst, sbuf, sb);
        } else {
            const struct coll_post *p = coll_peer_post(x, r);
            if (!p)
                e = x->err;
            else if (p->copied_in && p->nbytes == rb)
                memcpy(dst, coll_post_cell(p, rb), rb);
            else /* another size there: truncation, or not copied in */
                e = coll_gather_direct_receive(
                    x, r, (struct coll_block){dst, x->a->rcount, x->a->rtype}, p);
        }
        if (e && !rc)
            rc = e;
    }
    return rc;
}

/* Scatter: the root copies the others' blocks into its post; each copies
 * its own out. */
static int scatter(struct coll_ctx *x, const void *sbuf, size_t sb, void *rbuf, size_t rb,
                   bool in_place)
{
    int n = x->size, root = x->a->root;
    if (x->rank == root) {
        struct coll_post *p = coll_publish_cell(x);
        char *cell = coll_post_cell(p, sb * (size_t)n);
        for (int j = 0; j < n; j++)
            if (j != root && sb)
                memcpy(cell + (size_t)j * sb, (const char *)sbuf + (size_t)j * sb, sb);
        p->nbytes = sb;
        p->copied_in = true;
        coll_publish_done(x, p, true);
        if (!in_place && sb)
            memcpy(rbuf, (const char *)sbuf + (size_t)root * sb, sb);
        return MPI_SUCCESS;
    }
    const struct coll_post *p = coll_peer_post(x, root);
    if (!p) {
        coll_peer_release(x, root);
        return x->err;
    }
    if (!p->copied_in || p->nbytes != rb)
        return coll_scatter_direct_receive(x, p); /* another size at the root */
    if (rb)
        memcpy(rbuf, coll_post_cell(p, rb * (size_t)n) + (size_t)x->rank * rb, rb);
    return MPI_SUCCESS;
}

/* Allgather: each copies its block into its post and every other member's
 * out, in coll_peer() order as allgather/direct. */
static int allgather(struct coll_ctx *x, const void *sbuf, void *rbuf, size_t rb, bool in_place)
{
    int n = x->size, me = x->rank, rc = MPI_SUCCESS;
    char *own = (char *)rbuf + (size_t)me * rb;
    publish(x, in_place ? own : sbuf, rb, true);
    if (!in_place && rb)
        memcpy(own, sbuf, rb);
    for (int k = 1; k < n; k++) {
        int r = coll_peer(x->sh, me, k);
        const struct coll_post *p = coll_peer_post(x, r);
        int e = MPI_SUCCESS;
        if (!p) {
            e = x->err;
            coll_peer_release(x, r);
        } else if (p->copied_in && p->nbytes == rb) {
            if (rb)
                memcpy((char *)rbuf + (size_t)r * rb, coll_post_cell(p, rb), rb);
        } else {
            e = coll_allgather_direct_receive(x, r, p); /* another size there */
        }
        if (e && !rc)
            rc = e;
    }
    return rc;
}

/* Alltoall: each copies its n blocks into its post (in place: before any is
 * overwritten) and its block of every post out, as alltoall/direct. */
static int alltoall(struct coll_ctx *x, const void *sbuf, void *rbuf, size_t rb, bool in_place)
{
    int n = x->size, me = x->rank, rc = MPI_SUCCESS;
    struct coll_post *mine = coll_publish_cell(x);
    if (rb)
        memcpy(coll_post_cell(mine, rb * (size_t)n), in_place ? rbuf : sbuf, rb * (size_t)n);
    mine->nbytes = rb;
    mine->copied_in = true;
    coll_publish_done(x, mine, true);
    for (int k = 0; k < n; k++) {
        int r = coll_peer(x->sh, me, k);
        const struct coll_post *p = r == me ? mine : coll_peer_post(x, r);
        int e = MPI_SUCCESS;
        if (!p) {
            e = x->err;
            coll_peer_release(x, r);
        } else if (p->copied_in && p->nbytes == rb) {
            if (rb)
                memcpy((char *)rbuf + (size_t)r * rb,
                       coll_post_cell(p, rb * (size_t)n) + (size_t)me * rb, rb);
        } else {
            e = coll_alltoall_direct_receive(x, r, p); /* another size there */
        }
        if (e && !rc)
            rc = e;
    }
    return rc;
}

static bool plain(const struct loom_type *t)
{
    return !t || (t->predefined && t->contig);
}

int loom_coll_small_blocks(struct loom_comm *c, enum loom_coll_kind kind, const void *sbuf,
                           size_t scount, struct loom_type *stype, void *rbuf, size_t rcount,
                           struct loom_type *rtype, int root, bool in_place, const char **why)
{
    struct coll_shared *sh =
        atomic_load_explicit((_Atomic(void *) *)&c->sh->coll, memory_order_acquire);
    if (!sh || sh->size == 1 || !plain(stype) || !plain(rtype))
        return LOOM_COLL_GENERAL;
    size_t sb = stype ? scount * stype->size : 0, rb = rtype ? rcount * rtype->size : 0;
    /* Both sides significant: the root; every member of Allgather and
     * Alltoall (root 0). */
    bool at_root = c->rank == root || kind == LOOM_COLL_ALLGATHER || kind == LOOM_COLL_ALLTOALL;
    if (at_root && stype && rtype && sb != rb)
        return LOOM_COLL_GENERAL; /* the general path says what is wrong */
    size_t n = (size_t)sh->size;
    bool fits = kind == LOOM_COLL_GATHER      ? at_root || sb <= COLL_INLINE
                : kind == LOOM_COLL_SCATTER   ? !at_root || sb * n <= COLL_CELL
                : kind == LOOM_COLL_ALLGATHER ? rb <= COLL_INLINE
                                              : rb * n <= COLL_CELL;
    if (!fits)
        return LOOM_COLL_GENERAL;
    const struct coll_algorithm *alg =
        may_take(sh, c->rank, kind, 0, root, coll_memo_flags(NULL, rtype, false));
    if (!alg)
        return LOOM_COLL_GENERAL;
    struct loom_coll_args a = {.sbuf = sbuf,
                               .rbuf = rbuf,
                               .scount = scount,
                               .rcount = rcount,
                               .stype = stype,
                               .rtype = rtype,
                               .root = root,
                               .in_place = in_place};
    struct coll_ctx x;
    coll_ctx_init(&x, sh, c->rank, kind, &a);
    coll_count_use(x.me, alg);
    int rc;
    if (kind == LOOM_COLL_GATHER)
        rc = gather(&x, sbuf, sb, rbuf, rb, in_place);
    else if (kind == LOOM_COLL_SCATTER)
        rc = scatter(&x, sbuf, sb, rbuf, rb, in_place);
    else if (kind == LOOM_COLL_ALLGATHER)
        rc = allgather(&x, sbuf, rbuf, rb, in_place);
    else
        rc = alltoall(&x, sbuf, rbuf, rb, in_place);
    coll_finish(sh, x.rank, x.seq);
    *why = x.why;
    return rc;
}
