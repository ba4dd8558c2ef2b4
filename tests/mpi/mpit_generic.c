/* The MPI tool information interface, the parts that do not depend on an
 * implementation's variables: MPI_T before MPI_Init and after MPI_Finalize,
 * nested initialization, the errors of an uninitialized interface, every
 * control variable, performance variable, enumeration and category
 * enumerated with its info (names round trip through get_index; the
 * standard's convention for returned strings: a NULL length, a zero length,
 * truncation), indices out of range, sessions and handles of every
 * performance variable bound to no object (start/stop, read, write and
 * reset as the variable's flags allow), the handle and session errors, and
 * the count of event sources and events (Loom has none).
 * Validated under MPICH 4.0 (which has ~100 variables; its deviations are
 * marked where checked). Open MPI 4.1 fails it: MPI_T_ERR_INVALID_INDEX for
 * an enumeration item out of range, and a crash further on. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

/* Loom checks handles by membership, so a freed handle reads as invalid;
 * other implementations may crash on one (the standard calls its use
 * erroneous). */
#ifdef LOOM_MPI_H
#define LOOM 1
#else
#define LOOM 0
#endif

static int rank;

/* The standard's string convention (MPI-4.1 15.3.3) on one string: its
 * full length with a NULL buffer and with a zero length, truncation to a
 * buffer of 4 (3 characters and a null, length 4), the whole string in a
 * large buffer (length strlen + 1). full: the string as returned whole. */
static void check_strings(int (*get)(int idx, char *s, int *len), int idx, char *full, size_t cap)
{
    int len = 0;
    CHECK_EQ(get(idx, NULL, &len), MPI_SUCCESS);
    int need = len;
    CHECK(need >= 1);
    char canary[8] = "zzzzzzz";
    len = 0;
    CHECK_EQ(get(idx, canary, &len), MPI_SUCCESS);
    CHECK_EQ(len, need);
    CHECK(strcmp(canary, "zzzzzzz") == 0); /* zero length: nothing written */
    if (LOOM) /* MPICH 4.0's MPI_T_pvar_get_info crashes on a NULL length */
        CHECK_EQ(get(idx, NULL, NULL), MPI_SUCCESS);
    len = (int)cap;
    CHECK_EQ(get(idx, full, &len), MPI_SUCCESS);
    CHECK_EQ(len, need);
    CHECK_EQ((int)strlen(full) + 1, need);
    if (need > 4) {
        char small[8] = "zzzzzzz";
        len = 4;
        CHECK_EQ(get(idx, small, &len), MPI_SUCCESS);
        CHECK_EQ(len, 4);
        CHECK(small[3] == 0 && strncmp(small, full, 3) == 0);
        CHECK(small[4] == 'z');
    }
}

static int cvar_name(int i, char *s, int *len)
{
    return MPI_T_cvar_get_info(i, s, len, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}
static int cvar_desc(int i, char *s, int *len)
{
    return MPI_T_cvar_get_info(i, NULL, NULL, NULL, NULL, NULL, s, len, NULL, NULL);
}
/* MPICH 4.0 crashes in MPI_T_pvar_get_info when an OUT argument is NULL
 * (MPI-4.1 15.3.3 lets any be NULL): Loom gets NULLs, others places to
 * write. */
static int pvar_name(int i, char *s, int *len)
{
    int v, c, b, r, k, a;
    MPI_Datatype d;
    MPI_T_enum e;
    if (LOOM)
        return MPI_T_pvar_get_info(i, s, len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                   NULL);
    return MPI_T_pvar_get_info(i, s, len, &v, &c, &d, &e, NULL, NULL, &b, &r, &k, &a);
}
static int pvar_desc(int i, char *s, int *len)
{
    int v, c, b, r, k, a;
    MPI_Datatype d;
    MPI_T_enum e;
    if (LOOM)
        return MPI_T_pvar_get_info(i, NULL, NULL, NULL, NULL, NULL, NULL, s, len, NULL, NULL, NULL,
                                   NULL);
    return MPI_T_pvar_get_info(i, NULL, NULL, &v, &c, &d, &e, s, len, &b, &r, &k, &a);
}
static int cat_name(int i, char *s, int *len)
{
    return MPI_T_category_get_info(i, s, len, NULL, NULL, NULL, NULL, NULL);
}
static int cat_desc(int i, char *s, int *len)
{
    return MPI_T_category_get_info(i, NULL, NULL, s, len, NULL, NULL, NULL);
}

static void check_enum(MPI_T_enum e)
{
    int num = -1, len = 256;
    char name[256];
    CHECK_EQ(MPI_T_enum_get_info(e, &num, name, &len), MPI_SUCCESS);
    CHECK(num >= 1);
    for (int k = 0; k < num; k++) {
        int value;
        len = 256;
        CHECK_EQ(MPI_T_enum_get_item(e, k, &value, name, &len), MPI_SUCCESS);
        CHECK((int)strlen(name) + 1 == len);
    }
    int value;
    CHECK_EQ(MPI_T_enum_get_item(e, num, &value, NULL, NULL), MPI_T_ERR_INVALID_ITEM);
    CHECK_EQ(MPI_T_enum_get_item(e, -1, &value, NULL, NULL), MPI_T_ERR_INVALID_ITEM);
}

static void check_cvars(void)
{
    int n = -1;
    CHECK_EQ(MPI_T_cvar_get_num(&n), MPI_SUCCESS);
    CHECK(n >= 0);
    for (int i = 0; i < n; i++) {
        char name[256], desc[8192];
        check_strings(cvar_name, i, name, sizeof name);
        check_strings(cvar_desc, i, desc, sizeof desc);
        int verb = 0, bind = -1, scope = -1, len = sizeof name;
        MPI_Datatype dt = MPI_DATATYPE_NULL;
        MPI_T_enum e = MPI_T_ENUM_NULL;
        CHECK_EQ(MPI_T_cvar_get_info(i, name, &len, &verb, &dt, &e, NULL, NULL, &bind, &scope),
                 MPI_SUCCESS);
        CHECK(verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL);
        CHECK(scope >= MPI_T_SCOPE_CONSTANT && scope <= MPI_T_SCOPE_ALL_EQ);
        CHECK(bind >= MPI_T_BIND_NO_OBJECT);
        CHECK(dt != MPI_DATATYPE_NULL);
        int idx = -1;
        CHECK_EQ(MPI_T_cvar_get_index(name, &idx), MPI_SUCCESS);
        CHECK_EQ(idx, i);
        if (e != MPI_T_ENUM_NULL)
            check_enum(e);
        if (bind == MPI_T_BIND_NO_OBJECT) {
            MPI_T_cvar_handle h;
            int count = -1;
            CHECK_EQ(MPI_T_cvar_handle_alloc(i, NULL, &h, &count), MPI_SUCCESS);
            CHECK(count >= 1);
            if (count >= 1 && count < 4096) {
                /* Room for any of the types a variable may have. */
                long long *buf = calloc((size_t)count, 16);
                CHECK_EQ(MPI_T_cvar_read(h, buf), MPI_SUCCESS);
                if (scope == MPI_T_SCOPE_CONSTANT || scope == MPI_T_SCOPE_READONLY)
                    CHECK_EQ(MPI_T_cvar_write(h, buf), MPI_T_ERR_CVAR_SET_NEVER);
                free(buf);
            }
            CHECK_EQ(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
            CHECK(h == MPI_T_CVAR_HANDLE_NULL);
        }
    }
    CHECK_EQ(cvar_name(n, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    CHECK_EQ(cvar_name(-1, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    int idx;
    CHECK_EQ(MPI_T_cvar_get_index("no such variable, surely", &idx), MPI_T_ERR_INVALID_NAME);
    MPI_T_cvar_handle h;
    int count;
    CHECK_EQ(MPI_T_cvar_handle_alloc(n, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
}

/* Every performance variable bound to no object, through one session. */
static void check_pvars(void)
{
    int n = -1;
    CHECK_EQ(MPI_T_pvar_get_num(&n), MPI_SUCCESS);
    CHECK(n >= 0);
    MPI_T_pvar_session s;
    CHECK_EQ(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    for (int i = 0; i < n; i++) {
        char name[256], desc[8192];
        check_strings(pvar_name, i, name, sizeof name);
        check_strings(pvar_desc, i, desc, sizeof desc);
        int verb = 0, cls = -1, bind = -1, ro = -1, cont = -1, atomic = -1, len = sizeof name;
        MPI_Datatype dt = MPI_DATATYPE_NULL;
        MPI_T_enum e = MPI_T_ENUM_NULL;
        CHECK_EQ(MPI_T_pvar_get_info(i, name, &len, &verb, &cls, &dt, &e, NULL, NULL, &bind, &ro,
                                     &cont, &atomic),
                 MPI_SUCCESS);
        CHECK(cls >= MPI_T_PVAR_CLASS_STATE && cls <= MPI_T_PVAR_CLASS_GENERIC);
        CHECK(ro == 0 || ro == 1);
        CHECK(cont == 0 || cont == 1);
        int idx = -1;
        CHECK_EQ(MPI_T_pvar_get_index(name, cls, &idx), MPI_SUCCESS);
        CHECK_EQ(idx, i);
        int other = cls == MPI_T_PVAR_CLASS_GENERIC ? MPI_T_PVAR_CLASS_STATE : cls + 1;
        CHECK(MPI_T_pvar_get_index(name, other, &idx) == MPI_T_ERR_INVALID_NAME || idx != i);
        if (e != MPI_T_ENUM_NULL)
            check_enum(e);
        if (bind != MPI_T_BIND_NO_OBJECT)
            continue;
        MPI_T_pvar_handle h;
        int count = -1;
        CHECK_EQ(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count), MPI_SUCCESS);
        CHECK(count >= 1);
        if (count < 1 || count > 4096)
            continue;
        long long *buf = calloc((size_t)count, 16);
        if (cont) {
            CHECK_EQ(MPI_T_pvar_start(s, h), MPI_T_ERR_PVAR_NO_STARTSTOP);
            CHECK_EQ(MPI_T_pvar_stop(s, h), MPI_T_ERR_PVAR_NO_STARTSTOP);
        } else {
            CHECK_EQ(MPI_T_pvar_start(s, h), MPI_SUCCESS);
            CHECK_EQ(MPI_T_pvar_stop(s, h), MPI_SUCCESS);
        }
        CHECK_EQ(MPI_T_pvar_read(s, h, buf), MPI_SUCCESS);
        if (ro) {
            CHECK_EQ(MPI_T_pvar_write(s, h, buf), MPI_T_ERR_PVAR_NO_WRITE);
            CHECK_EQ(MPI_T_pvar_reset(s, h), MPI_T_ERR_PVAR_NO_WRITE);
            int rc = MPI_T_pvar_readreset(s, h, buf);
            CHECK(rc == MPI_T_ERR_PVAR_NO_WRITE || (!atomic && rc == MPI_T_ERR_PVAR_NO_ATOMIC));
        } else if (!atomic) {
            /* readreset is for atomic variables only */
            CHECK_EQ(MPI_T_pvar_readreset(s, h, buf), MPI_T_ERR_PVAR_NO_ATOMIC);
        } else if (cls == MPI_T_PVAR_CLASS_COUNTER && dt == MPI_UNSIGNED_LONG_LONG && count == 1 &&
                   !cont) {
            /* A stopped counter shows what was written, then 0 after a reset. */
            unsigned long long v = 1234;
            CHECK_EQ(MPI_T_pvar_write(s, h, &v), MPI_SUCCESS);
            v = 0;
            CHECK_EQ(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
            CHECK_EQ(v, 1234);
            CHECK_EQ(MPI_T_pvar_readreset(s, h, &v), MPI_SUCCESS);
            CHECK_EQ(v, 1234);
            CHECK_EQ(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
            CHECK_EQ(v, 0);
        }
        free(buf);
    }
    /* Every handle at once. */
    CHECK_EQ(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    if (LOOM) { /* MPICH 4.0's MPI_T_pvar_get_info crashes on an index out of range */
        CHECK_EQ(pvar_name(n, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
        CHECK_EQ(pvar_name(-1, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    }
    int idx;
    CHECK_EQ(MPI_T_pvar_get_index("no such variable, surely", MPI_T_PVAR_CLASS_COUNTER, &idx),
             MPI_T_ERR_INVALID_NAME);
    MPI_T_pvar_handle h;
    int count;
    if (LOOM) /* (MPICH 4.0 crashes here too) */
        CHECK_EQ(MPI_T_pvar_handle_alloc(s, n, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    /* Freeing the session frees its handles. */
    CHECK_EQ(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    CHECK(s == MPI_T_PVAR_SESSION_NULL);
    if (LOOM) {
        MPI_T_pvar_session none = MPI_T_PVAR_SESSION_NULL;
        CHECK_EQ(MPI_T_pvar_session_free(&none), MPI_T_ERR_INVALID_SESSION);
    }
}

static void check_categories(void)
{
    int n = -1, ncvar, npvar;
    CHECK_EQ(MPI_T_category_get_num(&n), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_get_num(&ncvar), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_get_num(&npvar), MPI_SUCCESS);
    for (int i = 0; i < n; i++) {
        char name[256], desc[8192];
        check_strings(cat_name, i, name, sizeof name);
        check_strings(cat_desc, i, desc, sizeof desc);
        int nc = -1, np = -1, nk = -1, idx = -1;
        CHECK_EQ(MPI_T_category_get_info(i, NULL, NULL, NULL, NULL, &nc, &np, &nk), MPI_SUCCESS);
        CHECK_EQ(MPI_T_category_get_index(name, &idx), MPI_SUCCESS);
        CHECK_EQ(idx, i);
        CHECK(nc >= 0 && nc <= ncvar && np >= 0 && np <= npvar && nk >= 0 && nk < n);
        int *ix = malloc(((size_t)nc + (size_t)np + (size_t)nk + 1) * sizeof(int));
        CHECK_EQ(MPI_T_category_get_cvars(i, nc, ix), MPI_SUCCESS);
        for (int k = 0; k < nc; k++)
            CHECK(ix[k] >= 0 && ix[k] < ncvar);
        CHECK_EQ(MPI_T_category_get_pvars(i, np, ix), MPI_SUCCESS);
        for (int k = 0; k < np; k++)
            CHECK(ix[k] >= 0 && ix[k] < npvar);
        CHECK_EQ(MPI_T_category_get_categories(i, nk, ix), MPI_SUCCESS);
        for (int k = 0; k < nk; k++)
            CHECK(ix[k] >= 0 && ix[k] < n && ix[k] != i);
        /* A shorter array gets the first ones only. */
        if (nc >= 2) {
            int two[3] = {-7, -7, -7};
            CHECK_EQ(MPI_T_category_get_cvars(i, 2, two), MPI_SUCCESS);
            CHECK(two[2] == -7);
        }
        free(ix);
    }
    CHECK_EQ(cat_name(n, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    int idx, stamp = -1;
    CHECK_EQ(MPI_T_category_get_index("no such category, surely", &idx), MPI_T_ERR_INVALID_NAME);
    CHECK_EQ(MPI_T_category_changed(&stamp), MPI_SUCCESS);
}

/* Events: their count, and each category's events among them. */
static void check_events(void)
{
    int nsrc = -1, nev = -1, ncat, sum = 0;
    CHECK_EQ(MPI_T_source_get_num(&nsrc), MPI_SUCCESS);
    CHECK(nsrc >= 0);
    MPI_Count ts;
    CHECK_EQ(MPI_T_source_get_timestamp(nsrc, &ts), MPI_T_ERR_INVALID_INDEX);
    MPI_T_source_order order;
    MPI_Count tps, max;
    MPI_Info info;
    /* (MPICH 4.0 says MPI_T_ERR_INVALID for a source index out of range) */
    int rc = MPI_T_source_get_info(nsrc, NULL, NULL, NULL, NULL, &order, &tps, &max, &info);
    CHECK(rc == MPI_T_ERR_INVALID_INDEX || (!LOOM && rc == MPI_T_ERR_INVALID));
    CHECK_EQ(MPI_T_event_get_num(&nev), MPI_SUCCESS);
    CHECK(nev >= 0);
    CHECK_EQ(MPI_T_category_get_num(&ncat), MPI_SUCCESS);
    for (int c = 0; c < ncat; c++) {
        int n = -1;
        CHECK_EQ(MPI_T_category_get_num_events(c, &n), MPI_SUCCESS);
        CHECK(n >= 0 && n <= nev);
        int *ix = malloc(((size_t)n + 1) * sizeof(int));
        CHECK_EQ(MPI_T_category_get_events(c, n, ix), MPI_SUCCESS);
        for (int k = 0; k < n; k++)
            CHECK(ix[k] >= 0 && ix[k] < nev);
        free(ix);
        sum += n;
    }
    int n;
    CHECK_EQ(MPI_T_category_get_num_events(ncat, &n), MPI_T_ERR_INVALID_INDEX);
}

static void check_all(void)
{
    check_cvars();
    check_pvars();
    check_categories();
    check_events();
}

int main(int argc, char **argv)
{
    int n, provided = -1;
    /* Before MPI_Init: not initialized, then usable; nested. */
    CHECK_EQ(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_EQ(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_EQ(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    CHECK_EQ(provided, MPI_THREAD_SINGLE);
    CHECK_EQ(MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided), MPI_SUCCESS);
    check_all();
    CHECK_EQ(MPI_T_finalize(), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_get_num(&n), MPI_SUCCESS); /* one init left */
    /* MPICH 4.0 crashes in MPI_Init after the interface was finalized
     * (it frees its control variables' strings): it keeps one open. */
    if (LOOM) {
        CHECK_EQ(MPI_T_finalize(), MPI_SUCCESS);
        CHECK_EQ(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
        CHECK_EQ(MPI_T_pvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
        CHECK_EQ(MPI_T_category_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    }

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Between MPI_Init and MPI_Finalize, with a handle kept across. */
    CHECK_EQ(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    check_all();
    MPI_T_pvar_session s;
    CHECK_EQ(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    /* (the standard names no class: Loom says the handle, MPICH MPI_T_ERR_INVALID) */
    int rc = MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &n);
    CHECK(rc == MPI_T_ERR_INVALID_HANDLE || rc == MPI_T_ERR_INVALID);
    CHECK_EQ(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    /* The error classes are valid MPI error classes with a string. */
    int cls = -1, len;
    char text[MPI_MAX_ERROR_STRING];
    CHECK_EQ(MPI_Error_class(MPI_T_ERR_INVALID_HANDLE, &cls), MPI_SUCCESS);
    CHECK_EQ(cls, MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_Error_string(MPI_T_ERR_PVAR_NO_WRITE, text, &len), MPI_SUCCESS);
    CHECK(len > 0);
    CHECK(MPI_T_ERR_NOT_INITIALIZED <= MPI_ERR_LASTCODE && MPI_T_ERR_INVALID <= MPI_ERR_LASTCODE);
    CHECK_EQ(MPI_T_finalize(), MPI_SUCCESS);

    int failed = check_failures_, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && any == 0)
        printf("mpit_generic: %d ranks ok\n", size);
    MPI_Finalize();

    /* After MPI_Finalize: usable again. */
    CHECK_EQ(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    check_all();
    CHECK_EQ(MPI_T_finalize(), MPI_SUCCESS);
    if (!LOOM)
        CHECK_EQ(MPI_T_finalize(), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    return check_summary();
}
