/* Per-collective definitions shared by coll.c (blocking) and icoll.c
 * (nonblocking).  The program is compiled once per collective with
 * -DCOLL_<NAME>; each binary calls only the collective it measures.
 *
 * Message size convention (as OSU): the size is the data one rank
 * contributes or receives per peer: bcast/reduce/allreduce/scan/exscan
 * move `size` bytes; gather/scatter/allgather/alltoall move `size` bytes
 * per rank pair; reduce_scatter(_block) give each rank `size` bytes of the
 * result.  Reductions use MPI_FLOAT with MPI_SUM (sizes from 4 bytes).
 *
 * Each definition provides NAME, SIZED (0: no message size), MINSZ,
 * SBYTES/RBYTES (bytes of the send/receive buffers for size s and n
 * ranks), and CALL(sb, rb, s) or ICALL(sb, rb, s, req). */

#define C       MPI_COMM_WORLD
#define FCNT(s) ((int)((s) / sizeof(float)))
#define SIZED   1
#define MINSZ   1

#if defined(COLL_BARRIER)
#define NAME "barrier"
#undef SIZED
#define SIZED           0
#define SBYTES(s, n)    0
#define RBYTES(s, n)    0
#define CALL(sb, rb, s) MPI_Barrier(C)
#elif defined(COLL_BCAST)
#define NAME            "bcast"
#define SBYTES(s, n)    (s)
#define RBYTES(s, n)    0
#define CALL(sb, rb, s) MPI_Bcast(sb, (int)(s), MPI_CHAR, 0, C)
#elif defined(COLL_GATHER)
#define NAME            "gather"
#define SBYTES(s, n)    (s)
#define RBYTES(s, n)    ((s) * (n))
#define CALL(sb, rb, s) MPI_Gather(sb, (int)(s), MPI_CHAR, rb, (int)(s), MPI_CHAR, 0, C)
#elif defined(COLL_GATHERV)
#define NAME            "gatherv"
#define SBYTES(s, n)    (s)
#define RBYTES(s, n)    ((s) * (n))
#define CALL(sb, rb, s) MPI_Gatherv(sb, (int)(s), MPI_CHAR, rb, cnt, dsp, MPI_CHAR, 0, C)
#elif defined(COLL_SCATTER)
#define NAME            "scatter"
#define SBYTES(s, n)    ((s) * (n))
#define RBYTES(s, n)    (s)
#define CALL(sb, rb, s) MPI_Scatter(sb, (int)(s), MPI_CHAR, rb, (int)(s), MPI_CHAR, 0, C)
#elif defined(COLL_SCATTERV)
#define NAME            "scatterv"
#define SBYTES(s, n)    ((s) * (n))
#define RBYTES(s, n)    (s)
#define CALL(sb, rb, s) MPI_Scatterv(sb, cnt, dsp, MPI_CHAR, rb, (int)(s), MPI_CHAR, 0, C)
#elif defined(COLL_ALLGATHER)
#define NAME            "allgather"
#define SBYTES(s, n)    (s)
#define RBYTES(s, n)    ((s) * (n))
#define CALL(sb, rb, s) MPI_Allgather(sb, (int)(s), MPI_CHAR, rb, (int)(s), MPI_CHAR, C)
#elif defined(COLL_ALLGATHERV)
#define NAME            "allgatherv"
#define SBYTES(s, n)    (s)
#define RBYTES(s, n)    ((s) * (n))
#define CALL(sb, rb, s) MPI_Allgatherv(sb, (int)(s), MPI_CHAR, rb, cnt, dsp, MPI_CHAR, C)
#elif defined(COLL_ALLTOALL)
#define NAME            "alltoall"
#define SBYTES(s, n)    ((s) * (n))
#define RBYTES(s, n)    ((s) * (n))
#define CALL(sb, rb, s) MPI_Alltoall(sb, (int)(s), MPI_CHAR, rb, (int)(s), MPI_CHAR, C)
#elif defined(COLL_ALLTOALLV)
#define NAME            "alltoallv"
#define SBYTES(s, n)    ((s) * (n))
#define RBYTES(s, n)    ((s) * (n))
#define CALL(sb, rb, s) MPI_Alltoallv(sb, cnt, dsp, MPI_CHAR, rb, cnt, dsp, MPI_CHAR, C)
#elif defined(COLL_ALLTOALLW)
#define NAME            "alltoallw"
#define SBYTES(s, n)    ((s) * (n))
#define RBYTES(s, n)    ((s) * (n))
#define CALL(sb, rb, s) MPI_Alltoallw(sb, cnt, dsp, typ, rb, cnt, dsp, typ, C)
#elif defined(COLL_REDUCE)
#define NAME "reduce"
#undef MINSZ
#define MINSZ           4
#define SBYTES(s, n)    (s)
#define RBYTES(s, n)    (s)
#define CALL(sb, rb, s) MPI_Reduce(sb, rb, FCNT(s), MPI_FLOAT, MPI_SUM, 0, C)
#elif defined(COLL_ALLREDUCE)
#define NAME "allreduce"
#undef MINSZ
#define MINSZ           4
#define SBYTES(s, n)    (s)
#define RBYTES(s, n)    (s)
#define CALL(sb, rb, s) MPI_Allreduce(sb, rb, FCNT(s), MPI_FLOAT, MPI_SUM, C)
#elif defined(COLL_REDUCE_SCATTER)
#define NAME "reduce_scatter"
#undef MINSZ
#define MINSZ           4
#define SBYTES(s, n)    ((s) * (n))
#define RBYTES(s, n)    (s)
#define CALL(sb, rb, s) MPI_Reduce_scatter(sb, rb, fcnt, MPI_FLOAT, MPI_SUM, C)
#elif defined(COLL_REDUCE_SCATTER_BLOCK)
#define NAME "reduce_scatter_block"
#undef MINSZ
#define MINSZ           4
#define SBYTES(s, n)    ((s) * (n))
#define RBYTES(s, n)    (s)
#define CALL(sb, rb, s) MPI_Reduce_scatter_block(sb, rb, FCNT(s), MPI_FLOAT, MPI_SUM, C)
#elif defined(COLL_SCAN)
#define NAME "scan"
#undef MINSZ
#define MINSZ           4
#define SBYTES(s, n)    (s)
#define RBYTES(s, n)    (s)
#define CALL(sb, rb, s) MPI_Scan(sb, rb, FCNT(s), MPI_FLOAT, MPI_SUM, C)
#elif defined(COLL_EXSCAN)
#define NAME "exscan"
#undef MINSZ
#define MINSZ           4
#define SBYTES(s, n)    (s)
#define RBYTES(s, n)    (s)
#define CALL(sb, rb, s) MPI_Exscan(sb, rb, FCNT(s), MPI_FLOAT, MPI_SUM, C)
/* nonblocking */
#elif defined(COLL_IBARRIER)
#define NAME "ibarrier"
#undef SIZED
#define SIZED               0
#define SBYTES(s, n)        0
#define RBYTES(s, n)        0
#define ICALL(sb, rb, s, r) MPI_Ibarrier(C, r)
#elif defined(COLL_IBCAST)
#define NAME                "ibcast"
#define SBYTES(s, n)        (s)
#define RBYTES(s, n)        0
#define ICALL(sb, rb, s, r) MPI_Ibcast(sb, (int)(s), MPI_CHAR, 0, C, r)
#elif defined(COLL_IREDUCE)
#define NAME "ireduce"
#undef MINSZ
#define MINSZ               4
#define SBYTES(s, n)        (s)
#define RBYTES(s, n)        (s)
#define ICALL(sb, rb, s, r) MPI_Ireduce(sb, rb, FCNT(s), MPI_FLOAT, MPI_SUM, 0, C, r)
#elif defined(COLL_IALLREDUCE)
#define NAME "iallreduce"
#undef MINSZ
#define MINSZ               4
#define SBYTES(s, n)        (s)
#define RBYTES(s, n)        (s)
#define ICALL(sb, rb, s, r) MPI_Iallreduce(sb, rb, FCNT(s), MPI_FLOAT, MPI_SUM, C, r)
#elif defined(COLL_IALLGATHER)
#define NAME                "iallgather"
#define SBYTES(s, n)        (s)
#define RBYTES(s, n)        ((s) * (n))
#define ICALL(sb, rb, s, r) MPI_Iallgather(sb, (int)(s), MPI_CHAR, rb, (int)(s), MPI_CHAR, C, r)
#elif defined(COLL_IALLTOALL)
#define NAME                "ialltoall"
#define SBYTES(s, n)        ((s) * (n))
#define RBYTES(s, n)        ((s) * (n))
#define ICALL(sb, rb, s, r) MPI_Ialltoall(sb, (int)(s), MPI_CHAR, rb, (int)(s), MPI_CHAR, C, r)
#elif defined(COLL_IGATHER)
#define NAME                "igather"
#define SBYTES(s, n)        (s)
#define RBYTES(s, n)        ((s) * (n))
#define ICALL(sb, rb, s, r) MPI_Igather(sb, (int)(s), MPI_CHAR, rb, (int)(s), MPI_CHAR, 0, C, r)
#elif defined(COLL_ISCATTER)
#define NAME                "iscatter"
#define SBYTES(s, n)        ((s) * (n))
#define RBYTES(s, n)        (s)
#define ICALL(sb, rb, s, r) MPI_Iscatter(sb, (int)(s), MPI_CHAR, rb, (int)(s), MPI_CHAR, 0, C, r)
#else
#error "compile with -DCOLL_<NAME>, e.g. -DCOLL_ALLREDUCE"
#endif

#include <stddef.h>

/* SBYTES and RBYTES as functions (bench_fit_max() takes them). */
static inline size_t sbytes(size_t s, size_t n)
{
    (void)s, (void)n;
    return SBYTES(s, n);
}
static inline size_t rbytes(size_t s, size_t n)
{
    (void)s, (void)n;
    return RBYTES(s, n);
}
