/*
 * MPI_Barrier on MPI_COMM_WORLD: a sense-reversing central counter. The last
 * rank to arrive opens the next generation and wakes every parked rank, each
 * through its own waiter slot (O(1) per rank, no scans of run queues).
 * Waiting ranks spin while alone on their worker, else park.
 * Cost: N atomic increments on one line, then N wake-ups by the last rank.
 * MPI_Finalize uses it; MPI_Barrier is a collective (src/coll).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"
#include "util/log.h"

struct slot {
    loom_waiter_slot waiter;
} LOOM_ALIGNED_CL;

static struct {
    _Atomic int arrived LOOM_ALIGNED_CL;
    _Atomic unsigned gen LOOM_ALIGNED_CL;
    int nranks;
    struct slot *slots;
} world;

struct gen_wait {
    unsigned gen;
};

static bool gen_passed(const void *arg)
{
    const struct gen_wait *w = arg;
    return atomic_load_explicit(&world.gen, memory_order_acquire) != w->gen;
}

int loom_mpi_barrier_init(int nranks)
{
    world.nranks = nranks;
    world.slots = aligned_alloc(LOOM_CACHE_LINE, (size_t)nranks * sizeof(struct slot));
    if (!world.slots)
        return LOOM_ERR_NOMEM;
    memset(world.slots, 0, (size_t)nranks * sizeof(struct slot));
    return LOOM_OK;
}

static void barrier_describe(const struct loom_mpi_wait *w, char *buf, size_t n)
{
    (void)w;
    snprintf(buf, n, "in MPI_Finalize, which waits for every rank of MPI_COMM_WORLD");
}

static int barrier_peers(const struct loom_mpi_wait *w, int *world_ranks, int max)
{
    (void)w;
    int n = world.nranks < max ? world.nranks : max;
    for (int i = 0; i < n; i++)
        world_ranks[i] = i;
    return n;
}

void loom_mpi_barrier_world(int rank)
{
    if (world.nranks <= 1)
        return;
    struct gen_wait w = {atomic_load_explicit(&world.gen, memory_order_acquire)};
    /* acq_rel: the last arriver sees every rank's writes before the barrier. */
    if (atomic_fetch_add_explicit(&world.arrived, 1, memory_order_acq_rel) == world.nranks - 1) {
        atomic_store_explicit(&world.arrived, 0, memory_order_relaxed);
        /* seq_cst: the new generation is visible before we look at the
         * slots, pairing with the waiter's store to its slot. */
        atomic_fetch_add_explicit(&world.gen, 1, memory_order_seq_cst);
        for (int i = 0; i < world.nranks; i++)
            if (i != rank)
                loom_ult_notify(&world.slots[i].waiter);
        return;
    }
    struct loom_mpi_wait dw = {barrier_describe, barrier_peers, NULL, 0xb0b0b0b0ull << 32 | w.gen,
                               false};
    loom_mpi_wait_enter(&dw);
    loom_ult_wait(gen_passed, &w, &world.slots[rank].waiter);
    loom_mpi_wait_leave();
}
