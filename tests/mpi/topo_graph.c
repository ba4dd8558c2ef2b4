/* Graph and distributed graph topologies: Graph_create/get/neighbors/map on
 * a ring with chords (multiple edges and self-loops at small sizes),
 * Dist_graph_create_adjacent with weights and MPI_UNWEIGHTED (neighbours
 * in the order given, repeated edges kept), Dist_graph_create with edges
 * named by other ranks (compared as multisets: their order is the
 * implementation's), Topo_test, Comm_dup keeping the topology, errors. */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

/* The test programs are validated under Open MPI 4.1 too. STRICT marks the
 * checks that it fails: erroneous calls that the standard lets an
 * implementation leave undetected (Loom detects them) and its known
 * deviations, named where they are checked. */
#ifdef LOOM_MPI_H
#define STRICT 1
#else
#define STRICT 0
#endif

static int rank, size;

static int mod(int a)
{
    return ((a % size) + size) % size;
}

/* ---- graph: node i's neighbours are i+1, i-1 and, for even i, i+2 ---- */

static int graph_nbrs(int i, int *out)
{
    int n = 0;
    out[n++] = mod(i + 1);
    out[n++] = mod(i - 1);
    if (i % 2 == 0)
        out[n++] = mod(i + 2);
    return n;
}

static void test_graph(int nnodes)
{
    int *index = malloc((size_t)nnodes * sizeof *index);
    int *edges = malloc(3 * (size_t)nnodes * sizeof *edges);
    int ne = 0;
    for (int i = 0; i < nnodes; i++) {
        int nb[3], k = graph_nbrs(i, nb);
        for (int j = 0; j < k; j++)
            edges[ne++] = nb[j] % nnodes;
        index[i] = ne;
    }
    MPI_Comm g;
    CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, nnodes, index, edges, 1, &g), MPI_SUCCESS);
    int newrank;
    MPI_Graph_map(MPI_COMM_WORLD, nnodes, index, edges, &newrank);
    if (rank >= nnodes) {
        CHECK(g == MPI_COMM_NULL);
        CHECK(!STRICT || newrank == MPI_UNDEFINED); /* Open MPI returns the rank */
        goto out;
    }
    REQUIRE(g != MPI_COMM_NULL);
    CHECK_EQ(newrank, rank);
    int r, st, nn, nedges;
    MPI_Comm_rank(g, &r);
    CHECK_EQ(r, rank);
    MPI_Topo_test(g, &st);
    CHECK_EQ(st, MPI_GRAPH);
    MPI_Graphdims_get(g, &nn, &nedges);
    CHECK_EQ(nn, nnodes);
    CHECK_EQ(nedges, ne);
    int *gi = malloc((size_t)nnodes * sizeof *gi), *ge = malloc((size_t)ne * sizeof *ge);
    CHECK_EQ(MPI_Graph_get(g, nnodes, ne, gi, ge), MPI_SUCCESS);
    for (int i = 0; i < nnodes; i++)
        CHECK_EQ(gi[i], index[i]);
    for (int e = 0; e < ne; e++)
        CHECK_EQ(ge[e], edges[e]);
    for (int i = 0; i < nnodes; i++) {
        int cnt, nb[3], want[3], k = graph_nbrs(i, want);
        MPI_Graph_neighbors_count(g, i, &cnt);
        CHECK_EQ(cnt, k);
        CHECK_EQ(MPI_Graph_neighbors(g, i, 3, nb), MPI_SUCCESS);
        for (int j = 0; j < k && j < cnt; j++)
            CHECK_EQ(nb[j], want[j] % nnodes);
    }
    MPI_Comm dup;
    MPI_Comm_dup(g, &dup);
    MPI_Topo_test(dup, &st);
    CHECK_EQ(st, MPI_GRAPH);
    MPI_Graphdims_get(dup, &nn, &nedges);
    CHECK(nn == nnodes && nedges == ne);
    MPI_Comm_free(&dup);
    /* errors */
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    int cls, cnt, rc = MPI_Graph_neighbors_count(g, nnodes, &cnt);
    MPI_Error_class(rc, &cls);
    CHECK(!STRICT || cls == MPI_ERR_RANK);
    rc = MPI_Graph_neighbors(g, -1, 3, gi);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_RANK);
    int dims[1];
    rc = MPI_Cartdim_get(g, dims);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_TOPOLOGY);
    free(gi);
    free(ge);
    MPI_Comm_free(&g);
out:
    free(index);
    free(edges);
}

/* ---- distributed graphs ---- */

/* rank r's in-edges: r-1, r+1, r-1; out-edges: r+1, r-1, r+1 (every
 * in-edge is someone's out-edge, with the same multiplicity) */
static void adjacent(int r, int *src, int *dst)
{
    src[0] = mod(r - 1);
    src[1] = mod(r + 1);
    src[2] = mod(r - 1);
    dst[0] = mod(r + 1);
    dst[1] = mod(r - 1);
    dst[2] = mod(r + 1);
}

static void test_adjacent(bool weighted)
{
    int src[3], dst[3], sw[3], dw[3];
    adjacent(rank, src, dst);
    for (int i = 0; i < 3; i++) {
        sw[i] = 100 * rank + i;
        dw[i] = 200 * rank + i;
    }
    MPI_Comm dg;
    CHECK_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, src, weighted ? sw : MPI_UNWEIGHTED,
                                            3, dst, weighted ? dw : MPI_UNWEIGHTED, MPI_INFO_NULL,
                                            0, &dg),
             MPI_SUCCESS);
    int st, in, out, w, r, sz;
    MPI_Comm_rank(dg, &r);
    MPI_Comm_size(dg, &sz);
    CHECK(r == rank && sz == size);
    MPI_Topo_test(dg, &st);
    CHECK_EQ(st, MPI_DIST_GRAPH);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &w);
    CHECK(in == 3 && out == 3);
    CHECK_EQ(!!w, weighted);
    int gs[3], gsw[3], gd[3], gdw[3];
    CHECK_EQ(MPI_Dist_graph_neighbors(dg, 3, gs, gsw, 3, gd, gdw), MPI_SUCCESS);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(gs[i], src[i]);
        CHECK_EQ(gd[i], dst[i]);
        if (weighted) {
            CHECK_EQ(gsw[i], sw[i]);
            CHECK_EQ(gdw[i], dw[i]);
        }
    }
    MPI_Comm dup;
    MPI_Comm_dup(dg, &dup);
    MPI_Topo_test(dup, &st);
    CHECK_EQ(st, MPI_DIST_GRAPH);
    memset(gs, -1, sizeof gs);
    MPI_Dist_graph_neighbors(dup, 3, gs, MPI_UNWEIGHTED, 3, gd, MPI_UNWEIGHTED);
    for (int i = 0; i < 3; i++)
        CHECK(gs[i] == src[i] && gd[i] == dst[i]);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&dg);
}

static int cmp_pair(const void *a, const void *b)
{
    const int *x = a, *y = b;
    return x[0] != y[0] ? x[0] - y[0] : x[1] - y[1];
}

/* Sorts n (rank, weight) pairs and compares them. */
static void check_pairs(int n, int *got, int *want)
{
    qsort(got, (size_t)n, 2 * sizeof *got, cmp_pair);
    qsort(want, (size_t)n, 2 * sizeof *want, cmp_pair);
    for (int i = 0; i < 2 * n; i++)
        CHECK_EQ(got[i], want[i]);
}

/*
 * Dist_graph_create: rank r names its own out-edges r -> r+1 (weight r) and
 * r -> r+3 (weight 1000 + r); rank 0 also names the edge size-1 -> 0
 * (weight 7) on its behalf; odd ranks name nothing more; rank 1 (if any)
 * names a self-loop 1 -> 1 (weight 5).
 */
static int edges_of(int r, int *srcs, int *degs, int *dsts, int *ws)
{
    int n = 0, e = 0;
    srcs[n] = r;
    degs[n++] = 2;
    dsts[e] = mod(r + 1);
    ws[e++] = r;
    dsts[e] = mod(r + 3);
    ws[e++] = 1000 + r;
    if (r == 0) {
        srcs[n] = size - 1;
        degs[n++] = 1;
        dsts[e] = 0;
        ws[e++] = 7;
    }
    if (r == 1) {
        srcs[n] = 1;
        degs[n++] = 1;
        dsts[e] = 1;
        ws[e++] = 5;
    }
    return n;
}

static void test_general(bool weighted)
{
    int srcs[4], degs[4], dsts[8], ws[8];
    int n = edges_of(rank, srcs, degs, dsts, ws);
    MPI_Comm dg;
    CHECK_EQ(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts,
                                   weighted ? ws : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg),
             MPI_SUCCESS);
    /* what every rank named, recomputed: the expected in- and out-edges */
    int want_in[128], want_out[128], nin = 0, nout = 0;
    for (int q = 0; q < size; q++) {
        int qs[4], qd[4], qt[8], qw[8], qn = edges_of(q, qs, qd, qt, qw);
        for (int i = 0, e = 0; i < qn; i++)
            for (int k = 0; k < qd[i]; k++, e++) {
                int w = weighted ? qw[e] : 0;
                if (qs[i] == rank) {
                    want_out[2 * nout] = qt[e];
                    want_out[2 * nout++ + 1] = w;
                }
                if (qt[e] == rank) {
                    want_in[2 * nin] = qs[i];
                    want_in[2 * nin++ + 1] = w;
                }
            }
    }
    int st, in, out, w;
    MPI_Topo_test(dg, &st);
    CHECK_EQ(st, MPI_DIST_GRAPH);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &w);
    CHECK_EQ(in, nin);
    CHECK_EQ(out, nout);
    CHECK_EQ(!!w, weighted);
    if (in == nin && out == nout && nin <= 16 && nout <= 16) {
        int s[16], sw[16], d[16], dw[16], got_in[32], got_out[32];
        MPI_Dist_graph_neighbors(dg, 16, s, weighted ? sw : MPI_UNWEIGHTED, 16, d,
                                 weighted ? dw : MPI_UNWEIGHTED);
        for (int i = 0; i < nin; i++) {
            got_in[2 * i] = s[i];
            got_in[2 * i + 1] = weighted ? sw[i] : 0;
        }
        for (int i = 0; i < nout; i++) {
            got_out[2 * i] = d[i];
            got_out[2 * i + 1] = weighted ? dw[i] : 0;
        }
        check_pairs(nin, got_in, want_in);
        check_pairs(nout, got_out, want_out);
    }
    MPI_Comm_free(&dg);

    /* ranks that name no edge: MPI_WEIGHTS_EMPTY (weighted) or n = 0 */
    int one_src = 0, one_deg = 1, one_dst = mod(1), one_w = 3;
    bool named = rank == 0;
    CHECK_EQ(MPI_Dist_graph_create(MPI_COMM_WORLD, named, &one_src, &one_deg, &one_dst,
                                   named ? &one_w : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dg),
             MPI_SUCCESS);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &w);
    CHECK_EQ(in, rank == mod(1) ? 1 : 0);
    CHECK_EQ(out, rank == 0 ? 1 : 0);
    MPI_Comm_free(&dg);
}

static void test_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls, rc, x, y, z;
    rc = MPI_Graphdims_get(MPI_COMM_WORLD, &x, &y);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_TOPOLOGY);
    rc = MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &x, &y, &z);
    MPI_Error_class(rc, &cls);
    CHECK_EQ(cls, MPI_ERR_TOPOLOGY);
    int bad_src[] = {size}, w[] = {1};
    MPI_Comm dg = MPI_COMM_NULL;
    rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, bad_src, w, 0, NULL, MPI_WEIGHTS_EMPTY,
                                        MPI_INFO_NULL, 0, &dg);
    CHECK(rc != MPI_SUCCESS);
    int index[] = {1}, edges[] = {size};
    MPI_Comm g = MPI_COMM_NULL;
    rc = MPI_Graph_create(MPI_COMM_WORLD, 1, index, edges, 0, &g);
    CHECK(!STRICT || rc != MPI_SUCCESS);
    CHECK(!STRICT || g == MPI_COMM_NULL);
    rc = MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &g);
    CHECK(rc != MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    test_graph(size);
    test_graph(size > 1 ? size - 1 : 1);
    test_adjacent(true);
    test_adjacent(false);
    test_general(true);
    test_general(false);
    test_errors();

    int fails = check_failures_, total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf("topo_graph: %d ranks ok\n", size);
    MPI_Finalize();
    return check_summary();
}
