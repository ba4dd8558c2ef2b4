/*
 * Generalized requests (MPI_Grequest_start/complete) with their query, free
 * and cancel callbacks through MPI_Wait, MPI_Test, MPI_Waitall, MPI_Waitany,
 * MPI_Testsome, MPI_Request_get_status, MPI_Cancel and MPI_Request_free;
 * MPI_Status_set_elements(_x) and MPI_Status_set_cancelled; and MPI-4.1's
 * MPI_Request_get_status_all/any/some, which leave the requests alone.
 *
 * Validated with Open MPI 4.1 (passes) and MPICH 4.0.2, except MPI-4.1's
 * MPI_Request_get_status_all/any/some, which neither has (built only with
 * Loom's mpi.h, LOOM_MPI_H). MPICH 4.0.2 fails three parts, against the
 * standard and Open MPI: it does not run the free function at
 * MPI_Request_free of a completed generalized request, it turns a query
 * function's error into MPI_ERR_OTHER, and its MPI_Status_set_elements counts
 * whole datatype elements instead of basic elements.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

static int rank, size;

struct op {
    int queried, freed, cancelled, cancel_complete;
    int query_rc, free_rc;
    int elements; /* what query sets, of MPI_INT */
};

static int query_fn(void *extra, MPI_Status *st)
{
    struct op *o = extra;
    o->queried++;
    MPI_Status_set_elements(st, MPI_INT, o->elements);
    MPI_Status_set_cancelled(st, o->cancelled > 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return o->query_rc;
}

static int free_fn(void *extra)
{
    struct op *o = extra;
    o->freed++;
    return o->free_rc;
}

static int cancel_fn(void *extra, int complete)
{
    struct op *o = extra;
    o->cancelled++;
    o->cancel_complete = complete;
    return MPI_SUCCESS;
}

static MPI_Request start(struct op *o, int elements)
{
    memset(o, 0, sizeof *o);
    o->elements = elements;
    MPI_Request r = MPI_REQUEST_NULL;
    CHECK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, o, &r) == MPI_SUCCESS);
    CHECK(r != MPI_REQUEST_NULL);
    return r;
}

static void basics(void)
{
    struct op o;
    MPI_Status st;
    int flag = -1, cnt = -1;

    /* Complete, then wait: query then free, once each. */
    MPI_Request r = start(&o, 5);
    MPI_Grequest_complete(r);
    CHECK(MPI_Wait(&r, &st) == MPI_SUCCESS);
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_EQ(o.queried, 1);
    CHECK_EQ(o.freed, 1);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK_EQ(cnt, 5);
    CHECK_EQ(st.MPI_SOURCE, MPI_UNDEFINED);
    MPI_Test_cancelled(&st, &flag);
    CHECK_EQ(flag, 0);

    /* Test before and after completion; Request_get_status queries without
     * freeing. */
    r = start(&o, 2);
    CHECK(MPI_Test(&r, &flag, &st) == MPI_SUCCESS);
    CHECK_EQ(flag, 0);
    CHECK(MPI_Request_get_status(r, &flag, &st) == MPI_SUCCESS && !flag);
    CHECK_EQ(o.queried, 0);
    MPI_Grequest_complete(r);
    CHECK(MPI_Request_get_status(r, &flag, &st) == MPI_SUCCESS && flag);
    CHECK_EQ(o.queried, 1);
    CHECK_EQ(o.freed, 0);
    CHECK(r != MPI_REQUEST_NULL);
    CHECK(MPI_Test(&r, &flag, &st) == MPI_SUCCESS && flag);
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_EQ(o.queried, 2);
    CHECK_EQ(o.freed, 1);

    /* Cancel before completion: the callback hears complete = false. */
    r = start(&o, 0);
    CHECK(MPI_Cancel(&r) == MPI_SUCCESS);
    CHECK_EQ(o.cancelled, 1);
    CHECK_EQ(o.cancel_complete, 0);
    MPI_Grequest_complete(r);
    MPI_Wait(&r, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK_EQ(flag, 1);
    /* ... and after: complete = true. */
    r = start(&o, 0);
    MPI_Grequest_complete(r);
    MPI_Cancel(&r);
    CHECK_EQ(o.cancel_complete, 1);
    MPI_Wait(&r, MPI_STATUS_IGNORE);

    /* Freed before completion: MPI_Grequest_complete runs the free function;
     * no query. */
    r = start(&o, 0);
    MPI_Request keep = r;
    CHECK(MPI_Request_free(&r) == MPI_SUCCESS && r == MPI_REQUEST_NULL);
    CHECK_EQ(o.freed, 0);
    MPI_Grequest_complete(keep);
    CHECK_EQ(o.freed, 1);
    CHECK_EQ(o.queried, 0);
    /* Freed after completion. */
    r = start(&o, 0);
    MPI_Grequest_complete(r);
    MPI_Request_free(&r);
    CHECK_EQ(o.freed, 1);
    CHECK_EQ(o.queried, 0);
}

/* Generalized requests mixed with messages in the array calls. */
static void arrays(void)
{
    struct op o[3];
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int sv = rank, rv = -1;
    MPI_Request q[5];
    q[0] = start(&o[0], 1);
    MPI_Irecv(&rv, 1, MPI_INT, prev, 4, MPI_COMM_WORLD, &q[1]);
    q[2] = start(&o[1], 2);
    MPI_Isend(&sv, 1, MPI_INT, next, 4, MPI_COMM_WORLD, &q[3]);
    q[4] = start(&o[2], 3);
    MPI_Grequest_complete(q[2]);
    int idx = -1;
    MPI_Status st;
    /* Only q[2] of the generalized ones is complete. */
    int found = 0;
    while (!found) {
        CHECK(MPI_Waitany(5, q, &idx, &st) == MPI_SUCCESS);
        found = idx == 2;
    }
    CHECK(q[2] == MPI_REQUEST_NULL);
    CHECK_EQ(o[1].freed, 1);
    MPI_Grequest_complete(q[0]);
    MPI_Grequest_complete(q[4]);
    MPI_Status sts[5];
    CHECK(MPI_Waitall(5, q, sts) == MPI_SUCCESS);
    CHECK_EQ(rv, prev);
    int cnt = -1;
    MPI_Get_count(&sts[4], MPI_INT, &cnt);
    CHECK_EQ(cnt, 3);
    CHECK_EQ(o[0].freed + o[2].freed, 2);

    /* Testsome reports completed generalized requests. */
    q[0] = start(&o[0], 0);
    q[1] = start(&o[1], 0);
    int out = -1, ind[2];
    CHECK(MPI_Testsome(2, q, &out, ind, MPI_STATUSES_IGNORE) == MPI_SUCCESS && out == 0);
    MPI_Grequest_complete(q[1]);
    CHECK(MPI_Testsome(2, q, &out, ind, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK(out == 1 && ind[0] == 1);
    MPI_Grequest_complete(q[0]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
}

/* A query function's error is the wait's. */
static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    struct op o;
    MPI_Request r = start(&o, 0);
    o.query_rc = MPI_ERR_IO;
    MPI_Grequest_complete(r);
    int rc = MPI_Wait(&r, MPI_STATUS_IGNORE), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_IO);
    CHECK_EQ(o.freed, 1);
    r = start(&o, 0);
    o.query_rc = MPI_ERR_IO;
    MPI_Grequest_complete(r);
    MPI_Status st;
    rc = MPI_Waitall(1, &r, &st);
    CHECK_EQ(rc, MPI_ERR_IN_STATUS);
    MPI_Error_class(st.MPI_ERROR, &cls);
    CHECK_EQ(cls, MPI_ERR_IO);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* MPI_Status_set_elements with a type of two basic elements. */
static void set_elements(void)
{
    MPI_Datatype pair;
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, bl, disp, types, &pair);
    MPI_Type_commit(&pair);
    MPI_Status st;
    int n = -1;
    MPI_Count nx = -1;
    MPI_Status_set_elements(&st, pair, 3); /* int, double, int */
    MPI_Get_elements(&st, pair, &n);
    CHECK_EQ(n, 3);
    MPI_Get_count(&st, pair, &n);
    CHECK_EQ(n, MPI_UNDEFINED);
    MPI_Get_elements(&st, MPI_BYTE, &n);
    CHECK_EQ(n, 16);
    MPI_Status_set_elements_x(&st, pair, 4);
    MPI_Get_count(&st, pair, &n);
    CHECK_EQ(n, 2);
    MPI_Get_elements_x(&st, pair, &nx);
    CHECK_EQ(nx, 4);
    MPI_Status_set_cancelled(&st, 1);
    MPI_Test_cancelled(&st, &n);
    CHECK_EQ(n, 1);
    MPI_Type_free(&pair);
}

#ifdef LOOM_MPI_H
/* MPI-4.1 13.2 / 3.7.3: the get_status calls leave the requests active. */
static void get_status(void)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int sv = rank, rv = -1, flag = -1, idx = -1, out = -1, ind[3];
    struct op o;
    MPI_Request q[3];
    MPI_Status sts[3];
    q[0] = start(&o, 7);
    MPI_Irecv(&rv, 1, MPI_INT, prev, 9, MPI_COMM_WORLD, &q[1]);
    q[2] = MPI_REQUEST_NULL;
    CHECK(MPI_Request_get_status_all(3, q, &flag, sts) == MPI_SUCCESS && !flag);
    CHECK(MPI_Request_get_status_some(3, q, &out, ind, sts) == MPI_SUCCESS && out == 0);
    CHECK(MPI_Request_get_status_any(3, q, &idx, &flag, sts) == MPI_SUCCESS && !flag);
    CHECK_EQ(idx, MPI_UNDEFINED);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody has sent yet */
    MPI_Grequest_complete(q[0]);
    CHECK(MPI_Request_get_status_any(3, q, &idx, &flag, &sts[0]) == MPI_SUCCESS && flag);
    CHECK_EQ(idx, 0);
    CHECK(q[0] != MPI_REQUEST_NULL);
    MPI_Send(&sv, 1, MPI_INT, next, 9, MPI_COMM_WORLD);
    flag = 0;
    while (!flag)
        CHECK(MPI_Request_get_status_all(3, q, &flag, sts) == MPI_SUCCESS);
    CHECK(q[0] != MPI_REQUEST_NULL && q[1] != MPI_REQUEST_NULL);
    CHECK_EQ(sts[1].MPI_SOURCE, prev);
    CHECK_EQ(sts[1].MPI_TAG, 9);
    int cnt = -1;
    MPI_Get_count(&sts[0], MPI_INT, &cnt);
    CHECK_EQ(cnt, 7);
    CHECK(MPI_Request_get_status_some(3, q, &out, ind, sts) == MPI_SUCCESS);
    CHECK(out == 2 && ind[0] == 0 && ind[1] == 1);
    CHECK_EQ(o.freed, 0);
    CHECK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK_EQ(rv, prev);
    CHECK_EQ(o.freed, 1);
    /* No active request: any gives MPI_UNDEFINED with flag true, some
     * MPI_UNDEFINED. */
    CHECK(MPI_Request_get_status_any(3, q, &idx, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(flag && idx == MPI_UNDEFINED);
    CHECK(MPI_Request_get_status_some(3, q, &out, ind, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    CHECK_EQ(out, MPI_UNDEFINED);
    CHECK(MPI_Request_get_status_all(0, NULL, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS && flag);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    basics();
    arrays();
    errors();
    set_elements();
#ifdef LOOM_MPI_H
    get_status();
#endif
    int failed = check_failures_ != 0, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("greq: %d ranks ok\n", size);
    MPI_Finalize();
    return check_summary();
}
