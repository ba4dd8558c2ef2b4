/* MPI_Comm_idup: the new communicator is a congruent duplicate with its own
 * context (its messages never match the parent's), its request completes
 * through MPI_Wait, MPI_Test and MPI_Waitall with an empty status, idups of
 * a split communicator and of the duplicate work, attributes are copied by
 * their copy callbacks, and argument errors are reported. */
#include <mpi.h>
#include <stdio.h>

#include "../check.h"

static int copies;

static int copy_attr(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Every rank sends its rank to the right on parent and on dup with the same
 * tag; the receive on dup must get dup's message (value + 1000). */
static void check_isolated(MPI_Comm parent, MPI_Comm dup)
{
    int rank, size;
    MPI_Comm_rank(parent, &rank);
    MPI_Comm_size(parent, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int a = rank, b = rank + 1000, ra = -1, rb = -1;
    MPI_Request rq[2];
    MPI_Isend(&a, 1, MPI_INT, right, 5, parent, &rq[0]);
    MPI_Isend(&b, 1, MPI_INT, right, 5, dup, &rq[1]);
    MPI_Status st;
    CHECK_EQ(MPI_Recv(&rb, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st), MPI_SUCCESS);
    CHECK_EQ(rb, left + 1000);
    CHECK_EQ(st.MPI_SOURCE, left);
    CHECK_EQ(MPI_Recv(&ra, 1, MPI_INT, left, 5, parent, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(ra, left);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Wait: a congruent duplicate, empty status. */
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &dup, &req), MPI_SUCCESS);
    CHECK(req != MPI_REQUEST_NULL);
    MPI_Status st;
    st.MPI_SOURCE = st.MPI_TAG = 12345;
    CHECK_EQ(MPI_Wait(&req, &st), MPI_SUCCESS);
    CHECK(req == MPI_REQUEST_NULL);
    CHECK_EQ(st.MPI_SOURCE, MPI_ANY_SOURCE);
    CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
    int count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK_EQ(count, 0);
    REQUIRE(dup != MPI_COMM_NULL && dup != MPI_COMM_WORLD);
    int result = -1, drank = -1, dsize = -1;
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
    CHECK_EQ(result, MPI_CONGRUENT);
    MPI_Comm_rank(dup, &drank);
    MPI_Comm_size(dup, &dsize);
    CHECK_EQ(drank, rank);
    CHECK_EQ(dsize, size);
    check_isolated(MPI_COMM_WORLD, dup);

    /* Test until done; a duplicate of the duplicate. */
    MPI_Comm dup2 = MPI_COMM_NULL;
    CHECK_EQ(MPI_Comm_idup(dup, &dup2, &req), MPI_SUCCESS);
    int flag = 0;
    for (int i = 0; i < 1000000 && !flag; i++)
        CHECK_EQ(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(flag);
    CHECK(req == MPI_REQUEST_NULL);
    check_isolated(dup, dup2);

    /* Several outstanding, completed together; an idup of a split. */
    MPI_Comm half = MPI_COMM_NULL, dups[3];
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    MPI_Request reqs[3];
    CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &dups[0], &reqs[0]), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_idup(half, &dups[1], &reqs[1]), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_idup(MPI_COMM_SELF, &dups[2], &reqs[2]), MPI_SUCCESS);
    CHECK_EQ(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < 3; i++)
        CHECK(reqs[i] == MPI_REQUEST_NULL);
    int hrank = -1, hsize = -1, h2rank = -1;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    MPI_Comm_rank(dups[1], &h2rank);
    CHECK_EQ(h2rank, hrank);
    CHECK_EQ(hsize, (size + 1 - rank % 2) / 2);
    MPI_Comm_compare(half, dups[1], &result);
    CHECK_EQ(result, MPI_CONGRUENT);
    check_isolated(half, dups[1]);
    check_isolated(MPI_COMM_WORLD, dups[0]);
    int srank = -1;
    MPI_Comm_rank(dups[2], &srank);
    CHECK_EQ(srank, 0);

    /* Attributes are copied with their copy callback, as MPI_Comm_dup. */
    int key = MPI_KEYVAL_INVALID;
    static int value = 42;
    MPI_Comm_create_keyval(copy_attr, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(dup, key, &value);
    MPI_Comm dup3 = MPI_COMM_NULL;
    CHECK_EQ(MPI_Comm_idup(dup, &dup3, &req), MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_EQ(copies, 1);
    void *got = NULL;
    flag = 0;
    MPI_Comm_get_attr(dup3, key, &got, &flag);
    CHECK(flag && got == &value);

    /* Errors are returned on the communicator. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm bad = MPI_COMM_NULL;
    int rc = MPI_Comm_idup(MPI_COMM_WORLD, &bad, NULL), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_ARG);
    rc = MPI_Comm_idup(MPI_COMM_NULL, &bad, &req);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_COMM);

    MPI_Comm_free(&dup3);
    MPI_Comm_free_keyval(&key);
    for (int i = 0; i < 3; i++)
        MPI_Comm_free(&dups[i]);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup2);
    MPI_Comm_free(&dup);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && check_failures_ == 0)
        printf("p2p_idup: %d ranks ok\n", size);
    return check_summary();
}
