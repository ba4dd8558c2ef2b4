/*
 * MPI collective entry points (MPI-3.1 chapter 5): check
 * the arguments the standard makes significant on the calling rank, raise the
 * standard error classes with a message, and hand the call to src/coll.
 * Arguments that are bad on every rank raise the error on every rank before
 * any synchronization, so nobody is left waiting. The persistent
 * collectives (MPI_<Coll>_init, MPI-4.1) check the same arguments at init
 * and save the call in a persistent request that MPI_Start runs as
 * MPI_I<coll>: a start takes the call's place in the communicator's order.
 */
#include <stdio.h>
#include <stdlib.h>

#include "coll/coll.h"
#include "coll/op.h"
#include "mpi/mpi_impl.h"
#include "pt2pt/p2p.h"
#include "comm/comm_impl.h"
#include "util/handle.h"

/* MPI_IN_PLACE is the address of this byte. */
LOOM_EXPORT char loom_in_place_marker;

/* ---- argument checks --------------------------------------------------- */

struct call {
    const char *fn;
    MPI_Comm comm;
    struct loom_comm *c;
    int size; /* of the group the arrays and roots name: the remote one on an intercommunicator */
    bool inter;
};

static int begin(struct call *k, const char *fn, MPI_Comm comm)
{
    *k = (struct call){.fn = fn, .comm = comm};
    int rc = loom_mpi_comm_enter(fn, comm, &k->c);
    if (rc)
        return rc;
    k->inter = loom_comm_is_inter(k->c);
    k->size = loom_comm_peer_size(k->c);
    return MPI_SUCCESS;
}

/* Rooted calls: the caller is the root (MPI_ROOT on an intercommunicator). */
static bool is_root(const struct call *k, int root)
{
    return k->inter ? root == MPI_ROOT : k->c->rank == root;
}

/* Rooted calls: the caller sends to or receives from the root (every rank
 * but the root of an intracommunicator; the remote group's members on an
 * intercommunicator). */
static bool is_leaf(const struct call *k, int root)
{
    return k->inter ? root >= 0 : k->c->rank != root;
}

int loom_mpi_type_arg(MPI_Comm comm, const char *fn, MPI_Datatype type, const char *what,
                      struct loom_type **t_p)
{
    struct loom_type *t = loom_type_get(type);
    if (LOOM_LIKELY(t && t->committed)) {
        *t_p = t;
        return MPI_SUCCESS;
    }
    char buf[160];
    const char *why = loom_type_problem(type, true, buf, sizeof buf);
    return loom_mpi_err(comm, MPI_ERR_TYPE, fn, "%s: %s", what, why ? why : "unusable datatype");
}

static int check_type(const struct call *k, MPI_Datatype type, const char *what,
                      struct loom_type **t_p)
{
    return loom_mpi_type_arg(k->comm, k->fn, type, what, t_p);
}

static int check_count(const struct call *k, int count, const char *what)
{
    if (count < 0)
        return loom_mpi_err(k->comm, MPI_ERR_COUNT, k->fn, "%s %d is negative", what, count);
    return MPI_SUCCESS;
}

/* A buffer of count x type (count already checked). */
/* The address of a buffer of count x t (both already checked). */
static int check_ptr(const struct call *k, const void *buf, int count, const struct loom_type *t,
                     const char *what)
{
    if (buf == MPI_IN_PLACE)
        return loom_mpi_err(k->comm, MPI_ERR_BUFFER, k->fn, "%s: MPI_IN_PLACE is not allowed here",
                            what);
    if (!buf && count > 0 && t->size > 0 && t->true_lb == 0)
        return loom_mpi_err(k->comm, MPI_ERR_BUFFER, k->fn,
                            "%s is NULL for %d elements of a datatype with relative displacements",
                            what, count);
    return MPI_SUCCESS;
}

static int check_buf(const struct call *k, const void *buf, int count, MPI_Datatype type,
                     const char *what, struct loom_type **t_p)
{
    int rc = check_type(k, type, what, t_p);
    return rc ? rc : check_ptr(k, buf, count, *t_p, what);
}

static int check_counted_buf(const struct call *k, const void *buf, int count, MPI_Datatype type,
                             const char *what, struct loom_type **t_p)
{
    int rc = check_count(k, count, what);
    return rc ? rc : check_buf(k, buf, count, type, what, t_p);
}

static int check_root(const struct call *k, int root)
{
    if (k->inter && root != MPI_ROOT && root != MPI_PROC_NULL && (root < 0 || root >= k->size))
        return loom_mpi_err(k->comm, MPI_ERR_ROOT, k->fn,
                            "root %d is not MPI_ROOT, MPI_PROC_NULL or a rank of the remote group "
                            "(size %d)",
                            root, k->size);
    if (!k->inter && (root < 0 || root >= k->size))
        return loom_mpi_err(k->comm, MPI_ERR_ROOT, k->fn,
                            "root %d is not a rank of a communicator of size %d", root, k->size);
    return MPI_SUCCESS;
}

static int check_op(const struct call *k, MPI_Op op, const struct loom_type *t,
                    struct loom_op **op_p)
{
    char buf[160];
    struct loom_op *o = loom_op_get(op);
    /* Predefined ops need no more checks; user ops must be the caller's. */
    const char *why = o && o->number ? NULL : loom_op_handle_problem(op, buf, sizeof buf);
    if (why || !o)
        return loom_mpi_err(k->comm, MPI_ERR_OP, k->fn, "the operation %s",
                            why ? why : "is not usable");
    why = loom_op_problem(o, t, buf, sizeof buf);
    if (why)
        return loom_mpi_err(k->comm, MPI_ERR_OP, k->fn, "%s", why);
    *op_p = o;
    return MPI_SUCCESS;
}

/* counts[0..size) non-negative and displs present. */
static int check_counts(const struct call *k, const int *counts, const int *displs,
                        const char *what)
{
    if (!counts || !displs)
        return loom_mpi_err(k->comm, MPI_ERR_ARG, k->fn, "%s counts or displacements are NULL",
                            what);
    for (int i = 0; i < k->size; i++)
        if (counts[i] < 0)
            return loom_mpi_err(k->comm, MPI_ERR_COUNT, k->fn,
                                "%s count %d (for rank %d) is negative", what, counts[i], i);
    return MPI_SUCCESS;
}

/* Saves the call in a new, inactive persistent request (MPI_<Coll>_init);
 * each MPI_Start runs it as MPI_I<coll> would. */
static int save(const struct call *k, enum loom_coll_kind kind, const struct loom_coll_args *a,
                MPI_Request *request)
{
    loom_req *r = loom_req_alloc_generic(k->c);
    struct loom_coll_call *call = NULL;
    if (!r || loom_coll_save(k->c, kind, a, &call) != MPI_SUCCESS) {
        if (r) {
            atomic_store_explicit(&r->done, 1, memory_order_relaxed);
            loom_req_free(r);
        }
        return loom_mpi_err(k->comm, MPI_ERR_NO_MEM, k->fn,
                            "out of memory for a persistent collective");
    }
    r->persistent = true;
    r->active = false;
    r->ext = call;
    /* Inactive counts as complete, and MPI_Request_free recycles it at once. */
    atomic_store_explicit(&r->done, 1, memory_order_relaxed);
    *request = r;
    return MPI_SUCCESS;
}

/* Runs the call (request NULL), starts it and returns its request, or
 * (persistent) saves it in an inactive request. */
/* The call on an intercommunicator's bridge: the root as the coll layer
 * takes it (coll.h). */
static void inter_args(const struct call *k, enum loom_coll_kind kind, struct loom_coll_args *a)
{
    const struct loom_comm_shared *sh = k->c->sh;
    int my_side = sh->bridge_base != 0, rbase = my_side ? 0 : sh->size;
    bool rooted = kind == LOOM_COLL_BCAST || kind == LOOM_COLL_GATHER ||
                  kind == LOOM_COLL_GATHERV || kind == LOOM_COLL_SCATTER ||
                  kind == LOOM_COLL_SCATTERV || kind == LOOM_COLL_REDUCE;
    a->inter_root = -1;
    if (!rooted) {
        a->root = 0;
    } else if (a->root == MPI_ROOT) {
        a->inter_root = k->c->bridge->rank;
        a->root = LOOM_COLL_INTER_ROOT - my_side;
    } else if (a->root == MPI_PROC_NULL) {
        a->root = LOOM_COLL_INTER_ROOT - my_side;
    } else {
        a->inter_root = rbase + a->root;
        a->root = LOOM_COLL_INTER_ROOT - !my_side;
    }
}

static int run(const struct call *k, enum loom_coll_kind kind, const struct loom_coll_args *args,
               MPI_Request *request, bool persistent)
{
    const char *why = NULL;
    int rc;
    struct loom_coll_args ia;
    const struct loom_coll_args *a = args;
    struct loom_comm *on = k->c;
    if (k->inter) {
        if (persistent)
            return loom_mpi_err(k->comm, MPI_ERR_COMM, k->fn,
                                "persistent collectives on intercommunicators are not supported");
        ia = *args;
        inter_args(k, kind, &ia);
        a = &ia;
        on = k->c->bridge;
    }
    if (persistent)
        return save(k, kind, a, request);
    if (!request) {
        rc = loom_coll_run(on, kind, a, &why);
    } else {
        loom_req *r = loom_req_alloc_generic(k->c);
        if (!r)
            return loom_mpi_err(k->comm, MPI_ERR_NO_MEM, k->fn, "out of memory for requests");
        rc = loom_coll_start(on, kind, a, r, &why);
        if (rc) {
            atomic_store_explicit(&r->done, 1, memory_order_relaxed);
            loom_req_free(r);
        } else {
            *request = r;
        }
    }
    if (rc)
        return loom_mpi_err(k->comm, rc, k->fn, "%s", why ? why : "failed");
    return MPI_SUCCESS;
}

int loom_mpi_coll_start_persistent(MPI_Request r, const char *fn)
{
    free(r->why); /* the previous start's error */
    r->why = NULL;
    r->status_error = MPI_SUCCESS;
    r->active = true;
    atomic_store_explicit(&r->done, 0, memory_order_relaxed);
    const char *why = NULL;
    int rc = loom_coll_start_saved(r->ext, r, &why);
    if (rc) {
        r->active = false;
        atomic_store_explicit(&r->done, 1, memory_order_relaxed);
        return loom_mpi_err(r->comm->handle, rc, fn, "%s", why ? why : "failed");
    }
    return MPI_SUCCESS;
}

void loom_mpi_coll_free_persistent(MPI_Request r)
{
    loom_coll_call_free(r->ext);
    r->ext = NULL;
}

/* The small-message paths (loom_coll_small(), loom_coll_small_blocks()) are
 * tried first by blocking calls whose arguments are plainly good; anything
 * else, errors included, returns LOOM_COLL_GENERAL here and goes the general
 * way, which checks again and raises the error. */

/* A communicator of an initialized rank with root among its ranks, or NULL. */
static struct loom_comm *small_comm(MPI_Comm comm, int root)
{
    struct loom_comm *c = loom_comm_lookup(comm);
    if (!c || loom_job.ranks[c->owner].mpi_state != LOOM_MPI_INITIALIZED ||
        (unsigned)root >= (unsigned)c->sh->size || loom_comm_is_inter(c))
        return NULL;
    return c;
}

/* A predefined datatype for count x type at buf within the small paths'
 * reach, or NULL. */
static inline struct loom_type *small_side(const void *buf, int count, MPI_Datatype type)
{
    if ((unsigned)count > LOOM_COLL_SMALL_BYTES ||
        !loom_handle_is_builtin(type, LOOM_KIND_DATATYPE))
        return NULL;
    struct loom_type *t = loom_type_get(type);
    if (!t || buf == MPI_IN_PLACE || (count && (!buf || !t->size)))
        return NULL;
    return t;
}

/* A small path's result: its error raised on comm, or MPI_SUCCESS, or
 * LOOM_COLL_GENERAL. */
static int small_result(MPI_Comm comm, const char *fn, int rc, const char *why)
{
    if (rc > 0)
        return loom_mpi_err(comm, rc, fn, "%s", why ? why : "failed");
    return rc;
}

/* Bcast, Reduce and Allreduce: a predefined datatype, a predefined op
 * (loom_coll_small() checks that it is defined for the datatype), a valid
 * root and usable buffers. bcast: recvbuf is the buffer (sendbuf unused). */
static int try_small(const char *fn, MPI_Comm comm, enum loom_coll_kind kind, const void *sendbuf,
                     void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root)
{
    bool in_place = kind != LOOM_COLL_BCAST && sendbuf == MPI_IN_PLACE;
    const void *in = kind == LOOM_COLL_BCAST || in_place ? recvbuf : sendbuf;
    struct loom_type *t = small_side(in, count, datatype);
    struct loom_comm *c = t && recvbuf != MPI_IN_PLACE ? small_comm(comm, root) : NULL;
    if (!c)
        return LOOM_COLL_GENERAL;
    struct loom_op *o = NULL;
    if (kind != LOOM_COLL_BCAST) {
        bool recv_significant = kind == LOOM_COLL_ALLREDUCE || c->rank == root;
        if (in_place && !recv_significant)
            return LOOM_COLL_GENERAL; /* MPI_IN_PLACE at a Reduce's non-root */
        if (recv_significant && count && (!recvbuf || (!in_place && in == recvbuf)))
            return LOOM_COLL_GENERAL;
        o = loom_op_get(op);
        if (!o || !o->number)
            return LOOM_COLL_GENERAL;
    }
    const char *why = NULL;
    int rc = loom_coll_small(c, kind, in, recvbuf, (size_t)count, t, o, root, &why);
    return small_result(comm, fn, rc, why);
}

/* Gather, Scatter, Allgather and Alltoall: the significant sides within
 * reach. */
static int try_small_blocks(const char *fn, MPI_Comm comm, enum loom_coll_kind kind,
                            const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root)
{
    struct loom_comm *c = small_comm(comm, root);
    if (!c)
        return LOOM_COLL_GENERAL;
    /* Allgather and Alltoall (root 0): both sides everywhere. */
    bool scatter = kind == LOOM_COLL_SCATTER, gather = kind == LOOM_COLL_GATHER;
    bool at_root = (!scatter && !gather) || c->rank == root;
    bool in_place = at_root && (scatter ? recvbuf : sendbuf) == MPI_IN_PLACE;
    struct loom_type *st = NULL, *rt = NULL;
    if (scatter ? at_root : !in_place) {
        if (!(st = small_side(sendbuf, sendcount, sendtype)))
            return LOOM_COLL_GENERAL;
    }
    if (gather ? at_root : scatter ? !in_place : true) {
        if (!(rt = small_side(recvbuf, recvcount, recvtype)))
            return LOOM_COLL_GENERAL;
    }
    const char *why = NULL;
    int rc = loom_coll_small_blocks(c, kind, sendbuf, (size_t)sendcount, st, recvbuf,
                                    (size_t)recvcount, rt, root, in_place, &why);
    return small_result(comm, fn, rc, why);
}

/* ---- entry points ------------------------------------------------------ */

static int barrier(const char *fn, MPI_Comm comm, MPI_Request *request, bool persistent)
{
    struct call k;
    int rc = begin(&k, fn, comm);
    struct loom_coll_args a = {.root = 0};
    return rc ? rc : run(&k, LOOM_COLL_BARRIER, &a, request, persistent);
}

static int bcast(const char *fn, void *buffer, int count, MPI_Datatype datatype, int root,
                 MPI_Comm comm, MPI_Request *request, bool persistent)
{
    struct call k;
    struct loom_coll_args a = {.rbuf = buffer, .rcount = (size_t)count, .root = root};
    int rc = begin(&k, fn, comm);
    if (!rc)
        rc = check_root(&k, root);
    if (!rc && !(k.inter && root == MPI_PROC_NULL))
        rc = check_counted_buf(&k, buffer, count, datatype, "the buffer", &a.rtype);
    return rc ? rc : run(&k, LOOM_COLL_BCAST, &a, request, persistent);
}

/* Gather and Gatherv: the send side everywhere (unless in place at the
 * root), the receive side at the root. */
static int gather(const char *fn, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, const int *recvcounts, const int *displs,
                  MPI_Datatype recvtype, int root, MPI_Comm comm, enum loom_coll_kind kind,
                  MPI_Request *request, bool persistent)
{
    struct call k;
    struct loom_coll_args a = {
        .sbuf = sendbuf, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .root = root};
    int rc = begin(&k, fn, comm);
    if (!rc)
        rc = check_root(&k, root);
    if (rc)
        return rc;
    bool at_root = is_root(&k, root);
    a.in_place = !k.inter && at_root && sendbuf == MPI_IN_PLACE;
    if (!a.in_place && (is_leaf(&k, root) || (!k.inter && at_root))) {
        rc = check_counted_buf(&k, sendbuf, sendcount, sendtype, "the send buffer", &a.stype);
        a.scount = (size_t)sendcount;
    }
    if (!rc && at_root) {
        if (kind == LOOM_COLL_GATHER) {
            rc =
                check_counted_buf(&k, recvbuf, recvcount, recvtype, "the receive buffer", &a.rtype);
            a.rcount = (size_t)recvcount;
        } else {
            rc = check_counts(&k, recvcounts, displs, "receive");
            if (!rc)
                rc = check_buf(&k, recvbuf, 1, recvtype, "the receive buffer", &a.rtype);
        }
    }
    return rc ? rc : run(&k, kind, &a, request, persistent);
}

/* Scatter and Scatterv: the send side at the root, the receive side
 * everywhere (unless in place at the root). */
static int scatter(const char *fn, const void *sendbuf, int sendcount, const int *sendcounts,
                   const int *displs, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, int root, MPI_Comm comm, enum loom_coll_kind kind,
                   MPI_Request *request, bool persistent)
{
    struct call k;
    struct loom_coll_args a = {
        .sbuf = sendbuf, .rbuf = recvbuf, .scounts = sendcounts, .sdispls = displs, .root = root};
    int rc = begin(&k, fn, comm);
    if (!rc)
        rc = check_root(&k, root);
    if (rc)
        return rc;
    bool at_root = is_root(&k, root);
    a.in_place = !k.inter && at_root && recvbuf == MPI_IN_PLACE;
    if (at_root) {
        if (kind == LOOM_COLL_SCATTER) {
            rc = check_counted_buf(&k, sendbuf, sendcount, sendtype, "the send buffer", &a.stype);
            a.scount = (size_t)sendcount;
        } else {
            rc = check_counts(&k, sendcounts, displs, "send");
            if (!rc)
                rc = check_buf(&k, sendbuf, 1, sendtype, "the send buffer", &a.stype);
        }
    }
    if (!rc && !a.in_place && (is_leaf(&k, root) || (!k.inter && at_root))) {
        rc = check_counted_buf(&k, recvbuf, recvcount, recvtype, "the receive buffer", &a.rtype);
        a.rcount = (size_t)recvcount;
    }
    return rc ? rc : run(&k, kind, &a, request, persistent);
}

/* Allgather(v) and Alltoall(v): send side unless in place, receive side. */
static int all(const char *fn, const void *sendbuf, int sendcount, const int *sendcounts,
               const int *sdispls, MPI_Datatype sendtype, void *recvbuf, int recvcount,
               const int *recvcounts, const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm,
               enum loom_coll_kind kind, MPI_Request *request, bool persistent)
{
    struct call k;
    struct loom_coll_args a = {.sbuf = sendbuf,
                               .rbuf = recvbuf,
                               .scounts = sendcounts,
                               .sdispls = sdispls,
                               .rcounts = recvcounts,
                               .rdispls = rdispls,
                               .in_place = sendbuf == MPI_IN_PLACE};
    int rc = begin(&k, fn, comm);
    if (rc)
        return rc;
    a.in_place = a.in_place && !k.inter;
    if (!a.in_place) {
        if (sendcounts) {
            rc = check_counts(&k, sendcounts, sdispls, "send");
            if (!rc)
                rc = check_buf(&k, sendbuf, 1, sendtype, "the send buffer", &a.stype);
        } else {
            rc = check_counted_buf(&k, sendbuf, sendcount, sendtype, "the send buffer", &a.stype);
            a.scount = (size_t)sendcount;
        }
    }
    if (!rc) {
        if (recvcounts) {
            rc = check_counts(&k, recvcounts, rdispls, "receive");
            if (!rc)
                rc = check_buf(&k, recvbuf, 1, recvtype, "the receive buffer", &a.rtype);
        } else {
            rc =
                check_counted_buf(&k, recvbuf, recvcount, recvtype, "the receive buffer", &a.rtype);
            a.rcount = (size_t)recvcount;
        }
    }
    return rc ? rc : run(&k, kind, &a, request, persistent);
}

/* One datatype per peer: every one checked where its count is positive. */
static int check_types(const struct call *k, const int *counts, const int *displs,
                       const MPI_Datatype *types, const char *what, struct loom_type **out)
{
    int rc = check_counts(k, counts, displs, what);
    if (rc)
        return rc;
    if (!types)
        return loom_mpi_err(k->comm, MPI_ERR_ARG, k->fn, "the %s datatypes are NULL", what);
    for (int i = 0; i < k->size; i++) {
        char which[64];
        snprintf(which, sizeof which, "%s datatype for rank %d", what, i);
        if ((rc = check_type(k, types[i], which, &out[i])))
            return rc;
    }
    return MPI_SUCCESS;
}

/* The reductions' arguments (the call begun): count x datatype on both
 * sides, one op; rooted: only the root's receive buffer is significant. */
static int reduction(struct call *k, const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, int root, bool rooted,
                     struct loom_coll_args *a)
{
    int rc = rooted ? check_root(k, root) : MPI_SUCCESS;
    if (rc)
        return rc;
    bool recv_significant = !rooted || is_root(k, root);
    /* Intercommunicators: only the root's group's other members send
     * nothing; nothing is in place. */
    bool send_significant = !rooted || !k->inter || root >= 0;
    a->root = rooted ? root : 0;
    a->in_place = !k->inter && recv_significant && sendbuf == MPI_IN_PLACE;
    a->sbuf = sendbuf;
    a->rbuf = recvbuf;
    a->rcount = a->scount = (size_t)count;
    rc = check_count(k, count, "count");
    if (!rc)
        rc = check_type(k, datatype, "the datatype", &a->rtype);
    if (rc)
        return rc;
    a->stype = a->rtype;
    if (!a->in_place && send_significant)
        rc = check_ptr(k, sendbuf, count, a->rtype, "the send buffer");
    if (!rc && recv_significant)
        rc = check_ptr(k, recvbuf, count, a->rtype, "the receive buffer");
    if (!rc)
        rc = check_op(k, op, a->rtype, &a->op);
    if (!rc && recv_significant && send_significant && !a->in_place && count > 0 &&
        sendbuf == recvbuf && a->rtype->size > 0)
        rc = loom_mpi_err(k->comm, MPI_ERR_BUFFER, k->fn,
                          "the send and receive buffers are the same (use MPI_IN_PLACE)");
    return rc;
}

static int alltoallw(const char *fn, const void *sendbuf, const int sendcounts[],
                     const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                     const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                     MPI_Comm comm, MPI_Request *request, bool persistent)
{
    struct call k;
    int rc = begin(&k, fn, comm);
    if (rc)
        return rc;
    struct loom_type **types = malloc(2 * (size_t)k.size * sizeof *types);
    if (!types)
        return loom_mpi_err(comm, MPI_ERR_NO_MEM, k.fn, "out of memory");
    struct loom_coll_args a = {.sbuf = sendbuf,
                               .rbuf = recvbuf,
                               .scounts = sendcounts,
                               .sdispls = sdispls,
                               .rcounts = recvcounts,
                               .rdispls = rdispls,
                               .stypes = types,
                               .rtypes = types + k.size,
                               .in_place = sendbuf == MPI_IN_PLACE};
    if (!a.in_place)
        rc = check_types(&k, sendcounts, sdispls, sendtypes, "send", types);
    else
        a.stypes = NULL;
    if (!rc)
        rc = check_types(&k, recvcounts, rdispls, recvtypes, "receive", types + k.size);
    if (!rc)
        rc = run(&k, LOOM_COLL_ALLTOALLW, &a, request,
                 persistent); /* a nonblocking call copies types */
    free(types);
    return rc;
}

/* The reductions but Reduce_scatter: count x datatype on both sides, one op. */
static int reduce_like(const char *fn, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype datatype, MPI_Op op, int root, bool rooted, MPI_Comm comm,
                       enum loom_coll_kind kind, MPI_Request *request, bool persistent)
{
    struct call k;
    struct loom_coll_args a = {0};
    int rc = begin(&k, fn, comm);
    if (!rc && k.inter && (kind == LOOM_COLL_SCAN || kind == LOOM_COLL_EXSCAN))
        return loom_mpi_intra_only(comm, fn);
    if (!rc)
        rc = reduction(&k, sendbuf, recvbuf, count, datatype, op, root, rooted, &a);
    return rc ? rc : run(&k, kind, &a, request, persistent);
}

static int reduce_scatter(const char *fn, const void *sendbuf, void *recvbuf,
                          const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                          MPI_Request *request, bool persistent)
{
    struct call k;
    int rc = begin(&k, fn, comm);
    if (rc)
        return rc;
    if (!recvcounts)
        return loom_mpi_err(comm, MPI_ERR_ARG, k.fn, "recvcounts is NULL");
    /* recvcounts: one per member of the local group (which receives). */
    int nrecv = k.c->sh->size;
    for (int i = 0; i < nrecv; i++)
        if (recvcounts[i] < 0)
            return loom_mpi_err(comm, MPI_ERR_COUNT, k.fn,
                                "receive count %d (for rank %d) is negative", recvcounts[i], i);
    struct loom_coll_args a = {0};
    rc = reduction(&k, sendbuf, recvbuf, recvcounts[k.c->rank], datatype, op, 0, false, &a);
    a.rcounts = recvcounts;
    return rc ? rc : run(&k, LOOM_COLL_REDUCE_SCATTER, &a, request, persistent);
}

/* Each collective twice: MPI_<coll> (blocking) and MPI_I<coll> (a request). */
int PMPI_Barrier(MPI_Comm comm)
{
    return barrier("MPI_Barrier", comm, NULL, false);
}
LOOM_MPI_ALIAS(Barrier);

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Ibarrier", "request is NULL");
    return barrier("MPI_Ibarrier", comm, request, false);
}
LOOM_MPI_ALIAS(Ibarrier);

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    int rc = try_small("MPI_Bcast", comm, LOOM_COLL_BCAST, NULL, buffer, count, datatype,
                       MPI_OP_NULL, root);
    if (rc != LOOM_COLL_GENERAL)
        return rc;
    return bcast("MPI_Bcast", buffer, count, datatype, root, comm, NULL, false);
}
LOOM_MPI_ALIAS(Bcast);

int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Ibcast", "request is NULL");
    return bcast("MPI_Ibcast", buffer, count, datatype, root, comm, request, false);
}
LOOM_MPI_ALIAS(Ibcast);

int PMPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int rc = try_small_blocks("MPI_Gather", comm, LOOM_COLL_GATHER, sendbuf, sendcount, sendtype,
                              recvbuf, recvcount, recvtype, root);
    if (rc != LOOM_COLL_GENERAL)
        return rc;
    return gather("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL,
                  recvtype, root, comm, LOOM_COLL_GATHER, NULL, false);
}
LOOM_MPI_ALIAS(Gather);

int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Igather", "request is NULL");
    return gather("MPI_Igather", sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL, NULL,
                  recvtype, root, comm, LOOM_COLL_GATHER, request, false);
}
LOOM_MPI_ALIAS(Igather);

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    return gather("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs,
                  recvtype, root, comm, LOOM_COLL_GATHERV, NULL, false);
}
LOOM_MPI_ALIAS(Gatherv);

int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Igatherv", "request is NULL");
    return gather("MPI_Igatherv", sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs,
                  recvtype, root, comm, LOOM_COLL_GATHERV, request, false);
}
LOOM_MPI_ALIAS(Igatherv);

int PMPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int rc = try_small_blocks("MPI_Scatter", comm, LOOM_COLL_SCATTER, sendbuf, sendcount, sendtype,
                              recvbuf, recvcount, recvtype, root);
    if (rc != LOOM_COLL_GENERAL)
        return rc;
    return scatter("MPI_Scatter", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount,
                   recvtype, root, comm, LOOM_COLL_SCATTER, NULL, false);
}
LOOM_MPI_ALIAS(Scatter);

int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Iscatter", "request is NULL");
    return scatter("MPI_Iscatter", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount,
                   recvtype, root, comm, LOOM_COLL_SCATTER, request, false);
}
LOOM_MPI_ALIAS(Iscatter);

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    return scatter("MPI_Scatterv", sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount,
                   recvtype, root, comm, LOOM_COLL_SCATTERV, NULL, false);
}
LOOM_MPI_ALIAS(Scatterv);

int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Iscatterv", "request is NULL");
    return scatter("MPI_Iscatterv", sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount,
                   recvtype, root, comm, LOOM_COLL_SCATTERV, request, false);
}
LOOM_MPI_ALIAS(Iscatterv);

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc = try_small_blocks("MPI_Allgather", comm, LOOM_COLL_ALLGATHER, sendbuf, sendcount,
                              sendtype, recvbuf, recvcount, recvtype, 0);
    if (rc != LOOM_COLL_GENERAL)
        return rc;
    return all("MPI_Allgather", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, NULL,
               NULL, recvtype, comm, LOOM_COLL_ALLGATHER, NULL, false);
}
LOOM_MPI_ALIAS(Allgather);

int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Iallgather", "request is NULL");
    return all("MPI_Iallgather", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, NULL,
               NULL, recvtype, comm, LOOM_COLL_ALLGATHER, request, false);
}
LOOM_MPI_ALIAS(Iallgather);

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    return all("MPI_Allgatherv", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, 0, recvcounts,
               displs, recvtype, comm, LOOM_COLL_ALLGATHERV, NULL, false);
}
LOOM_MPI_ALIAS(Allgatherv);

int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Iallgatherv", "request is NULL");
    return all("MPI_Iallgatherv", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, 0, recvcounts,
               displs, recvtype, comm, LOOM_COLL_ALLGATHERV, request, false);
}
LOOM_MPI_ALIAS(Iallgatherv);

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int rc = try_small_blocks("MPI_Alltoall", comm, LOOM_COLL_ALLTOALL, sendbuf, sendcount,
                              sendtype, recvbuf, recvcount, recvtype, 0);
    if (rc != LOOM_COLL_GENERAL)
        return rc;
    return all("MPI_Alltoall", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, NULL,
               NULL, recvtype, comm, LOOM_COLL_ALLTOALL, NULL, false);
}
LOOM_MPI_ALIAS(Alltoall);

int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Ialltoall", "request is NULL");
    return all("MPI_Ialltoall", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, recvcount, NULL,
               NULL, recvtype, comm, LOOM_COLL_ALLTOALL, request, false);
}
LOOM_MPI_ALIAS(Ialltoall);

int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return all("MPI_Alltoallv", sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts,
               rdispls, recvtype, comm, LOOM_COLL_ALLTOALLV, NULL, false);
}
LOOM_MPI_ALIAS(Alltoallv);

int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Ialltoallv", "request is NULL");
    return all("MPI_Ialltoallv", sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts,
               rdispls, recvtype, comm, LOOM_COLL_ALLTOALLV, request, false);
}
LOOM_MPI_ALIAS(Ialltoallv);

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return alltoallw("MPI_Alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                     rdispls, recvtypes, comm, NULL, false);
}
LOOM_MPI_ALIAS(Alltoallw);

int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Ialltoallw", "request is NULL");
    return alltoallw("MPI_Ialltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                     rdispls, recvtypes, comm, request, false);
}
LOOM_MPI_ALIAS(Ialltoallw);

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm)
{
    int rc = try_small("MPI_Reduce", comm, LOOM_COLL_REDUCE, sendbuf, recvbuf, count, datatype, op,
                       root);
    if (rc != LOOM_COLL_GENERAL)
        return rc;
    return reduce_like("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, true, comm,
                       LOOM_COLL_REDUCE, NULL, false);
}
LOOM_MPI_ALIAS(Reduce);

int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Ireduce", "request is NULL");
    return reduce_like("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, true, comm,
                       LOOM_COLL_REDUCE, request, false);
}
LOOM_MPI_ALIAS(Ireduce);

int PMPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm)
{
    int rc = try_small("MPI_Allreduce", comm, LOOM_COLL_ALLREDUCE, sendbuf, recvbuf, count,
                       datatype, op, 0);
    if (rc != LOOM_COLL_GENERAL)
        return rc;
    return reduce_like("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, 0, false, comm,
                       LOOM_COLL_ALLREDUCE, NULL, false);
}
LOOM_MPI_ALIAS(Allreduce);

int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Iallreduce", "request is NULL");
    return reduce_like("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, 0, false, comm,
                       LOOM_COLL_ALLREDUCE, request, false);
}
LOOM_MPI_ALIAS(Iallreduce);

int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op, comm,
                          NULL, false);
}
LOOM_MPI_ALIAS(Reduce_scatter);

int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Ireduce_scatter", "request is NULL");
    return reduce_scatter("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op, comm,
                          request, false);
}
LOOM_MPI_ALIAS(Ireduce_scatter);

int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_like("MPI_Reduce_scatter_block", sendbuf, recvbuf, recvcount, datatype, op, 0,
                       false, comm, LOOM_COLL_REDUCE_SCATTER_BLOCK, NULL, false);
}
LOOM_MPI_ALIAS(Reduce_scatter_block);

int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Ireduce_scatter_block", "request is NULL");
    return reduce_like("MPI_Ireduce_scatter_block", sendbuf, recvbuf, recvcount, datatype, op, 0,
                       false, comm, LOOM_COLL_REDUCE_SCATTER_BLOCK, request, false);
}
LOOM_MPI_ALIAS(Ireduce_scatter_block);

int PMPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm)
{
    return reduce_like("MPI_Scan", sendbuf, recvbuf, count, datatype, op, 0, false, comm,
                       LOOM_COLL_SCAN, NULL, false);
}
LOOM_MPI_ALIAS(Scan);

int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Iscan", "request is NULL");
    return reduce_like("MPI_Iscan", sendbuf, recvbuf, count, datatype, op, 0, false, comm,
                       LOOM_COLL_SCAN, request, false);
}
LOOM_MPI_ALIAS(Iscan);

int PMPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm)
{
    return reduce_like("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, 0, false, comm,
                       LOOM_COLL_EXSCAN, NULL, false);
}
LOOM_MPI_ALIAS(Exscan);

int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, "MPI_Iexscan", "request is NULL");
    return reduce_like("MPI_Iexscan", sendbuf, recvbuf, count, datatype, op, 0, false, comm,
                       LOOM_COLL_EXSCAN, request, false);
}
LOOM_MPI_ALIAS(Iexscan);

/* ---- persistent collectives (MPI-4.1 6.13) ------------------------------ */

/* The checks every MPI_<Coll>_init adds to its collective's: info and
 * request. */
static int init_args(const char *fn, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "request is NULL");
    if (info != MPI_INFO_NULL && !loom_info_lookup(info))
        return loom_mpi_err(comm, MPI_ERR_INFO, fn, "0x%x is not a valid info object",
                            (unsigned)info);
    return MPI_SUCCESS;
}

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = init_args("MPI_Barrier_init", comm, info, request);
    return rc ? rc : barrier("MPI_Barrier_init", comm, request, true);
}
LOOM_MPI_ALIAS(Barrier_init);

int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request)
{
    int rc = init_args("MPI_Bcast_init", comm, info, request);
    return rc ? rc : bcast("MPI_Bcast_init", buffer, count, datatype, root, comm, request, true);
}
LOOM_MPI_ALIAS(Bcast_init);

int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request)
{
    int rc = init_args("MPI_Gather_init", comm, info, request);
    return rc ? rc
              : gather("MPI_Gather_init", sendbuf, sendcount, sendtype, recvbuf, recvcount, NULL,
                       NULL, recvtype, root, comm, LOOM_COLL_GATHER, request, true);
}
LOOM_MPI_ALIAS(Gather_init);

int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = init_args("MPI_Gatherv_init", comm, info, request);
    return rc ? rc
              : gather("MPI_Gatherv_init", sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts,
                       displs, recvtype, root, comm, LOOM_COLL_GATHERV, request, true);
}
LOOM_MPI_ALIAS(Gatherv_init);

int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    int rc = init_args("MPI_Scatter_init", comm, info, request);
    return rc ? rc
              : scatter("MPI_Scatter_init", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                        recvcount, recvtype, root, comm, LOOM_COLL_SCATTER, request, true);
}
LOOM_MPI_ALIAS(Scatter_init);

int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = init_args("MPI_Scatterv_init", comm, info, request);
    return rc ? rc
              : scatter("MPI_Scatterv_init", sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                        recvcount, recvtype, root, comm, LOOM_COLL_SCATTERV, request, true);
}
LOOM_MPI_ALIAS(Scatterv_init);

int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    int rc = init_args("MPI_Allgather_init", comm, info, request);
    return rc ? rc
              : all("MPI_Allgather_init", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                    recvcount, NULL, NULL, recvtype, comm, LOOM_COLL_ALLGATHER, request, true);
}
LOOM_MPI_ALIAS(Allgather_init);

int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = init_args("MPI_Allgatherv_init", comm, info, request);
    return rc ? rc
              : all("MPI_Allgatherv_init", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf, 0,
                    recvcounts, displs, recvtype, comm, LOOM_COLL_ALLGATHERV, request, true);
}
LOOM_MPI_ALIAS(Allgatherv_init);

int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    int rc = init_args("MPI_Alltoall_init", comm, info, request);
    return rc ? rc
              : all("MPI_Alltoall_init", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                    recvcount, NULL, NULL, recvtype, comm, LOOM_COLL_ALLTOALL, request, true);
}
LOOM_MPI_ALIAS(Alltoall_init);

int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    int rc = init_args("MPI_Alltoallv_init", comm, info, request);
    return rc ? rc
              : all("MPI_Alltoallv_init", sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0,
                    recvcounts, rdispls, recvtype, comm, LOOM_COLL_ALLTOALLV, request, true);
}
LOOM_MPI_ALIAS(Alltoallv_init);

int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    int rc = init_args("MPI_Alltoallw_init", comm, info, request);
    return rc ? rc
              : alltoallw("MPI_Alltoallw_init", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                          recvcounts, rdispls, recvtypes, comm, request, true);
}
LOOM_MPI_ALIAS(Alltoallw_init);

int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = init_args("MPI_Reduce_init", comm, info, request);
    return rc ? rc
              : reduce_like("MPI_Reduce_init", sendbuf, recvbuf, count, datatype, op, root, true,
                            comm, LOOM_COLL_REDUCE, request, true);
}
LOOM_MPI_ALIAS(Reduce_init);

int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = init_args("MPI_Allreduce_init", comm, info, request);
    return rc ? rc
              : reduce_like("MPI_Allreduce_init", sendbuf, recvbuf, count, datatype, op, 0, false,
                            comm, LOOM_COLL_ALLREDUCE, request, true);
}
LOOM_MPI_ALIAS(Allreduce_init);

int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request)
{
    int rc = init_args("MPI_Reduce_scatter_init", comm, info, request);
    return rc ? rc
              : reduce_scatter("MPI_Reduce_scatter_init", sendbuf, recvbuf, recvcounts, datatype,
                               op, comm, request, true);
}
LOOM_MPI_ALIAS(Reduce_scatter_init);

int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    int rc = init_args("MPI_Reduce_scatter_block_init", comm, info, request);
    return rc ? rc
              : reduce_like("MPI_Reduce_scatter_block_init", sendbuf, recvbuf, recvcount, datatype,
                            op, 0, false, comm, LOOM_COLL_REDUCE_SCATTER_BLOCK, request, true);
}
LOOM_MPI_ALIAS(Reduce_scatter_block_init);

int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = init_args("MPI_Scan_init", comm, info, request);
    return rc ? rc
              : reduce_like("MPI_Scan_init", sendbuf, recvbuf, count, datatype, op, 0, false, comm,
                            LOOM_COLL_SCAN, request, true);
}
LOOM_MPI_ALIAS(Scan_init);

int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int rc = init_args("MPI_Exscan_init", comm, info, request);
    return rc ? rc
              : reduce_like("MPI_Exscan_init", sendbuf, recvbuf, count, datatype, op, 0, false,
                            comm, LOOM_COLL_EXSCAN, request, true);
}
LOOM_MPI_ALIAS(Exscan_init);
