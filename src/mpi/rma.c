/*
 * One-sided communication and synchronization entry points (MPI-3.1 11.3,
 * 11.5): argument and epoch checks, then src/rma. Every operation is
 * complete when it returns (the origin copies into or out of the target's
 * memory itself), so the request forms return a completed request.
 *
 * Errors raised on the window: MPI_ERR_WIN (not a window of the caller),
 * MPI_ERR_COUNT, MPI_ERR_TYPE (invalid, uncommitted, or mixed basic types
 * in an accumulate), MPI_ERR_OP, MPI_ERR_RANK, MPI_ERR_DISP (negative
 * displacement), MPI_ERR_RMA_RANGE (an access outside the target's
 * window), MPI_ERR_ARG (origin and target carry different byte counts),
 * MPI_ERR_RMA_SYNC (no epoch covers the target, or a synchronization call
 * that does not match the open epoch), MPI_ERR_LOCKTYPE, MPI_ERR_ASSERT,
 * MPI_ERR_GROUP.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/op.h"
#include "comm/comm_impl.h"
#include "mpi/mpi_impl.h"
#include "pt2pt/p2p.h"
#include "rma/rma.h"

#define ENTER(w, win, fn)                                                                          \
    struct loom_win *w;                                                                            \
    do {                                                                                           \
        if (LOOM_UNLIKELY(!(w = loom_win_lookup(win)))) {                                          \
            int rc_ = loom_mpi_check_init(fn);                                                     \
            if (rc_)                                                                               \
                return rc_;                                                                        \
            char buf_[96];                                                                         \
            return loom_mpi_err(MPI_COMM_WORLD, MPI_ERR_WIN, fn, "%s",                             \
                                loom_win_problem(win, buf_, sizeof buf_));                         \
        }                                                                                          \
    } while (0)

/* One side of an access: count elements of a committed type. */
static int type_arg(MPI_Win win, const char *fn, const char *which, int count, MPI_Datatype h,
                    struct loom_type **t_p)
{
    if (count < 0)
        return loom_mpi_win_err(win, MPI_ERR_COUNT, fn, "%s_count %d is negative", which, count);
    struct loom_type *t = loom_type_get(h);
    if (LOOM_UNLIKELY(!loom_type_usable(t))) {
        char buf[128];
        return loom_mpi_win_err(win, MPI_ERR_TYPE, fn, "%s_datatype: %s", which,
                                loom_type_problem(h, true, buf, sizeof buf));
    }
    *t_p = t;
    return MPI_SUCCESS;
}

/* The target of an access: checks the rank and the epoch, and resolves
 * [disp, count x tt) to an address in the target's window. *addr_p NULL:
 * MPI_PROC_NULL (nothing to do). */
static int target_arg(struct loom_win *w, MPI_Win win, const char *fn, int rank, MPI_Aint disp,
                      int count, const struct loom_type *tt, char **addr_p)
{
    *addr_p = NULL;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (LOOM_UNLIKELY(rank < 0 || rank >= w->sh->size))
        return loom_mpi_win_err(win, MPI_ERR_RANK, fn,
                                "target_rank %d is not in the window's group of %d", rank,
                                w->sh->size);
    if (LOOM_UNLIKELY(!loom_win_may_access(w, rank)))
        return loom_mpi_win_err(win, MPI_ERR_RMA_SYNC, fn,
                                "no access epoch covers target %d (call MPI_Win_fence, "
                                "MPI_Win_start, MPI_Win_lock or MPI_Win_lock_all first)",
                                rank);
    if (LOOM_UNLIKELY(disp < 0 && w->sh->flavor != MPI_WIN_FLAVOR_DYNAMIC))
        return loom_mpi_win_err(win, MPI_ERR_DISP, fn, "target_disp %ld is negative", (long)disp);
    MPI_Aint lo = 0, hi = 0;
    if (count > 0 && tt->size > 0) {
        MPI_Aint last = (MPI_Aint)(count - 1) * (tt->ub - tt->lb);
        lo = tt->true_lb + (last < 0 ? last : 0);
        hi = tt->true_ub + (last > 0 ? last : 0);
    }
    char *a = loom_win_target(w, rank, disp, lo, hi);
    if (LOOM_UNLIKELY(!a)) {
        const struct loom_win_member *m = &w->sh->m[rank];
        if (w->sh->flavor == MPI_WIN_FLAVOR_DYNAMIC)
            return loom_mpi_win_err(win, MPI_ERR_RMA_RANGE, fn,
                                    "[%#lx, +%ld) at target %d is in no region it attached",
                                    (unsigned long)(disp + lo), (long)(hi - lo), rank);
        return loom_mpi_win_err(win, MPI_ERR_RMA_RANGE, fn,
                                "bytes [%ld, %ld) of target %d's window of %ld bytes "
                                "(target_disp %ld x disp_unit %d)",
                                (long)(disp * m->disp_unit + lo), (long)(disp * m->disp_unit + hi),
                                rank, (long)m->size, (long)disp, m->disp_unit);
    }
    *addr_p = a;
    return MPI_SUCCESS;
}

static int same_bytes(MPI_Win win, const char *fn, const char *a, size_t na, const char *b,
                      size_t nb)
{
    if (LOOM_LIKELY(na == nb))
        return MPI_SUCCESS;
    return loom_mpi_win_err(win, MPI_ERR_ARG, fn,
                            "the %s carries %zu bytes but the %s %zu (type signatures differ)", a,
                            na, b, nb);
}

/* The request forms are valid only in a passive-target epoch (MPI-3.1
 * 11.3.5), so their completion can never wait on a fence or a complete. */
static int passive_arg(struct loom_win *w, MPI_Win win, const char *fn, int rank)
{
    if (rank == MPI_PROC_NULL || rank < 0 || rank >= w->sh->size)
        return MPI_SUCCESS; /* the operation itself reports a bad rank */
    if (w->lock_all || (w->locked && w->locked[rank]))
        return MPI_SUCCESS;
    return loom_mpi_win_err(win, MPI_ERR_RMA_SYNC, fn,
                            "request-based operations need a passive-target epoch "
                            "(MPI_Win_lock or MPI_Win_lock_all) covering target %d",
                            rank);
}

/* A request already complete, for Rput and friends. */
static int done_request(struct loom_win *w, MPI_Win win, const char *fn, MPI_Request *request)
{
    loom_req *r = loom_req_alloc_generic(w->comm);
    if (!r)
        return loom_mpi_win_err(win, MPI_ERR_NO_MEM, fn, "out of requests");
    atomic_store_explicit(&r->done, 1, memory_order_release);
    *request = r;
    return MPI_SUCCESS;
}

/* ---- Put and Get ---- */

static int put_get(bool put, void *origin, int ocount, MPI_Datatype otype, int trank,
                   MPI_Aint tdisp, int tcount, MPI_Datatype ttype, MPI_Win win, const char *fn)
{
    ENTER(w, win, fn);
    struct loom_type *ot = NULL, *tt = NULL;
    int rc;
    if ((rc = type_arg(win, fn, "origin", ocount, otype, &ot)) ||
        (rc = type_arg(win, fn, "target", tcount, ttype, &tt)))
        return rc;
    size_t nbytes = (size_t)ocount * ot->size;
    if ((rc = same_bytes(win, fn, "origin", nbytes, "target", (size_t)tcount * tt->size)))
        return rc;
    char *taddr;
    if ((rc = target_arg(w, win, fn, trank, tdisp, tcount, tt, &taddr)) || !taddr || !nbytes)
        return rc;
    if (LOOM_LIKELY(ot->contig && tt->contig)) {
        char *o = (char *)origin + ot->true_lb, *t = taddr + tt->true_lb;
        if (put)
            memcpy(t, o, nbytes);
        else
            memcpy(o, t, nbytes);
    } else if (put) {
        loom_type_copy(taddr, tt, origin, ot, 0, nbytes);
    } else {
        loom_type_copy(origin, ot, taddr, tt, 0, nbytes);
    }
    return MPI_SUCCESS;
}

int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win)
{
    return put_get(true, (void *)origin_addr, origin_count, origin_datatype, target_rank,
                   target_disp, target_count, target_datatype, win, "MPI_Put");
}
LOOM_MPI_ALIAS(Put);

int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return put_get(false, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                   target_count, target_datatype, win, "MPI_Get");
}
LOOM_MPI_ALIAS(Get);

int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request *request)
{
    ENTER(w, win, "MPI_Rput");
    if (!request)
        return loom_mpi_win_err(win, MPI_ERR_ARG, "MPI_Rput", "request is NULL");
    int rc = passive_arg(w, win, "MPI_Rput", target_rank);
    if (rc)
        return rc;
    rc = put_get(true, (void *)origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win, "MPI_Rput");
    return rc ? rc : done_request(w, win, "MPI_Rput", request);
}
LOOM_MPI_ALIAS(Rput);

int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    ENTER(w, win, "MPI_Rget");
    if (!request)
        return loom_mpi_win_err(win, MPI_ERR_ARG, "MPI_Rget", "request is NULL");
    int rc = passive_arg(w, win, "MPI_Rget", target_rank);
    if (rc)
        return rc;
    rc = put_get(false, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                 target_count, target_datatype, win, "MPI_Rget");
    return rc ? rc : done_request(w, win, "MPI_Rget", request);
}
LOOM_MPI_ALIAS(Rget);

/* ---- accumulates ---- */

/* The predefined type every basic element of t is, or NULL. */
static const struct loom_type *basic_of(const struct loom_type *t)
{
    if (t->predefined)
        return t;
    return t->basic ? loom_type_get(t->basic) : NULL;
}

static int op_arg(MPI_Win win, const char *fn, MPI_Op h, const struct loom_type *basic,
                  struct loom_op **op_p)
{
    struct loom_op *op = loom_op_get(h);
    char buf[160];
    if (!op || !op->number) {
        if (op)
            return loom_mpi_win_err(win, MPI_ERR_OP, fn,
                                    "a user-defined operation; RMA accumulates take "
                                    "predefined operations only");
        return loom_mpi_win_err(win, MPI_ERR_OP, fn, "%s",
                                loom_op_handle_problem(h, buf, sizeof buf));
    }
    if (op->number == LOOM_HANDLE_INDEX(MPI_MAXLOC) ||
        op->number == LOOM_HANDLE_INDEX(MPI_MINLOC) ||
        op->number == LOOM_HANDLE_INDEX(MPI_REPLACE) ||
        op->number == LOOM_HANDLE_INDEX(MPI_NO_OP) || basic) {
        const char *why = basic ? loom_op_problem(op, basic, buf, sizeof buf) : NULL;
        if (why)
            return loom_mpi_win_err(win, MPI_ERR_OP, fn, "%s", why);
    }
    *op_p = op;
    return MPI_SUCCESS;
}

/* The common body of Accumulate and Get_accumulate (result NULL for the
 * first). */
static int accumulate(const void *origin, int ocount, MPI_Datatype otype, void *result, int rcount,
                      MPI_Datatype rtype, int trank, MPI_Aint tdisp, int tcount, MPI_Datatype ttype,
                      MPI_Op oph, MPI_Win win, const char *fn)
{
    ENTER(w, win, fn);
    struct loom_type *ot = NULL, *rt = NULL, *tt = NULL;
    int rc;
    if ((rc = type_arg(win, fn, "target", tcount, ttype, &tt)))
        return rc;
    const struct loom_type *basic = basic_of(tt);
    if (!basic && tt->size)
        return loom_mpi_win_err(win, MPI_ERR_TYPE, fn,
                                "target_datatype mixes basic types (an accumulate needs one "
                                "predefined type throughout)");
    struct loom_op *op;
    if ((rc = op_arg(win, fn, oph, tt->size ? basic : NULL, &op)))
        return rc;
    bool no_op = op->number == LOOM_HANDLE_INDEX(MPI_NO_OP);
    if (no_op && !result)
        return loom_mpi_win_err(win, MPI_ERR_OP, fn,
                                "MPI_NO_OP is for MPI_Get_accumulate and MPI_Fetch_and_op only");
    size_t tbytes = (size_t)tcount * tt->size;
    if (!no_op || !result) {
        if ((rc = type_arg(win, fn, "origin", ocount, otype, &ot)))
            return rc;
        if (ot->size && tt->size && basic_of(ot) != basic)
            return loom_mpi_win_err(win, MPI_ERR_TYPE, fn, "origin and target basic types differ");
        if ((rc = same_bytes(win, fn, "origin", (size_t)ocount * ot->size, "target", tbytes)))
            return rc;
    }
    if (result) {
        if ((rc = type_arg(win, fn, "result", rcount, rtype, &rt)))
            return rc;
        if ((rc = same_bytes(win, fn, "result", (size_t)rcount * rt->size, "target", tbytes)))
            return rc;
    }
    char *taddr;
    if ((rc = target_arg(w, win, fn, trank, tdisp, tcount, tt, &taddr)) || !taddr || !tbytes)
        return rc;
    /* The origin's data packed, and room for the old target values. */
    char small_in[256], small_out[256];
    const void *in = NULL;
    void *packed_in = NULL, *out = NULL;
    if (!no_op) {
        if (ot->contig) {
            in = (const char *)origin + ot->true_lb;
        } else {
            packed_in = tbytes <= sizeof small_in ? small_in : malloc(tbytes);
            if (!packed_in)
                return loom_mpi_win_err(win, MPI_ERR_NO_MEM, fn, "out of memory");
            loom_type_pack(packed_in, origin, ot, 0, tbytes);
            in = packed_in;
        }
    }
    if (result) {
        if (rt->contig)
            out = (char *)result + rt->true_lb;
        else if (!(out = tbytes <= sizeof small_out ? small_out : malloc(tbytes))) {
            if (packed_in != small_in)
                free(packed_in);
            return loom_mpi_win_err(win, MPI_ERR_NO_MEM, fn, "out of memory");
        }
    }
    loom_rma_accumulate(taddr, (size_t)tcount, tt, basic, op, in, out,
                        w->locked && w->locked[trank] == LOOM_WIN_LOCKED_EXCLUSIVE);
    if (result && !rt->contig) {
        loom_type_unpack(result, rt, out, 0, tbytes);
        if (out != small_out)
            free(out);
    }
    if (packed_in != small_in)
        free(packed_in);
    return MPI_SUCCESS;
}

int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return accumulate(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                      target_rank, target_disp, target_count, target_datatype, op, win,
                      "MPI_Accumulate");
}
LOOM_MPI_ALIAS(Accumulate);

int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    if (!result_addr && result_count > 0)
        return loom_mpi_win_err(win, MPI_ERR_BUFFER, "MPI_Get_accumulate", "result_addr is NULL");
    return accumulate(origin_addr, origin_count, origin_datatype,
                      result_addr ? result_addr : (void *)&loom_in_place_marker, result_count,
                      result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                      win, "MPI_Get_accumulate");
}
LOOM_MPI_ALIAS(Get_accumulate);

int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    ENTER(w, win, "MPI_Raccumulate");
    if (!request)
        return loom_mpi_win_err(win, MPI_ERR_ARG, "MPI_Raccumulate", "request is NULL");
    int rc = passive_arg(w, win, "MPI_Raccumulate", target_rank);
    if (rc)
        return rc;
    rc = accumulate(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                    target_rank, target_disp, target_count, target_datatype, op, win,
                    "MPI_Raccumulate");
    return rc ? rc : done_request(w, win, "MPI_Raccumulate", request);
}
LOOM_MPI_ALIAS(Raccumulate);

int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    ENTER(w, win, "MPI_Rget_accumulate");
    if (!request)
        return loom_mpi_win_err(win, MPI_ERR_ARG, "MPI_Rget_accumulate", "request is NULL");
    int rc = passive_arg(w, win, "MPI_Rget_accumulate", target_rank);
    if (rc)
        return rc;
    rc = PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                             result_datatype, target_rank, target_disp, target_count,
                             target_datatype, op, win);
    return rc ? rc : done_request(w, win, "MPI_Rget_accumulate", request);
}
LOOM_MPI_ALIAS(Rget_accumulate);

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    static const char fn[] = "MPI_Fetch_and_op";
    ENTER(w, win, fn);
    struct loom_type *t = loom_type_get(datatype);
    if (LOOM_UNLIKELY(!t || !t->predefined || !t->size))
        return loom_mpi_win_err(win, MPI_ERR_TYPE, fn,
                                "datatype 0x%x is not a predefined type with data",
                                (unsigned)datatype);
    struct loom_op *o;
    int rc;
    if ((rc = op_arg(win, fn, op, t, &o)))
        return rc;
    if (!result_addr || (!origin_addr && o->number != LOOM_HANDLE_INDEX(MPI_NO_OP)))
        return loom_mpi_win_err(win, MPI_ERR_BUFFER, fn, "%s is NULL",
                                result_addr ? "origin_addr" : "result_addr");
    char *taddr;
    if ((rc = target_arg(w, win, fn, target_rank, target_disp, 1, t, &taddr)) || !taddr)
        return rc;
    loom_rma_accumulate(taddr, 1, t, t, o,
                        o->number == LOOM_HANDLE_INDEX(MPI_NO_OP) ? NULL : origin_addr, result_addr,
                        false);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Fetch_and_op);

/* Types MPI_Compare_and_swap takes: C and Fortran integers, logicals,
 * MPI_BYTE (MPI-3.1 11.3.4). */
static bool cas_type(MPI_Datatype t)
{
    switch (t) {
    case MPI_CHAR:
    case MPI_SIGNED_CHAR:
    case MPI_UNSIGNED_CHAR:
    case MPI_BYTE:
    case MPI_SHORT:
    case MPI_UNSIGNED_SHORT:
    case MPI_INT:
    case MPI_UNSIGNED:
    case MPI_LONG:
    case MPI_UNSIGNED_LONG:
    case MPI_LONG_LONG:
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_INT8_T:
    case MPI_INT16_T:
    case MPI_INT32_T:
    case MPI_INT64_T:
    case MPI_UINT8_T:
    case MPI_UINT16_T:
    case MPI_UINT32_T:
    case MPI_UINT64_T:
    case MPI_C_BOOL:
    case MPI_CXX_BOOL:
    case MPI_AINT:
    case MPI_OFFSET:
    case MPI_COUNT:
    case MPI_INTEGER:
    case MPI_INTEGER1:
    case MPI_INTEGER2:
    case MPI_INTEGER4:
    case MPI_INTEGER8:
    case MPI_LOGICAL:
    case MPI_WCHAR:
        return true;
    default:
        return false;
    }
}

int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    static const char fn[] = "MPI_Compare_and_swap";
    ENTER(w, win, fn);
    if (!cas_type(datatype))
        return loom_mpi_win_err(win, MPI_ERR_TYPE, fn,
                                "datatype 0x%x is not an integer, logical or byte type",
                                (unsigned)datatype);
    if (!origin_addr || !compare_addr || !result_addr)
        return loom_mpi_win_err(win, MPI_ERR_BUFFER, fn, "%s is NULL",
                                !origin_addr    ? "origin_addr"
                                : !compare_addr ? "compare_addr"
                                                : "result_addr");
    struct loom_type *t = loom_type_get(datatype);
    char *taddr;
    int rc;
    if ((rc = target_arg(w, win, fn, target_rank, target_disp, 1, t, &taddr)) || !taddr)
        return rc;
    loom_rma_cas(taddr, t, origin_addr, compare_addr, result_addr);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Compare_and_swap);

/* ---- synchronization ---- */

static int assert_arg(MPI_Win win, const char *fn, int assert, int allowed)
{
    if (assert & ~allowed)
        return loom_mpi_win_err(win, MPI_ERR_ASSERT, fn,
                                "assert 0x%x has flags this call does not take (0x%x)",
                                (unsigned)assert, (unsigned)(assert & ~allowed));
    return MPI_SUCCESS;
}

static int sync_err(MPI_Win win, const char *fn, const char *what)
{
    return loom_mpi_win_err(win, MPI_ERR_RMA_SYNC, fn, "%s", what);
}

int PMPI_Win_fence(int assert, MPI_Win win)
{
    ENTER(w, win, "MPI_Win_fence");
    int rc =
        assert_arg(win, "MPI_Win_fence", assert,
                   MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED);
    if (rc)
        return rc;
    if (w->lock_all || w->nlocks || w->started || w->posted)
        return sync_err(win, "MPI_Win_fence", "a lock or post/start epoch is open on this window");
    if (loom_win_fence(w, assert) != MPI_SUCCESS)
        return loom_mpi_win_err(win, MPI_ERR_INTERN, "MPI_Win_fence", "the barrier failed");
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_fence);

/* The window ranks of the members of group h, or an error. */
static int group_ranks(struct loom_win *w, MPI_Win win, const char *fn, MPI_Group h, int **ranks_p,
                       int *n_p)
{
    struct loom_group *g = loom_group_lookup(h);
    if (!g)
        return loom_mpi_win_err(win, MPI_ERR_GROUP, fn, "0x%x is not a valid group", (unsigned)h);
    int *r = malloc((size_t)(g->size ? g->size : 1) * sizeof *r);
    if (!r)
        return loom_mpi_win_err(win, MPI_ERR_NO_MEM, fn, "out of memory");
    for (int i = 0; i < g->size; i++) {
        r[i] = g->world[i] >= 0 && g->world[i] < loom_job.nranks ? w->sh->rank_of_world[g->world[i]]
                                                                 : -1;
        if (r[i] < 0) {
            free(r);
            return loom_mpi_win_err(win, MPI_ERR_GROUP, fn,
                                    "member %d of the group (world rank %d) is not in the window",
                                    i, g->world[i]);
        }
    }
    *ranks_p = r;
    *n_p = g->size;
    return MPI_SUCCESS;
}

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_post";
    ENTER(w, win, fn);
    int rc, *ranks, n;
    if ((rc = assert_arg(win, fn, assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT)))
        return rc;
    if (w->posted)
        return sync_err(win, fn, "an exposure epoch (MPI_Win_post) is already open");
    if ((rc = group_ranks(w, win, fn, group, &ranks, &n)))
        return rc;
    rc = loom_win_post(w, n, ranks);
    free(ranks);
    if (rc)
        return loom_mpi_win_err(win, MPI_ERR_NO_MEM, fn, "out of memory");
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_post);

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_start";
    ENTER(w, win, fn);
    int rc, *ranks, n;
    if ((rc = assert_arg(win, fn, assert, MPI_MODE_NOCHECK)))
        return rc;
    if (w->started || w->lock_all || w->nlocks)
        return sync_err(win, fn,
                        w->started ? "an access epoch (MPI_Win_start) is already open"
                                   : "a lock epoch is open on this window");
    if ((rc = group_ranks(w, win, fn, group, &ranks, &n)))
        return rc;
    rc = loom_win_start(w, n, ranks, assert &MPI_MODE_NOCHECK);
    free(ranks);
    if (rc)
        return loom_mpi_win_err(win, MPI_ERR_NO_MEM, fn, "out of memory");
    w->fence = false; /* a new kind of epoch ends the fence's */
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_start);

int PMPI_Win_complete(MPI_Win win)
{
    ENTER(w, win, "MPI_Win_complete");
    if (!w->started)
        return sync_err(win, "MPI_Win_complete", "no access epoch (MPI_Win_start) is open");
    loom_win_complete(w);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_complete);

int PMPI_Win_wait(MPI_Win win)
{
    ENTER(w, win, "MPI_Win_wait");
    if (!w->posted)
        return sync_err(win, "MPI_Win_wait", "no exposure epoch (MPI_Win_post) is open");
    (void)loom_win_wait(w, false);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_wait);

int PMPI_Win_test(MPI_Win win, int *flag)
{
    ENTER(w, win, "MPI_Win_test");
    if (!flag)
        return loom_mpi_win_err(win, MPI_ERR_ARG, "MPI_Win_test", "flag is NULL");
    if (!w->posted)
        return sync_err(win, "MPI_Win_test", "no exposure epoch (MPI_Win_post) is open");
    *flag = loom_win_wait(w, true);
    if (!*flag)
        loom_ult_yield(); /* a test in a loop lets the origins run */
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_test);

static int rank_arg(struct loom_win *w, MPI_Win win, const char *fn, int rank)
{
    if (rank < 0 || rank >= w->sh->size)
        return loom_mpi_win_err(win, MPI_ERR_RANK, fn, "rank %d is not in the window's group of %d",
                                rank, w->sh->size);
    return MPI_SUCCESS;
}

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_lock";
    ENTER(w, win, fn);
    int rc;
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return loom_mpi_win_err(win, MPI_ERR_LOCKTYPE, fn,
                                "lock_type %d is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE",
                                lock_type);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if ((rc = rank_arg(w, win, fn, rank)) || (rc = assert_arg(win, fn, assert, MPI_MODE_NOCHECK)))
        return rc;
    if (w->lock_all || (w->locked && w->locked[rank]) || w->started)
        return sync_err(win, fn,
                        w->lock_all  ? "MPI_Win_lock_all holds every target already"
                        : w->started ? "an access epoch (MPI_Win_start) is open"
                                     : "this rank holds a lock on that target already");
    if (w->hints.no_locks)
        return sync_err(win, fn, "the window was made with the info hint no_locks=true");
    if (loom_win_lock(w, lock_type, rank, assert &MPI_MODE_NOCHECK) != LOOM_OK)
        return loom_mpi_win_err(win, MPI_ERR_NO_MEM, fn, "out of memory");
    w->fence = false;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_lock);

int PMPI_Win_unlock(int rank, MPI_Win win)
{
    static const char fn[] = "MPI_Win_unlock";
    ENTER(w, win, fn);
    int rc;
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if ((rc = rank_arg(w, win, fn, rank)))
        return rc;
    if (!w->locked || !w->locked[rank])
        return sync_err(win, fn, "this rank holds no lock on that target (MPI_Win_lock)");
    loom_win_unlock(w, rank);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_unlock);

int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_lock_all";
    ENTER(w, win, fn);
    int rc;
    if ((rc = assert_arg(win, fn, assert, MPI_MODE_NOCHECK)))
        return rc;
    if (w->lock_all || w->nlocks || w->started)
        return sync_err(win, fn,
                        w->lock_all ? "MPI_Win_lock_all was called already"
                        : w->nlocks ? "this rank holds locks from MPI_Win_lock"
                                    : "an access epoch (MPI_Win_start) is open");
    if (w->hints.no_locks)
        return sync_err(win, fn, "the window was made with the info hint no_locks=true");
    loom_win_lock_all(w, assert &MPI_MODE_NOCHECK);
    w->fence = false;
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_lock_all);

int PMPI_Win_unlock_all(MPI_Win win)
{
    ENTER(w, win, "MPI_Win_unlock_all");
    if (!w->lock_all)
        return sync_err(win, "MPI_Win_unlock_all", "MPI_Win_lock_all was not called");
    loom_win_unlock_all(w);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_unlock_all);

/* Flushes: every operation is complete already; a full fence orders them
 * before what follows, and a yield lets the worker's other ranks run. */
static int flush(MPI_Win win, int rank, bool all, const char *fn)
{
    ENTER(w, win, fn);
    if (!all && rank != MPI_PROC_NULL) {
        int rc = rank_arg(w, win, fn, rank);
        if (rc)
            return rc;
        if (!w->lock_all && !(w->locked && w->locked[rank]))
            return sync_err(win, fn, "no passive-target epoch (lock) covers that target");
    } else if (all && !w->lock_all && !w->nlocks) {
        return sync_err(win, fn, "no passive-target epoch (lock or lock_all) is open");
    }
    atomic_thread_fence(memory_order_seq_cst);
    /* Programs poll with flushes (a CAS or Get in a loop until a peer's
     * value changes): let the worker's other ranks run, or a rank that
     * spins here would starve the one it waits for. No cost when no other
     * rank is ready. */
    loom_ult_yield();
    return MPI_SUCCESS;
}

int PMPI_Win_flush(int rank, MPI_Win win)
{
    return flush(win, rank, false, "MPI_Win_flush");
}
LOOM_MPI_ALIAS(Win_flush);

int PMPI_Win_flush_all(MPI_Win win)
{
    return flush(win, 0, true, "MPI_Win_flush_all");
}
LOOM_MPI_ALIAS(Win_flush_all);

int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    return flush(win, rank, false, "MPI_Win_flush_local");
}
LOOM_MPI_ALIAS(Win_flush_local);

int PMPI_Win_flush_local_all(MPI_Win win)
{
    return flush(win, 0, true, "MPI_Win_flush_local_all");
}
LOOM_MPI_ALIAS(Win_flush_local_all);

int PMPI_Win_sync(MPI_Win win)
{
    ENTER(w, win, "MPI_Win_sync");
    (void)w;
    atomic_thread_fence(memory_order_seq_cst);
    return MPI_SUCCESS;
}
LOOM_MPI_ALIAS(Win_sync);
