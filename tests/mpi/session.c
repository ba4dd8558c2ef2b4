/*
 * Sessions (MPI-4.1 11.3). Without an argument, no MPI_Init at all: a
 * session, its process sets ("mpi://WORLD", "mpi://SELF"), groups from
 * them, communicators from the groups (MPI_Comm_create_from_group) used
 * for messages and collectives, session error handlers and info, two
 * sessions at once, and a session started again after the last one ended.
 * With "mixed": sessions alongside the world model, one of them open across
 * MPI_Finalize and still working after it.
 *
 * Validated with MPICH 4.0.2, which implements sessions: it passes both
 * modes but for what is marked LOOM_MPI_H (MPICH lists more process sets,
 * and ends the job on a session call's error instead of calling the
 * session's error handler).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

static int handled_code = -1, handled_calls;

static void on_error(MPI_Session *s, int *code, ...)
{
    (void)s;
    handled_code = *code;
    handled_calls++;
}

/* A communicator over a process set of session s. */
static MPI_Comm comm_of(MPI_Session s, const char *pset, const char *tag)
{
    MPI_Group g;
    CHECK(MPI_Group_from_session_pset(s, pset, &g) == MPI_SUCCESS);
    MPI_Comm c = MPI_COMM_NULL;
    CHECK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) == MPI_SUCCESS);
    MPI_Group_free(&g);
    return c;
}

/* Messages and a collective on c: a ring and a sum of ranks. */
static void use(MPI_Comm c)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, next, 3, &got, 1, MPI_INT, prev, 3, c, MPI_STATUS_IGNORE);
    CHECK_EQ(got, prev);
    int sum = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK_EQ(sum, size * (size - 1) / 2);
}

static void psets(MPI_Session s, int *world_size)
{
    int n = -1;
    CHECK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n) == MPI_SUCCESS);
    CHECK(n >= 2);
    int seen_world = 0, seen_self = 0;
    for (int i = 0; i < n; i++) {
        char name[MPI_MAX_PSET_NAME_LEN];
        int len = 0;
        CHECK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL) == MPI_SUCCESS);
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN);
        len = sizeof name;
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name);
        seen_world += strcmp(name, "mpi://WORLD") == 0;
        seen_self += strcmp(name, "mpi://SELF") == 0;
    }
    CHECK(seen_world == 1 && seen_self == 1);
#ifdef LOOM_MPI_H
    CHECK_EQ(n, 2); /* MPICH has more */
#endif
    MPI_Info info;
    char val[32];
    int flag = 0, len = sizeof val;
    CHECK(MPI_Session_get_pset_info(s, "mpi://WORLD", &info) == MPI_SUCCESS);
    MPI_Info_get_string(info, "mpi_size", &len, val, &flag);
    CHECK(flag);
    sscanf(val, "%d", world_size);
    MPI_Info_free(&info);
    len = sizeof val;
    MPI_Session_get_pset_info(s, "mpi://SELF", &info);
    MPI_Info_get_string(info, "mpi_size", &len, val, &flag);
    CHECK(flag && strcmp(val, "1") == 0);
    MPI_Info_free(&info);
}

static int sessions_only(void)
{
    int flag = -1;
    MPI_Session s, t;
    MPI_Info hints;
    MPI_Info_create(&hints); /* info calls work before any initialization */
    MPI_Info_set(hints, "thread_level", "MPI_THREAD_SINGLE");
    CHECK(MPI_Session_init(hints, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS);
    MPI_Info_free(&hints);
    MPI_Initialized(&flag);
    CHECK_EQ(flag, 0); /* the world model is not initialized */

    int world = -1;
    psets(s, &world);
    MPI_Comm c = comm_of(s, "mpi://WORLD", "org.loom.test.world");
    int rank = -1, size = -1;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    CHECK_EQ(size, world);
    use(c);
    MPI_Comm self = comm_of(s, "mpi://SELF", "org.loom.test.self");
    MPI_Comm_size(self, &size);
    CHECK_EQ(size, 1);
    use(self);

    /* Info: the thread level provided. */
    MPI_Info used;
    char val[64];
    int len = sizeof val;
    CHECK(MPI_Session_get_info(s, &used) == MPI_SUCCESS);
    MPI_Info_get_string(used, "thread_level", &len, val, &flag);
    CHECK(flag && strncmp(val, "MPI_THREAD_", 11) == 0);
    MPI_Info_free(&used);

    /* Error handlers: a user one sees the code; errors go to it. */
    MPI_Errhandler eh, got;
    CHECK(MPI_Session_create_errhandler(on_error, &eh) == MPI_SUCCESS);
    CHECK(MPI_Session_set_errhandler(s, eh) == MPI_SUCCESS);
    CHECK(MPI_Session_get_errhandler(s, &got) == MPI_SUCCESS && got == eh);
    MPI_Errhandler_free(&got);
    MPI_Session_call_errhandler(s, MPI_ERR_OTHER);
    CHECK_EQ(handled_calls, 1);
    CHECK_EQ(handled_code, MPI_ERR_OTHER);
#ifdef LOOM_MPI_H
    /* A session call's error goes to the session's handler (MPICH 4.0.2
     * ends the job instead). */
    MPI_Group g;
    int rc = MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g);
    CHECK(rc != MPI_SUCCESS);
    CHECK_EQ(handled_calls, 2);
    MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN);
    int cls = -1;
    MPI_Error_class(MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g), &cls);
    CHECK(cls == MPI_ERR_ARG);
#endif
    MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);

    /* Handles convert to Fortran and back. */
    CHECK(MPI_Session_f2c(MPI_Session_c2f(s)) == s);

    /* A second session at the same time. */
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &t) == MPI_SUCCESS);
    CHECK(t != s);
    MPI_Comm d = comm_of(t, "mpi://WORLD", "org.loom.test.second");
    use(d);
    MPI_Comm_free(&d);
    CHECK(MPI_Session_finalize(&t) == MPI_SUCCESS && t == MPI_SESSION_NULL);

    int failed = check_failures_ != 0, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, c);
    MPI_Comm_free(&self);
    MPI_Comm_free(&c);
    CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS);
    MPI_Finalized(&flag);
    CHECK_EQ(flag, 0);

    int any2 = 0;
    size = world;
#ifdef LOOM_MPI_H
    /* A new session after the last one ended (MPICH 4.0.2 crashes here). */
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS);
    c = comm_of(s, "mpi://WORLD", "org.loom.test.again");
    use(c);
    failed = check_failures_ != 0;
    MPI_Allreduce(&failed, &any2, 1, MPI_INT, MPI_LOR, c);
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    MPI_Comm_free(&c);
    MPI_Session_finalize(&s);
#endif
    if (rank == 0 && !any && !any2)
        printf("session: %d ranks ok\n", size);
    return check_summary();
}

static int mixed(int argc, char **argv)
{
    MPI_Session s, late;
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS);
    int flag = -1;
    MPI_Initialized(&flag);
    CHECK_EQ(flag, 0);
    MPI_Init(&argc, &argv);
    MPI_Initialized(&flag);
    CHECK_EQ(flag, 1);
    MPI_Comm c = comm_of(s, "mpi://WORLD", "org.loom.test.mixed");
    int cmp = -1;
    MPI_Comm_compare(c, MPI_COMM_WORLD, &cmp);
    CHECK_EQ(cmp, MPI_CONGRUENT);
    use(c);
    use(MPI_COMM_WORLD);
    /* A session made after MPI_Init, kept open across MPI_Finalize. */
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &late);
    MPI_Comm k = comm_of(late, "mpi://WORLD", "org.loom.test.late");
    MPI_Comm_free(&c);
    CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS);
    MPI_Finalize();
    MPI_Finalized(&flag);
    CHECK_EQ(flag, 1);
    use(k); /* still works: its session is open */
    int rank, size, failed = check_failures_ != 0, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, k);
    MPI_Comm_rank(k, &rank);
    MPI_Comm_size(k, &size);
    MPI_Comm_free(&k);
    MPI_Session_finalize(&late);
    if (rank == 0 && !any)
        printf("session_mixed: %d ranks ok\n", size);
    return check_summary();
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "mixed") == 0)
        return mixed(argc, argv);
    return sessions_only();
}
