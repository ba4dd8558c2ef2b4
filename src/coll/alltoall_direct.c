/*
 * Alltoall, Alltoallv, Alltoallw: every member publishes its send buffer (in
 * place: a snapshot of its receive buffer, which it is about to overwrite)
 * and pulls, from every member, the block addressed to it, in the copy order
 * (coll_peer(): itself, then its right neighbour with one domain; with
 * several, each step's readers spread evenly over the domains' memories); a
 * fence ends the call.
 * Cost: N * line + (N - 1) * m / copy per member (concurrent) + a fence.
 */
#include <string.h>

#include "coll/coll_impl.h"

/* Bytes of the receive buffer an in-place call covers, as count x type. */
static int snapshot_span(struct coll_ctx *x, const struct loom_coll_args *a, const void **base)
{
    /* The blocks may be anywhere in the buffer: snapshot from the lowest to
     * the highest byte of any block. */
    MPI_Aint lo = 0, hi = 0;
    bool any = false;
    for (int i = 0; i < x->size; i++) {
        struct coll_block b = coll_recv_block(x->kind, a, i);
        if (!b.count)
            continue;
        MPI_Aint ext = b.type->ub - b.type->lb;
        MPI_Aint off = (const char *)b.buf - (const char *)a->rbuf;
        MPI_Aint l = off + b.type->true_lb,
                 h = off + (MPI_Aint)(b.count - 1) * ext + b.type->true_ub;
        if (!any || l < lo)
            lo = l;
        if (!any || h > hi)
            hi = h;
        any = true;
    }
    if (!any) {
        *base = a->rbuf;
        return MPI_SUCCESS;
    }
    char *s = coll_scratch(x, 1, (size_t)(hi - lo));
    if (!s)
        return MPI_ERR_NO_MEM;
    memcpy(s, (const char *)a->rbuf + lo, (size_t)(hi - lo));
    *base = s - lo;
    return MPI_SUCCESS;
}

static int alltoall(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    int n = x->size, me = x->rank, rc = MPI_SUCCESS;
    const void *base = a->sbuf;
    if (a->in_place)
        rc = snapshot_span(x, a, &base);
    struct coll_post *mine = coll_publish_begin(x);
    mine->data = base;
    coll_publish_done(x, mine, true);
    for (int k = 0; k < n; k++) {
        int r = coll_peer(x->sh, me, k);
        const struct coll_post *p = r == me ? mine : coll_peer_post(x, r);
        int e;
        if (!p) {
            e = x->err;
        } else {
            struct coll_block d = coll_recv_block(x->kind, a, r);
            struct coll_block s;
            if (p->args.in_place) {
                s = coll_recv_block(x->kind, &p->args, me);
                s.buf = (const char *)p->data + ((const char *)s.buf - (const char *)p->args.rbuf);
            } else {
                s = coll_send_block(x->kind, &p->args, p->data, me);
            }
            e = coll_copy(x, (void *)d.buf, d.count, d.type, s.buf, s.count, s.type);
        }
        if (e && !rc)
            rc = e;
    }
    coll_fence(x);
    return rc;
}

int coll_alltoall_direct(struct coll_ctx *x)
{
    return alltoall(x);
}

int coll_alltoallv_direct(struct coll_ctx *x)
{
    return alltoall(x);
}

int coll_alltoallw_direct(struct coll_ctx *x)
{
    return alltoall(x);
}

double coll_alltoall_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    double n = x->size;
    return 2 * n * coll_model.line_s + (n - 1) * nbytes / coll_model.copy_bps;
}

double coll_alltoallv_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    return coll_alltoall_direct_cost(x, nbytes);
}

double coll_alltoallw_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    return coll_alltoall_direct_cost(x, nbytes);
}
