/*
 * Communicator objects: the shared part (one per communicator, freed by its
 * last member), the per-rank part (one per member, named by a table handle
 * that only its owner may use), MPI_COMM_WORLD and MPI_COMM_SELF, and each
 * rank's comm state (its communicators, predefined attribute values, user
 * error codes).
 *
 * Context ids come from one job-wide counter, two per communicator; WORLD
 * has 0 (and 1), each rank's SELF its own pair. They are never reused
 * (2^31 communicators per job).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm_impl.h"
#include "runtime/job.h"
#include "util/handle.h"

void (*loom_comm_shared_fini_hook)(struct loom_comm_shared *sh);

static pthread_once_t job_once = PTHREAD_ONCE_INIT;
static struct loom_comm_rank **rank_states; /* [nranks], by world rank */
static struct loom_comm_shared *world_sh;
static int job_rc;
/* 0 and 1 belong to MPI_COMM_WORLD. */
static _Atomic uint32_t next_context_id = 2;

uint32_t loom_comm_new_context_id(void)
{
    return atomic_fetch_add_explicit(&next_context_id, 2, memory_order_relaxed);
}

static struct loom_comm_shared *shared_alloc(int size)
{
    struct loom_comm_shared *sh = calloc(1, sizeof *sh);
    if (!sh)
        return NULL;
    sh->world_of = malloc((size_t)(size > 0 ? size : 1) * sizeof *sh->world_of);
    if (!sh->world_of) {
        free(sh);
        return NULL;
    }
    sh->size = size;
    sh->peer_size = size;
    sh->peer_of = sh->world_of;
    atomic_init(&sh->refs, size);
    return sh;
}

struct loom_comm_shared *loom_comm_shared_new(int size)
{
    struct loom_comm_shared *sh = shared_alloc(size);
    if (sh)
        sh->context_id = loom_comm_new_context_id();
    return sh;
}

void loom_comm_shared_release(struct loom_comm_shared *sh)
{
    /* acq_rel: the last member sees every member's use of sh before it frees. */
    if (atomic_fetch_sub_explicit(&sh->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (loom_comm_shared_fini_hook)
        loom_comm_shared_fini_hook(sh);
    if (sh->peer_of != sh->world_of)
        free(sh->peer_of);
    free(sh->world_of);
    free(sh);
}

static void job_init(void)
{
    int n = loom_job.nranks;
    rank_states = calloc((size_t)n, sizeof *rank_states);
    world_sh = shared_alloc(n);
    if (!rank_states || !world_sh) {
        job_rc = LOOM_ERR_NOMEM;
        return;
    }
    world_sh->context_id = 0;
    for (int i = 0; i < n; i++)
        world_sh->world_of[i] = i;
}

struct loom_comm_rank *loom_comm_rank_self(void)
{
    struct loom_rank *r = loom_rank_self();
    if (!r || !rank_states)
        return NULL;
    return rank_states[r->rank];
}

static void list_add(struct loom_comm_rank *cr, struct loom_comm *c)
{
    struct loom_comm_priv *p = loom_comm_priv(c);
    p->prev = NULL;
    p->next = cr->all;
    if (cr->all)
        loom_comm_priv(cr->all)->prev = c;
    cr->all = c;
}

static void list_del(struct loom_comm_rank *cr, struct loom_comm *c)
{
    struct loom_comm_priv *p = loom_comm_priv(c);
    if (p->prev)
        loom_comm_priv(p->prev)->next = p->next;
    else
        cr->all = p->next;
    if (p->next)
        loom_comm_priv(p->next)->prev = p->prev;
}

/* Allocates the per-rank object; handle 0 means "allocate a table handle". */
static int comm_alloc(struct loom_comm_rank *cr, int owner, struct loom_comm_shared *sh, int rank,
                      MPI_Errhandler eh, int handle, struct loom_comm **c_p)
{
    struct loom_comm *c = calloc(1, sizeof *c);
    struct loom_comm_priv *p = calloc(1, sizeof *p);
    if (!c || !p)
        goto err_free;
    c->sh = sh;
    c->rank = rank;
    c->owner = owner;
    c->priv = p;
    c->errhandler = eh;
    if (!handle) {
        handle = loom_handle_alloc(LOOM_KIND_COMM, c);
        if (!handle)
            goto err_free;
    }
    c->handle = handle;
    loom_errhandler_ref(eh);
    list_add(cr, c);
    *c_p = c;
    return LOOM_OK;

err_free:
    free(p);
    free(c);
    return LOOM_ERR_NOMEM;
}

int loom_comm_new(struct loom_comm_shared *sh, int rank, MPI_Errhandler eh, struct loom_comm **c_p)
{
    struct loom_comm_rank *cr = loom_comm_rank_self();
    return comm_alloc(cr, loom_rank_self()->rank, sh, rank, eh, 0, c_p);
}

int loom_comm_new_bridge(struct loom_comm_shared *sh, int rank, struct loom_comm **c_p)
{
    struct loom_comm *c = calloc(1, sizeof *c);
    struct loom_comm_priv *p = calloc(1, sizeof *p);
    if (!c || !p) {
        free(p);
        free(c);
        return LOOM_ERR_NOMEM;
    }
    c->sh = sh;
    c->rank = rank;
    c->owner = loom_rank_self()->rank;
    c->priv = p;
    c->errhandler = MPI_ERRORS_RETURN;
    c->handle = (int)MPI_COMM_NULL;
    *c_p = c;
    return LOOM_OK;
}

/* Frees a bridge object (loom_comm_new_bridge). */
static void bridge_free(struct loom_comm *b)
{
    loom_comm_shared_release(b->sh);
    free(b->priv);
    free(b);
}

int loom_comm_free(struct loom_comm *c, bool run_callbacks)
{
    int rc = loom_attr_delete_all(c, run_callbacks);
    if (rc != MPI_SUCCESS)
        return rc;
    struct loom_comm_rank *cr = rank_states[c->owner];
    struct loom_comm_priv *p = loom_comm_priv(c);
    list_del(cr, c);
    if (p->info)
        loom_info_free(p->info);
    if (LOOM_HANDLE_STORAGE(c->handle) == LOOM_HANDLE_TABLE)
        loom_handle_free(LOOM_KIND_COMM, c->handle);
    loom_errhandler_unref(c->errhandler);
    loom_comm_shared_release(c->sh);
    if (c->bridge)
        bridge_free(c->bridge);
    free(c->topo);
    free(p);
    free(c);
    return MPI_SUCCESS;
}

int loom_comm_rank_init(void)
{
    pthread_once(&job_once, job_init);
    if (job_rc != LOOM_OK)
        return job_rc;
    struct loom_rank *r = loom_rank_self();
    struct loom_comm_rank *cr = calloc(1, sizeof *cr);
    if (!cr)
        return LOOM_ERR_NOMEM;
    cr->tag_ub = 2147483647;
    cr->host = MPI_PROC_NULL;
    cr->io = MPI_ANY_SOURCE;
    cr->wtime_is_global = 1;
    cr->universe_size = loom_job.nranks;
    cr->appnum = 0;
    cr->lastusedcode = LOOM_FIRST_USER_CODE - 1;

    struct loom_comm_shared *self_sh = loom_comm_shared_new(1);
    if (!self_sh)
        goto err_free;
    self_sh->world_of[0] = r->rank;
    if (comm_alloc(cr, r->rank, world_sh, r->rank, MPI_ERRORS_ARE_FATAL, MPI_COMM_WORLD,
                   &cr->world) != LOOM_OK)
        goto err_self;
    if (comm_alloc(cr, r->rank, self_sh, 0, MPI_ERRORS_ARE_FATAL, MPI_COMM_SELF, &cr->self) !=
        LOOM_OK)
        goto err_world;
    strcpy(loom_comm_priv(cr->world)->name, "MPI_COMM_WORLD");
    strcpy(loom_comm_priv(cr->self)->name, "MPI_COMM_SELF");
    /* Publish the state only once it is complete (only this rank reads it). */
    rank_states[r->rank] = cr;
    r->comm_world = cr->world;
    return LOOM_OK;

err_world:
    free(cr->world->priv);
    free(cr->world);
err_self:
    loom_comm_shared_release(self_sh);
err_free:
    free(cr);
    return LOOM_ERR_NOMEM;
}

int loom_comm_finalize_self_attrs(void)
{
    struct loom_comm_rank *cr = loom_comm_rank_self();
    return cr ? loom_attr_delete_all(cr->self, true) : MPI_SUCCESS;
}

void loom_comm_rank_fini(void)
{
    struct loom_rank *r = loom_rank_self();
    struct loom_comm_rank *cr = loom_comm_rank_self();
    if (!cr)
        return;
    r->comm_world = NULL; /* delete callbacks' calls take the general look-up */
    /* User communicators first (they were created after WORLD and SELF and
     * their delete callbacks may look at them), then SELF, then WORLD. */
    for (struct loom_comm *c = cr->all, *next; c; c = next) {
        next = loom_comm_priv(c)->next;
        if (c != cr->world && c != cr->self)
            (void)loom_comm_free(c, false);
    }
    (void)loom_comm_free(cr->self, false);
    (void)loom_comm_free(cr->world, false);
    for (int i = 0; i < cr->ncodes; i++)
        free(cr->codes[i].string);
    free(cr->codes);
    rank_states[r->rank] = NULL;
    free(cr);
}

void loom_comm_describe(const struct loom_comm *c, char *buf, size_t n)
{
    const struct loom_comm_priv *p = c ? loom_comm_priv(c) : NULL;
    if (!c)
        snprintf(buf, n, "an unknown communicator");
    else if (p && p->name[0])
        snprintf(buf, n, "%s (context %u)", p->name, c->sh->context_id);
    else
        snprintf(buf, n, "a communicator of %d ranks (context %u)", c->sh->size, c->sh->context_id);
}

struct loom_comm *loom_comm_lookup_slow(MPI_Comm h)
{
    struct loom_rank *r = loom_rank_self();
    if (!r || !rank_states)
        return NULL;
    struct loom_comm_rank *cr = rank_states[r->rank];
    if (!cr)
        return NULL;
    if (h == MPI_COMM_WORLD)
        return cr->world;
    if (h == MPI_COMM_SELF)
        return cr->self;
    struct loom_comm *c = loom_handle_get(LOOM_KIND_COMM, h);
    return c && c->owner == r->rank ? c : NULL;
}

MPI_Errhandler loom_comm_errhandler_for(MPI_Comm h)
{
    struct loom_comm *c = loom_comm_lookup(h);
    if (c)
        return c->errhandler;
    struct loom_comm_rank *cr = loom_comm_rank_self();
    return cr ? cr->world->errhandler : MPI_ERRORS_ARE_FATAL;
}
