/*
 * Partitioned point-to-point entry points (MPI-4.1 chapter 4): argument
 * checks, then the channel in src/pt2pt/part.h. The requests are persistent
 * (LOOM_REQ_PART): MPI_Start, MPI_Startall, the wait and test calls and
 * MPI_Request_free of src/mpi/pt2pt.c take them like any other.
 */
#include <limits.h>
#include <stdint.h>

#include "comm/comm.h"
#include "comm/comm_impl.h"
#include "datatype/datatype.h"
#include "mpi/mpi_impl.h"
#include "pt2pt/p2p.h"
#include "pt2pt/part.h"

/* The checks of MPI_Psend_init and MPI_Precv_init (peer: dest or source). */
static int check_init(const char *fn, bool send, const void *buf, int partitions, MPI_Count count,
                      MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request, struct loom_comm **c_p, struct loom_type **t_p)
{
    int rc = loom_mpi_comm_enter(fn, comm, c_p);
    if (rc)
        return rc;
    struct loom_comm *c = *c_p;
    if (!request)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "request is NULL");
    if (partitions <= 0)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn,
                            "partitions = %d: a partitioned operation has at least one partition",
                            partitions);
    if (count < 0)
        return loom_mpi_err(comm, MPI_ERR_COUNT, fn, "count %lld is negative", (long long)count);
    if ((rc = loom_mpi_type_arg(comm, fn, datatype, "datatype", t_p)))
        return rc;
    struct loom_type *t = *t_p;
    if (t->size && (unsigned long long)count > SIZE_MAX / t->size / (size_t)partitions)
        return loom_mpi_err(comm, MPI_ERR_COUNT, fn,
                            "%d partitions of %lld elements of %zu bytes do not fit in memory",
                            partitions, (long long)count, t->size);
    if (!buf && count > 0 && t->size > 0 && t->true_lb == 0)
        return loom_mpi_err(comm, MPI_ERR_BUFFER, fn,
                            "buffer is NULL for %lld elements per partition", (long long)count);
    if (peer == MPI_ANY_SOURCE && !send)
        return loom_mpi_err(
            comm, MPI_ERR_RANK, fn,
            "a partitioned receive names its source: MPI_ANY_SOURCE is not allowed");
    if (peer != MPI_PROC_NULL && (peer < 0 || peer >= c->sh->size))
        return loom_mpi_err(comm, MPI_ERR_RANK, fn, "%s %d is not a rank of a communicator of %d",
                            send ? "dest" : "source", peer, c->sh->size);
    if (tag == MPI_ANY_TAG && !send)
        return loom_mpi_err(comm, MPI_ERR_TAG, fn,
                            "a partitioned receive names its tag: MPI_ANY_TAG is not allowed");
    if (tag < 0)
        return loom_mpi_err(comm, MPI_ERR_TAG, fn, "tag %d is negative", tag);
    if (info != MPI_INFO_NULL && !loom_info_lookup(info))
        return loom_mpi_err(comm, MPI_ERR_INFO, fn, "0x%x is not a valid info object",
                            (unsigned)info);
    return MPI_SUCCESS;
}

static int part_init(const char *fn, bool send, void *buf, int partitions, MPI_Count count,
                     MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request)
{
    struct loom_comm *c = NULL;
    struct loom_type *t = NULL;
    int rc = check_init(fn, send, buf, partitions, count, datatype, peer, tag, comm, info, request,
                        &c, &t);
    if (rc)
        return rc;
    loom_req *r = loom_req_alloc_rank(c->owner);
    if (!r)
        return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory for requests");
    r->kind = LOOM_REQ_PART;
    r->mode = LOOM_MODE_STANDARD;
    r->buf = buf;
    r->peer = peer;
    r->tag = tag;
    r->ctx = c->sh->context_id;
    r->comm = c;
    r->bytes = (size_t)count * t->size * (size_t)partitions;
    r->persistent = true;
    r->active = false;
    r->ext = NULL;
    atomic_store_explicit(&r->done, 1, memory_order_relaxed); /* inactive */
    int other = peer == MPI_PROC_NULL ? -1 : loom_comm_world_rank(c, peer);
    struct loom_part_args a = {
        .buf = buf,
        .type = t,
        .count = (size_t)count,
        .partitions = partitions,
        .ctx = c->sh->context_id,
        .sender = send ? c->owner : other,
        .receiver = send ? other : c->owner,
        .sender_rank = send ? c->rank : peer,
        .tag = tag,
    };
    if (loom_part_init(r, send, &a)) {
        loom_req_free(r);
        return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory for the partitions");
    }
    *request = r;
    return MPI_SUCCESS;
}

int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return part_init("MPI_Psend_init", true, (void *)buf, partitions, count, datatype, dest, tag,
                     comm, info, request);
}
LOOM_MPI_ALIAS(Psend_init);

int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                    int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return part_init("MPI_Precv_init", false, buf, partitions, count, datatype, source, tag, comm,
                     info, request);
}
LOOM_MPI_ALIAS(Precv_init);

/* A partitioned request of the caller: a send side (send) or a receive side. */
static int part_req(const char *fn, MPI_Request req, bool send)
{
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (req == MPI_REQUEST_NULL)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, fn, "the request is MPI_REQUEST_NULL");
    if (req->magic != LOOM_REQ_MAGIC)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, fn, "invalid or freed request");
    if (req->owner != loom_rank_self()->rank)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_REQUEST, fn, "the request belongs to rank %d",
                            req->owner);
    if (req->kind != LOOM_REQ_PART || loom_part_is_send(req) != send)
        return loom_mpi_err(req->comm->handle, MPI_ERR_REQUEST, fn,
                            "the request is not a partitioned %s request (%s)",
                            send ? "send" : "receive", send ? "MPI_Psend_init" : "MPI_Precv_init");
    return MPI_SUCCESS;
}

static int check_partition(const char *fn, MPI_Request req, int i)
{
    int n = loom_part_partitions(req);
    if (i < 0 || i >= n)
        return loom_mpi_err(req->comm->handle, MPI_ERR_ARG, fn,
                            "partition %d is not in [0, %d) of the request", i, n);
    return MPI_SUCCESS;
}

/* Checks a send request for the MPI_Pready calls: partitioned, active. */
static int ready_req(const char *fn, MPI_Request req)
{
    int rc = part_req(fn, req, true);
    if (rc)
        return rc;
    if (!req->active)
        return loom_mpi_err(req->comm->handle, MPI_ERR_REQUEST, fn,
                            "the request is inactive (MPI_Start it first)");
    return MPI_SUCCESS;
}

static int ready_one(const char *fn, MPI_Request req, int i)
{
    if (loom_part_ready(req, i))
        return loom_mpi_err(req->comm->handle, MPI_ERR_ARG, fn,
                            "partition %d is ready already in this round", i);
    return MPI_SUCCESS;
}

int PMPI_Pready(int partition, MPI_Request request)
{
    const char *fn = "MPI_Pready";
    int rc = ready_req(fn, request);
    if (rc || (rc = check_partition(fn, request, partition)))
        return rc;
    return ready_one(fn, request, partition);
}
LOOM_MPI_ALIAS(Pready);

int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    const char *fn = "MPI_Pready_range";
    int rc = ready_req(fn, request);
    if (rc || (rc = check_partition(fn, request, partition_low)) ||
        (rc = check_partition(fn, request, partition_high)))
        return rc;
    if (partition_low > partition_high)
        return loom_mpi_err(request->comm->handle, MPI_ERR_ARG, fn,
                            "partition_low %d is above partition_high %d", partition_low,
                            partition_high);
    for (int i = partition_low; i <= partition_high; i++)
        if ((rc = ready_one(fn, request, i)))
            return rc;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Pready_range);

int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    const char *fn = "MPI_Pready_list";
    int rc = ready_req(fn, request);
    if (rc)
        return rc;
    if (length < 0)
        return loom_mpi_err(request->comm->handle, MPI_ERR_ARG, fn, "length %d is negative",
                            length);
    if (length > 0 && !array_of_partitions)
        return loom_mpi_err(request->comm->handle, MPI_ERR_ARG, fn, "array_of_partitions is NULL");
    /* Every index is checked before any partition is marked. */
    for (int k = 0; k < length; k++)
        if ((rc = check_partition(fn, request, array_of_partitions[k])))
            return rc;
    for (int k = 0; k < length; k++)
        if ((rc = ready_one(fn, request, array_of_partitions[k])))
            return rc;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Pready_list);

int PMPI_Parrived(MPI_Request request, int partition, int *flag)
{
    const char *fn = "MPI_Parrived";
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (!flag)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, fn, "flag is NULL");
    /* A null or inactive request: flag is true (MPI-4.1 4.2.4). */
    if (request == MPI_REQUEST_NULL || (request->magic == LOOM_REQ_MAGIC && request->persistent &&
                                        !request->active && request->kind == LOOM_REQ_PART)) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    if ((rc = part_req(fn, request, false)) || (rc = check_partition(fn, request, partition)))
        return rc;
    *flag = loom_part_arrived(request, partition);
    if (!*flag)
        loom_ult_yield(); /* the sender may share this worker */
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Parrived);
