/*
 * Handles: MPI objects are named by 32-bit ints that encode what they are, so
 * a wrong, stale or freed handle is detected and reported as the right error
 * class instead of being dereferenced (DESIGN.md, "Handles").
 *
 *   bits 31..30  storage: 1 = predefined (builtin), 2 = table entry, 0 = null
 *   bits 29..26  kind (enum loom_kind)
 *   bits 25..18  generation of a table entry (detects use after free)
 *   bits 17..0   index (predefined: the object's number)
 *
 * Tables are job-wide (every rank may look up any handle, which lets a
 * receiver use the sender's datatype while copying directly between the two
 * layouts) and grow in chunks that never move, so lookups take no lock.
 * Allocation and freeing take a per-table lock (not on any fast path).
 * Requests are not in tables: MPI_Request is a pointer into per-rank pools.
 */
#ifndef LOOM_UTIL_HANDLE_H
#define LOOM_UTIL_HANDLE_H

#include <stdbool.h>
#include <stdint.h>

#include "util/common.h"

enum loom_kind {
    LOOM_KIND_COMM = 1,
    LOOM_KIND_GROUP = 2,
    LOOM_KIND_DATATYPE = 3,
    LOOM_KIND_ERRHANDLER = 5,
    LOOM_KIND_OP = 6,
    LOOM_KIND_INFO = 7,
    LOOM_KIND_KEYVAL = 9,
    LOOM_KIND_WIN = 10,
    LOOM_KIND_MESSAGE = 12,
    LOOM_KIND_SESSION = 14,
};

#define LOOM_HANDLE_BUILTIN   1u
#define LOOM_HANDLE_TABLE     2u
#define LOOM_HANDLE_MAX_INDEX ((1u << 18) - 1)

#define LOOM_HANDLE(storage, kind, index)                                                          \
    ((int)(((unsigned)(storage) << 30) | ((unsigned)(kind) << 26) | (unsigned)(index)))
#define LOOM_HANDLE_STORAGE(h) (((unsigned)(h) >> 30) & 3u)
#define LOOM_HANDLE_KIND(h)    (((unsigned)(h) >> 26) & 15u)
#define LOOM_HANDLE_GEN(h)     (((unsigned)(h) >> 18) & 255u)
#define LOOM_HANDLE_INDEX(h)   ((unsigned)(h)&LOOM_HANDLE_MAX_INDEX)

/* The null handle of a kind (storage 0), e.g. MPI_COMM_NULL. */
#define LOOM_HANDLE_NULL(kind) LOOM_HANDLE(0, kind, 0)

/* True when h is a predefined handle of kind. */
static inline bool loom_handle_is_builtin(int h, enum loom_kind kind)
{
    return LOOM_HANDLE_STORAGE(h) == LOOM_HANDLE_BUILTIN && LOOM_HANDLE_KIND(h) == kind;
}

/* Stores obj in the kind's table; returns its handle, or 0 when full. */
int loom_handle_alloc(enum loom_kind kind, void *obj);

/* The object behind a table handle of kind, or NULL when h is not one
 * (wrong kind, never allocated, or freed). Lock-free. */
void *loom_handle_get(enum loom_kind kind, int h);

/* Frees the table entry (the handle becomes stale). */
void loom_handle_free(enum loom_kind kind, int h);

#endif
