/*
 * Reduce by a binomial tree over the ranks in order (so non-commutative
 * operations combine in rank order): member i folds its input with the
 * partial results of its children i + 1, i + 2, i + 4, ... (each covering a
 * consecutive range of ranks) into an accumulator; member 0 ends with the
 * result, which it folds straight into the root's buffer when it is the root,
 * else the root copies it from member 0.
 * Cost: ceil(log2 N) * (2 * line + 2 m / copy) (+ m / copy when root != 0):
 * per level the child's post and the parent's release (was one line).
 * With several members per worker (per = most on one worker, W workers):
 * the N - 1 folds of 2 m run on W workers, so 2 m / copy counts
 * max(ceil(log2 N), (N - 1) / W) times, and each level parks and wakes
 * about per members: + ceil(log2 N) * per * local_wake. (Measured by
 * loom-tune on 2 cores, 2026-11-23: 8 and 16 ranks up to 512 B, tree 5-10x
 * slower than direct's copy-in, which the model had the other way round.)
 * Several memory domains (D): + remote(m) per level whose children are in
 * another domain: the top ceil(log2 D) levels when every domain is a range of
 * ranks, else every level (coll_remote_s(); 0 with one domain).
 */
#include <math.h>

#include "coll/coll_impl.h"

int coll_reduce_tree(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    struct coll_shared *sh = x->sh;
    int n = x->size, me = x->rank, root = a->root, rc = MPI_SUCCESS;
    const struct loom_type *t = a->rtype;

    /* Children: me + 2^k for 2^k below my lowest set bit (all, for 0). */
    const void *in[COLL_MAX_ROUNDS + 1];
    int child[COLL_MAX_ROUNDS], nchild = 0;
    in[0] = coll_input(a);
    for (int d = 1; d < n && (me == 0 || d < (me & -me)); d <<= 1)
        if (me + d < n)
            child[nchild++] = me + d;
    for (int k = 0; k < nchild; k++) {
        const struct coll_post *p = coll_peer_post(x, child[k]);
        if (!p)
            return x->err;
        in[k + 1] = p->data;
    }
    const void *acc = in[0];
    bool final_here = me == 0 && root == 0;
    if (nchild > 0 || final_here) {
        void *out = final_here ? a->rbuf : coll_tempbuf(x, 0, a->rcount, t);
        if (!out)
            return MPI_ERR_NO_MEM;
        rc = coll_fold(x, a->op, t, in, nchild + 1, out, final_here && a->in_place ? 0 : -1, 0,
                       a->rcount);
        for (int k = 0; k < nchild; k++)
            coll_set(x, &sh->m[child[k]].release, x->seq, child[k]);
        acc = out;
    }
    if (me != 0) {
        struct coll_post *p = coll_publish_begin(x);
        p->data = acc;
        coll_publish_done(x, p, false);
        coll_notify(x, me & (me - 1)); /* the parent: clear the lowest bit */
        coll_wait(x, &x->me->release, x->seq);
        if (me == root) {
            const struct coll_post *q = coll_peer_post(x, 0);
            if (!q)
                return x->err;
            if (a->rcount)
                loom_type_copy(a->rbuf, t, q->data, q->args.rtype, 0, a->rcount * t->size);
            coll_set(x, &sh->m[0].ready, x->seq, 0);
        }
    } else if (root != 0) {
        struct coll_post *p = coll_publish_begin(x);
        p->data = acc;
        coll_publish_done(x, p, false);
        coll_notify(x, root);
        coll_wait(x, &x->me->ready, x->seq);
    }
    return rc;
}

double coll_reduce_tree_cost(const struct coll_ctx *x, size_t nbytes)
{
    const struct coll_model *m = &coll_model;
    double depth = x->size > 1 ? ceil(log2((double)x->size)) : 0;
    double folds = depth, w = x->sh->nlocal, per = coll_max_per_worker(x->sh);
    if (x->size > 1 && (x->size - 1) / w > folds)
        folds = (x->size - 1) / w;
    /* Levels whose child is in another domain: the top ceil(log2 D) when
     * the domains are ranges of ranks, else any. */
    double nd = x->sh->ndom, crossing = x->sh->dom_contig ? ceil(log2(nd)) : depth;
    return 2 * depth * m->line_s + folds * 2 * nbytes / m->copy_bps +
           crossing * coll_remote_s(x->sh, nbytes) + (per > 1 ? depth * per * m->local_wake_s : 0) +
           (x->a->root != 0 ? nbytes / m->copy_bps : 0);
}
