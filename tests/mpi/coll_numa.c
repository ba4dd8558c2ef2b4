/*
 * The memory-domain collectives (run with LOOM_COLL_ALLREDUCE=numa and
 * LOOM_COLL_REDUCE=numa, on synthetic topologies) and the copy order of the
 * direct gathers and all-to-alls:
 *  - Allreduce and Reduce (roots 0, size - 1, size / 2), counts 0, 1, 17,
 *    1000 and 100003 (400012 bytes: several chunks, not a multiple of a
 *    cache line), exact integer sums: MPI_INT, contiguous(3, MPI_INT) (an
 *    extent that does not divide a line) and vector(2, 1, 3, MPI_INT) (gaps
 *    that must stay untouched); in place too;
 *  - a non-commutative user op, the 2x2 integer matrix product mod 10007,
 *    against the product in rank order (counts 0, 1, 17, 1000, 40009; the
 *    largest checked on every 97th element and the last);
 *  - Gather (same roots), Allgather and Alltoall of blocks of 1, 17 and 1000
 *    ints (quick: 300), every element checked.
 * Usage: coll_numa [quick]   quick: reductions up to 1000 elements.
 * Prints "coll_numa: N ranks ok".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P 10007

static int rank, size;

static void fail(const char *coll, const char *type, int root, size_t count, size_t at, long want,
                 long got)
{
    fprintf(stderr,
            "coll_numa: rank %d of %d: %s of %s, root %d, count %zu: element %zu is %ld, "
            "expected %ld\n",
            rank, size, coll, type, root, count, at, got, want);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check_rc(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "coll_numa: rank %d: %s returned %d\n", rank, what, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Rank r's value for int e: its sum over the ranks has a closed form. */
static int val(int r, size_t e)
{
    return r + 1 + (int)(e % 13) * (r % 3);
}

static long sum_val(size_t e)
{
    long s3 = 0;
    for (int r = 0; r < size; r++)
        s3 += r % 3;
    return (long)size * (size + 1) / 2 + (long)(e % 13) * s3;
}

/* Int sums over a type of `per` ints per element of which `used` (at the
 * listed offsets) carry data; the others are gaps. */
static void int_sums(MPI_Datatype dt, const char *name, int per, const int *used, int nused,
                     size_t count, int root, int variant)
{
    size_t n = count * (size_t)per;
    int *in = malloc((n + 1) * sizeof(int)), *out = malloc((n + 1) * sizeof(int));
    for (size_t e = 0; e < n; e++) {
        in[e] = val(rank, e);
        out[e] = -7; /* gaps stay -7 */
    }
    int is_root = variant < 2 || rank == root;
    const char *coll = variant == 0   ? "Allreduce"
                       : variant == 1 ? "Allreduce in place"
                       : variant == 2 ? "Reduce"
                                      : "Reduce in place";
    void *sbuf = in;
    if (variant == 1 || (variant == 3 && rank == root)) {
        for (size_t k = 0; k < count; k++)
            for (int u = 0; u < nused; u++)
                out[k * (size_t)per + (size_t)used[u]] = in[k * (size_t)per + (size_t)used[u]];
        sbuf = MPI_IN_PLACE;
    }
    if (variant < 2)
        check_rc(MPI_Allreduce(sbuf, out, (int)count, dt, MPI_SUM, MPI_COMM_WORLD), coll);
    else
        check_rc(MPI_Reduce(variant == 3 && rank != root ? in : sbuf, out, (int)count, dt, MPI_SUM,
                            root, MPI_COMM_WORLD),
                 coll);
    if (is_root)
        for (size_t k = 0; k < count; k++)
            for (int o = 0; o < per; o++) {
                size_t e = k * (size_t)per + (size_t)o;
                int data = 0;
                for (int u = 0; u < nused; u++)
                    data |= used[u] == o;
                long want = data ? sum_val(e) : -7;
                if (out[e] != want)
                    fail(coll, name, root, count, e, want, out[e]);
            }
    free(in);
    free(out);
}

/* 2x2 matrix product mod P: inout = in * inout (in comes from lower ranks). */
static void mat_op(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *a = invec;
    int *b = inoutvec;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        int c0 = (a[0] * b[0] + a[1] * b[2]) % P, c1 = (a[0] * b[1] + a[1] * b[3]) % P;
        int c2 = (a[2] * b[0] + a[3] * b[2]) % P, c3 = (a[2] * b[1] + a[3] * b[3]) % P;
        b[0] = c0, b[1] = c1, b[2] = c2, b[3] = c3;
    }
}

static void mat_of(int r, size_t e, int *m)
{
    m[0] = 1 + (int)((size_t)r + e) % 5;
    m[1] = r % 7 + 1;
    m[2] = (int)(e % 11);
    m[3] = 1 + r;
}

static void matrix(MPI_Datatype mt, MPI_Op op, size_t count, int root, int variant)
{
    int *in = malloc((count * 4 + 1) * sizeof(int)), *out = malloc((count * 4 + 1) * sizeof(int));
    for (size_t e = 0; e < count; e++) {
        mat_of(rank, e, in + 4 * e);
        mat_of(rank, e, out + 4 * e);
    }
    const char *coll = variant == 0   ? "Allreduce"
                       : variant == 1 ? "Allreduce in place"
                       : variant == 2 ? "Reduce"
                                      : "Reduce in place";
    void *sbuf = variant == 1 || (variant == 3 && rank == root) ? MPI_IN_PLACE : in;
    if (variant < 2)
        check_rc(MPI_Allreduce(sbuf, out, (int)count, mt, op, MPI_COMM_WORLD), coll);
    else
        check_rc(MPI_Reduce(sbuf, out, (int)count, mt, op, root, MPI_COMM_WORLD), coll);
    if (variant < 2 || rank == root)
        for (size_t e = 0; e < count; e++) {
            if (count > 1000 && e % 97 != 0 && e != count - 1)
                continue;
            int acc[4], m[4];
            mat_of(size - 1, e, acc);
            for (int r = size - 2; r >= 0; r--) {
                int one = 1;
                mat_of(r, e, m);
                mat_op(m, acc, &one, NULL);
            }
            for (int k = 0; k < 4; k++)
                if (out[4 * e + (size_t)k] != acc[k])
                    fail(coll, "matrix (user op)", root, count, 4 * e + (size_t)k, acc[k],
                         out[4 * e + (size_t)k]);
        }
    free(in);
    free(out);
}

/* Gather (root), Allgather, Alltoall of blocks of b ints. */
static void copies(int b, int root)
{
    size_t nb = (size_t)b, all = nb * (size_t)size;
    int *s = malloc((all + 1) * sizeof(int)), *r = malloc((all + 1) * sizeof(int));
    for (size_t e = 0; e < all; e++)
        s[e] = rank * 1000003 + (int)e; /* alltoall: block j goes to rank j */
    memset(r, 0xff, all * sizeof(int));
    check_rc(MPI_Gather(s, b, MPI_INT, r, b, MPI_INT, root, MPI_COMM_WORLD), "Gather");
    if (rank == root)
        for (size_t e = 0; e < all; e++) {
            long want = (long)(e / nb) * 1000003 + (long)(e % nb);
            if (r[e] != want)
                fail("Gather", "MPI_INT", root, nb, e, want, r[e]);
        }
    memset(r, 0xff, all * sizeof(int));
    check_rc(MPI_Allgather(s, b, MPI_INT, r, b, MPI_INT, MPI_COMM_WORLD), "Allgather");
    for (size_t e = 0; e < all; e++) {
        long want = (long)(e / nb) * 1000003 + (long)(e % nb);
        if (r[e] != want)
            fail("Allgather", "MPI_INT", -1, nb, e, want, r[e]);
    }
    memset(r, 0xff, all * sizeof(int));
    check_rc(MPI_Alltoall(s, b, MPI_INT, r, b, MPI_INT, MPI_COMM_WORLD), "Alltoall");
    for (size_t e = 0; e < all; e++) {
        long want = (long)(e / nb) * 1000003 + (long)rank * b + (long)(e % nb);
        if (r[e] != want)
            fail("Alltoall", "MPI_INT", -1, nb, e, want, r[e]);
    }
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    const size_t counts[] = {0, 1, 17, 1000, 100003};
    const size_t mcounts[] = {0, 1, 17, 1000, 40009};
    int roots[] = {0, size - 1, size / 2};
    MPI_Datatype c3, vec, mt;
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec); /* ints 0 and 3 of 4: extent 16 */
    MPI_Type_contiguous(4, MPI_INT, &mt);
    MPI_Type_commit(&c3);
    MPI_Type_commit(&vec);
    MPI_Type_commit(&mt);
    MPI_Op op;
    MPI_Op_create(mat_op, 0, &op);
    static const int all3[] = {0, 1, 2}, ends[] = {0, 3};
    for (int k = 0; k < 5; k++) {
        if (quick && counts[k] > 1000)
            continue;
        for (int v = 0; v < 4; v++)
            for (int ri = 0; ri < (v < 2 ? 1 : 3); ri++) {
                int root = roots[ri];
                int_sums(MPI_INT, "MPI_INT", 1, all3, 1, counts[k], root, v);
                int_sums(c3, "contiguous(3, MPI_INT)", 3, all3, 3, counts[k], root, v);
                int_sums(vec, "vector(2, 1, 3, MPI_INT)", 4, ends, 2, counts[k], root, v);
                matrix(mt, op, mcounts[k], root, v);
            }
    }
    const int blocks[] = {1, 17, quick ? 300 : 1000};
    for (int k = 0; k < 3; k++)
        for (int ri = 0; ri < 3; ri++)
            copies(blocks[k], roots[ri]);
    MPI_Op_free(&op);
    MPI_Type_free(&c3);
    MPI_Type_free(&vec);
    MPI_Type_free(&mt);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_numa: %d ranks ok\n", size);
    MPI_Finalize();
    return 0;
}
