/*
 * Reproducible reductions (issue 17, docs/collectives.md#reproducible-reductions):
 * the same inputs must give the same bits on every call, whoever arrives
 * late. Each case runs a reduction many times with one late rank per call
 * (a different one each call, delayed by a short spin), alternately in place
 * and not, Reduce alternately to rank 0 and rank N-1, and requires one bit
 * pattern per rank over all calls (and, for Allreduce, the same on every
 * rank). Inputs expose the order: +-1e16 mixed with small integers, random
 * doubles of exponents -40..40, MPI_MIN over -0.0, +0.0 and NaN, a
 * commutative user sum (which perworker may take) and a non-commutative
 * user op (2x2 matrix product, in rank order), and an exact MPI_LONG sum.
 * Where the forced algorithm's order is specified (LOOM_COLL_<C> set, or a
 * nonblocking call, which runs the direct algorithms), the result must equal
 * a serial fold in that order: flat x0 op (x1 op (... op xn-1)) for direct,
 * allread, tiled, reduce_scatter and (one domain) numa, the binomial tree of
 * reduce/tree and reduce_bcast, a left fold down the chain for scan/chain.
 * Otherwise it must be close to the flat fold.
 *
 * Usage: coll_repro [iters [colls [arrival | arrival-env]]]
 *   iters  calls per case (default 1000; the 3000-element cases run a tenth)
 *   colls  comma list of allreduce, reduce, reduce_scatter_block,
 *          reduce_scatter, scan, exscan and the same with an i prefix
 *          (nonblocking), or all (default), blocking, nonblocking
 *   arrival  set the info key loom_reduce_order=arrival on the communicator:
 *          results need only be close; calls that gave other bits than the
 *          first are counted and printed ("arrival order: ... N of M calls
 *          gave other bits"); arrival-env: the same without the info key
 *          (for LOOM_COLL_REDUCE_ORDER=arrival)
 */
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static MPI_Comm comm;
static char where[160];

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "coll_repro: rank %d of %d: %s: ", rank, size, where);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void ck(int rc)
{
    if (rc != MPI_SUCCESS)
        fail("returned %d", rc);
}

/* ---- inputs and ops ---- */

enum input { CANCEL, VARIED, MIN0, USERSUM, MATPROD, LONGSUM, NINPUT };
static const char *const input_name[NINPUT] = {"sum(+-1e16,1)", "sum(varied)", "min(+-0,nan)",
                                               "usersum",       "matprod",     "long sum"};
static MPI_Datatype mat_type;
static MPI_Op usersum_op, matprod_op;

static void usersum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    const double *a = in;
    double *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = a[i] + b[i];
}

/* inout = in x inout, 2x2 matrices (in: the lower ranks'). */
static void matprod(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    const double *a = in;
    double *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        double c0 = a[0] * b[0] + a[1] * b[2], c1 = a[0] * b[1] + a[1] * b[3];
        double c2 = a[2] * b[0] + a[3] * b[2], c3 = a[2] * b[1] + a[3] * b[3];
        b[0] = c0, b[1] = c1, b[2] = c2, b[3] = c3;
    }
}

static size_t esize(enum input in)
{
    return in == MATPROD ? 32 : 8;
}

static MPI_Datatype dtype(enum input in)
{
    return in == MATPROD ? mat_type : in == LONGSUM ? MPI_LONG : MPI_DOUBLE;
}

static MPI_Op op_of(enum input in)
{
    return in == MIN0 ? MPI_MIN : in == USERSUM ? usersum_op : in == MATPROD ? matprod_op : MPI_SUM;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* Rank r's input for a case: count elements. */
static void gen(enum input in, int r, int seed, size_t count, void *buf)
{
    double *d = buf;
    long *l = buf;
    for (size_t e = 0; e < count; e++) {
        uint64_t h = mix((uint64_t)seed << 40 ^ (uint64_t)r << 24 ^ e);
        switch (in) {
        case CANCEL: {
            static const double v[] = {1e16, -1e16, 1.0, 3.0, -1e16, 1e16, 2.0, 5e15};
            d[e] = v[h % 8];
            break;
        }
        case VARIED:
        case USERSUM:
            d[e] = ldexp((double)(h >> 11) / 9007199254740992.0, (int)(h % 81) - 40) *
                   (h & 1024 ? -1 : 1);
            break;
        case MIN0: {
            static const double v[] = {0.0, -0.0, 0.0, -0.0, NAN, 1.0, 0.0, -0.0};
            d[e] = v[h % 8];
            break;
        }
        case MATPROD:
            for (int k = 0; k < 4; k++) {
                uint64_t g = mix(h + (uint64_t)k);
                d[4 * e + k] = (k == 0 || k == 3 ? 1.0 : 0.0) + ((double)(g % 2001) - 1000) * 1e-4;
            }
            break;
        case LONGSUM:
            l[e] = (long)(h >> 1) * (h & 1 ? -1 : 1);
            break;
        case NINPUT:
            break;
        }
    }
}

/* inout = in op inout, as the MPI op does (the same kernel expression). */
static void apply(enum input in, const void *a, void *b, size_t count)
{
    int n = (int)count;
    if (in == MATPROD) {
        matprod((void *)a, b, &n, NULL);
        return;
    }
    for (size_t e = 0; e < count; e++) {
        if (in == LONGSUM) {
            unsigned long x = (unsigned long)((const long *)a)[e] + (unsigned long)((long *)b)[e];
            ((long *)b)[e] = (long)x;
        } else if (in == MIN0) {
            double x = ((const double *)a)[e], y = ((double *)b)[e];
            ((double *)b)[e] = x < y ? x : y;
        } else {
            ((double *)b)[e] = ((const double *)a)[e] + ((double *)b)[e];
        }
    }
}

/* ---- reference folds ---- */

struct refc {
    enum input in;
    int seed;
    size_t off, count; /* elements [off, off + count) of every input */
};

static void input_at(const struct refc *c, int r, void *buf)
{
    char *all = malloc((c->off + c->count) * esize(c->in) + 1);
    gen(c->in, r, c->seed, c->off + c->count, all);
    memcpy(buf, all + c->off * esize(c->in), c->count * esize(c->in));
    free(all);
}

/* out = x_lo op (x_lo+1 op (... op x_hi-1)). */
static void fold_flat(const struct refc *c, int lo, int hi, void *out)
{
    void *t = malloc(c->count * esize(c->in) + 1);
    input_at(c, hi - 1, out);
    for (int r = hi - 2; r >= lo; r--) {
        input_at(c, r, t);
        apply(c->in, t, out, c->count);
    }
    free(t);
}

/* out = ((x_0 op x_1) op ...) op x_hi-1. */
static void fold_left(const struct refc *c, int hi, void *out)
{
    void *t = malloc(c->count * esize(c->in) + 1);
    input_at(c, 0, out);
    for (int r = 1; r < hi; r++) {
        input_at(c, r, t);
        apply(c->in, out, t, c->count); /* t = out op t */
        memcpy(out, t, c->count * esize(c->in));
    }
    free(t);
}

/* Member i's partial in reduce/tree: x_i op (P(i+1) op (P(i+2) op ...)),
 * children i + d for d below i's lowest set bit (every d for 0). */
static void fold_tree(const struct refc *c, int i, int n, void *out)
{
    int child[32], nc = 0;
    for (int d = 1; d < n && (i == 0 || d < (i & -i)); d <<= 1)
        if (i + d < n)
            child[nc++] = i + d;
    if (nc == 0) {
        input_at(c, i, out);
        return;
    }
    size_t nb = c->count * esize(c->in) + 1;
    fold_tree(c, child[nc - 1], n, out);
    void *t = malloc(nb);
    for (int k = nc - 2; k >= 0; k--) {
        fold_tree(c, child[k], n, t);
        apply(c->in, t, out, c->count);
    }
    input_at(c, i, t);
    apply(c->in, t, out, c->count);
    free(t);
}

/* ---- collectives ---- */

enum coll { ALLREDUCE, REDUCE, RSB, RS, SCAN, EXSCAN, NCOLL };
static const char *const coll_name[NCOLL] = {"allreduce",      "reduce", "reduce_scatter_block",
                                             "reduce_scatter", "scan",   "exscan"};
static const char *const coll_env[NCOLL] = {
    "LOOM_COLL_ALLREDUCE",      "LOOM_COLL_REDUCE", "LOOM_COLL_REDUCE_SCATTER_BLOCK",
    "LOOM_COLL_REDUCE_SCATTER", "LOOM_COLL_SCAN",   "LOOM_COLL_EXSCAN"};

enum order { NONE, FLAT, TREE, CHAIN };

/* The order the algorithm that runs is specified to combine in. */
static enum order order_of(enum coll k, int nonblocking)
{
    if (nonblocking || k == RSB || k == RS)
        return FLAT; /* the direct algorithms, allread */
    const char *f = getenv(coll_env[k]);
    bool one_domain = !getenv("HWLOC_SYNTHETIC");
    if (!f || !*f)
        return NONE;
    if (!strcmp(f, "direct") || !strcmp(f, "allread") || !strcmp(f, "tiled"))
        return FLAT;
    if (!strcmp(f, "numa"))
        return one_domain ? FLAT : NONE;
    if (!strcmp(f, "tree") || !strcmp(f, "reduce_bcast"))
        return TREE;
    if (!strcmp(f, "chain"))
        return CHAIN;
    return NONE;
}

static void spin_us(double us)
{
    double t = MPI_Wtime() + us * 1e-6;
    while (MPI_Wtime() < t)
        ;
}

/* Reduce_scatter: member r's block. */
static int rs_count(int base, int r)
{
    return base + r % 3 - (base > 0);
}

struct result {
    char *first; /* this rank's pattern, from its first result */
    size_t nb;
    int have, differ;
};

static void record(struct result *res, const void *got, size_t nb, int it, int arrival)
{
    if (!res->have) {
        res->first = malloc(nb + 1);
        memcpy(res->first, got, nb);
        res->nb = nb;
        res->have = 1;
        return;
    }
    if (nb != res->nb || memcmp(res->first, got, nb) != 0) {
        res->differ++;
        if (arrival)
            return;
        for (size_t b = 0; b < nb; b++)
            if (((const char *)got)[b] != res->first[b]) {
                size_t e = b / 8 * 8;
                double x, y;
                memcpy(&x, (const char *)got + e, 8);
                memcpy(&y, res->first + e, 8);
                fail("call %d: a second bit pattern: byte %zu: %a (first call: %a)", it, b, x, y);
            }
    }
}

/* Compares got (count elements) with the reference in the algorithm's order:
 * bit for bit when specified, else close (NaN and -0.0 aside). */
static void check_ref(const struct refc *c, int lo, int hi, enum order ord, int exclusive,
                      const void *got)
{
    size_t nb = c->count * esize(c->in);
    char *ref = malloc(nb + 1);
    if (ord == TREE)
        fold_tree(c, 0, hi, ref);
    else if (ord == CHAIN)
        fold_left(c, hi, ref);
    else
        fold_flat(c, lo, hi, ref);
    (void)exclusive;
    if (ord != NONE && memcmp(ref, got, nb) == 0) {
        free(ref);
        return;
    }
    const double *g = got, *r = (const double *)ref;
    /* MIN over a NaN gives a value that depends on the order: elements with
     * a NaN among the inputs are only checked in a specified order. */
    char *nan_in = calloc(nb / 8 + 1, 1);
    if (c->in == MIN0) {
        double *x = malloc(nb + 1);
        for (int q = lo; q < hi; q++) {
            input_at(c, q, x);
            for (size_t e = 0; e < c->count; e++)
                nan_in[e] |= isnan(x[e]);
        }
        free(x);
    }
    for (size_t e = 0; e < nb / 8; e++) {
        if (c->in == LONGSUM) {
            if (((const long *)got)[e] != ((const long *)ref)[e])
                fail("element %zu: %ld, expected %ld", e, ((const long *)got)[e],
                     ((const long *)ref)[e]);
            continue;
        }
        if (ord != NONE && memcmp(&g[e], &r[e], 8) != 0)
            fail("element %zu: %a, the specified order gives %a", e, g[e], r[e]);
        if (nan_in[e])
            continue;
        /* n additions of at most n |x| each: |x| <= 1e16, or < 2^40 */
        double n2 = (double)size * size;
        double tol = c->in == CANCEL    ? 4 * n2 * 1e16 * ldexp(1, -52)
                     : c->in == MATPROD ? 1e-9 * (fabs(r[e]) + 1)
                     : c->in == MIN0    ? 0
                                        : 4 * n2 * ldexp(1, 40 - 52);
        if (fabs(g[e] - r[e]) > tol)
            fail("element %zu: %a, expected about %a", e, g[e], r[e]);
    }
    free(nan_in);
    free(ref);
}

static void run_case(enum coll k, int nonblocking, enum input in, size_t count, int iters,
                     int arrival, int seed)
{
    int n = size;
    MPI_Datatype t = dtype(in);
    MPI_Op op = op_of(in);
    size_t es = esize(in);
    enum order ord = arrival ? NONE : order_of(k, nonblocking);
    /* Element counts: the input (all of it), this rank's result. */
    int blk = (int)((count + (size_t)n - 1) / (size_t)n);
    int *rcounts = malloc((size_t)n * sizeof(int));
    size_t total = count, off = 0, mine = count;
    if (k == RSB) {
        total = (size_t)blk * (size_t)n;
        off = (size_t)blk * (size_t)rank;
        mine = (size_t)blk;
    } else if (k == RS) {
        total = 0;
        for (int r = 0; r < n; r++) {
            rcounts[r] = rs_count(blk, r);
            if (r < rank)
                off += (size_t)rcounts[r];
            total += (size_t)rcounts[r];
        }
        mine = (size_t)rcounts[rank];
    }
    char *input = malloc(total * es + 1), *sbuf = malloc(total * es + 1);
    char *rbuf = malloc(total * es + 1);
    gen(in, rank, seed, total, input);
    struct result res[2] = {{0}, {0}}; /* [1]: Reduce to rank n - 1 */
    snprintf(where, sizeof where, "%s%s %s count %zu", nonblocking ? "i" : "", coll_name[k],
             input_name[in], count);
    for (int it = 0; it < iters; it++) {
        int in_place = it & 1, root = it & 2 ? n - 1 : 0;
        memcpy(sbuf, input, total * es);
        memcpy(rbuf, input, total * es);
        int late = (it + seed) % n;
        if (rank == late)
            spin_us(it % 3 == 0 ? 20 : 3);
        const void *s = in_place ? MPI_IN_PLACE : sbuf;
        MPI_Request rq = MPI_REQUEST_NULL;
        int c = (int)count;
        switch (k) {
        case ALLREDUCE:
            ck(nonblocking ? MPI_Iallreduce(s, rbuf, c, t, op, comm, &rq)
                           : MPI_Allreduce(s, rbuf, c, t, op, comm));
            break;
        case REDUCE:
            if (rank != root && in_place)
                s = sbuf;
            ck(nonblocking ? MPI_Ireduce(s, rbuf, c, t, op, root, comm, &rq)
                           : MPI_Reduce(s, rbuf, c, t, op, root, comm));
            break;
        case RSB:
            ck(nonblocking ? MPI_Ireduce_scatter_block(s, rbuf, blk, t, op, comm, &rq)
                           : MPI_Reduce_scatter_block(s, rbuf, blk, t, op, comm));
            break;
        case RS:
            ck(nonblocking ? MPI_Ireduce_scatter(s, rbuf, rcounts, t, op, comm, &rq)
                           : MPI_Reduce_scatter(s, rbuf, rcounts, t, op, comm));
            break;
        case SCAN:
            ck(nonblocking ? MPI_Iscan(s, rbuf, c, t, op, comm, &rq)
                           : MPI_Scan(s, rbuf, c, t, op, comm));
            break;
        case EXSCAN:
            ck(nonblocking ? MPI_Iexscan(s, rbuf, c, t, op, comm, &rq)
                           : MPI_Exscan(s, rbuf, c, t, op, comm));
            break;
        case NCOLL:
            break;
        }
        if (nonblocking)
            ck(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        if (k == REDUCE && rank != root)
            continue;
        if (k == EXSCAN && rank == 0)
            continue;
        record(&res[k == REDUCE && root != 0], rbuf, mine * es, it, arrival);
    }
    /* One pattern on every rank that has the same result. */
    if (k == ALLREDUCE || (k == REDUCE && n > 1)) {
        char *other = malloc(mine * es + 1);
        if (k == ALLREDUCE) {
            if (rank == 0)
                memcpy(other, res[0].first, mine * es);
            ck(MPI_Bcast(other, (int)(mine * es), MPI_BYTE, 0, comm));
        } else if (rank == n - 1) {
            ck(MPI_Send(res[1].first, (int)(mine * es), MPI_BYTE, 0, 0, comm));
        } else if (rank == 0) {
            ck(MPI_Recv(other, (int)(mine * es), MPI_BYTE, n - 1, 0, comm, MPI_STATUS_IGNORE));
        }
        if (!arrival && (k == ALLREDUCE || rank == 0) && mine &&
            memcmp(other, res[0].first, mine * es) != 0)
            fail("%s", k == ALLREDUCE ? "rank 0 got other bits" : "root N-1 got other bits");
        free(other);
    }
    if (arrival && rank == 0 && (res[0].differ || res[1].differ))
        printf("coll_repro: arrival order: %s: %d of %d calls gave other bits\n", where,
               res[0].differ + res[1].differ, iters);
    /* The reference, where this rank has a result. */
    struct refc rc = {in, seed, off, mine};
    if (k == ALLREDUCE || (k == REDUCE && rank == 0))
        check_ref(&rc, 0, n, ord, 0, res[0].first);
    else if (k == RSB || k == RS)
        check_ref(&rc, 0, n, ord, 0, res[0].first);
    else if (k == SCAN)
        check_ref(&rc, 0, rank + 1, ord, 0, res[0].first);
    else if (k == EXSCAN && rank > 0)
        check_ref(&rc, 0, rank, ord, 1, res[0].first);
    free(res[0].first);
    free(res[1].first);
    free(input);
    free(sbuf);
    free(rbuf);
    free(rcounts);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 1000;
    const char *colls = argc > 2 ? argv[2] : "all";
    int arrival = argc > 3 && !strncmp(argv[3], "arrival", 7);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (arrival && !strcmp(argv[3], "arrival")) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "loom_reduce_order", "arrival");
        MPI_Comm_set_info(comm, info);
        MPI_Info_free(&info);
    }
    MPI_Type_contiguous(4, MPI_DOUBLE, &mat_type);
    MPI_Type_commit(&mat_type);
    MPI_Op_create(usersum, 1, &usersum_op);
    MPI_Op_create(matprod, 0, &matprod_op);
    static const size_t counts[] = {1, 4, 300, 3000};
    int seed = 1;
    for (int nbk = 0; nbk < 2; nbk++)
        for (int k = 0; k < NCOLL; k++) {
            char name[40];
            snprintf(name, sizeof name, "%s%s", nbk ? "i" : "", coll_name[k]);
            if (strcmp(colls, "all") && !(strcmp(colls, "blocking") == 0 && !nbk) &&
                !(strcmp(colls, "nonblocking") == 0 && nbk)) {
                /* a comma list: the name must appear as an item */
                const char *p = colls;
                size_t len = strlen(name);
                bool found = false;
                while (p && *p) {
                    if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
                        found = true;
                    p = strchr(p, ',');
                    p = p ? p + 1 : NULL;
                }
                if (!found)
                    continue;
            }
            for (int in = 0; in < NINPUT; in++)
                for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
                    size_t count = counts[ci];
                    if (in == MATPROD)
                        count = count < 4 ? count : count / 4;
                    int n_it = count >= 750 ? (iters >= 200 ? iters / 10 : 20) : iters;
                    if (n_it > iters)
                        n_it = iters;
                    run_case((enum coll)k, nbk, (enum input)in, count, n_it, arrival, seed++);
                }
        }
    MPI_Op_free(&usersum_op);
    MPI_Op_free(&matprod_op);
    MPI_Type_free(&mat_type);
    MPI_Comm_free(&comm);
    if (rank == 0)
        printf("coll_repro: %d ranks ok\n", size);
    MPI_Finalize();
    return 0;
}
