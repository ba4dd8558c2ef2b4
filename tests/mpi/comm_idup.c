/* MPI_Comm_idup is nonblocking: it returns before the other members call it
 * (a rank may idup, then send to a rank that receives before its own idup),
 * its request completes once every member has called it (through Wait,
 * Waitall in any order, Test polling, or after MPI_Request_free), several
 * may be outstanding on one parent, mixed with MPI_Ibarrier, MPI_Iallreduce,
 * MPI_Comm_dup and MPI_Comm_split on that parent, attributes are copied at
 * the call, and the new communicators work for collectives and
 * point-to-point once complete. */
#include <mpi.h>
#include <stdio.h>

#include "../check.h"

#define NDUPS 6

static int copies, deletes;

static int copy_attr(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    copies++;
    *(long *)out = (long)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int failing_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

/* dup is a working duplicate of parent: same rank and size, congruent, an
 * Allreduce and a Bcast on it, and a ring exchange whose messages never
 * match the same exchange on parent. */
static void check_usable(MPI_Comm parent, MPI_Comm dup)
{
    int rank, size, drank = -1, dsize = -1, result = -1;
    MPI_Comm_rank(parent, &rank);
    MPI_Comm_size(parent, &size);
    MPI_Comm_rank(dup, &drank);
    MPI_Comm_size(dup, &dsize);
    CHECK_EQ(drank, rank);
    CHECK_EQ(dsize, size);
    MPI_Comm_compare(parent, dup, &result);
    CHECK_EQ(result, MPI_CONGRUENT);

    long sum = -1, mine = rank + 1;
    CHECK_EQ(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, dup), MPI_SUCCESS);
    CHECK_EQ(sum, (long)size * (size + 1) / 2);
    int root_val = rank == size - 1 ? 4242 : -1;
    CHECK_EQ(MPI_Bcast(&root_val, 1, MPI_INT, size - 1, dup), MPI_SUCCESS);
    CHECK_EQ(root_val, 4242);

    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int a = rank, b = rank + 1000, ra = -1, rb = -1;
    MPI_Request rq[2];
    MPI_Isend(&a, 1, MPI_INT, right, 9, parent, &rq[0]);
    MPI_Isend(&b, 1, MPI_INT, right, 9, dup, &rq[1]);
    MPI_Status st;
    CHECK_EQ(MPI_Recv(&rb, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st), MPI_SUCCESS);
    CHECK_EQ(rb, left + 1000);
    CHECK_EQ(st.MPI_SOURCE, left);
    CHECK_EQ(MPI_Recv(&ra, 1, MPI_INT, left, 9, parent, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(ra, left);
    CHECK_EQ(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE), MPI_SUCCESS);
}

/* The program that deadlocked while idup blocked: rank 0 idups, then sends
 * to rank 1; every other rank first receives from its left neighbour, then
 * idups, then sends to its right (the last one back to 0). Rank 0's request
 * cannot be complete before it sends (rank 1 has not called idup yet). */
static void chain(int rank, int size, int ssend)
{
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    int right = (rank + 1) % size, left = (rank + size - 1) % size, token = -1, flag = -1;
    int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm) = ssend ? MPI_Ssend : MPI_Send;
    if (rank == 0) {
        CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req), MPI_SUCCESS);
        CHECK(req != MPI_REQUEST_NULL);
        CHECK(dup != MPI_COMM_NULL); /* the handle is returned at the call */
        CHECK_EQ(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_EQ(flag, size == 1);
        if (size > 1) {
            token = 0;
            CHECK_EQ(send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD), MPI_SUCCESS);
            CHECK_EQ(MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                     MPI_SUCCESS);
            CHECK_EQ(token, size - 1);
        }
    } else {
        CHECK_EQ(MPI_Recv(&token, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
        CHECK_EQ(token, rank - 1);
        CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req), MPI_SUCCESS);
        token = rank;
        CHECK_EQ(send(&token, 1, MPI_INT, right, 1, MPI_COMM_WORLD), MPI_SUCCESS);
    }
    MPI_Status st;
    st.MPI_SOURCE = st.MPI_TAG = 12345;
    CHECK_EQ(MPI_Wait(&req, &st), MPI_SUCCESS);
    CHECK(req == MPI_REQUEST_NULL);
    CHECK_EQ(st.MPI_SOURCE, MPI_ANY_SOURCE);
    CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
    check_usable(MPI_COMM_WORLD, dup);
    MPI_Comm_free(&dup);
}

/* Several idups outstanding on one parent, with a blocking dup and a split
 * between them (the creation sequence they share) and nonblocking
 * collectives (their own sequence), completed by Waitall in reverse order.
 * Odd ranks yield between the calls so that the members arrive in varied
 * orders. */
static void outstanding(MPI_Comm parent)
{
    int rank, size;
    MPI_Comm_rank(parent, &rank);
    MPI_Comm_size(parent, &size);
    MPI_Comm dups[NDUPS], mid = MPI_COMM_NULL, half = MPI_COMM_NULL;
    MPI_Request reqs[2 * NDUPS];
    long in[NDUPS], out[NDUPS];
    int nreq = 0;
    for (int i = 0; i < NDUPS; i++) {
        CHECK_EQ(MPI_Comm_idup(parent, &dups[i], &reqs[nreq++]), MPI_SUCCESS);
        if (i % 2 == 0) {
            CHECK_EQ(MPI_Ibarrier(parent, &reqs[nreq++]), MPI_SUCCESS);
        } else {
            in[i] = rank + i;
            CHECK_EQ(MPI_Iallreduce(&in[i], &out[i], 1, MPI_LONG, MPI_SUM, parent, &reqs[nreq++]),
                     MPI_SUCCESS);
        }
        if (i == 2)
            CHECK_EQ(MPI_Comm_dup(parent, &mid), MPI_SUCCESS);
        if (i == 3)
            CHECK_EQ(MPI_Comm_split(parent, rank % 2, rank, &half), MPI_SUCCESS);
        if (rank % 2) {
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, parent, &flag, MPI_STATUS_IGNORE);
        }
    }
    MPI_Request rev[2 * NDUPS];
    for (int i = 0; i < nreq; i++)
        rev[i] = reqs[nreq - 1 - i];
    CHECK_EQ(MPI_Waitall(nreq, rev, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < nreq; i++)
        CHECK(rev[i] == MPI_REQUEST_NULL);
    for (int i = 1; i < NDUPS; i += 2)
        CHECK_EQ(out[i], (long)size * (size - 1) / 2 + (long)size * i);
    /* Every duplicate has its own context: the same message sent on each,
     * received in reverse order of the communicators. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int vals[NDUPS], got[NDUPS];
    MPI_Request sends[NDUPS];
    for (int i = 0; i < NDUPS; i++) {
        vals[i] = 100 * i + rank;
        MPI_Isend(&vals[i], 1, MPI_INT, right, 3, dups[i], &sends[i]);
    }
    for (int i = NDUPS - 1; i >= 0; i--) {
        CHECK_EQ(MPI_Recv(&got[i], 1, MPI_INT, left, 3, dups[i], MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_EQ(got[i], 100 * i + left);
    }
    CHECK_EQ(MPI_Waitall(NDUPS, sends, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    check_usable(parent, dups[0]);
    check_usable(parent, dups[NDUPS - 1]);
    check_usable(parent, mid);
    int hrank = -1;
    MPI_Comm_rank(half, &hrank);
    CHECK_EQ(hrank, rank / 2);
    for (int i = 0; i < NDUPS; i++)
        MPI_Comm_free(&dups[i]);
    MPI_Comm_free(&mid);
    MPI_Comm_free(&half);
}

/* Test polling: the last rank calls idup only once rank 0 (already polling
 * its own request) has sent it a message. */
static void polling(int rank, int size)
{
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    int flag = 0, polls = 0, token = 7;
    if (rank == size - 1 && size > 1)
        MPI_Recv(&token, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req), MPI_SUCCESS);
    if (rank == 0 && size > 1) {
        CHECK_EQ(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_EQ(flag, 0);
        polls++;
        MPI_Send(&token, 1, MPI_INT, size - 1, 2, MPI_COMM_WORLD);
    }
    while (!flag) {
        CHECK_EQ(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        polls++;
    }
    CHECK(req == MPI_REQUEST_NULL);
    CHECK(polls >= 1);
    check_usable(MPI_COMM_WORLD, dup);
    MPI_Comm_free(&dup);
}

/* Attributes are copied by their callbacks at the call; a callback that
 * fails makes the call fail (on MPI_COMM_SELF, so that no peer waits). */
static void attributes(int rank, int size)
{
    int key = MPI_KEYVAL_INVALID, bad_key = MPI_KEYVAL_INVALID, flag = 0;
    MPI_Comm_create_keyval(copy_attr, count_delete, &key, NULL);
    MPI_Comm base;
    MPI_Comm_dup(MPI_COMM_WORLD, &base);
    MPI_Comm_set_attr(base, key, (void *)(long)(rank * 10));
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Request req;
    copies = deletes = 0;
    CHECK_EQ(MPI_Comm_idup(base, &dup, &req), MPI_SUCCESS);
    CHECK_EQ(copies, 1); /* at the call */
    CHECK_EQ(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    void *v = NULL;
    MPI_Comm_get_attr(dup, key, &v, &flag);
    CHECK(flag);
    CHECK_EQ((long)v, rank * 10 + 1);
    check_usable(base, dup);
    MPI_Comm_free(&dup);
    CHECK_EQ(deletes, 1);

    MPI_Comm self;
    MPI_Comm_dup(MPI_COMM_SELF, &self);
    MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &bad_key, NULL);
    MPI_Comm_set_attr(self, bad_key, &flag);
    MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
    MPI_Comm bad = MPI_COMM_NULL;
    req = MPI_REQUEST_NULL;
    int rc = MPI_Comm_idup(self, &bad, &req), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_OTHER);
    CHECK(bad == MPI_COMM_NULL);
    CHECK(req == MPI_REQUEST_NULL);
    MPI_Comm_delete_attr(self, bad_key);
    CHECK_EQ(MPI_Comm_idup(self, &bad, &req), MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    int ssize = -1;
    MPI_Comm_size(bad, &ssize);
    CHECK_EQ(ssize, 1);
    MPI_Comm_free(&bad);
    MPI_Comm_free(&self);
    MPI_Comm_free(&base);
    MPI_Comm_free_keyval(&key);
    MPI_Comm_free_keyval(&bad_key);
    (void)size;
}

/* A freed request: the communicator is still made; a barrier on the parent
 * (after every member's idup) shows that every member has called it. */
static void freed_request(void)
{
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Request req;
    CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req), MPI_SUCCESS);
    CHECK_EQ(MPI_Request_free(&req), MPI_SUCCESS);
    CHECK(req == MPI_REQUEST_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    check_usable(MPI_COMM_WORLD, dup);
    MPI_Comm_free(&dup);
}

/* Argument errors keep their classes. */
static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm bad = MPI_COMM_NULL, gone;
    MPI_Request req = MPI_REQUEST_NULL;
    int cls = -1;
    MPI_Error_class(MPI_Comm_idup(MPI_COMM_WORLD, &bad, NULL), &cls);
    CHECK_EQ(cls, MPI_ERR_ARG);
    MPI_Error_class(MPI_Comm_idup(MPI_COMM_WORLD, NULL, &req), &cls);
    CHECK_EQ(cls, MPI_ERR_ARG);
    MPI_Error_class(MPI_Comm_idup(MPI_COMM_NULL, &bad, &req), &cls);
    CHECK_EQ(cls, MPI_ERR_COMM);
    MPI_Comm_dup(MPI_COMM_SELF, &gone);
    MPI_Comm stale = gone;
    MPI_Comm_free(&gone);
    MPI_Error_class(MPI_Comm_idup(stale, &bad, &req), &cls);
    CHECK_EQ(cls, MPI_ERR_COMM);
    CHECK(req == MPI_REQUEST_NULL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    chain(rank, size, 0);
    chain(rank, size, 1);
    outstanding(MPI_COMM_WORLD);
    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 3, size - rank, &split);
    outstanding(split);
    MPI_Comm_free(&split);
    polling(rank, size);
    attributes(rank, size);
    freed_request();
    errors();

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && check_failures_ == 0)
        printf("comm_idup: %d ranks ok\n", size);
    return check_summary();
}
