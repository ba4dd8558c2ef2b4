/*
 * Allgather and Allgatherv: every member publishes its block (its send
 * buffer, or its own block of its receive buffer when in place) and copies
 * every other member's block into its receive buffer in the copy order
 * (coll_peer(): one domain: starting with its right neighbour; several: at
 * each step the readers spread evenly over the sources and over the domains'
 * memories). A block of at most
 * COLL_CELL bytes is packed into the post (copy-in: readers unpack it, one
 * line for up to 32 B, and nobody waits for readers). Larger, each counts itself
 * done with every block it read, and a member returns once all others have
 * read its own (nobody waits for a member that is still copying, so a
 * nonblocking call progresses without it).
 * Cost: N * line + (N - 1) * m / copy per member (concurrent) + N * line
 * (the counts).
 */
#include "coll/coll_impl.h"

static int allgather(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    int n = x->size, me = x->rank, rc = MPI_SUCCESS;
    struct coll_post *mine = coll_publish_begin(x);
    struct coll_block own = a->in_place ? coll_recv_block(x->kind, a, me)
                                        : (struct coll_block){a->sbuf, a->scount, a->stype};
    size_t nb = own.count * own.type->size;
    if (nb <= COLL_CELL) {
        loom_type_pack(coll_post_cell(mine, nb), own.buf, own.type, 0, nb);
        mine->nbytes = nb;
        mine->copied_in = true;
    } else {
        mine->data = coll_expose(x, mine, own.buf, own.count, own.type, false);
        coll_expect_reads(x, mine, n - 1);
    }
    coll_publish_done(x, mine, true);
    if (!a->in_place) {
        struct coll_block d = coll_recv_block(x->kind, a, me);
        rc = coll_copy(x, (void *)d.buf, d.count, d.type, a->sbuf, a->scount, a->stype);
    }
    for (int k = 1; k < n; k++) {
        int r = coll_peer(x->sh, me, k);
        const struct coll_post *p = coll_peer_post(x, r);
        int e;
        if (!p) {
            e = x->err;
            coll_peer_release(x, r);
        } else {
            e = coll_allgather_direct_receive(x, r, p);
        }
        if (e && !rc)
            rc = e;
    }
    coll_await_reads(x, mine);
    return rc;
}

int coll_allgather_direct_receive(struct coll_ctx *x, int r, const struct coll_post *p)
{
    const struct loom_coll_args *a = x->a;
    if (p->copied_in)
        return coll_unpack(x, coll_recv_block(x->kind, a, r), coll_post_cell(p, p->nbytes),
                           p->nbytes);
    struct coll_block d = coll_recv_block(x->kind, a, r);
    struct coll_block s = p->args.in_place ? coll_recv_block(x->kind, &p->args, r)
                                           : coll_send_block(x->kind, &p->args, p->args.sbuf, r);
    s.buf = p->data; /* the block itself, or a nonblocking caller's copy */
    int e = coll_copy(x, (void *)d.buf, d.count, d.type, s.buf, s.count, s.type);
    coll_read_done(x, p, r);
    return e;
}

int coll_allgather_direct(struct coll_ctx *x)
{
    return allgather(x);
}

int coll_allgatherv_direct(struct coll_ctx *x)
{
    return allgather(x);
}

double coll_allgather_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    double n = x->size;
    return 2 * n * coll_model.line_s + (n - 1) * nbytes / coll_model.copy_bps;
}

double coll_allgatherv_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    return coll_allgather_direct_cost(x, nbytes);
}
