/*
 * Windows: creation, the shared part, target addresses, dynamic regions.
 *
 * Creation is collective over a duplicate of the caller's communicator,
 * which then carries the window's own fences: the members allgather
 * {base, size, disp_unit} (after allocating their memory for
 * MPI_Win_allocate), the window's rank 0 builds the shared part (and, for a
 * contiguous MPI_Win_allocate_shared, the one block every member's memory
 * lies in, in rank order with no gaps) and broadcasts its address. Nothing
 * is registered or mapped: another member's memory is simply memory.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "comm/comm_impl.h"
#include "rma/rma.h"
#include "util/handle.h"

#define ROUND_UP(x, a) (((x) + (a)-1) / (a) * (a))

struct loom_win *loom_win_lookup(MPI_Win h)
{
    struct loom_win *w = loom_handle_get(LOOM_KIND_WIN, h);
    struct loom_rank *r = loom_rank_self();
    return w && r && w->owner == r->rank ? w : NULL;
}

const char *loom_win_problem(MPI_Win h, char *buf, size_t len)
{
    if (h == MPI_WIN_NULL)
        return "the window is MPI_WIN_NULL";
    if (LOOM_HANDLE_KIND(h) != LOOM_KIND_WIN || LOOM_HANDLE_STORAGE(h) != LOOM_HANDLE_TABLE)
        snprintf(buf, len, "0x%x is not a window handle", (unsigned)h);
    else if (!loom_handle_get(LOOM_KIND_WIN, h))
        snprintf(buf, len, "window 0x%x was freed or never created", (unsigned)h);
    else
        snprintf(buf, len, "window 0x%x belongs to another rank", (unsigned)h);
    return buf;
}

/* What each member tells the others at creation. */
struct member_info {
    void *base;
    MPI_Aint size;
    int disp_unit;
    int ok;
};

static int coll(struct loom_comm *c, enum loom_coll_kind kind, const void *in, void *out,
                size_t bytes)
{
    struct loom_type *byte = loom_type_get(MPI_BYTE);
    struct loom_coll_args a = {
        .sbuf = in, .rbuf = out, .scount = bytes, .rcount = bytes, .stype = byte, .rtype = byte};
    const char *why = NULL;
    return loom_coll_run(c, kind, &a, &why);
}

static int barrier(struct loom_comm *c)
{
    struct loom_coll_args a = {0};
    const char *why = NULL;
    return loom_coll_run(c, LOOM_COLL_BARRIER, &a, &why);
}

static void shared_free(struct loom_win_shared *sh)
{
    for (int i = 0; i < sh->size; i++) {
        free(sh->m[i].regions);
        free((void *)atomic_load_explicit(&sh->m[i].posts, memory_order_relaxed));
    }
    free(sh->block);
    free(sh->rank_of_world);
    free(sh);
}

/* Rank 0's part: the shared object for the gathered members, or NULL. */
static struct loom_win_shared *shared_build(struct loom_comm *c, int flavor,
                                            const struct member_info *mi, bool contig)
{
    int n = c->sh->size;
    struct loom_win_shared *sh = aligned_alloc(
        LOOM_CACHE_LINE, ROUND_UP(sizeof *sh + (size_t)n * sizeof sh->m[0], LOOM_CACHE_LINE));
    if (!sh)
        return NULL;
    memset(sh, 0, sizeof *sh + (size_t)n * sizeof sh->m[0]);
    sh->size = n;
    sh->flavor = flavor;
    sh->waiters = -1;
    atomic_init(&sh->refs, n);
    sh->rank_of_world = malloc((size_t)loom_job.nranks * sizeof(int));
    if (!sh->rank_of_world)
        goto err;
    for (int i = 0; i < loom_job.nranks; i++)
        sh->rank_of_world[i] = -1;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        sh->rank_of_world[c->sh->world_of[i]] = i;
        sh->m[i].base = mi[i].base;
        sh->m[i].size = mi[i].size;
        sh->m[i].disp_unit = mi[i].disp_unit;
        total += (size_t)mi[i].size;
    }
    if (contig) {
        /* One block, members in rank order with no gaps (MPI-3.1 11.2.3). */
        sh->block_bytes = total;
        sh->block = aligned_alloc(4096, ROUND_UP(total ? total : 1, 4096));
        if (!sh->block)
            goto err;
        size_t off = 0;
        for (int i = 0; i < n; i++) {
            sh->m[i].base = (char *)sh->block + off;
            off += (size_t)mi[i].size;
        }
    }
    return sh;

err:
    shared_free(sh);
    return NULL;
}

int loom_win_create(struct loom_comm *c, int flavor, void *base, MPI_Aint size, int disp_unit,
                    const struct loom_win_hints *hints, void *base_p, struct loom_win **w_p)
{
    /* Out of memory for these few bytes leaves the other members waiting
     * in the steps below; a failure after them is agreed on (ok flags). */
    struct loom_win *w = calloc(1, sizeof *w);
    struct member_info *mi = malloc((size_t)c->sh->size * sizeof *mi);
    struct loom_comm *wc = NULL;
    if (!w || !mi || loom_comm_dup(c, &wc) != LOOM_OK) {
        free(mi);
        free(w);
        return LOOM_ERR_NOMEM;
    }
    bool contig = flavor == MPI_WIN_FLAVOR_SHARED && !(hints && hints->alloc_shared_noncontig);
    bool ok = true;
    void *own = NULL;
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE || (flavor == MPI_WIN_FLAVOR_SHARED && !contig)) {
        if (size) {
            own = aligned_alloc(LOOM_CACHE_LINE, ROUND_UP((size_t)size, LOOM_CACHE_LINE));
            ok = own != NULL;
        }
        base = own;
    }
    if (flavor == MPI_WIN_FLAVOR_DYNAMIC)
        base = NULL, size = 0, disp_unit = 1;
    struct member_info me = {base, size, disp_unit, ok};
    if (coll(wc, LOOM_COLL_ALLGATHER, &me, mi, sizeof me) != MPI_SUCCESS)
        ok = false;
    for (int i = 0; i < wc->sh->size; i++)
        ok = ok && mi[i].ok;
    struct loom_win_shared *sh = NULL;
    if (wc->rank == 0 && ok)
        sh = shared_build(wc, flavor, mi, contig);
    if (coll(wc, LOOM_COLL_BCAST, &sh, &sh, sizeof sh) != MPI_SUCCESS)
        sh = NULL;
    free(mi);
    if (!sh) {
        free(own);
        free(w);
        (void)loom_comm_free(wc, false);
        return LOOM_ERR_NOMEM;
    }
    w->sh = sh;
    w->comm = wc;
    w->rank = wc->rank;
    w->owner = wc->owner;
    w->errhandler = MPI_ERRORS_ARE_FATAL;
    w->own_alloc = own;
    if (hints)
        w->hints = *hints;
    if (base_p)
        *(void **)base_p = sh->m[w->rank].base;
    w->handle = loom_handle_alloc(LOOM_KIND_WIN, w);
    if (!w->handle) {
        /* The window exists for the others; this rank leaves it. */
        loom_win_free(w);
        return LOOM_ERR_NOMEM;
    }
    *w_p = w;
    return LOOM_OK;
}

void loom_win_free(struct loom_win *w)
{
    /* Every member has finished its accesses (MPI_Win_free is collective
     * and no epoch may be open) before any memory goes. */
    (void)barrier(w->comm);
    if (w->handle)
        loom_handle_free(LOOM_KIND_WIN, w->handle);
    free(w->own_alloc);
    free(w->locked);
    free(w->lock_nocheck);
    free(w->start_ranks);
    free(w->in_start);
    free(w->post_seen);
    /* acq_rel: the last member sees every other's use before freeing. */
    if (atomic_fetch_sub_explicit(&w->sh->refs, 1, memory_order_acq_rel) == 1)
        shared_free(w->sh);
    (void)loom_comm_free(w->comm, false);
    free(w);
}

char *loom_win_target(struct loom_win *w, int t, MPI_Aint disp, MPI_Aint lo, MPI_Aint hi)
{
    struct loom_win_member *m = &w->sh->m[t];
    if (w->sh->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* disp is an address (MPI_Get_address) inside an attached region. */
        char *addr = (char *)(uintptr_t)disp;
        if (hi <= lo)
            return addr ? addr : (char *)m; /* nothing is accessed */
        uintptr_t a = (uintptr_t)disp + (uintptr_t)lo, b = (uintptr_t)disp + (uintptr_t)hi;
        char *found = NULL;
        loom_win_lk(w->sh);
        for (int i = 0; i < m->nregions; i++) {
            uintptr_t rb = (uintptr_t)m->regions[i].base;
            if (a >= rb && b <= rb + m->regions[i].size && a < b) {
                found = addr;
                break;
            }
        }
        loom_win_unlk(w->sh);
        return found;
    }
    MPI_Aint off, a, b;
    if (__builtin_mul_overflow(disp, (MPI_Aint)m->disp_unit, &off))
        return NULL;
    if (hi <= lo)
        return m->base + off; /* nothing is accessed */
    if (__builtin_add_overflow(off, lo, &a) || __builtin_add_overflow(off, hi, &b) || a < 0 ||
        b > m->size)
        return NULL;
    return m->base + off;
}

int loom_win_attach(struct loom_win *w, void *base, size_t size)
{
    struct loom_win_member *m = &w->sh->m[w->rank];
    uintptr_t a = (uintptr_t)base, b = a + size;
    int rc = LOOM_OK;
    loom_win_lk(w->sh);
    for (int i = 0; i < m->nregions; i++) {
        uintptr_t rb = (uintptr_t)m->regions[i].base, re = rb + m->regions[i].size;
        if (a < re && rb < b) {
            rc = LOOM_ERR_INVALID;
            goto out;
        }
    }
    if (m->nregions == m->capregions) {
        int cap = m->capregions ? 2 * m->capregions : 4;
        struct loom_win_region *r = realloc(m->regions, (size_t)cap * sizeof *r);
        if (!r) {
            rc = LOOM_ERR_NOMEM;
            goto out;
        }
        m->regions = r;
        m->capregions = cap;
    }
    m->regions[m->nregions++] = (struct loom_win_region){base, size};
out:
    loom_win_unlk(w->sh);
    return rc;
}

int loom_win_detach(struct loom_win *w, const void *base)
{
    struct loom_win_member *m = &w->sh->m[w->rank];
    int rc = LOOM_ERR_INVALID;
    loom_win_lk(w->sh);
    for (int i = 0; i < m->nregions; i++) {
        if (m->regions[i].base == base) {
            m->regions[i] = m->regions[--m->nregions];
            rc = LOOM_OK;
            break;
        }
    }
    loom_win_unlk(w->sh);
    return rc;
}
