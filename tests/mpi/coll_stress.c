/*
 * Many back-to-back small collectives with every result checked: catches
 * flags, sequence numbers or buffers of one call reused too early by the
 * next. Phase 1: Allreduce (alternately MPI_IN_PLACE), Bcast and Reduce with
 * a root that changes every call, Barrier, and every few rounds Allgather
 * and Scan, alternating between MPI_COMM_WORLD and a dup of it. Phase 2: the
 * same with a random amount of busy work before every call (now and then a
 * long one), so that ranks arrive in every order and some run ahead.
 *
 * Usage: coll_stress [rounds | quick]   (default 2000, quick: 500; phase 2
 * runs rounds/2)
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static int round_, phase;
static const char *call_;
static unsigned rng;

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "coll_stress: rank %d of %d: phase %d round %d %s: ", rank, size, phase, round_,
            call_);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check_rc(int rc)
{
    if (rc != MPI_SUCCESS)
        fail("returned %d", rc);
}

static unsigned next_rand(void)
{
    rng = rng * 1103515245u + 12345u;
    return rng >> 8;
}

/* Phase 2: busy work of a random length (about 0 to 20 us; 1 in 64 calls
 * about 1 ms). */
static void maybe_work(void)
{
    if (phase != 2)
        return;
    unsigned r = next_rand();
    long n = r % 64 == 0 ? 200000 : (long)(r % 4000);
    volatile long sink = 0;
    for (long i = 0; i < n; i++)
        sink += i;
}

static int v(int r, int it, int i)
{
    return (r * 131 + it * 17 + i * 7) % 1000 - 300;
}

static void one_round(int it, MPI_Comm comm)
{
    enum { MAXC = 8 };
    int in[MAXC], out[MAXC];
    int count = 1 + it % MAXC;
    round_ = it;

    /* Allreduce SUM */
    call_ = "MPI_Allreduce";
    for (int i = 0; i < count; i++)
        in[i] = out[i] = v(rank, it, i);
    maybe_work();
    if (it % 2)
        check_rc(MPI_Allreduce(MPI_IN_PLACE, out, count, MPI_INT, MPI_SUM, comm));
    else
        check_rc(MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, comm));
    for (int i = 0; i < count; i++) {
        int s = 0;
        for (int r = 0; r < size; r++)
            s += v(r, it, i);
        if (out[i] != s)
            fail("[%d] expected %d got %d (count %d)", i, s, out[i], count);
    }

    /* Bcast from a changing root */
    call_ = "MPI_Bcast";
    int root = (it * 5 + 1) % size;
    for (int i = 0; i < count; i++)
        out[i] = rank == root ? v(root, it, i) * 3 : -99999;
    maybe_work();
    check_rc(MPI_Bcast(out, count, MPI_INT, root, comm));
    for (int i = 0; i < count; i++)
        if (out[i] != v(root, it, i) * 3)
            fail("root %d [%d] expected %d got %d", root, i, v(root, it, i) * 3, out[i]);

    /* Barrier */
    call_ = "MPI_Barrier";
    maybe_work();
    check_rc(MPI_Barrier(comm));

    /* Reduce MAX to another changing root */
    call_ = "MPI_Reduce";
    root = (it * 7 + 3) % size;
    for (int i = 0; i < count; i++)
        in[i] = v(rank, it + 1, i), out[i] = -99999;
    maybe_work();
    check_rc(MPI_Reduce(in, out, count, MPI_INT, MPI_MAX, root, comm));
    if (rank == root)
        for (int i = 0; i < count; i++) {
            int m = v(0, it + 1, i);
            for (int r = 1; r < size; r++)
                if (v(r, it + 1, i) > m)
                    m = v(r, it + 1, i);
            if (out[i] != m)
                fail("root %d [%d] expected %d got %d", root, i, m, out[i]);
        }

    if (it % 5 == 0) {
        call_ = "MPI_Allgather";
        int mine[2] = {rank, it}, *all = malloc(2 * size * sizeof(int));
        maybe_work();
        check_rc(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm));
        for (int r = 0; r < size; r++)
            if (all[2 * r] != r || all[2 * r + 1] != it)
                fail("block %d is (%d, %d), expected (%d, %d)", r, all[2 * r], all[2 * r + 1], r,
                     it);
        free(all);
    }
    if (it % 3 == 0) {
        call_ = "MPI_Scan";
        int x = v(rank, it, 0), s = 0;
        maybe_work();
        check_rc(MPI_Scan(&x, &s, 1, MPI_INT, MPI_SUM, comm));
        int e = 0;
        for (int r = 0; r <= rank; r++)
            e += v(r, it, 0);
        if (s != e)
            fail("expected %d got %d", e, s);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = 2000;
    if (argc > 1)
        rounds = strcmp(argv[1], "quick") == 0 ? 500 : atoi(argv[1]);
    rng = 12345u + 977u * (unsigned)rank;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);

    phase = 1;
    for (int it = 0; it < rounds; it++)
        one_round(it, it % 4 == 3 ? dup : MPI_COMM_WORLD);
    phase = 2;
    for (int it = 0; it < rounds / 2; it++)
        one_round(it, it % 4 == 1 ? dup : MPI_COMM_WORLD);

    MPI_Comm_free(&dup);
    MPI_Finalize();
    if (rank == 0)
        printf("coll_stress: %d ranks ok\n", size);
    return 0;
}
