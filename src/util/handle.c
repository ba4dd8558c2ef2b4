/*
 * Job-wide handle tables (see handle.h): chunks of entries that never move,
 * a generation per entry, a free list under a per-table lock.
 */
#include "util/handle.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define CHUNK_BITS 10
#define CHUNK      (1u << CHUNK_BITS)
#define NCHUNKS    ((LOOM_HANDLE_MAX_INDEX + 1) / CHUNK)

struct entry {
    _Atomic(void *) obj;
    _Atomic unsigned gen; /* generation of the live handle */
    unsigned next_free;   /* free list link (index + 1; 0 = end) */
};

struct table {
    pthread_mutex_t lock;
    _Atomic(struct entry *) chunks[NCHUNKS];
    unsigned used;      /* entries handed out so far (high-water mark) */
    unsigned free_head; /* index + 1 of the first free entry */
};

static struct table tables[16] = {
#define T                                                                                          \
    {                                                                                              \
        .lock = PTHREAD_MUTEX_INITIALIZER                                                          \
    }
    T, T, T, T, T, T, T, T, T, T, T, T, T, T, T, T,
#undef T
};

static struct entry *entry_at(struct table *t, unsigned index)
{
    struct entry *c = atomic_load_explicit(&t->chunks[index >> CHUNK_BITS], memory_order_acquire);
    return c ? &c[index & (CHUNK - 1)] : NULL;
}

int loom_handle_alloc(enum loom_kind kind, void *obj)
{
    struct table *t = &tables[kind];
    pthread_mutex_lock(&t->lock);
    unsigned index;
    if (t->free_head) {
        index = t->free_head - 1;
        t->free_head = entry_at(t, index)->next_free;
    } else {
        /* Index 0 is never used, so no live handle equals a null handle. */
        if (t->used == 0)
            t->used = 1;
        if (t->used > LOOM_HANDLE_MAX_INDEX) {
            pthread_mutex_unlock(&t->lock);
            return 0;
        }
        index = t->used++;
        unsigned c = index >> CHUNK_BITS;
        if (!atomic_load_explicit(&t->chunks[c], memory_order_relaxed)) {
            struct entry *chunk = calloc(CHUNK, sizeof *chunk);
            if (!chunk) {
                t->used--;
                pthread_mutex_unlock(&t->lock);
                return 0;
            }
            /* Publish the zeroed chunk before any handle into it. */
            atomic_store_explicit(&t->chunks[c], chunk, memory_order_release);
        }
    }
    struct entry *e = entry_at(t, index);
    unsigned gen = atomic_load_explicit(&e->gen, memory_order_relaxed);
    /* Publish the object before the handle can be used elsewhere. */
    atomic_store_explicit(&e->obj, obj, memory_order_release);
    pthread_mutex_unlock(&t->lock);
    return LOOM_HANDLE(LOOM_HANDLE_TABLE, kind, ((gen & 255u) << 18) | index);
}

void *loom_handle_get(enum loom_kind kind, int h)
{
    if (LOOM_HANDLE_STORAGE(h) != LOOM_HANDLE_TABLE || LOOM_HANDLE_KIND(h) != (unsigned)kind)
        return NULL;
    unsigned index = LOOM_HANDLE_INDEX(h);
    struct table *t = &tables[kind];
    if (index == 0 || (index >> CHUNK_BITS) >= NCHUNKS)
        return NULL;
    struct entry *e = entry_at(t, index);
    if (!e || (atomic_load_explicit(&e->gen, memory_order_acquire) & 255u) != LOOM_HANDLE_GEN(h))
        return NULL;
    return atomic_load_explicit(&e->obj, memory_order_acquire);
}

void loom_handle_free(enum loom_kind kind, int h)
{
    struct table *t = &tables[kind];
    unsigned index = LOOM_HANDLE_INDEX(h);
    pthread_mutex_lock(&t->lock);
    struct entry *e = entry_at(t, index);
    if (e && atomic_load_explicit(&e->obj, memory_order_relaxed)) {
        atomic_store_explicit(&e->obj, NULL, memory_order_relaxed);
        /* A new generation makes every copy of the old handle stale. */
        atomic_fetch_add_explicit(&e->gen, 1, memory_order_release);
        e->next_free = t->free_head;
        t->free_head = index + 1;
    }
    pthread_mutex_unlock(&t->lock);
}
