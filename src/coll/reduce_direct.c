/*
 * Reduce by the root alone: it folds every member's input, in rank order,
 * strip by strip (COLL_STRIP bytes of every input at a time, so the partial
 * result stays in cache), straight into its receive buffer; then releases
 * the others.
 * Up to COLL_CELL bytes of a contiguous type the others pack their input into
 * their post's cell and return at once (copy-in), so the root never waits for
 * them to leave and they never wait for the root.
 * Cost: N * line + N * m / copy (the root reads everything); copy-in:
 * (N - 1) * line + N * m / copy (the root reads the others' cells, nobody
 * waits for a release); above the copy-in size, when members share
 * workers, + (N - 1) * wake: every other member parks until the root has
 * read its input. (Both measured by loom-tune on 2 cores, 2026-11-23:
 * 1 KiB -> 2 KiB adds 3-6 us at 8 and 16 ranks; up to 512 B on 2 ranks
 * copy-in is 20% faster than the tree, which the model had the other way.)
 * Several memory domains (D): the inputs of the other domains, about
 * N (D - 1) / D, cross into the root's: + remote(N (D - 1) / D * m)
 * (coll_remote_s(); 0 with one domain).
 */

#include "coll/coll_impl.h"

int coll_reduce_direct(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    int n = x->size, root = a->root;
    size_t nb = a->rcount * a->rtype->size;
    bool small = nb <= COLL_CELL && a->rtype->contig;
    if (x->rank != root) {
        struct coll_post *p = coll_publish_begin(x);
        if (small) {
            loom_type_pack(coll_post_cell(p, nb), coll_input(a), a->rtype, 0, nb);
            p->nbytes = nb;
            p->copied_in = true;
        } else {
            p->data = coll_expose(x, p, coll_input(a), a->rcount, a->rtype, false);
        }
        coll_publish_done(x, p, false);
        coll_notify(x, root);
        if (!small && !p->detached)
            coll_wait(x, &x->me->release, x->seq);
        return MPI_SUCCESS;
    }
    const void *const *in;
    /* On a mismatch keep going: everybody must still be released. */
    int rc = coll_collect(x, n, coll_input(a), small ? COLL_PICK_CELL : COLL_PICK_DATA, &in);
    if (rc == MPI_SUCCESS)
        rc = coll_fold(x, a->op, a->rtype, in, n, a->rbuf, a->in_place ? root : -1, 0, a->rcount);
    /* Release those that wait for it. Not the ones that copied in or
     * detached (a nonblocking call's copy): they left already and may be
     * in a later call, whose release this store would overwrite with an
     * older number (an Ireduce then a Reduce tree hung at 16 ranks). */
    if (!small)
        for (int r = 0; r < n; r++)
            if (r != root && !x->sh->m[r].post[coll_ring_index(x)].detached)
                coll_set(x, &x->sh->m[r].release, x->seq, r);
    return rc;
}

double coll_reduce_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    const struct coll_model *m = &coll_model;
    double n = x->size, nd = x->sh->ndom;
    double fold = n * nbytes / m->copy_bps + coll_remote_s(x->sh, n * (nd - 1) / nd * nbytes);
    if (nbytes <= COLL_CELL && x->a->rtype->contig)
        return (n - 1) * m->line_s + fold;
    double parked = coll_max_per_worker(x->sh) > 1 ? (n - 1) * m->wake_s : 0;
    return n * m->line_s + fold + parked;
}
