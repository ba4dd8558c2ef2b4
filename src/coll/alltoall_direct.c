/*
 * Alltoall, Alltoallv, Alltoallw: every member publishes its send buffer (in
 * place: a snapshot of its receive buffer, which it is about to overwrite)
 * and pulls, from every member, the block addressed to it, in the copy order
 * (coll_peer(): itself, then its right neighbour with one domain; with
 * several, each step's readers spread evenly over the domains' memories). MPI_Alltoall with all
 * blocks within COLL_CELL bytes packs them into the post (copy-in: nobody waits for readers).
 * Otherwise each counts itself done with every post it read, and a member returns once all others
 * have read its own (as Allgather). Cost: N * line + (N - 1) * m / copy per member (concurrent) + N
 * * line (the counts).
 */
#include "coll/coll_impl.h"

static int alltoall(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    int n = x->size, me = x->rank, rc = MPI_SUCCESS;
    struct coll_post *mine = coll_publish_begin(x);
    size_t block = x->kind != LOOM_COLL_ALLTOALL ? 0
                   : a->in_place                 ? a->rcount * a->rtype->size
                                                 : a->scount * a->stype->size;
    if (x->kind == LOOM_COLL_ALLTOALL && block * (size_t)n <= COLL_CELL) {
        /* Copy-in: block j at j * block (in place too: packed before any
         * block is overwritten). */
        char *cell = coll_post_cell(mine, block * (size_t)n);
        for (int j = 0; j < n; j++) {
            struct coll_block b = a->in_place ? coll_recv_block(x->kind, a, j)
                                              : coll_send_block(x->kind, a, a->sbuf, j);
            loom_type_pack(cell + (size_t)j * block, b.buf, b.type, 0, block);
        }
        mine->nbytes = block;
        mine->copied_in = true;
    } else {
        /* In place: a copy of the receive blocks, which the caller overwrites. */
        const void *base = coll_expose_blocks(x, mine, !a->in_place, a->in_place);
        if (!base) {
            rc = MPI_ERR_NO_MEM;
            base = a->rbuf;
        }
        mine->data = base;
        coll_expect_reads(x, mine, n - 1);
    }
    coll_publish_done(x, mine, true);
    for (int k = 0; k < n; k++) {
        int r = coll_peer(x->sh, me, k);
        const struct coll_post *p = r == me ? mine : coll_peer_post(x, r);
        int e;
        if (!p) {
            e = x->err;
            coll_peer_release(x, r);
        } else {
            e = coll_alltoall_direct_receive(x, r, p);
        }
        if (e && !rc)
            rc = e;
    }
    coll_await_reads(x, mine);
    return rc;
}

int coll_alltoall_direct_receive(struct coll_ctx *x, int r, const struct coll_post *p)
{
    const struct loom_coll_args *a = x->a;
    int me = x->rank;
    if (p->copied_in)
        return coll_unpack(x, coll_recv_block(x->kind, a, r),
                           coll_post_cell(p, p->nbytes * (size_t)x->size) + (size_t)me * p->nbytes,
                           p->nbytes);
    struct coll_block d = coll_recv_block(x->kind, a, r);
    struct coll_block s;
    if (p->args.in_place) {
        s = coll_recv_block(x->kind, &p->args, me);
        s.buf = (const char *)p->data + ((const char *)s.buf - (const char *)p->args.rbuf);
    } else {
        s = coll_send_block(x->kind, &p->args, p->data, me);
    }
    int e = coll_copy(x, (void *)d.buf, d.count, d.type, s.buf, s.count, s.type);
    if (r != me)
        coll_read_done(x, p, r);
    return e;
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
