/*
 * Intercommunicators (MPI-4.1 7.6): two groups, A and B, that talk to each
 * other. Each side has its own shared part (its local group in world_of,
 * the remote group in peer_of, so that point-to-point names remote ranks),
 * both with one context id pair; and both sides share a bridge: an internal
 * communicator over A's members then B's, with a context id pair of its
 * own, that carries the intercommunicator's collectives (src/coll/inter.c)
 * and its creation calls (dup, idup, split, create, merge meet under the
 * bridge's context id and creation sequence). Every member holds an object
 * on the bridge (loom_comm.bridge) besides its own.
 *
 * Which group is A: the one whose leader has the lower world rank
 * (MPI_Intercomm_create and _from_groups); a derived intercommunicator
 * keeps its parent's sides.
 */
#include <stdlib.h>
#include <string.h>

#include "comm/comm_impl.h"
#include "runtime/job.h"

/* Frees a shared part nobody holds yet (NULL: nothing). */
static void drop(struct loom_comm_shared *sh)
{
    if (!sh)
        return;
    for (int i = atomic_load(&sh->refs); i > 0; i--)
        loom_comm_shared_release(sh);
}

int loom_comm_inter_shared(int n, int na, const int *world, struct loom_comm_shared **a_p,
                           struct loom_comm_shared **b_p, struct loom_comm_shared **bridge_p)
{
    int nb = n - na;
    struct loom_comm_shared *bridge = loom_comm_shared_new(n);
    struct loom_comm_shared *a = loom_comm_shared_new(na);
    struct loom_comm_shared *b = loom_comm_shared_new(nb);
    int *a_peers = malloc((size_t)nb * sizeof *a_peers);
    int *b_peers = malloc((size_t)na * sizeof *b_peers);
    if (!bridge || !a || !b || !a_peers || !b_peers) {
        free(a_peers);
        free(b_peers);
        drop(bridge);
        drop(a);
        drop(b);
        return LOOM_ERR_NOMEM;
    }
    memcpy(bridge->world_of, world, (size_t)n * sizeof *world);
    bridge->inter_a = na;
    memcpy(a->world_of, world, (size_t)na * sizeof *world);
    memcpy(b->world_of, world + na, (size_t)nb * sizeof *world);
    memcpy(a_peers, world + na, (size_t)nb * sizeof *world);
    memcpy(b_peers, world, (size_t)na * sizeof *world);
    /* One context id pair for both sides: a message names the same pair at
     * its sender and its receiver. */
    b->context_id = a->context_id;
    a->peer_of = a_peers;
    a->peer_size = nb;
    b->peer_of = b_peers;
    b->peer_size = na;
    a->bridge = b->bridge = bridge;
    a->bridge_base = 0;
    b->bridge_base = na;
    *a_p = a;
    *b_p = b;
    *bridge_p = bridge;
    return LOOM_OK;
}

/* Frees what a compute step made before it failed: each shared part once
 * per member that would have held it. */
static void release_all(int n, struct loom_rdv_out *out)
{
    for (int i = 0; i < n; i++) {
        if (out[i].sh)
            loom_comm_shared_release(out[i].sh);
        if (out[i].bridge)
            loom_comm_shared_release(out[i].bridge);
        out[i] = (struct loom_rdv_out){NULL, MPI_UNDEFINED, NULL, 0};
    }
}

static int by_color_side_key_rank(const void *p, const void *q)
{
    const struct loom_rdv_in *x = p, *y = q;
    if (x->color != y->color)
        return x->color < y->color ? -1 : 1;
    if (x->side != y->side)
        return x->side - y->side;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* One intercommunicator per color between its side-A and side-B members,
 * each side ordered by (key, rank); in[i].rank is member i's index. */
static int compute_inter(int n, const struct loom_rdv_in *in, struct loom_rdv_out *out,
                         const void *arg)
{
    (void)arg;
    struct loom_rdv_in *v = malloc((size_t)n * sizeof *v);
    int *world = malloc((size_t)n * sizeof *world);
    if (!v || !world) {
        free(v);
        free(world);
        return LOOM_ERR_NOMEM;
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        out[i] = (struct loom_rdv_out){NULL, MPI_UNDEFINED, NULL, 0};
        if (in[i].color != MPI_UNDEFINED)
            v[m++] = in[i];
    }
    qsort(v, (size_t)m, sizeof *v, by_color_side_key_rank);
    int rc = LOOM_OK;
    for (int lo = 0, hi; lo < m && rc == LOOM_OK; lo = hi) {
        int na = 0;
        for (hi = lo; hi < m && v[hi].color == v[lo].color; hi++)
            na += v[hi].side == 0;
        if (na == 0 || na == hi - lo)
            continue; /* one side has no member: MPI_COMM_NULL */
        for (int j = lo; j < hi; j++)
            world[j - lo] = v[j].world;
        struct loom_comm_shared *a, *b, *bridge;
        rc = loom_comm_inter_shared(hi - lo, na, world, &a, &b, &bridge);
        for (int j = lo; j < hi && rc == LOOM_OK; j++) {
            int k = j - lo;
            out[v[j].rank] = k < na ? (struct loom_rdv_out){a, k, bridge, k}
                                    : (struct loom_rdv_out){b, k - na, bridge, k};
        }
    }
    free(v);
    free(world);
    if (rc != LOOM_OK)
        release_all(n, out);
    return rc;
}

/* Makes the caller's objects for its result (NULL for MPI_COMM_NULL). */
static int finish_inter(int rc, const struct loom_rdv_out *out, MPI_Errhandler eh,
                        struct loom_comm **newc_p)
{
    if (rc != LOOM_OK)
        return rc;
    if (!out->sh) {
        *newc_p = NULL;
        return LOOM_OK;
    }
    struct loom_comm *b = NULL, *c = NULL;
    rc = loom_comm_new_bridge(out->bridge, out->bridge_rank, &b);
    if (rc != LOOM_OK) {
        loom_comm_shared_release(out->bridge);
        loom_comm_shared_release(out->sh);
        return rc;
    }
    rc = loom_comm_new(out->sh, out->rank, eh, &c);
    if (rc != LOOM_OK) {
        loom_comm_shared_release(out->sh);
        loom_comm_shared_release(out->bridge);
        free(b->priv);
        free(b);
        return rc;
    }
    c->bridge = b;
    *newc_p = c;
    return LOOM_OK;
}

int loom_comm_inter_create(const struct loom_rdv_key *key, int me, int na, MPI_Errhandler eh,
                           struct loom_comm **newc_p)
{
    int side = me >= na;
    struct loom_rdv_in in = {0, side ? me - na : me, me, key->members[me], side};
    struct loom_rdv_out out;
    int rc = loom_rdv_run(key, me, &in, compute_inter, NULL, &out);
    return finish_inter(rc, &out, eh, newc_p);
}

/* The next creation call on intercommunicator c: its key on the bridge. */
static struct loom_rdv_key bridge_key(struct loom_comm *c)
{
    struct loom_comm *b = c->bridge;
    return (struct loom_rdv_key){.context_id = b->sh->context_id,
                                 .kind = LOOM_RDV_WHOLE,
                                 .seq_or_tag = (int)loom_comm_priv(b)->seq++,
                                 .n = b->sh->size};
}

int loom_comm_inter_split(struct loom_comm *c, int color, int key, struct loom_comm **newc_p)
{
    struct loom_rdv_key k = bridge_key(c);
    int me = c->bridge->rank;
    struct loom_rdv_in in = {color, key, me, c->owner, c->sh->bridge_base != 0};
    struct loom_rdv_out out;
    int rc = loom_rdv_run(&k, me, &in, compute_inter, NULL, &out);
    return finish_inter(rc, &out, c->errhandler, newc_p);
}

/* One intracommunicator over every member, ordered by (key, rank). */
static int compute_merge(int n, const struct loom_rdv_in *in, struct loom_rdv_out *out,
                         const void *arg)
{
    (void)arg;
    struct loom_comm_shared *sh = loom_comm_shared_new(n);
    int *order = malloc((size_t)n * sizeof *order);
    if (!sh || !order) {
        free(order);
        if (sh)
            for (int i = 0; i < n; i++)
                loom_comm_shared_release(sh);
        return LOOM_ERR_NOMEM;
    }
    /* Stable: the low group first, each group in bridge order. */
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if (in[i].key == pass)
                order[k++] = i;
    for (int j = 0; j < n; j++) {
        sh->world_of[j] = in[order[j]].world;
        out[order[j]] = (struct loom_rdv_out){sh, j, NULL, 0};
    }
    free(order);
    return LOOM_OK;
}

int loom_comm_inter_merge(struct loom_comm *c, bool high, struct loom_comm **newc_p)
{
    struct loom_rdv_key k = bridge_key(c);
    int me = c->bridge->rank;
    struct loom_rdv_in in = {0, high ? 1 : 0, me, c->owner, 0};
    struct loom_rdv_out out;
    int rc = loom_rdv_run(&k, me, &in, compute_merge, NULL, &out);
    if (rc != LOOM_OK)
        return rc;
    rc = loom_comm_new(out.sh, out.rank, c->errhandler, newc_p);
    if (rc != LOOM_OK)
        loom_comm_shared_release(out.sh);
    return rc;
}

int loom_comm_inter_idup(struct loom_comm *c, loom_rdv_done_fn done, void *done_arg,
                         struct loom_comm **newc_p)
{
    struct loom_rdv_key k = bridge_key(c);
    const struct loom_comm_shared *bsh = c->bridge->sh;
    struct loom_rdv_out out;
    int rc = loom_rdv_arrive_inter(&k, c->bridge->rank, bsh->world_of, bsh->inter_a, done, done_arg,
                                   &out);
    if (rc != LOOM_OK) {
        done(done_arg); /* never arrived: nobody else will call it */
        return rc;
    }
    return finish_inter(rc, &out, c->errhandler, newc_p);
}
