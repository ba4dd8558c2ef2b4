/*
 * Scatter and Scatterv: the root publishes its send buffer; every member
 * copies its own block from it, concurrently; the root waits for them.
 * MPI_Scatter: when all the blocks fit in COLL_CELL bytes the root packs them
 * into its post's cell, one after the other, and returns at once (copy-in);
 * larger, a nonblocking root publishes a copy of its blocks (coll_expose).
 * (Each member makes one copy, all from the root's memory: there is no order
 * of copies to arrange over the memory domains.)
 * Cost: line + m / copy per member, in parallel; N * line at the root.
 */
#include "coll/coll_impl.h"

static int scatter(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    int n = x->size, root = a->root, rc = MPI_SUCCESS;
    if (x->rank == root) {
        struct coll_post *p = NULL;
        size_t block = a->scount * a->stype->size;
        bool small = x->kind == LOOM_COLL_SCATTER && block * (size_t)n <= COLL_CELL;
        if (n > 1) {
            p = coll_publish_begin(x);
            p->nbytes = block;
            p->copied_in = small;
            if (small)
                for (int j = 0; j < n; j++) {
                    if (j == root)
                        continue; /* the root copies its own block below */
                    struct coll_block b = coll_send_block(x->kind, a, a->sbuf, j);
                    loom_type_pack(coll_post_cell(p, block * (size_t)n) + (size_t)j * block, b.buf,
                                   b.type, 0, block);
                }
            if (!small) {
                p->data = coll_expose_blocks(x, p, true, false);
                coll_expect_reads(x, p, n - 1);
            }
            coll_publish_done(x, p, true);
        }
        if (!a->in_place) {
            struct coll_block s = coll_send_block(x->kind, a, a->sbuf, root);
            rc = coll_copy(x, a->rbuf, a->rcount, a->rtype, s.buf, s.count, s.type);
        }
        if (p && !small)
            coll_await_reads(x, p);
        return rc;
    }
    const struct coll_post *p = coll_peer_post(x, root);
    if (!p) {
        coll_peer_release(x, root);
        return x->err;
    }
    return coll_scatter_direct_receive(x, p);
}

int coll_scatter_direct_receive(struct coll_ctx *x, const struct coll_post *p)
{
    const struct loom_coll_args *a = x->a;
    if (p->copied_in) {
        size_t nb = p->nbytes;
        return coll_unpack(x, (struct coll_block){a->rbuf, a->rcount, a->rtype},
                           coll_post_cell(p, nb * (size_t)x->size) + (size_t)x->rank * nb, nb);
    }
    struct coll_block s = coll_send_block(x->kind, &p->args, p->data, x->rank);
    int rc = coll_copy(x, a->rbuf, a->rcount, a->rtype, s.buf, s.count, s.type);
    coll_read_done(x, p, a->root);
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
