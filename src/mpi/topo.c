/*
 * Process topology entry points (MPI-3.1 chapter 7): Cartesian, graph and
 * distributed graph communicators, their queries, MPI_Dims_create and
 * MPI_Topo_test. The new communicator comes from the comm layer's split
 * (Cartesian, graph: the first n ranks, in the old order) or dup
 * (distributed graphs); the topology is then attached to each member's
 * object (topo.h). reorder is accepted and ignored: ranks keep their order
 * (docs/topology.md). MPI_Dist_graph_create exchanges the edges with an
 * MPI_Alltoall and MPI_Alltoallv on the new communicator.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm_impl.h"
#include "mpi/mpi_impl.h"
#include "mpi/topo.h"

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are the addresses of these. */
LOOM_EXPORT int loom_unweighted_marker, loom_weights_empty_marker;

/* ---- the topology block ------------------------------------------------ */

/* Points t's arrays into the block after it, by its counts. */
static void layout(struct loom_topo *t)
{
    int *p = (int *)(t + 1);
    switch (t->kind) {
    case MPI_CART:
        t->dims = p;
        t->periods = p + t->ndims;
        t->coords = p + 2 * t->ndims;
        break;
    case MPI_GRAPH:
        t->index = p;
        t->edges = p + t->nnodes;
        break;
    default:
        t->sources = p;
        t->sweights = p + t->indeg;
        t->dests = p + 2 * t->indeg;
        t->dweights = p + 2 * t->indeg + t->outdeg;
        break;
    }
}

/* A block of kind with counts a, b (cart: ndims; graph: nnodes, nedges;
 * dist graph: indeg, outdeg); arrays uninitialized. */
static struct loom_topo *topo_new(int kind, int a, int b)
{
    size_t n = kind == MPI_CART    ? 3 * (size_t)a
               : kind == MPI_GRAPH ? (size_t)a + (size_t)b
                                   : 2 * ((size_t)a + (size_t)b);
    size_t bytes = sizeof(struct loom_topo) + n * sizeof(int);
    struct loom_topo *t = calloc(1, bytes);
    if (!t)
        return NULL;
    t->kind = kind;
    t->bytes = bytes;
    if (kind == MPI_CART) {
        t->ndims = a;
    } else if (kind == MPI_GRAPH) {
        t->nnodes = a;
        t->nedges = b;
    } else {
        t->indeg = a;
        t->outdeg = b;
    }
    layout(t);
    return t;
}

struct loom_topo *loom_topo_dup(const struct loom_topo *t)
{
    struct loom_topo *d = malloc(t->bytes);
    if (!d)
        return NULL;
    memcpy(d, t, t->bytes);
    layout(d);
    return d;
}

/* Row-major coordinates of rank in dims[0..ndims). */
static void rank_to_coords(int ndims, const int *dims, int rank, int *coords)
{
    for (int d = ndims - 1; d >= 0; d--) {
        coords[d] = rank % dims[d];
        rank /= dims[d];
    }
}

static int coords_to_rank(int ndims, const int *dims, const int *coords)
{
    int r = 0;
    for (int d = 0; d < ndims; d++)
        r = r * dims[d] + coords[d];
    return r;
}

/* The rank disp steps from the member along dimension d, or MPI_PROC_NULL
 * past a non-periodic edge. */
static int cart_step(const struct loom_topo *t, int d, int disp)
{
    int c[t->ndims > 0 ? t->ndims : 1];
    memcpy(c, t->coords, (size_t)t->ndims * sizeof *c);
    long long x = (long long)c[d] + disp;
    if (t->periods[d]) {
        x %= t->dims[d];
        if (x < 0)
            x += t->dims[d];
    } else if (x < 0 || x >= t->dims[d]) {
        return MPI_PROC_NULL;
    }
    c[d] = (int)x;
    return coords_to_rank(t->ndims, t->dims, c);
}

void loom_topo_degrees(const struct loom_topo *t, int rank, int *indeg_p, int *outdeg_p)
{
    if (t->kind == MPI_CART) {
        *indeg_p = *outdeg_p = 2 * t->ndims;
    } else if (t->kind == MPI_GRAPH) {
        *indeg_p = *outdeg_p = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    } else {
        *indeg_p = t->indeg;
        *outdeg_p = t->outdeg;
    }
}

void loom_topo_neighbors(const struct loom_topo *t, int rank, int *in, int *in_tag, int *out,
                         int *out_tag)
{
    if (t->kind == MPI_CART) {
        /* Per dimension: the negative neighbour, then the positive one. What
         * the negative neighbour sends us travelled in the positive
         * direction (tag 2d + 1), and the other way round. */
        for (int d = 0; d < t->ndims; d++) {
            in[2 * d] = out[2 * d] = cart_step(t, d, -1);
            in[2 * d + 1] = out[2 * d + 1] = cart_step(t, d, 1);
            in_tag[2 * d] = out_tag[2 * d + 1] = 2 * d + 1;
            in_tag[2 * d + 1] = out_tag[2 * d] = 2 * d;
        }
        return;
    }
    int indeg, outdeg;
    loom_topo_degrees(t, rank, &indeg, &outdeg);
    const int *src = t->kind == MPI_GRAPH ? t->edges + (rank ? t->index[rank - 1] : 0) : t->sources;
    const int *dst = t->kind == MPI_GRAPH ? src : t->dests;
    for (int i = 0; i < indeg; i++) {
        in[i] = src[i];
        in_tag[i] = 0;
    }
    for (int j = 0; j < outdeg; j++) {
        out[j] = dst[j];
        out_tag[j] = 0;
    }
}

/* ---- argument helpers ---------------------------------------------------- */

#define COMM_ARG(c, comm, fn)                                                                      \
    struct loom_comm *c = NULL;                                                                    \
    do {                                                                                           \
        int rc_ = loom_mpi_comm_enter(fn, comm, &c);                                               \
        if (rc_)                                                                                   \
            return rc_;                                                                            \
    } while (0)

#define NULL_ARG(comm, p, fn)                                                                      \
    do {                                                                                           \
        if (!(p))                                                                                  \
            return loom_mpi_err(comm, MPI_ERR_ARG, fn, "%s is NULL", #p);                          \
    } while (0)

static const char *kind_name(int kind)
{
    return kind == MPI_CART ? "a Cartesian" : kind == MPI_GRAPH ? "a graph" : "a distributed graph";
}

/* c's topology when it is of kind; else raises MPI_ERR_TOPOLOGY. */
static int topo_of(MPI_Comm comm, const struct loom_comm *c, int kind, const char *fn,
                   struct loom_topo **t_p)
{
    struct loom_topo *t = c->topo;
    if (!t || t->kind != kind)
        return loom_mpi_err(comm, MPI_ERR_TOPOLOGY, fn, "the communicator has %s topology, not %s",
                            t ? kind_name(t->kind) : "no", kind_name(kind) + 2);
    *t_p = t;
    return MPI_SUCCESS;
}

static int nomem(MPI_Comm comm, const char *fn)
{
    return loom_mpi_err(comm, MPI_ERR_NO_MEM, fn, "out of memory");
}

/* Checks ndims, dims and periods of a Cartesian grid for a communicator of
 * size ranks; *n_p: the grid's ranks. */
static int check_cart(MPI_Comm comm, int size, int ndims, const int *dims, const int *periods,
                      const char *fn, int *n_p)
{
    if (ndims < 0)
        return loom_mpi_err(comm, MPI_ERR_DIMS, fn, "ndims %d is negative", ndims);
    if (ndims > 0 && (!dims || !periods))
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "dims or periods is NULL");
    long long n = 1;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] <= 0)
            return loom_mpi_err(comm, MPI_ERR_DIMS, fn, "dims[%d] = %d is not positive", d,
                                dims[d]);
        n *= dims[d];
        if (n > size)
            break;
    }
    if (n > size)
        return loom_mpi_err(comm, MPI_ERR_DIMS, fn,
                            "the grid has more ranks than the communicator's %d", size);
    *n_p = (int)n;
    return MPI_SUCCESS;
}

/* Checks a graph (MPI's index/edges form) for a communicator of size ranks. */
static int check_graph(MPI_Comm comm, int size, int nnodes, const int *index, const int *edges,
                       const char *fn)
{
    if (nnodes < 0 || nnodes > size)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn,
                            "nnodes %d is not between 0 and the communicator's size %d", nnodes,
                            size);
    if (nnodes > 0 && !index)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "index is NULL");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return loom_mpi_err(comm, MPI_ERR_ARG, fn, "index[%d] = %d is less than %s", i,
                                index[i], i ? "the entry before it" : "0");
    int nedges = nnodes ? index[nnodes - 1] : 0;
    if (nedges > 0 && !edges)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "edges is NULL");
    for (int e = 0; e < nedges; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return loom_mpi_err(comm, MPI_ERR_RANK, fn, "edges[%d] = %d is not a node of 0..%d", e,
                                edges[e], nnodes - 1);
    return MPI_SUCCESS;
}

/* The first n ranks of c, in order, as a new communicator (*newc_p NULL on
 * the others). */
static int first_ranks(MPI_Comm comm, struct loom_comm *c, int n, const char *fn,
                       struct loom_comm **newc_p)
{
    if (loom_comm_split(c, c->rank < n ? 0 : MPI_UNDEFINED, c->rank, newc_p) != LOOM_OK)
        return nomem(comm, fn);
    return MPI_SUCCESS;
}

/* ---- Cartesian ----------------------------------------------------------- */

/* A Cartesian block for the member of rank `rank`. */
static struct loom_topo *cart_new(int ndims, const int *dims, const int *periods, int rank)
{
    struct loom_topo *t = topo_new(MPI_CART, ndims, 0);
    if (!t)
        return NULL;
    for (int d = 0; d < ndims; d++) {
        t->dims[d] = dims[d];
        t->periods[d] = periods[d] != 0;
    }
    rank_to_coords(ndims, t->dims, rank, t->coords);
    return t;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart)
{
    static const char fn[] = "MPI_Cart_create";
    COMM_ARG(c, comm_old, fn);
    LOOM_MPI_INTRA_ONLY(c, comm_old, fn);
    NULL_ARG(comm_old, comm_cart, fn);
    (void)reorder; /* ranks keep their order */
    int n, rc = check_cart(comm_old, c->sh->size, ndims, dims, periods, fn, &n);
    struct loom_comm *newc = NULL;
    if (rc || (rc = first_ranks(comm_old, c, n, fn, &newc)))
        return rc;
    if (!newc) {
        *comm_cart = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if (!(newc->topo = cart_new(ndims, dims, periods, newc->rank))) {
        (void)loom_comm_free(newc, false);
        return nomem(comm_old, fn);
    }
    *comm_cart = newc->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Cart_create);

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    static const char fn[] = "MPI_Cartdim_get";
    COMM_ARG(c, comm, fn);
    NULL_ARG(comm, ndims, fn);
    struct loom_topo *t = NULL;
    int rc = topo_of(comm, c, MPI_CART, fn, &t);
    if (rc)
        return rc;
    *ndims = t->ndims;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Cartdim_get);

/* Raises MPI_ERR_ARG when the caller's arrays (max entries) are shorter
 * than need. */
static int check_max(MPI_Comm comm, const char *fn, const char *what, int max, int need)
{
    if (max < need)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "%s %d is less than the %d entries needed", what,
                            max, need);
    return MPI_SUCCESS;
}

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    static const char fn[] = "MPI_Cart_get";
    COMM_ARG(c, comm, fn);
    struct loom_topo *t = NULL;
    int rc = topo_of(comm, c, MPI_CART, fn, &t);
    if (rc || (rc = check_max(comm, fn, "maxdims", maxdims, t->ndims)))
        return rc;
    if (t->ndims > 0 && (!dims || !periods || !coords))
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "dims, periods or coords is NULL");
    for (int d = 0; d < t->ndims; d++) {
        dims[d] = t->dims[d];
        periods[d] = t->periods[d];
        coords[d] = t->coords[d];
    }
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Cart_get);

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    static const char fn[] = "MPI_Cart_rank";
    COMM_ARG(c, comm, fn);
    NULL_ARG(comm, rank, fn);
    struct loom_topo *t = NULL;
    int rc = topo_of(comm, c, MPI_CART, fn, &t);
    if (rc)
        return rc;
    if (t->ndims > 0 && !coords)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "coords is NULL");
    int r = 0;
    for (int d = 0; d < t->ndims; d++) {
        int x = coords[d], n = t->dims[d];
        if (x < 0 || x >= n) {
            if (!t->periods[d])
                return loom_mpi_err(comm, MPI_ERR_ARG, fn,
                                    "coords[%d] = %d is outside 0..%d of a non-periodic dimension",
                                    d, x, n - 1);
            x %= n;
            if (x < 0)
                x += n;
        }
        r = r * n + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Cart_rank);

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    static const char fn[] = "MPI_Cart_coords";
    COMM_ARG(c, comm, fn);
    struct loom_topo *t = NULL;
    int rc = topo_of(comm, c, MPI_CART, fn, &t);
    if (rc || (rc = check_max(comm, fn, "maxdims", maxdims, t->ndims)))
        return rc;
    if (rank < 0 || rank >= c->sh->size)
        return loom_mpi_err(comm, MPI_ERR_RANK, fn,
                            "rank %d is not a rank of a communicator of size %d", rank,
                            c->sh->size);
    if (t->ndims > 0 && !coords)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "coords is NULL");
    rank_to_coords(t->ndims, t->dims, rank, coords);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Cart_coords);

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    static const char fn[] = "MPI_Cart_shift";
    COMM_ARG(c, comm, fn);
    if (!rank_source || !rank_dest)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "rank_source or rank_dest is NULL");
    struct loom_topo *t = NULL;
    int rc = topo_of(comm, c, MPI_CART, fn, &t);
    if (rc)
        return rc;
    if (direction < 0 || direction >= t->ndims)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn,
                            "direction %d is not a dimension of a %d-dimensional grid", direction,
                            t->ndims);
    *rank_source = cart_step(t, direction, -disp);
    *rank_dest = cart_step(t, direction, disp);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Cart_shift);

/*
 * The members that share their coordinates in the dropped dimensions form
 * one subgrid (the split's color: those coordinates, row-major); within it
 * the order is row-major in the kept dimensions, which is the old rank's
 * order, so the key is the old rank.
 */
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Cart_sub";
    COMM_ARG(c, comm, fn);
    NULL_ARG(comm, newcomm, fn);
    struct loom_topo *t = NULL;
    int rc = topo_of(comm, c, MPI_CART, fn, &t);
    if (rc)
        return rc;
    if (t->ndims > 0 && !remain_dims)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "remain_dims is NULL");
    int nd = t->ndims, kept = 0, color = 0;
    int dims[nd > 0 ? nd : 1], periods[nd > 0 ? nd : 1];
    for (int d = 0; d < nd; d++) {
        if (remain_dims[d]) {
            dims[kept] = t->dims[d];
            periods[kept++] = t->periods[d];
        } else {
            color = color * t->dims[d] + t->coords[d];
        }
    }
    struct loom_comm *newc = NULL;
    if (loom_comm_split(c, color, c->rank, &newc) != LOOM_OK)
        return nomem(comm, fn);
    if (!(newc->topo = cart_new(kept, dims, periods, newc->rank))) {
        (void)loom_comm_free(newc, false);
        return nomem(comm, fn);
    }
    *newcomm = newc->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Cart_sub);

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    static const char fn[] = "MPI_Cart_map";
    COMM_ARG(c, comm, fn);
    LOOM_MPI_INTRA_ONLY(c, comm, fn);
    NULL_ARG(comm, newrank, fn);
    int n, rc = check_cart(comm, c->sh->size, ndims, dims, periods, fn, &n);
    if (rc)
        return rc;
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Cart_map);

/* ---- MPI_Dims_create ------------------------------------------------------ */

/* The best split so far of the free dimensions (non-increasing). */
struct dims_search {
    int k;
    int *cur, *best;
    int best_spread; /* largest - smallest of best; INT_MAX: none yet */
};

/* Tries every non-increasing factorization of m into the free dimensions
 * from position i on, each factor at most max, keeping the one whose
 * largest and smallest factors are closest (on a tie the first found: the
 * one with the largest leading factor). */
static void dims_search(struct dims_search *s, int i, int m, int max)
{
    if (i == s->k - 1) {
        if (m > max)
            return;
        s->cur[i] = m;
        int spread = s->cur[0] - m;
        if (spread < s->best_spread) {
            s->best_spread = spread;
            memcpy(s->best, s->cur, (size_t)s->k * sizeof *s->cur);
        }
        return;
    }
    /* The factor here is at least the (k - i)-th root of m. */
    for (int f = max < m ? max : m; f >= 1; f--) {
        if (m % f)
            continue;
        long long p = 1;
        for (int j = i; j < s->k && p < m; j++)
            p *= f;
        if (p < m)
            break; /* smaller factors cannot cover m with the dims left */
        if (i > 0 && s->cur[0] - f >= s->best_spread)
            continue;
        s->cur[i] = f;
        dims_search(s, i + 1, m / f, f);
    }
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    static const char fn[] = "MPI_Dims_create";
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    MPI_Comm w = MPI_COMM_WORLD;
    if (ndims < 0)
        return loom_mpi_err(w, MPI_ERR_DIMS, fn, "ndims %d is negative", ndims);
    if (nnodes <= 0)
        return loom_mpi_err(w, MPI_ERR_DIMS, fn, "nnodes %d is not positive", nnodes);
    if (ndims > 0 && !dims)
        return loom_mpi_err(w, MPI_ERR_ARG, fn, "dims is NULL");
    int fixed = 1, nfree = 0;
    for (int d = 0; d < ndims; d++) {
        if (dims[d] < 0)
            return loom_mpi_err(w, MPI_ERR_DIMS, fn, "dims[%d] = %d is negative", d, dims[d]);
        if (dims[d] == 0)
            nfree++;
        else if (nnodes % dims[d] || (nnodes / dims[d]) % fixed)
            return loom_mpi_err(w, MPI_ERR_DIMS, fn,
                                "nnodes %d is not a multiple of the product of the given dims",
                                nnodes);
        else
            fixed *= dims[d];
    }
    if (nnodes % fixed)
        return loom_mpi_err(w, MPI_ERR_DIMS, fn,
                            "nnodes %d is not a multiple of the product %d of the given dims",
                            nnodes, fixed);
    int m = nnodes / fixed;
    if (!nfree) {
        if (m != 1)
            return loom_mpi_err(w, MPI_ERR_DIMS, fn,
                                "the given dims multiply to %d, not to nnodes %d", fixed, nnodes);
        return MPI_SUCCESS;
    }
    int cur[nfree], best[nfree];
    struct dims_search s = {.k = nfree, .cur = cur, .best = best, .best_spread = INT_MAX};
    dims_search(&s, 0, m, m);
    for (int d = 0, j = 0; d < ndims; d++)
        if (dims[d] == 0)
            dims[d] = best[j++];
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Dims_create);

/* ---- graphs ---------------------------------------------------------------- */

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph)
{
    static const char fn[] = "MPI_Graph_create";
    COMM_ARG(c, comm_old, fn);
    LOOM_MPI_INTRA_ONLY(c, comm_old, fn);
    NULL_ARG(comm_old, comm_graph, fn);
    (void)reorder;
    int rc = check_graph(comm_old, c->sh->size, nnodes, index, edges, fn);
    struct loom_comm *newc = NULL;
    if (rc || (rc = first_ranks(comm_old, c, nnodes, fn, &newc)))
        return rc;
    if (!newc) {
        *comm_graph = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    int nedges = index[nnodes - 1];
    struct loom_topo *t = topo_new(MPI_GRAPH, nnodes, nedges);
    if (!t) {
        (void)loom_comm_free(newc, false);
        return nomem(comm_old, fn);
    }
    memcpy(t->index, index, (size_t)nnodes * sizeof *index);
    memcpy(t->edges, edges, (size_t)nedges * sizeof *edges);
    newc->topo = t;
    *comm_graph = newc->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Graph_create);

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    static const char fn[] = "MPI_Graphdims_get";
    COMM_ARG(c, comm, fn);
    if (!nnodes || !nedges)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "nnodes or nedges is NULL");
    struct loom_topo *t = NULL;
    int rc = topo_of(comm, c, MPI_GRAPH, fn, &t);
    if (rc)
        return rc;
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Graphdims_get);

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    static const char fn[] = "MPI_Graph_get";
    COMM_ARG(c, comm, fn);
    struct loom_topo *t = NULL;
    int rc = topo_of(comm, c, MPI_GRAPH, fn, &t);
    if (rc || (rc = check_max(comm, fn, "maxindex", maxindex, t->nnodes)) ||
        (rc = check_max(comm, fn, "maxedges", maxedges, t->nedges)))
        return rc;
    if ((t->nnodes && !index) || (t->nedges && !edges))
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "index or edges is NULL");
    memcpy(index, t->index, (size_t)t->nnodes * sizeof *index);
    memcpy(edges, t->edges, (size_t)t->nedges * sizeof *edges);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Graph_get);

/* The graph of comm and a checked node rank. */
static int graph_node(MPI_Comm comm, const struct loom_comm *c, int rank, const char *fn,
                      struct loom_topo **t_p)
{
    int rc = topo_of(comm, c, MPI_GRAPH, fn, t_p);
    if (rc)
        return rc;
    if (rank < 0 || rank >= (*t_p)->nnodes)
        return loom_mpi_err(comm, MPI_ERR_RANK, fn, "rank %d is not a node of a graph of %d", rank,
                            (*t_p)->nnodes);
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    static const char fn[] = "MPI_Graph_neighbors_count";
    COMM_ARG(c, comm, fn);
    NULL_ARG(comm, nneighbors, fn);
    struct loom_topo *t = NULL;
    int rc = graph_node(comm, c, rank, fn, &t);
    if (rc)
        return rc;
    int out;
    loom_topo_degrees(t, rank, nneighbors, &out);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Graph_neighbors_count);

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    static const char fn[] = "MPI_Graph_neighbors";
    COMM_ARG(c, comm, fn);
    struct loom_topo *t = NULL;
    int rc = graph_node(comm, c, rank, fn, &t);
    if (rc)
        return rc;
    int first = rank ? t->index[rank - 1] : 0, n = t->index[rank] - first;
    if ((rc = check_max(comm, fn, "maxneighbors", maxneighbors, n)))
        return rc;
    if (n && !neighbors)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "neighbors is NULL");
    memcpy(neighbors, t->edges + first, (size_t)n * sizeof *neighbors);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Graph_neighbors);

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    static const char fn[] = "MPI_Graph_map";
    COMM_ARG(c, comm, fn);
    LOOM_MPI_INTRA_ONLY(c, comm, fn);
    NULL_ARG(comm, newrank, fn);
    int rc = check_graph(comm, c->sh->size, nnodes, index, edges, fn);
    if (rc)
        return rc;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Graph_map);

/* ---- distributed graphs ----------------------------------------------------- */

/* Checks n neighbour ranks of a communicator of size ranks and their
 * weights (MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY or n non-negative values). */
static int check_edges(MPI_Comm comm, int size, int n, const int *ranks, const int *weights,
                       const char *what, const char *fn)
{
    if (n < 0)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "%s degree %d is negative", what, n);
    if (n > 0 && !ranks)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "the %s ranks are NULL", what);
    for (int i = 0; i < n; i++)
        if (ranks[i] < 0 || ranks[i] >= size)
            return loom_mpi_err(comm, MPI_ERR_RANK, fn,
                                "%s rank %d is not a rank of a communicator of size %d", what,
                                ranks[i], size);
    if (n > 0 && (!weights || weights == MPI_WEIGHTS_EMPTY))
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "%s weights are %s for %d edges", what,
                            weights ? "MPI_WEIGHTS_EMPTY" : "NULL", n);
    if (weights != MPI_UNWEIGHTED)
        for (int i = 0; i < n; i++)
            if (weights[i] < 0)
                return loom_mpi_err(comm, MPI_ERR_ARG, fn, "%s weight %d is negative", what,
                                    weights[i]);
    return MPI_SUCCESS;
}

static void copy_weights(int *to, const int *weights, int n)
{
    for (int i = 0; i < n; i++)
        to[i] = weights == MPI_UNWEIGHTED ? 1 : weights[i];
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create_adjacent";
    COMM_ARG(c, comm_old, fn);
    LOOM_MPI_INTRA_ONLY(c, comm_old, fn);
    NULL_ARG(comm_old, comm_dist_graph, fn);
    (void)reorder;
    if (info != MPI_INFO_NULL && !loom_info_lookup(info))
        return loom_mpi_err(comm_old, MPI_ERR_INFO, fn, "0x%x is not a valid info object",
                            (unsigned)info);
    int size = c->sh->size;
    int rc = check_edges(comm_old, size, indegree, sources, sourceweights, "source", fn);
    if (rc ||
        (rc = check_edges(comm_old, size, outdegree, destinations, destweights, "destination", fn)))
        return rc;
    struct loom_topo *t = topo_new(MPI_DIST_GRAPH, indegree, outdegree);
    if (!t)
        return nomem(comm_old, fn);
    t->weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
    memcpy(t->sources, sources, (size_t)indegree * sizeof *sources);
    copy_weights(t->sweights, sourceweights, indegree);
    memcpy(t->dests, destinations, (size_t)outdegree * sizeof *destinations);
    copy_weights(t->dweights, destweights, outdegree);
    struct loom_comm *newc;
    if (loom_comm_dup(c, &newc) != LOOM_OK) {
        free(t);
        return nomem(comm_old, fn);
    }
    newc->topo = t;
    *comm_dist_graph = newc->handle;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Dist_graph_create_adjacent);

/*
 * MPI_Dist_graph_create: every rank may name any edge. Each edge (s, d, w)
 * goes, as three ints, to s (an out-edge) and to d (an in-edge); one
 * MPI_Alltoall of counts and one MPI_Alltoallv of the triples on the new
 * communicator deliver them. A rank lists its edges by the rank that named
 * them, then in the order that rank gave them.
 */
struct edge_plan {
    int *scount, *sdispl, *rcount, *rdispl, *sbuf, *rbuf;
};

static void plan_free(struct edge_plan *p)
{
    free(p->scount);
    free(p->sbuf);
    free(p->rbuf);
}

/* Calls fn(p, rank, triple) for each edge (s, d, w) of the call, for each of
 * its ends. */
static void for_each_edge(int n, const int *sources, const int *degrees, const int *dests,
                          const int *weights, void (*fn)(struct edge_plan *, int, const int *),
                          struct edge_plan *p)
{
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            int triple[3] = {sources[i], dests[e], weights == MPI_UNWEIGHTED ? 1 : weights[e]};
            fn(p, triple[0], triple);
            if (triple[1] != triple[0]) /* a self-loop goes once, and is both */
                fn(p, triple[1], triple);
        }
}

static void count_edge(struct edge_plan *p, int to, const int *triple)
{
    (void)triple;
    p->scount[to] += 3;
}

static void put_edge(struct edge_plan *p, int to, const int *triple)
{
    memcpy(p->sbuf + p->sdispl[to], triple, 3 * sizeof *triple);
    p->sdispl[to] += 3;
}

/* Builds c's topology from the triples it received (rbuf, n ints). */
static struct loom_topo *dist_from_triples(const int *rbuf, int n, int me, bool weighted)
{
    int indeg = 0, outdeg = 0;
    for (int i = 0; i < n; i += 3) {
        outdeg += rbuf[i] == me;
        indeg += rbuf[i + 1] == me;
    }
    struct loom_topo *t = topo_new(MPI_DIST_GRAPH, indeg, outdeg);
    if (!t)
        return NULL;
    t->weighted = weighted;
    int in = 0, out = 0;
    for (int i = 0; i < n; i += 3) {
        if (rbuf[i] == me) {
            t->dests[out] = rbuf[i + 1];
            t->dweights[out++] = rbuf[i + 2];
        }
        if (rbuf[i + 1] == me) {
            t->sources[in] = rbuf[i];
            t->sweights[in++] = rbuf[i + 2];
        }
    }
    return t;
}

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create";
    COMM_ARG(c, comm_old, fn);
    LOOM_MPI_INTRA_ONLY(c, comm_old, fn);
    NULL_ARG(comm_old, comm_dist_graph, fn);
    (void)reorder;
    if (info != MPI_INFO_NULL && !loom_info_lookup(info))
        return loom_mpi_err(comm_old, MPI_ERR_INFO, fn, "0x%x is not a valid info object",
                            (unsigned)info);
    int size = c->sh->size, rc;
    if (n < 0)
        return loom_mpi_err(comm_old, MPI_ERR_ARG, fn, "n %d is negative", n);
    if (n > 0 && (!sources || !degrees))
        return loom_mpi_err(comm_old, MPI_ERR_ARG, fn, "sources or degrees is NULL");
    int nedges = 0;
    for (int i = 0; i < n; i++) {
        if (sources[i] < 0 || sources[i] >= size)
            return loom_mpi_err(comm_old, MPI_ERR_RANK, fn,
                                "source %d is not a rank of a communicator of size %d", sources[i],
                                size);
        if (degrees[i] < 0)
            return loom_mpi_err(comm_old, MPI_ERR_ARG, fn, "degrees[%d] = %d is negative", i,
                                degrees[i]);
        nedges += degrees[i];
    }
    if ((rc = check_edges(comm_old, size, nedges, destinations, weights, "destination", fn)))
        return rc;
    struct loom_comm *newc;
    if (loom_comm_dup(c, &newc) != LOOM_OK)
        return nomem(comm_old, fn);
    MPI_Comm nc = newc->handle;
    struct edge_plan p = {0};
    p.scount = calloc(4 * (size_t)size, sizeof(int));
    p.sbuf = malloc((6 * (size_t)nedges + 1) * sizeof(int));
    if (!p.scount || !p.sbuf)
        goto err_nomem;
    p.sdispl = p.scount + size;
    p.rcount = p.scount + 2 * size;
    p.rdispl = p.scount + 3 * size;
    for_each_edge(n, sources, degrees, destinations, weights, count_edge, &p);
    for (int r = 1; r < size; r++)
        p.sdispl[r] = p.sdispl[r - 1] + p.scount[r - 1];
    for_each_edge(n, sources, degrees, destinations, weights, put_edge, &p);
    for (int r = 0; r < size; r++)
        p.sdispl[r] -= p.scount[r];
    if ((rc = PMPI_Alltoall(p.scount, 1, MPI_INT, p.rcount, 1, MPI_INT, nc)))
        goto err;
    int total = 0;
    for (int r = 0; r < size; r++) {
        p.rdispl[r] = total;
        total += p.rcount[r];
    }
    if (!(p.rbuf = malloc(((size_t)total + 1) * sizeof(int))))
        goto err_nomem;
    if ((rc = PMPI_Alltoallv(p.sbuf, p.scount, p.sdispl, MPI_INT, p.rbuf, p.rcount, p.rdispl,
                             MPI_INT, nc)))
        goto err;
    struct loom_topo *t = dist_from_triples(p.rbuf, total, newc->rank, weights != MPI_UNWEIGHTED);
    if (!t)
        goto err_nomem;
    newc->topo = t;
    plan_free(&p);
    *comm_dist_graph = nc;
    return MPI_SUCCESS;

err_nomem:
    rc = nomem(comm_old, fn);
err:
    plan_free(&p);
    (void)loom_comm_free(newc, false);
    return rc;
}
LOOM_MPI_ALIAS(Dist_graph_create);

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    static const char fn[] = "MPI_Dist_graph_neighbors_count";
    COMM_ARG(c, comm, fn);
    if (!indegree || !outdegree || !weighted)
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "indegree, outdegree or weighted is NULL");
    struct loom_topo *t = NULL;
    int rc = topo_of(comm, c, MPI_DIST_GRAPH, fn, &t);
    if (rc)
        return rc;
    *indegree = t->indeg;
    *outdegree = t->outdeg;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Dist_graph_neighbors_count);

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[])
{
    static const char fn[] = "MPI_Dist_graph_neighbors";
    COMM_ARG(c, comm, fn);
    struct loom_topo *t = NULL;
    int rc = topo_of(comm, c, MPI_DIST_GRAPH, fn, &t);
    if (rc || (rc = check_max(comm, fn, "maxindegree", maxindegree, t->indeg)) ||
        (rc = check_max(comm, fn, "maxoutdegree", maxoutdegree, t->outdeg)))
        return rc;
    if ((t->indeg && !sources) || (t->outdeg && !destinations))
        return loom_mpi_err(comm, MPI_ERR_ARG, fn, "sources or destinations is NULL");
    memcpy(sources, t->sources, (size_t)t->indeg * sizeof *sources);
    memcpy(destinations, t->dests, (size_t)t->outdeg * sizeof *destinations);
    if (t->weighted && sourceweights && sourceweights != MPI_UNWEIGHTED &&
        sourceweights != MPI_WEIGHTS_EMPTY)
        memcpy(sourceweights, t->sweights, (size_t)t->indeg * sizeof *sourceweights);
    if (t->weighted && destweights && destweights != MPI_UNWEIGHTED &&
        destweights != MPI_WEIGHTS_EMPTY)
        memcpy(destweights, t->dweights, (size_t)t->outdeg * sizeof *destweights);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Dist_graph_neighbors);

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    static const char fn[] = "MPI_Topo_test";
    COMM_ARG(c, comm, fn);
    NULL_ARG(comm, status, fn);
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Topo_test);
