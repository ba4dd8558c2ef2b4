/*
 * Neighbourhood collectives (MPI-3.1 7.6, 7.7): MPI_Neighbor_allgather(v),
 * MPI_Neighbor_alltoall(v,w) and their MPI_Ineighbor_* forms, over Loom's
 * point-to-point layer.
 *
 * A call is one compound request (src/pt2pt: a generic request that the
 * last of its children completes): a receive from each in-neighbour, posted
 * first, then a send to each out-neighbour, all on the communicator's
 * collective context id (context_id + 1), which no user message uses, so
 * they never match user traffic. MPI_PROC_NULL neighbours (Cartesian
 * non-periodic edges) get no message and their receive blocks stay as they
 * were. Graphs send with one tag: the k-th message from a rank to another
 * matches the k-th receive posted for it, so repeated edges pair in edge
 * order, and calls (blocking or not) pair in the order every member makes
 * them. Cartesian grids tag a message with its direction (topo.h), since a
 * periodic dimension of size 1 or 2 makes both neighbours the same rank.
 * The blocking forms wait for the request (the rank parks in the
 * point-to-point wait); nothing is copied twice except what the
 * point-to-point protocols copy (small messages through eager cells).
 */
#include <stdlib.h>

#include "datatype/datatype.h"
#include "comm/comm_impl.h"
#include "mpi/mpi_impl.h"
#include "mpi/topo.h"
#include "pt2pt/p2p.h"

/* One block of a call: count x type at buf for one neighbour. */
struct block {
    void *buf;
    int count;
    struct loom_type *t;
};

struct ncall {
    const char *fn;
    MPI_Comm comm;
    struct loom_comm *c;
    int indeg, outdeg;
    int *in, *in_tag, *out, *out_tag; /* one allocation */
    struct block *rb, *sb;            /* [indeg], [outdeg]: another */
};

static int begin(struct ncall *k, const char *fn, MPI_Comm comm)
{
    *k = (struct ncall){.fn = fn, .comm = comm};
    int rc = loom_mpi_comm_enter(fn, comm, &k->c);
    if (rc)
        return rc;
    LOOM_MPI_INTRA_ONLY(k->c, comm, fn);
    const struct loom_topo *t = k->c->topo;
    if (!t)
        return loom_mpi_err(comm, MPI_ERR_TOPOLOGY, fn, "the communicator has no topology");
    loom_topo_degrees(t, k->c->rank, &k->indeg, &k->outdeg);
    k->in = malloc((2 * (size_t)(k->indeg + k->outdeg) + 1) * sizeof(int));
    if (!k->in)
        return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
    k->in_tag = k->in + k->indeg;
    k->out = k->in_tag + k->indeg;
    k->out_tag = k->out + k->outdeg;
    loom_topo_neighbors(t, k->c->rank, k->in, k->in_tag, k->out, k->out_tag);
    k->rb = malloc(((size_t)(k->indeg + k->outdeg) + 1) * sizeof *k->rb);
    if (!k->rb) {
        free(k->in);
        return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
    }
    k->sb = k->rb + k->indeg;
    return MPI_SUCCESS;
}

static void end(struct ncall *k)
{
    free(k->in);
    free(k->rb);
}

static int check_type(const struct ncall *k, MPI_Datatype type, const char *what,
                      struct loom_type **t_p)
{
    return loom_mpi_type_arg(k->comm, k->fn, type, what, t_p);
}

static int check_count(const struct ncall *k, int count, const char *what, int i)
{
    if (count < 0)
        return loom_mpi_err(k->comm, MPI_ERR_COUNT, k->fn, "%s count %d (block %d) is negative",
                            what, count, i);
    return MPI_SUCCESS;
}

static int check_buf(const struct ncall *k, const void *buf, const char *what)
{
    if (buf == MPI_IN_PLACE)
        return loom_mpi_err(k->comm, MPI_ERR_BUFFER, k->fn,
                            "%s: MPI_IN_PLACE is not allowed in a neighbourhood collective", what);
    return MPI_SUCCESS;
}

/* Byte address of block i: disp elements (or bytes when t is NULL). */
static void *at(const void *buf, MPI_Aint disp, const struct loom_type *t)
{
    return (char *)buf + disp * (t ? t->ub - t->lb : 1);
}

/* A child request of parent for one block. */
static loom_req *child(const struct ncall *k, const struct block *b, int peer, int tag,
                       enum loom_req_kind kind)
{
    loom_req *r = loom_req_alloc_rank(k->c->owner);
    if (!r)
        return NULL;
    r->kind = (uint8_t)kind;
    r->mode = LOOM_MODE_STANDARD;
    r->buf = b->buf;
    r->count = 0;
    r->type = b->t;
    loom_type_retain(b->t);
    r->bytes = (size_t)b->count * b->t->size;
    r->peer = peer;
    r->tag = tag;
    r->ctx = k->c->sh->context_id + 1;
    r->comm = k->c;
    r->active = true;
    return r;
}

/* Makes parent (a generic or a persistent neighbourhood request) a compound
 * request of the call's receives (k->rb) and sends (k->sb) and starts them;
 * when out of memory starts nothing, frees what it made and raises
 * MPI_ERR_NO_MEM. */
static int launch(const struct ncall *k, loom_req *parent)
{
    if (!loom_req_compound_init(parent, k->indeg + k->outdeg))
        return loom_mpi_err(k->comm, MPI_ERR_NO_MEM, k->fn, "out of memory for requests");
    /* The parent's child array, filled by loom_req_compound_add() below. */
    loom_req **reqs = parent->children;
    int n = 0;
    bool nomem = false;
    /* Allocate every child first, so that a failure starts nothing. */
    for (int i = 0; i < k->indeg && !nomem; i++)
        if (k->in[i] != MPI_PROC_NULL)
            nomem = !(reqs[n++] = child(k, &k->rb[i], k->in[i], k->in_tag[i], LOOM_REQ_RECV));
    int nrecv = n;
    for (int j = 0; j < k->outdeg && !nomem; j++)
        if (k->out[j] != MPI_PROC_NULL)
            nomem = !(reqs[n++] = child(k, &k->sb[j], k->out[j], k->out_tag[j], LOOM_REQ_SEND));
    if (nomem) {
        for (int i = 0; i < n - 1; i++) {
            atomic_store_explicit(&reqs[i]->done, 1, memory_order_relaxed);
            loom_req_free(reqs[i]);
        }
        free(parent->children);
        parent->children = NULL;
        parent->nchildren = 0;
        return loom_mpi_err(k->comm, MPI_ERR_NO_MEM, k->fn, "out of memory for requests");
    }
    for (int i = 0; i < n; i++)
        loom_req_compound_add(parent, reqs[i]); /* reqs[i] stays in place */
    for (int i = 0; i < nrecv; i++)
        loom_p2p_start_recv(reqs[i]);
    for (int i = nrecv; i < n; i++)
        loom_p2p_start_send(reqs[i], k->c->rank);
    loom_req_compound_release(parent);
    return MPI_SUCCESS;
}

/* Posts the call as one compound request; waits for it when request is
 * NULL. */
static int post(struct ncall *k, MPI_Request *request)
{
    loom_req *parent = loom_req_alloc_generic(k->c);
    if (!parent)
        return loom_mpi_err(k->comm, MPI_ERR_NO_MEM, k->fn, "out of memory for requests");
    int rc = launch(k, parent);
    if (rc) {
        atomic_store_explicit(&parent->done, 1, memory_order_relaxed);
        loom_req_free(parent);
        return rc;
    }
    if (request) {
        *request = parent;
        return MPI_SUCCESS;
    }
    loom_req_wait(parent);
    int err = parent->status_error;
    loom_req_free(parent);
    if (err)
        return loom_mpi_err(k->comm, err, k->fn,
                            "a neighbour sent more than its receive block holds");
    return MPI_SUCCESS;
}

/* ---- persistent calls (MPI_Neighbor_<coll>_init, MPI-4.1 8.7) ---- */

/* Keeps the checked call (its neighbour lists and blocks) in a persistent
 * request of kind LOOM_REQ_NBR, inactive; each MPI_Start launches it. */
static int save(struct ncall *k, MPI_Request *request)
{
    struct ncall *saved = malloc(sizeof *saved);
    loom_req *r = saved ? loom_req_alloc_rank(k->c->owner) : NULL;
    if (!r) {
        free(saved);
        return loom_mpi_err(k->comm, MPI_ERR_NO_MEM, k->fn, "out of memory for requests");
    }
    *saved = *k;
    k->in = NULL; /* the saved call owns the lists now */
    k->rb = NULL;
    for (int i = 0; i < saved->indeg; i++)
        loom_type_retain(saved->rb[i].t);
    for (int j = 0; j < saved->outdeg; j++)
        loom_type_retain(saved->sb[j].t);
    r->kind = LOOM_REQ_NBR;
    r->mode = LOOM_MODE_STANDARD;
    r->comm = k->c;
    r->peer = MPI_PROC_NULL;
    r->bytes = 0;
    r->persistent = true;
    r->active = false;
    r->ext = saved;
    atomic_store_explicit(&r->done, 1, memory_order_relaxed); /* inactive */
    *request = r;
    return MPI_SUCCESS;
}

/* The children of the previous start, all done. */
static void nbr_children_free(loom_req *r)
{
    for (int i = 0; i < r->nchildren; i++)
        loom_req_free(r->children[i]);
    free(r->children);
    r->children = NULL;
    r->nchildren = 0;
}

int loom_mpi_nbr_start(MPI_Request r, const char *fn)
{
    struct ncall *k = r->ext;
    nbr_children_free(r);
    r->status_error = MPI_SUCCESS;
    r->active = true;
    atomic_store_explicit(&r->done, 0, memory_order_relaxed);
    k->fn = fn;
    int rc = launch(k, r);
    if (rc) {
        r->active = false;
        atomic_store_explicit(&r->done, 1, memory_order_relaxed);
    }
    return rc;
}

void loom_mpi_nbr_free(MPI_Request r)
{
    struct ncall *k = r->ext;
    nbr_children_free(r);
    for (int i = 0; i < k->indeg; i++)
        loom_type_release(k->rb[i].t);
    for (int j = 0; j < k->outdeg; j++)
        loom_type_release(k->sb[j].t);
    free(k->in);
    free(k->rb);
    free(k);
    r->ext = NULL;
}

/* Neighbor_allgather(v): one send block for all; receive block i at
 * displs[i] x recvcounts[i] (vector) or i * recvcount elements. */
static int allgather(const char *fn, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                     void *recvbuf, bool vector, const int *recvcounts, int recvcount,
                     const int *displs, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request,
                     bool persistent)
{
    struct ncall k;
    int rc = begin(&k, fn, comm);
    if (rc)
        return rc;
    struct loom_type *st, *rt;
    if ((rc = check_count(&k, sendcount, "send", 0)) ||
        (rc = check_type(&k, sendtype, "send type", &st)) ||
        (rc = check_type(&k, recvtype, "receive type", &rt)) ||
        (rc = check_buf(&k, sendbuf, "sendbuf")) || (rc = check_buf(&k, recvbuf, "recvbuf")) ||
        (!vector && (rc = check_count(&k, recvcount, "receive", 0))))
        goto out;
    if (vector && k.indeg && (!recvcounts || !displs)) {
        rc = loom_mpi_err(comm, MPI_ERR_ARG, fn, "recvcounts or displs is NULL");
        goto out;
    }
    struct block *rb = k.rb, *sb = k.sb;
    for (int i = 0; i < k.indeg; i++) {
        int n = vector ? recvcounts[i] : recvcount;
        if ((rc = check_count(&k, n, "receive", i)))
            goto out;
        rb[i] = (struct block){at(recvbuf, vector ? displs[i] : (MPI_Aint)i * n, rt), n, rt};
    }
    for (int j = 0; j < k.outdeg; j++)
        sb[j] = (struct block){(void *)sendbuf, sendcount, st};
    rc = persistent ? save(&k, request) : post(&k, request);
out:
    end(&k);
    return rc;
}

/* Neighbor_alltoall(v,w): block j of the send buffer to out-neighbour j,
 * block i of the receive buffer from in-neighbour i. Counts and
 * displacements: arrays (v, w; w's displacements in bytes and one type per
 * block) or one count for all (displacement i * count). */
enum a2a_form { A2A_PLAIN, A2A_V, A2A_W };

struct a2a_side {
    const void *buf;
    const int *counts;         /* V, W */
    const int *displs;         /* V: in elements */
    const MPI_Aint *displs_w;  /* W: in bytes */
    const MPI_Datatype *types; /* W */
    int count;                 /* PLAIN */
    MPI_Datatype type;         /* PLAIN, V */
};

/* Fills the n blocks of one side (what: "send" or "receive"). */
static int side(const struct ncall *k, const char *what, enum a2a_form form, int n,
                const struct a2a_side *a, struct block *b)
{
    int rc = check_buf(k, a->buf, what[0] == 's' ? "sendbuf" : "recvbuf");
    if (rc)
        return rc;
    if (form != A2A_PLAIN && n &&
        (!a->counts || (form == A2A_V ? !a->displs : !a->displs_w || !a->types)))
        return loom_mpi_err(k->comm, MPI_ERR_ARG, k->fn,
                            "%s counts, displacements or types are NULL", what);
    struct loom_type *t1 = NULL;
    if (form != A2A_W && (rc = check_type(k, a->type, what, &t1)))
        return rc;
    if (form == A2A_PLAIN && (rc = check_count(k, a->count, what, 0)))
        return rc;
    for (int i = 0; i < n; i++) {
        int c = form == A2A_PLAIN ? a->count : a->counts[i];
        if ((rc = check_count(k, c, what, i)))
            return rc;
        struct loom_type *t = t1;
        if (form == A2A_W && (rc = check_type(k, a->types[i], what, &t)))
            return rc;
        void *p = form == A2A_W   ? at(a->buf, a->displs_w[i], NULL)
                  : form == A2A_V ? at(a->buf, a->displs[i], t)
                                  : at(a->buf, (MPI_Aint)i * c, t);
        b[i] = (struct block){p, c, t};
    }
    return MPI_SUCCESS;
}

static int alltoall(const char *fn, enum a2a_form form, const struct a2a_side *snd,
                    const struct a2a_side *rcv, MPI_Comm comm, MPI_Request *request,
                    bool persistent)
{
    struct ncall k;
    int rc = begin(&k, fn, comm);
    if (rc)
        return rc;
    if (!(rc = side(&k, "send", form, k.outdeg, snd, k.sb)) &&
        !(rc = side(&k, "receive", form, k.indeg, rcv, k.rb)))
        rc = persistent ? save(&k, request) : post(&k, request);
    end(&k);
    return rc;
}

static int need_request(MPI_Comm comm, const char *fn, MPI_Request *request)
{
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "request is NULL");
    return MPI_SUCCESS;
}

/* ---- entry points --------------------------------------------------------- */

int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather("MPI_Neighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, false, NULL,
                     recvcount, NULL, recvtype, comm, NULL, false);
}
LOOM_MPI_ALIAS(Neighbor_allgather);

int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    static const char fn[] = "MPI_Ineighbor_allgather";
    int rc = need_request(comm, fn, request);
    return rc ? rc
              : allgather(fn, sendbuf, sendcount, sendtype, recvbuf, false, NULL, recvcount, NULL,
                          recvtype, comm, request, false);
}
LOOM_MPI_ALIAS(Ineighbor_allgather);

int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    return allgather("MPI_Neighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf, true,
                     recvcounts, 0, displs, recvtype, comm, NULL, false);
}
LOOM_MPI_ALIAS(Neighbor_allgatherv);

int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Ineighbor_allgatherv";
    int rc = need_request(comm, fn, request);
    return rc ? rc
              : allgather(fn, sendbuf, sendcount, sendtype, recvbuf, true, recvcounts, 0, displs,
                          recvtype, comm, request, false);
}
LOOM_MPI_ALIAS(Ineighbor_allgatherv);

int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    struct a2a_side s = {.buf = sendbuf, .count = sendcount, .type = sendtype};
    struct a2a_side r = {.buf = recvbuf, .count = recvcount, .type = recvtype};
    return alltoall("MPI_Neighbor_alltoall", A2A_PLAIN, &s, &r, comm, NULL, false);
}
LOOM_MPI_ALIAS(Neighbor_alltoall);

int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    static const char fn[] = "MPI_Ineighbor_alltoall";
    struct a2a_side s = {.buf = sendbuf, .count = sendcount, .type = sendtype};
    struct a2a_side r = {.buf = recvbuf, .count = recvcount, .type = recvtype};
    int rc = need_request(comm, fn, request);
    return rc ? rc : alltoall(fn, A2A_PLAIN, &s, &r, comm, request, false);
}
LOOM_MPI_ALIAS(Ineighbor_alltoall);

int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    struct a2a_side s = {.buf = sendbuf, .counts = sendcounts, .displs = sdispls, .type = sendtype};
    struct a2a_side r = {.buf = recvbuf, .counts = recvcounts, .displs = rdispls, .type = recvtype};
    return alltoall("MPI_Neighbor_alltoallv", A2A_V, &s, &r, comm, NULL, false);
}
LOOM_MPI_ALIAS(Neighbor_alltoallv);

int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    static const char fn[] = "MPI_Ineighbor_alltoallv";
    struct a2a_side s = {.buf = sendbuf, .counts = sendcounts, .displs = sdispls, .type = sendtype};
    struct a2a_side r = {.buf = recvbuf, .counts = recvcounts, .displs = rdispls, .type = recvtype};
    int rc = need_request(comm, fn, request);
    return rc ? rc : alltoall(fn, A2A_V, &s, &r, comm, request, false);
}
LOOM_MPI_ALIAS(Ineighbor_alltoallv);

int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    struct a2a_side s = {
        .buf = sendbuf, .counts = sendcounts, .displs_w = sdispls, .types = sendtypes};
    struct a2a_side r = {
        .buf = recvbuf, .counts = recvcounts, .displs_w = rdispls, .types = recvtypes};
    return alltoall("MPI_Neighbor_alltoallw", A2A_W, &s, &r, comm, NULL, false);
}
LOOM_MPI_ALIAS(Neighbor_alltoallw);

int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request *request)
{
    static const char fn[] = "MPI_Ineighbor_alltoallw";
    struct a2a_side s = {
        .buf = sendbuf, .counts = sendcounts, .displs_w = sdispls, .types = sendtypes};
    struct a2a_side r = {
        .buf = recvbuf, .counts = recvcounts, .displs_w = rdispls, .types = recvtypes};
    int rc = need_request(comm, fn, request);
    return rc ? rc : alltoall(fn, A2A_W, &s, &r, comm, request, false);
}
LOOM_MPI_ALIAS(Ineighbor_alltoallw);

/* ---- persistent forms (MPI-4.1 8.7) --------------------------------------- */

/* The request and info arguments of an _init call. */
static int init_args(MPI_Comm comm, const char *fn, MPI_Info info, MPI_Request *request)
{
    int rc = need_request(comm, fn, request);
    if (rc)
        return rc;
    if (info != MPI_INFO_NULL && !loom_info_lookup(info))
        return loom_mpi_err(comm, MPI_ERR_INFO, fn, "0x%x is not a valid info object",
                            (unsigned)info);
    return MPI_SUCCESS;
}

int PMPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    static const char fn[] = "MPI_Neighbor_allgather_init";
    int rc = init_args(comm, fn, info, request);
    return rc ? rc
              : allgather(fn, sendbuf, sendcount, sendtype, recvbuf, false, NULL, recvcount, NULL,
                          recvtype, comm, request, true);
}
LOOM_MPI_ALIAS(Neighbor_allgather_init);

int PMPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    static const char fn[] = "MPI_Neighbor_allgatherv_init";
    int rc = init_args(comm, fn, info, request);
    return rc ? rc
              : allgather(fn, sendbuf, sendcount, sendtype, recvbuf, true, recvcounts, 0, displs,
                          recvtype, comm, request, true);
}
LOOM_MPI_ALIAS(Neighbor_allgatherv_init);

int PMPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    static const char fn[] = "MPI_Neighbor_alltoall_init";
    struct a2a_side s = {.buf = sendbuf, .count = sendcount, .type = sendtype};
    struct a2a_side r = {.buf = recvbuf, .count = recvcount, .type = recvtype};
    int rc = init_args(comm, fn, info, request);
    return rc ? rc : alltoall(fn, A2A_PLAIN, &s, &r, comm, request, true);
}
LOOM_MPI_ALIAS(Neighbor_alltoall_init);

int PMPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    static const char fn[] = "MPI_Neighbor_alltoallv_init";
    struct a2a_side s = {.buf = sendbuf, .counts = sendcounts, .displs = sdispls, .type = sendtype};
    struct a2a_side r = {.buf = recvbuf, .counts = recvcounts, .displs = rdispls, .type = recvtype};
    int rc = init_args(comm, fn, info, request);
    return rc ? rc : alltoall(fn, A2A_V, &s, &r, comm, request, true);
}
LOOM_MPI_ALIAS(Neighbor_alltoallv_init);

int PMPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                 const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    static const char fn[] = "MPI_Neighbor_alltoallw_init";
    struct a2a_side s = {
        .buf = sendbuf, .counts = sendcounts, .displs_w = sdispls, .types = sendtypes};
    struct a2a_side r = {
        .buf = recvbuf, .counts = recvcounts, .displs_w = rdispls, .types = recvtypes};
    int rc = init_args(comm, fn, info, request);
    return rc ? rc : alltoall(fn, A2A_W, &s, &r, comm, request, true);
}
LOOM_MPI_ALIAS(Neighbor_alltoallw_init);
