/*
 * MPI_Alloc_mem and MPI_Free_mem (MPI-4.1 9.2), MPI_Pcontrol (15.2.4).
 *
 * Memory comes from the C heap, aligned to a cache line; no info key
 * changes that (the info argument may be MPI_INFO_NULL or any info object).
 * A request that cannot be met raises MPI_ERR_NO_MEM: one larger than the
 * machine's memory and swap together fails before asking the allocator
 * (which, under ASAN, would end the process instead of returning NULL).
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/sysinfo.h>

#include "comm/comm_impl.h"
#include "mpi/mpi_impl.h"

#define W MPI_COMM_WORLD

/* Bytes of RAM and swap, or SIZE_MAX when unknown. */
static uint64_t memory_bytes(void)
{
    struct sysinfo si;
    if (sysinfo(&si) != 0)
        return UINT64_MAX;
    return ((uint64_t)si.totalram + si.totalswap) * si.mem_unit;
}

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    const char *fn = "MPI_Alloc_mem";
    int rc = loom_mpi_check_init(fn);
    if (rc)
        return rc;
    if (size < 0)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "size %ld is negative", size);
    if (info != MPI_INFO_NULL && !loom_info_lookup(info))
        return loom_mpi_err(W, MPI_ERR_INFO, fn, "0x%x is not a valid info object", (unsigned)info);
    if (!baseptr)
        return loom_mpi_err(W, MPI_ERR_ARG, fn, "baseptr is NULL");
    void *p = NULL;
    if ((uint64_t)size > memory_bytes() || posix_memalign(&p, 64, size ? (size_t)size : 1) != 0)
        return loom_mpi_err(W, MPI_ERR_NO_MEM, fn, "cannot allocate %ld bytes", size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Alloc_mem);

int PMPI_Free_mem(void *base)
{
    int rc = loom_mpi_check_init("MPI_Free_mem");
    if (rc)
        return rc;
    free(base);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Free_mem);

/* Profiling control: Loom has no profiling of its own to switch, so any
 * level is accepted and ignored (a profiling library interposes MPI_Pcontrol). */
int PMPI_Pcontrol(const int level, ...)
{
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Pcontrol);
