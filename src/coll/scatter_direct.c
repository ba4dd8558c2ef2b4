/*
 * Scatter and Scatterv: the root publishes its send buffer; every member
 * copies its own block from it, concurrently; the root waits for them.
 * Cost: line + m / copy per member, in parallel; N * line at the root.
 */
#include "coll/coll_impl.h"

static int scatter(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    int n = x->size, root = a->root, par = (int)(x->seq & 1), rc = MPI_SUCCESS;
    if (x->rank == root) {
        struct coll_post *p = NULL;
        if (n > 1) {
            p = coll_publish_begin(x);
            x->me->expect_reads[par] += (uint64_t)n - 1;
            coll_publish_done(x, p, true);
        }
        if (!a->in_place) {
            struct coll_block s = coll_send_block(x->kind, a, a->sbuf, root);
            rc = coll_copy(x, a->rbuf, a->rcount, a->rtype, s.buf, s.count, s.type);
        }
        if (p)
            coll_wait(x, &p->reads, x->me->expect_reads[par]);
        return rc;
    }
    const struct coll_post *p = coll_peer_post(x, root);
    if (!p)
        return MPI_ERR_OTHER;
    struct coll_block s = coll_send_block(x->kind, &p->args, p->args.sbuf, x->rank);
    rc = coll_copy(x, a->rbuf, a->rcount, a->rtype, s.buf, s.count, s.type);
    coll_read_done(x, p, root);
    return rc;
}

int coll_scatter_direct(struct coll_ctx *x)
{
    return scatter(x);
}

int coll_scatterv_direct(struct coll_ctx *x)
{
    return scatter(x);
}

double coll_scatter_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    return x->size * coll_model.line_s + nbytes / coll_model.copy_bps;
}

double coll_scatterv_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    return coll_scatter_direct_cost(x, nbytes);
}
