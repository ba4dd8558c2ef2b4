/* Intercommunicators: MPI_Intercomm_create (and _from_groups where the MPI
 * has it), MPI_Comm_test_inter, size, rank, remote size, local and remote
 * groups, MPI_Intercomm_merge with both orders of the high flag, Comm_dup
 * (attributes copied), Comm_idup, Comm_split (MPI_COMM_NULL where a color
 * has no member on one side), Comm_create with part of the local group,
 * Comm_compare, names, and Comm_free. Each new intercommunicator is checked
 * by an MPI_Allreduce over it (the sum of the remote group's world ranks). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "inter_util.h"

/* ic joins the world ranks lw[0..ln) (in rank order, the caller at myr) to
 * rw[0..rn). */
static void verify(MPI_Comm ic, const int *lw, int ln, int myr, const int *rw, int rn)
{
    int flag = 0, n = -1, r = -1, rs = -1;
    MPI_Comm_test_inter(ic, &flag);
    CHECK_EQ(flag, 1);
    MPI_Comm_size(ic, &n);
    MPI_Comm_rank(ic, &r);
    MPI_Comm_remote_size(ic, &rs);
    CHECK_EQ(n, ln);
    CHECK_EQ(r, myr);
    CHECK_EQ(rs, rn);
    /* The groups, as world ranks. */
    MPI_Group wg, lg, rg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(ic, &lg);
    MPI_Comm_remote_group(ic, &rg);
    int *idx = malloc((size_t)wsize * sizeof *idx), *out = malloc((size_t)wsize * sizeof *out);
    for (int i = 0; i < wsize; i++)
        idx[i] = i;
    int gs = -1;
    MPI_Group_size(lg, &gs);
    CHECK_EQ(gs, ln);
    MPI_Group_translate_ranks(lg, ln, idx, wg, out);
    for (int i = 0; i < ln; i++)
        CHECK_EQ(out[i], lw[i]);
    MPI_Group_size(rg, &gs);
    CHECK_EQ(gs, rn);
    MPI_Group_translate_ranks(rg, rn, idx, wg, out);
    for (int i = 0; i < rn; i++)
        CHECK_EQ(out[i], rw[i]);
    MPI_Group_free(&wg);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    free(idx);
    free(out);
    long long sum = 0, want = 0;
    for (int i = 0; i < rn; i++)
        want += rw[i];
    long long w = wrank;
    MPI_Allreduce(&w, &sum, 1, MPI_LONG_LONG, MPI_SUM, ic);
    CHECK_EQ(sum, want);
}

static int copied;
static int copy_fn(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c;
    (void)kv;
    (void)extra;
    copied++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* MPI_Comm_split: color by parity of the local rank, key reversing it. */
static void test_split(MPI_Comm inter)
{
    int color = lrank % 2;
    MPI_Comm sc;
    MPI_Comm_split(inter, color, -lrank, &sc);
    int lw[256], rw[256], ln = 0, rn = 0, myr = -1;
    for (int i = LSIZE - 1; i >= 0; i--)
        if (i % 2 == color) {
            if (i == lrank)
                myr = ln;
            lw[ln++] = LOCALW(i);
        }
    for (int i = RSIZE - 1; i >= 0; i--)
        if (i % 2 == color)
            rw[rn++] = REMOTE(i);
    if (rn == 0) {
        CHECK(sc == MPI_COMM_NULL);
    } else {
        CHECK(sc != MPI_COMM_NULL);
        if (sc != MPI_COMM_NULL) {
            verify(sc, lw, ln, myr, rw, rn);
            MPI_Comm_free(&sc);
        }
    }
    /* MPI_UNDEFINED on side 1: everybody gets MPI_COMM_NULL. */
    MPI_Comm_split(inter, side ? MPI_UNDEFINED : 0, 0, &sc);
    CHECK(sc == MPI_COMM_NULL);
}

/* MPI_Comm_create: the even local ranks of each side. */
static void test_create(MPI_Comm inter)
{
    MPI_Group lg, even;
    MPI_Comm_group(inter, &lg);
    int ranks[256], n = 0;
    for (int i = 0; i < LSIZE; i += 2)
        ranks[n++] = i;
    MPI_Group_incl(lg, n, ranks, &even);
    MPI_Comm cc;
    MPI_Comm_create(inter, even, &cc);
    if (lrank % 2) {
        CHECK(cc == MPI_COMM_NULL);
    } else {
        CHECK(cc != MPI_COMM_NULL);
        int lw[256], rw[256], rn = 0;
        for (int i = 0; i < n; i++)
            lw[i] = LOCALW(ranks[i]);
        for (int i = 0; i < RSIZE; i += 2)
            rw[rn++] = REMOTE(i);
        if (cc != MPI_COMM_NULL) {
            verify(cc, lw, n, lrank / 2, rw, rn);
            MPI_Comm_free(&cc);
        }
    }
    MPI_Group_free(&even);
    MPI_Group_free(&lg);
}

/* MPI_Intercomm_merge: the group with high = 0 first. */
static void test_merge(MPI_Comm inter)
{
    for (int flip = 0; flip < 2; flip++) {
        int high = flip ? !side : side;
        MPI_Comm m;
        MPI_Intercomm_merge(inter, high, &m);
        int flag = 1, n = 0, r = -1;
        MPI_Comm_test_inter(m, &flag);
        CHECK_EQ(flag, 0);
        MPI_Comm_size(m, &n);
        MPI_Comm_rank(m, &r);
        CHECK_EQ(n, wsize);
        CHECK_EQ(r, high ? RSIZE + lrank : lrank);
        /* The order, through the world ranks gathered in it. */
        int *all = malloc((size_t)wsize * sizeof *all);
        MPI_Allgather(&wrank, 1, MPI_INT, all, 1, MPI_INT, m);
        int low_side = flip ? 1 : 0;
        for (int i = 0; i < wsize; i++) {
            int s = i < nside[low_side] ? low_side : !low_side;
            int k = s == low_side ? i : i - nside[low_side];
            CHECK_EQ(all[i], members[s][k]);
        }
        free(all);
        MPI_Comm_free(&m);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    inter_sides();
    if (wsize < 2) {
        if (wrank == 0)
            printf("inter_comm: %d ranks ok\n", wsize); /* an intercommunicator needs two */
        MPI_Finalize();
        return 0;
    }
    MPI_Comm local;
    MPI_Comm inter = inter_make(&local, 7);
    verify(inter, members[side], LSIZE, lrank, members[!side], RSIZE);

    /* compare */
    int res = -1;
    MPI_Comm_compare(inter, inter, &res);
    CHECK_EQ(res, MPI_IDENT);
    MPI_Comm_compare(inter, MPI_COMM_WORLD, &res);
    CHECK_EQ(res, MPI_UNEQUAL);
    MPI_Comm_compare(inter, local, &res);
    CHECK_EQ(res, MPI_UNEQUAL);

    /* names and attributes, and a duplicate that copies them */
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    MPI_Comm_set_name(inter, "the intercomm");
    MPI_Comm_get_name(inter, name, &len);
    CHECK(strcmp(name, "the intercomm") == 0);
    int kv;
    static int val = 42;
    MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &kv, NULL);
    MPI_Comm_set_attr(inter, kv, &val);
    MPI_Comm dup;
    MPI_Comm_dup(inter, &dup);
    CHECK_EQ(copied, 1);
    int *got = NULL, flag = 0;
    MPI_Comm_get_attr(dup, kv, &got, &flag);
    CHECK(flag && got == &val);
    MPI_Comm_compare(inter, dup, &res);
    CHECK_EQ(res, MPI_CONGRUENT);
    verify(dup, members[side], LSIZE, lrank, members[!side], RSIZE);

    /* idup: usable once the request completes */
    MPI_Comm idup;
    MPI_Request req;
    MPI_Comm_idup(dup, &idup, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    verify(idup, members[side], LSIZE, lrank, members[!side], RSIZE);
    MPI_Comm_compare(idup, dup, &res);
    CHECK_EQ(res, MPI_CONGRUENT);

    test_split(inter);
    test_create(inter);
    test_merge(inter);

    /* Intercomm_create on a derived intercommunicator's peer: dup as the
     * peer communicator would not do (peer_comm must hold both leaders), so
     * use the merged one. */
    MPI_Comm merged, again;
    MPI_Intercomm_merge(inter, side, &merged);
    int leader_in_merged = side ? 0 : LSIZE; /* the other side's local rank 0 */
    MPI_Intercomm_create(local, 0, merged, leader_in_merged, 3, &again);
    verify(again, members[side], LSIZE, lrank, members[!side], RSIZE);
    MPI_Comm_free(&again);
    MPI_Comm_free(&merged);

#if MPI_VERSION >= 4
    {
        MPI_Group lg, rg;
        MPI_Comm_group(inter, &lg);
        MPI_Comm_remote_group(inter, &rg);
        MPI_Comm fg;
        MPI_Intercomm_create_from_groups(lg, 0, rg, 0, "inter_comm test", MPI_INFO_NULL,
                                         MPI_ERRORS_RETURN, &fg);
        verify(fg, members[side], LSIZE, lrank, members[!side], RSIZE);
        MPI_Comm_free(&fg);
        MPI_Group_free(&lg);
        MPI_Group_free(&rg);
    }
#endif

    MPI_Comm_free(&idup);
    MPI_Comm_free(&dup);
    MPI_Comm_free_keyval(&kv);
    MPI_Comm_free(&inter);
    CHECK(inter == MPI_COMM_NULL);
    MPI_Comm_free(&local);
    return inter_finish("inter_comm");
}
