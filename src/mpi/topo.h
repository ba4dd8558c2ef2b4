/*
 * Process topologies inside the MPI layer (MPI-3.1 chapter 7): what a
 * communicator's member keeps of its topology (struct loom_comm.topo), for
 * topo.c (creation and queries) and neighbor.c (neighbourhood collectives).
 *
 * Each member holds its own copy, one malloc'd block (the struct, then its
 * int arrays), so MPI_Comm_dup copies it with one memcpy and
 * loom_comm_free() frees it with one free(). A Cartesian or graph topology
 * is the same on every member (a few ints per dimension or node and edge);
 * a distributed graph holds only the member's own edges.
 */
#ifndef LOOM_MPI_TOPO_H
#define LOOM_MPI_TOPO_H

#include <stdbool.h>
#include <stddef.h>

#include "comm/comm.h"

struct loom_topo {
    int kind;     /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    size_t bytes; /* the whole block */
    /* MPI_CART: ndims; dims, periods (0/1) and the member's coords */
    int ndims;
    int *dims, *periods, *coords;
    /* MPI_GRAPH: nnodes, nedges; index[nnodes], edges[nedges] (MPI's form) */
    int nnodes, nedges;
    int *index, *edges;
    /* MPI_DIST_GRAPH: the member's in- and out-edges, in the order given */
    int indeg, outdeg;
    bool weighted;
    int *sources, *sweights, *dests, *dweights;
};

/* A copy of t with its own pointers; NULL when out of memory. */
struct loom_topo *loom_topo_dup(const struct loom_topo *t);

/* The member's neighbours for a neighbourhood collective: in-neighbours
 * (receive blocks, in order) and out-neighbours (send blocks, in order),
 * MPI_PROC_NULL where a Cartesian edge has none. For a Cartesian topology
 * in_tag[i] is the tag the matching message carries and out_tag[j] the tag
 * a send carries (the direction it travels), so two edges between the same
 * ranks (a periodic dimension of size 1 or 2) are told apart; graphs use one
 * tag and rely on message order. The arrays have room for the degrees
 * (loom_topo_degrees()). */
void loom_topo_degrees(const struct loom_topo *t, int rank, int *indeg_p, int *outdeg_p);
void loom_topo_neighbors(const struct loom_topo *t, int rank, int *in, int *in_tag, int *out,
                         int *out_tag);

#endif
