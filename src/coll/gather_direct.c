/*
 * Gather and Gatherv: every member publishes its send buffer; the root copies
 * each one into place in the copy order (coll_peer(): starting with the
 * member after it, so that roots of consecutive calls do not all start on the
 * same member, and taking the memory domains in turn), then releases them.
 * A member whose block is at most COLL_CELL bytes packs it into its post's
 * cell and returns at once (copy-in); the root unpacks it from there.
 * Members that did not copy in are released as soon as their block is copied
 * (a nonblocking one publishes a copy of its block and does not wait).
 * Cost: N * line + N * m / copy at the root.
 */
#include "coll/coll_impl.h"

static int gather(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    int n = x->size, root = a->root, rc = MPI_SUCCESS;
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
    for (int k = 0; k < n; k++) {
        int r = coll_peer(x->sh, root, 1 + k);
        struct coll_block d = coll_recv_block(x->kind, a, r);
        int e = MPI_SUCCESS;
        if (r == root) {
            if (!a->in_place)
                e = coll_copy(x, (void *)d.buf, d.count, d.type, a->sbuf, a->scount, a->stype);
        } else {
            const struct coll_post *p = coll_peer_post(x, r);
            e = p ? coll_gather_direct_receive(x, r, d, p) : x->err;
        }
        if (e && !rc)
            rc = e;
    }
    return rc;
}

int coll_gather_direct_receive(struct coll_ctx *x, int r, struct coll_block d,
                               const struct coll_post *p)
{
    size_t nb = p->nbytes;
    if (p->copied_in)
        return coll_unpack(x, d, coll_post_cell(p, nb), nb);
    int e = coll_copy(x, (void *)d.buf, d.count, d.type, p->data, p->args.scount, p->args.stype);
    /* Done with its buffer: release it, unless it detached (a nonblocking
     * call's copy) and left already; it may be waiting in a later call,
     * whose release this would overwrite with an older number. */
    if (!p->detached)
        coll_set(x, &x->sh->m[r].release, x->seq, r);
    return e;
}

int coll_gather_direct(struct coll_ctx *x)
{
    return gather(x);
}

int coll_gatherv_direct(struct coll_ctx *x)
{
    return gather(x);
}

double coll_gather_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    return x->size * (coll_model.line_s + nbytes / coll_model.copy_bps);
}

double coll_gatherv_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    return coll_gather_direct_cost(x, nbytes);
}
