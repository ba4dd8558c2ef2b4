/*
 * Partitioned point-to-point (MPI-4.1 chapter 4) between the ranks of a Loom
 * process: one copy per partition, straight from the sender's buffer into
 * the receiver's.
 *
 * A partitioned send and a partitioned receive are matched once, in the
 * order of their initialization calls (MPI-4.1 4.2.2), in a matching space
 * of their own (they never match ordinary sends and receives): the two
 * requests then share a channel. Each MPI_Start opens a round on its side.
 * A send partition marked ready (MPI_Pready) while the receiver is in the
 * same round is copied at once by the sender into the receive buffer; one
 * marked ready before the receiver has started that round is copied by the
 * receiver when it starts it, from the send buffer (which the sender may
 * not touch until its request completes). A round completes both requests
 * when every send partition is copied. The two sides may cut the message
 * into different partition counts: partitions are byte ranges of the
 * message (its type signature's bytes), so a receive partition has arrived
 * once every byte of its range is copied. A send longer than the receive
 * is truncated (the receive ends with MPI_ERR_TRUNCATE).
 *
 * One lock per channel orders the rounds, the ready marks and the copies;
 * MPI_Parrived reads per-partition byte counts without it.
 *
 * Depends on: util, datatype, pt2pt (requests).
 */
#ifndef LOOM_PART_H
#define LOOM_PART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pt2pt/p2p.h"

struct loom_type;

/* What one side of a partitioned operation names. */
struct loom_part_args {
    void *buf;
    struct loom_type *type;
    size_t count; /* elements of type per partition */
    int partitions;
    uint32_t ctx; /* the communicator's context */
    int sender;   /* world ranks of both sides; -1: MPI_PROC_NULL */
    int receiver;
    int sender_rank; /* the sender's rank in the communicator (a receive's status) */
    int tag;
};

/* Makes req (a LOOM_REQ_PART request of the caller, inactive) the send side
 * (send) or the receive side of a partitioned operation and matches it with
 * the oldest unmatched other side of the same (ctx, sender, receiver, tag),
 * if any; with a peer of -1 (MPI_PROC_NULL) it matches nothing and each
 * start completes it at once. LOOM_ERR_NOMEM when out of memory. */
int loom_part_init(loom_req *req, bool send, const struct loom_part_args *a) LOOM_MUST_CHECK;
/* Opens the next round of req (MPI_Start): active, not done. */
void loom_part_start(loom_req *req);
/* Marks send partition i of req ready (0 <= i < partitions, req active);
 * LOOM_ERR_INVALID when it is ready already in this round. */
int loom_part_ready(loom_req *req, int i) LOOM_MUST_CHECK;
/* Whether every byte of receive partition i of the active req has arrived. */
bool loom_part_arrived(loom_req *req, int i);
/* Partitions of req's side, and whether it is the send side. */
int loom_part_partitions(const loom_req *req);
bool loom_part_is_send(const loom_req *req);
/* Detaches req (inactive) from its channel, which goes with its last side. */
void loom_part_free(loom_req *req);

#endif
