/*
 * Conversions between C and Fortran handles (MPI-4.1 19.3.4) for the handle
 * kinds Loom has, and of the status.
 *
 * Communicators, datatypes, groups, ops, info objects and error handlers are
 * ints already (util/handle.h): MPI_Fint is int, and the conversion keeps
 * the value, so a Fortran handle names the same object in every rank, as the
 * C handle does. Requests and messages are pointers: the first conversion of
 * one enters it in a job-wide table and its Fortran handle is its index + 2
 * (0 is MPI_REQUEST_NULL / MPI_MESSAGE_NULL, 1 MPI_MESSAGE_NO_PROC); the
 * table keeps each pointer it has seen (requests are recycled in per-rank
 * pools, so it stays as large as the requests ever converted at once).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

MPI_Fint PMPI_Comm_c2f(MPI_Comm comm)
{
    return (MPI_Fint)comm;
}
LOOM_MPI_ALIAS(Comm_c2f);

MPI_Comm PMPI_Comm_f2c(MPI_Fint comm)
{
    return (MPI_Comm)comm;
}
LOOM_MPI_ALIAS(Comm_f2c);

MPI_Fint PMPI_Type_c2f(MPI_Datatype datatype)
{
    return (MPI_Fint)datatype;
}
LOOM_MPI_ALIAS(Type_c2f);

MPI_Datatype PMPI_Type_f2c(MPI_Fint datatype)
{
    return (MPI_Datatype)datatype;
}
LOOM_MPI_ALIAS(Type_f2c);

MPI_Fint PMPI_Group_c2f(MPI_Group group)
{
    return (MPI_Fint)group;
}
LOOM_MPI_ALIAS(Group_c2f);

MPI_Group PMPI_Group_f2c(MPI_Fint group)
{
    return (MPI_Group)group;
}
LOOM_MPI_ALIAS(Group_f2c);

MPI_Fint PMPI_Op_c2f(MPI_Op op)
{
    return (MPI_Fint)op;
}
LOOM_MPI_ALIAS(Op_c2f);

MPI_Op PMPI_Op_f2c(MPI_Fint op)
{
    return (MPI_Op)op;
}
LOOM_MPI_ALIAS(Op_f2c);

MPI_Fint PMPI_Info_c2f(MPI_Info info)
{
    return (MPI_Fint)info;
}
LOOM_MPI_ALIAS(Info_c2f);

MPI_Info PMPI_Info_f2c(MPI_Fint info)
{
    return (MPI_Info)info;
}
LOOM_MPI_ALIAS(Info_f2c);

MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler errhandler)
{
    return (MPI_Fint)errhandler;
}
LOOM_MPI_ALIAS(Errhandler_c2f);

MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint errhandler)
{
    return (MPI_Errhandler)errhandler;
}
LOOM_MPI_ALIAS(Errhandler_f2c);

/* ---- pointer handles: a table of the pointers converted so far ---- */

#define FIRST_INDEX 2 /* Fortran handles 0 and 1 are the null handles */

static struct {
    pthread_mutex_t lock;
    void **ptrs;   /* by index */
    int n, cap;    /* entries, capacity of ptrs */
    int *slots;    /* open addressing: index + 1, 0 empty */
    size_t nslots; /* a power of two, at least 2 * cap */
} table = {.lock = PTHREAD_MUTEX_INITIALIZER};

static size_t slot_of(const void *p, size_t nslots)
{
    uintptr_t h = (uintptr_t)p;
    h ^= h >> 17;
    h *= 0x9e3779b97f4a7c15u;
    return (size_t)(h >> 7) & (nslots - 1);
}

/* Grows the table so that one more entry fits; false when out of memory. */
static bool table_grow(void)
{
    int cap = table.cap ? 2 * table.cap : 64;
    void **ptrs = realloc(table.ptrs, (size_t)cap * sizeof *ptrs);
    if (!ptrs)
        return false;
    table.ptrs = ptrs;
    size_t nslots = 4 * (size_t)cap;
    int *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return false;
    for (int i = 0; i < table.n; i++) {
        size_t s = slot_of(ptrs[i], nslots);
        while (slots[s])
            s = (s + 1) & (nslots - 1);
        slots[s] = i + 1;
    }
    free(table.slots);
    table.slots = slots;
    table.nslots = nslots;
    table.cap = cap;
    return true;
}

/* The Fortran handle of pointer p (entered on first use); 0 when out of memory. */
static MPI_Fint ptr_c2f(void *p)
{
    MPI_Fint f = 0;
    pthread_mutex_lock(&table.lock);
    if (table.nslots) {
        for (size_t s = slot_of(p, table.nslots); table.slots[s]; s = (s + 1) & (table.nslots - 1))
            if (table.ptrs[table.slots[s] - 1] == p) {
                f = table.slots[s] - 1 + FIRST_INDEX;
                goto out;
            }
    }
    if (table.n == table.cap && !table_grow())
        goto out;
    table.ptrs[table.n] = p;
    size_t s = slot_of(p, table.nslots);
    while (table.slots[s])
        s = (s + 1) & (table.nslots - 1);
    table.slots[s] = table.n + 1;
    f = table.n++ + FIRST_INDEX;
out:
    pthread_mutex_unlock(&table.lock);
    return f;
}

/* The pointer behind Fortran handle f (>= FIRST_INDEX), or NULL. */
static void *ptr_f2c(MPI_Fint f)
{
    void *p = NULL;
    pthread_mutex_lock(&table.lock);
    if (f >= FIRST_INDEX && f - FIRST_INDEX < table.n)
        p = table.ptrs[f - FIRST_INDEX];
    pthread_mutex_unlock(&table.lock);
    return p;
}

MPI_Fint PMPI_Request_c2f(MPI_Request request)
{
    return request == MPI_REQUEST_NULL ? 0 : ptr_c2f(request);
}
LOOM_MPI_ALIAS(Request_c2f);

MPI_Request PMPI_Request_f2c(MPI_Fint request)
{
    return (MPI_Request)ptr_f2c(request);
}
LOOM_MPI_ALIAS(Request_f2c);

MPI_Fint PMPI_Message_c2f(MPI_Message message)
{
    if (message == MPI_MESSAGE_NULL)
        return 0;
    if (message == MPI_MESSAGE_NO_PROC)
        return 1;
    return ptr_c2f(message);
}
LOOM_MPI_ALIAS(Message_c2f);

MPI_Message PMPI_Message_f2c(MPI_Fint message)
{
    if (message == 1)
        return MPI_MESSAGE_NO_PROC;
    return (MPI_Message)ptr_f2c(message);
}
LOOM_MPI_ALIAS(Message_f2c);

/* ---- the status: MPI_F_STATUS_SIZE MPI_Fints, the same bytes ---- */

_Static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "a status is a whole number of Fints");
_Static_assert(offsetof(MPI_Status, MPI_SOURCE) == MPI_F_SOURCE * sizeof(MPI_Fint) &&
                   offsetof(MPI_Status, MPI_TAG) == MPI_F_TAG * sizeof(MPI_Fint) &&
                   offsetof(MPI_Status, MPI_ERROR) == MPI_F_ERROR * sizeof(MPI_Fint),
               "MPI_F_SOURCE, MPI_F_TAG, MPI_F_ERROR");

int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    if (!c_status || c_status == MPI_STATUS_IGNORE || !f_status)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_c2f", "%s",
                            !f_status ? "f_status is NULL or MPI_F_STATUS_IGNORE"
                                      : "c_status is NULL or MPI_STATUS_IGNORE");
    memcpy(f_status, c_status, sizeof *c_status);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Status_c2f);

int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    if (!f_status || !c_status || c_status == MPI_STATUS_IGNORE)
        return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_f2c", "%s",
                            !f_status ? "f_status is NULL or MPI_F_STATUS_IGNORE"
                                      : "c_status is NULL or MPI_STATUS_IGNORE");
    memcpy(c_status, f_status, sizeof *c_status);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Status_f2c);
