/*
 * Errors that collectives detect while they run, not in their arguments:
 * truncation (a receive buffer smaller than what arrives) and mismatched
 * calls (different collectives, different roots), blocking and nonblocking.
 *
 * With no argument, under MPI_ERRORS_RETURN, the errors a call can return
 * from: the class on the ranks that see the problem (the others may return
 * MPI_SUCCESS), and the communicator still works afterwards (needs 3 ranks
 * or more).
 *
 * With an argument, one case ends the job, for the launcher tests to check
 * the message (under MPI_ERRORS_ARE_FATAL, the default):
 *   truncate    MPI_Scatter of 4 ints each from rank 0, rank 1 receives 2
 *   itruncate   the same with MPI_Iscatter (raised by MPI_Wait)
 *   kinds       rank 0 calls MPI_Allgather, the others MPI_Alltoall
 *   barrier P   some ranks call MPI_Barrier, the others MPI_Allreduce: rank 0
 *               (P = first), the last rank (last), the lower half (half) or
 *               the odd ranks (odd): with several ranks per worker, the
 *               per-worker algorithms meet mismatched calls within a worker
 *               and between workers
 *   roots       MPI_Reduce: rank 0 gives root 0, the others root 1
 *   iroots      the same with MPI_Ireduce
 *   bcastroots  MPI_Bcast of 64 KiB: rank 0 gives root 0, the others root
 *               1; both roots wait for readers that went to the other one
 * The last three cannot return (a member waits for a step that will never
 * come): a member stalled in the call compares the members' calls and ends
 * the job, whatever the error handler (here MPI_ERRORS_RETURN, to show it).
 *
 * usage: coll_mismatch [truncate|itruncate|kinds|roots|iroots|bcastroots|barrier P]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;

static void expect(int rc, int want, const char *what)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (cls != want) {
        fprintf(stderr, "coll_mismatch: rank %d: %s: class %d, expected %d\n", rank, what, cls,
                want);
        failures++;
    }
}

/* The communicator is still usable after an error. */
static void still_works(const char *after)
{
    int v = rank, sum = -1, b = rank == 0 ? 77 : -1;
    int rc = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    rc |= MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD);
    rc |= MPI_Barrier(MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || sum != size * (size - 1) / 2 || b != 77) {
        fprintf(stderr, "coll_mismatch: rank %d: collectives after %s: rc %d sum %d bcast %d\n",
                rank, after, rc, sum, b);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* MPI_Scatter: MPI_Bcast would do, but debug builds find its different
 * type signatures first (MPI_ERR_TYPE). */
static int scatter_truncated(int nonblocking)
{
    int *all = calloc(4 * (size_t)size, sizeof(int)), buf[4];
    int count = rank == 1 ? 2 : 4, rc;
    if (!nonblocking) {
        rc = MPI_Scatter(all, 4, MPI_INT, buf, count, MPI_INT, 0, MPI_COMM_WORLD);
    } else {
        MPI_Request rq;
        rc = MPI_Iscatter(all, 4, MPI_INT, buf, count, MPI_INT, 0, MPI_COMM_WORLD, &rq);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
    free(all);
    return rc;
}

static int kinds(void)
{
    int in[1024], out[1024];
    for (int i = 0; i < size && i < 1024; i++)
        in[i] = rank;
    if (rank == 0)
        return MPI_Allgather(in, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
    return MPI_Alltoall(in, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
}

static int barrier_allreduce(const char *pattern)
{
    int barrier = strcmp(pattern, "first") == 0  ? rank == 0
                  : strcmp(pattern, "last") == 0 ? rank == size - 1
                  : strcmp(pattern, "half") == 0 ? rank < size / 2
                                                 : rank % 2 == 1;
    int in = rank, out;
    if (barrier)
        return MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

static int bcast_roots(void)
{
    enum { N = 16384 };
    int *buf = calloc(N, sizeof(int));
    int rc = MPI_Bcast(buf, N, MPI_INT, rank == 0 ? 0 : 1, MPI_COMM_WORLD);
    free(buf);
    return rc;
}

static int roots(int nonblocking)
{
    int v = rank, out = -1, root = rank == 0 ? 0 : 1;
    if (!nonblocking)
        return MPI_Reduce(&v, &out, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    MPI_Request rq;
    int rc = MPI_Ireduce(&v, &out, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &rq);
    return rc != MPI_SUCCESS ? rc : MPI_Wait(&rq, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 3) {
        if (rank == 0)
            fprintf(stderr, "coll_mismatch: needs 3 ranks or more\n");
        MPI_Finalize();
        return 77;
    }
    if (argc > 1) {
        /* The job ends inside the call. */
        if (strstr(argv[1], "roots"))
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (strcmp(argv[1], "truncate") == 0)
            scatter_truncated(0);
        else if (strcmp(argv[1], "itruncate") == 0)
            scatter_truncated(1);
        else if (strcmp(argv[1], "kinds") == 0)
            kinds();
        else if (strcmp(argv[1], "roots") == 0)
            roots(0);
        else if (strcmp(argv[1], "iroots") == 0)
            roots(1);
        else if (strcmp(argv[1], "bcastroots") == 0)
            bcast_roots();
        else if (strcmp(argv[1], "barrier") == 0 && argc > 2)
            barrier_allreduce(argv[2]);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            printf("coll_mismatch: %s: no error\n", argv[1]);
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int nb = 0; nb < 2; nb++) {
        const char *mode = nb ? "nonblocking" : "blocking";
        /* Truncation: only the short receiver sees it. */
        int rc = scatter_truncated(nb);
        expect(rc, rank == 1 ? MPI_ERR_TRUNCATE : MPI_SUCCESS, mode);
        still_works("a truncated scatter");
    }
    /* Different collectives: every member reads every other's post. */
    expect(kinds(), MPI_ERR_OTHER, "Allgather against Alltoall");
    still_works("mismatched collectives");

    int total;
    MPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "coll_mismatch: %d ranks FAILED\n" : "coll_mismatch: %d ranks ok\n", size);
    MPI_Finalize();
    return 0;
}
