/*
 * Reduce_scatter and Reduce_scatter_block: every member publishes its input
 * vector (in place: a snapshot, since its receive buffer is overwritten) and
 * folds its own block of all inputs, in rank order and strip-mined, straight
 * into its receive buffer; it counts itself done with every input, and
 * returns once all others are done with its own.
 * Cost: N * line + N * (m / N) / copy per member (concurrent) + N * line.
 */
#include "coll/coll_impl.h"

/* First element and count of member i's block. */
static void block(const struct coll_ctx *x, const struct loom_coll_args *a, int i, size_t *e0,
                  size_t *ne)
{
    if (x->kind == LOOM_COLL_REDUCE_SCATTER_BLOCK) {
        *e0 = (size_t)i * a->rcount;
        *ne = a->rcount;
        return;
    }
    size_t off = 0;
    for (int k = 0; k < i; k++)
        off += (size_t)a->rcounts[k];
    *e0 = off;
    *ne = (size_t)a->rcounts[i];
}

static int reduce_scatter(struct coll_ctx *x)
{
    const struct loom_coll_args *a = x->a;
    const struct loom_type *t = a->rtype;
    int n = x->size, me = x->rank;
    size_t e0, ne, total;
    block(x, a, me, &e0, &ne);
    block(x, a, n - 1, &total, &ne);
    total += ne;
    block(x, a, me, &e0, &ne);
    struct coll_post *mine = coll_publish_begin(x);
    const void *input = coll_expose(x, mine, coll_input(a), total, t, a->in_place);
    int rc = input ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    mine->data = input = input ? input : coll_input(a);
    coll_expect_reads(x, mine, n - 1);
    coll_publish_done(x, mine, true);
    const void *const *in;
    int e = coll_collect(x, n, input, COLL_PICK_DATA, &in);
    rc = rc ? rc : e;
    /* The block lands at the start of the receive buffer: shift the output
     * so that element e0 of the fold is element 0 of rbuf. */
    if (rc == MPI_SUCCESS && ne)
        rc = coll_fold(x, a->op, t, in, n,
                       coll_elem(a->rbuf, t, 0) - (e0 * (size_t)(t->ub - t->lb)), -1, e0, ne);
    coll_read_done_upto(x, n);
    coll_await_reads(x, mine);
    return rc;
}

int coll_reduce_scatter_direct(struct coll_ctx *x)
{
    return reduce_scatter(x);
}

int coll_reduce_scatter_block_direct(struct coll_ctx *x)
{
    return reduce_scatter(x);
}

double coll_reduce_scatter_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    return 2 * x->size * coll_model.line_s + nbytes / coll_model.copy_bps;
}

double coll_reduce_scatter_block_direct_cost(const struct coll_ctx *x, size_t nbytes)
{
    return coll_reduce_scatter_direct_cost(x, nbytes);
}
