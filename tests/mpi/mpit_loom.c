/* Loom's own MPI_T variables (docs/mpi_t.md): the control variables of the
 * LOOM_ environment variables (the value each has in this job: the test
 * runs with LOOM_EAGER_MAX=8k and LOOM_COLL_TUNING=none, and they cannot be
 * written), the collective algorithm variables (writing one forces the
 * algorithm: the algorithm's call counter moves, and "auto" frees it), and
 * the performance variables counting what this test does: messages and
 * bytes sent and received, by protocol, the unexpected and posted queues
 * and their maxima, parks and wake-ups of a rank; sessions and handles
 * (start/stop, readreset, write, two sessions seeing different values) and
 * their errors. Each rank checks its own counters (every rank is an MPI
 * process). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"

static int rank, size;
static MPI_T_pvar_session ses;

static int cvar(const char *name)
{
    int i = -1;
    CHECK_EQ(MPI_T_cvar_get_index(name, &i), MPI_SUCCESS);
    return i;
}

static MPI_T_pvar_handle handle(const char *name, int cls)
{
    int i = -1, count = 0;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    if (MPI_T_pvar_get_index(name, cls, &i) != MPI_SUCCESS) {
        fprintf(stderr, "no performance variable %s\n", name);
        CHECK(0);
        return h;
    }
    CHECK_EQ(MPI_T_pvar_handle_alloc(ses, i, NULL, &h, &count), MPI_SUCCESS);
    CHECK_EQ(count, 1);
    return h;
}

static unsigned long long rd(MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    CHECK_EQ(MPI_T_pvar_read(ses, h, &v), MPI_SUCCESS);
    return v;
}

static void check_cvars(void)
{
    MPI_T_cvar_handle h;
    int count;
    unsigned long v = 0;
    CHECK_EQ(MPI_T_cvar_handle_alloc(cvar("loom_eager_max"), NULL, &h, &count), MPI_SUCCESS);
    CHECK_EQ(count, 1);
    CHECK_EQ(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
    CHECK_EQ(v, 8192); /* LOOM_EAGER_MAX=8k */
    CHECK_EQ(MPI_T_cvar_write(h, &v), MPI_T_ERR_CVAR_SET_NEVER);
    CHECK_EQ(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_read(h, &v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_cvar_handle_alloc(cvar("loom_spin_ns"), NULL, &h, &count), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
    CHECK_EQ(v, 50000); /* the default */
    CHECK_EQ(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    /* A string: count is its length with the null. */
    char s[64] = "";
    CHECK_EQ(MPI_T_cvar_handle_alloc(cvar("loom_coll_tuning"), NULL, &h, &count), MPI_SUCCESS);
    CHECK_EQ(count, 5);
    CHECK_EQ(MPI_T_cvar_read(h, s), MPI_SUCCESS);
    CHECK(strcmp(s, "none") == 0);
    CHECK_EQ(MPI_T_cvar_write(h, "x"), MPI_T_ERR_CVAR_SET_NEVER);
    CHECK_EQ(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    /* A flag. */
    int f = -1;
    CHECK_EQ(MPI_T_cvar_handle_alloc(cvar("loom_rank_cwd"), NULL, &h, &count), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_read(h, &f), MPI_SUCCESS);
    CHECK_EQ(f, 1);
    CHECK_EQ(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    int dt = 0, scope = -1;
    MPI_Datatype type;
    CHECK_EQ(MPI_T_cvar_get_info(cvar("loom_rank_cwd"), NULL, NULL, NULL, &type, NULL, NULL, NULL,
                                 NULL, &scope),
             MPI_SUCCESS);
    CHECK(type == MPI_INT && scope == MPI_T_SCOPE_CONSTANT);
    (void)dt;
}

/* The enumeration item of algorithm `name` of cvar i: its value. */
static int algorithm_value(int i, const char *name)
{
    MPI_T_enum e;
    int scope;
    CHECK_EQ(MPI_T_cvar_get_info(i, NULL, NULL, NULL, NULL, &e, NULL, NULL, NULL, &scope),
             MPI_SUCCESS);
    CHECK_EQ(scope, MPI_T_SCOPE_ALL_EQ);
    int n = 0;
    CHECK_EQ(MPI_T_enum_get_info(e, &n, NULL, NULL), MPI_SUCCESS);
    for (int k = 0; k < n; k++) {
        char item[64];
        int len = sizeof item, value;
        CHECK_EQ(MPI_T_enum_get_item(e, k, &value, item, &len), MPI_SUCCESS);
        if (strcmp(item, name) == 0)
            return value;
    }
    CHECK(0);
    return -2;
}

/* Forcing an algorithm through its variable: the algorithms' counters show
 * which ran. */
static void check_forcing(void)
{
    int i = cvar("loom_coll_bcast");
    MPI_T_cvar_handle h;
    int count, v = 7;
    CHECK_EQ(MPI_T_cvar_handle_alloc(i, NULL, &h, &count), MPI_SUCCESS);
    CHECK_EQ(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
    CHECK_EQ(v, -1); /* auto */
    CHECK_EQ(algorithm_value(i, "auto"), -1);
    const char *algs[] = {"pipeline", "twostage", "direct"};
    for (int a = 0; a < 3; a++) {
        char name[96];
        snprintf(name, sizeof name, "loom_coll_bcast_%s_calls", algs[a]);
        MPI_T_pvar_handle calls = handle(name, MPI_T_PVAR_CLASS_COUNTER);
        CHECK_EQ(MPI_T_pvar_start(ses, calls), MPI_SUCCESS);
        int want = algorithm_value(i, algs[a]);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_EQ(MPI_T_cvar_write(h, &want), MPI_SUCCESS); /* every rank, the same value */
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_EQ(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
        CHECK_EQ(v, want);
        double buf[300];
        for (int k = 0; k < 300; k++)
            buf[k] = rank == 0 ? k : -1;
        for (int rep = 0; rep < 3; rep++)
            MPI_Bcast(buf, 300, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        for (int k = 0; k < 300; k++)
            CHECK(buf[k] == k);
        CHECK_EQ(MPI_T_pvar_stop(ses, calls), MPI_SUCCESS);
        /* One rank runs no algorithm (nothing to broadcast). */
        CHECK_EQ(rd(calls), size > 1 ? 3 : rd(calls));
        CHECK_EQ(MPI_T_pvar_handle_free(ses, &calls), MPI_SUCCESS);
    }
    /* An algorithm of another collective, and values out of range. */
    int other = algorithm_value(cvar("loom_coll_allreduce"), "tiled"), bad = -2, big = 1000000;
    CHECK_EQ(MPI_T_cvar_write(h, &other), MPI_T_ERR_INVALID);
    CHECK_EQ(MPI_T_cvar_write(h, &bad), MPI_T_ERR_INVALID);
    CHECK_EQ(MPI_T_cvar_write(h, &big), MPI_T_ERR_INVALID);
    MPI_Barrier(MPI_COMM_WORLD);
    int autov = -1;
    CHECK_EQ(MPI_T_cvar_write(h, &autov), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
    CHECK_EQ(v, -1);
    CHECK_EQ(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
}

/* Messages: each rank sends to its right neighbour and receives from its
 * left one (itself on one rank), by every protocol. */
static void check_messages(void)
{
    const int C = MPI_T_PVAR_CLASS_COUNTER;
    MPI_T_pvar_handle sent = handle("loom_p2p_sent_messages", C),
                      sentb = handle("loom_p2p_sent_bytes", C),
                      recvd = handle("loom_p2p_received_messages", C),
                      recvdb = handle("loom_p2p_received_bytes", C),
                      box = handle("loom_p2p_box_messages", C),
                      inbox = handle("loom_p2p_inbox_messages", C),
                      cell = handle("loom_p2p_cell_messages", C),
                      direct = handle("loom_p2p_direct_messages", C),
                      directb = handle("loom_p2p_direct_bytes", C),
                      eager = handle("loom_p2p_eager_messages", C),
                      eagerb = handle("loom_p2p_eager_bytes", C),
                      rndv = handle("loom_p2p_rendezvous_messages", C),
                      rndvb = handle("loom_p2p_rendezvous_bytes", C),
                      unexp = handle("loom_p2p_unexpected_queue", MPI_T_PVAR_CLASS_LEVEL),
                      unexp_max =
                          handle("loom_p2p_unexpected_queue_max", MPI_T_PVAR_CLASS_HIGHWATERMARK),
                      posted = handle("loom_p2p_posted_queue", MPI_T_PVAR_CLASS_LEVEL),
                      posted_max =
                          handle("loom_p2p_posted_queue_max", MPI_T_PVAR_CLASS_HIGHWATERMARK);
    /* Stopped handles count nothing. */
    char big[20000], in[20000];
    memset(big, rank, sizeof big);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request rq;
    MPI_Irecv(in, 8, MPI_CHAR, left, 99, MPI_COMM_WORLD, &rq);
    MPI_Send(big, 8, MPI_CHAR, right, 99, MPI_COMM_WORLD);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK_EQ(rd(sent), 0);
    CHECK_EQ(rd(recvd), 0);
    CHECK_EQ(MPI_T_pvar_start(ses, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);

    /* 40 tiny messages (box or inbox slot), 8 bytes each. */
    for (int k = 0; k < 40; k++) {
        MPI_Irecv(in, 8, MPI_CHAR, left, 1, MPI_COMM_WORLD, &rq);
        MPI_Send(big, 8, MPI_CHAR, right, 1, MPI_COMM_WORLD);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
    }
    CHECK_EQ(rd(sent), 40);
    CHECK_EQ(rd(sentb), 320);
    CHECK_EQ(rd(recvd), 40);
    CHECK_EQ(rd(recvdb), 320);
    CHECK_EQ(rd(box) + rd(inbox), 40);
    CHECK_EQ(rd(cell), 0);

    /* Eager: 4 KiB messages before their receives are posted; they wait on
     * the receiver's unexpected queue. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 5; k++)
        MPI_Send(big, 4096, MPI_CHAR, right, 2, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(rd(unexp), 5);
    CHECK(rd(unexp_max) >= 5);
    CHECK_EQ(MPI_T_pvar_start(ses, unexp), MPI_T_ERR_PVAR_NO_STARTSTOP);
    CHECK_EQ(MPI_T_pvar_reset(ses, unexp_max), MPI_T_ERR_PVAR_NO_WRITE);
    unsigned long long v = 1;
    CHECK_EQ(MPI_T_pvar_write(ses, unexp, &v), MPI_T_ERR_PVAR_NO_WRITE);
    for (int k = 0; k < 5; k++)
        MPI_Recv(in, 4096, MPI_CHAR, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(rd(unexp), 0);
    CHECK_EQ(rd(eager), 5);
    CHECK_EQ(rd(eagerb), 5 * 4096);

    /* Direct: the receive is posted first (a barrier in between). Three
     * receives that nothing matches yet sit on the posted queue. */
    MPI_Request pre[4];
    for (int k = 0; k < 3; k++)
        MPI_Irecv(in + 8 * k, 8, MPI_CHAR, left, 30 + k, MPI_COMM_WORLD, &pre[k]);
    MPI_Irecv(in + 100, 4096, MPI_CHAR, left, 3, MPI_COMM_WORLD, &pre[3]);
    CHECK_EQ(rd(posted), 4);
    CHECK(rd(posted_max) >= 4);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(big, 4096, MPI_CHAR, right, 3, MPI_COMM_WORLD);
    for (int k = 0; k < 3; k++)
        MPI_Send(big, 8, MPI_CHAR, right, 30 + k, MPI_COMM_WORLD);
    MPI_Waitall(4, pre, MPI_STATUSES_IGNORE);
    CHECK_EQ(rd(posted), 0);
    CHECK_EQ(rd(direct), 1);
    CHECK_EQ(rd(directb), 4096);

    /* Rendezvous: larger than LOOM_EAGER_MAX=8k, and synchronous ones. */
    MPI_Request s2[2];
    MPI_Isend(big, 20000, MPI_CHAR, right, 4, MPI_COMM_WORLD, &s2[0]);
    MPI_Issend(big, 100, MPI_CHAR, right, 5, MPI_COMM_WORLD, &s2[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Recv(in, 20000, MPI_CHAR, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(in, 100, MPI_CHAR, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Waitall(2, s2, MPI_STATUSES_IGNORE);
    CHECK_EQ(rd(rndv), 2);
    CHECK_EQ(rd(rndvb), 20100);

    /* Totals: 40 + 5 + 4 + 2 messages each way. */
    CHECK_EQ(MPI_T_pvar_stop(ses, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    unsigned long long bytes = 320 + 5 * 4096 + 4096 + 3 * 8 + 20100;
    CHECK_EQ(rd(sent), 51);
    CHECK_EQ(rd(recvd), 51);
    CHECK_EQ(rd(sentb), bytes);
    CHECK_EQ(rd(recvdb), bytes);
    /* Stopped: more messages do not count. */
    MPI_Sendrecv(big, 8, MPI_CHAR, right, 6, in, 8, MPI_CHAR, left, 6, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK_EQ(rd(sent), 51);
    /* readreset: the value, then 0; write sets it. */
    CHECK_EQ(MPI_T_pvar_readreset(ses, sent, &v), MPI_SUCCESS);
    CHECK_EQ(v, 51);
    CHECK_EQ(rd(sent), 0);
    v = 10;
    CHECK_EQ(MPI_T_pvar_write(ses, sent, &v), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_start(ses, sent), MPI_SUCCESS);
    MPI_Sendrecv(big, 8, MPI_CHAR, right, 6, in, 8, MPI_CHAR, left, 6, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK_EQ(rd(sent), 11);
    CHECK_EQ(MPI_T_pvar_reset(ses, sent), MPI_SUCCESS);
    CHECK_EQ(rd(sent), 0);

    /* A second session sees its own values. */
    MPI_T_pvar_session other;
    CHECK_EQ(MPI_T_pvar_session_create(&other), MPI_SUCCESS);
    int idx, count;
    MPI_T_pvar_handle h2;
    CHECK_EQ(MPI_T_pvar_get_index("loom_p2p_sent_messages", C, &idx), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_handle_alloc(other, idx, NULL, &h2, &count), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_start(other, h2), MPI_SUCCESS);
    MPI_Sendrecv(big, 8, MPI_CHAR, right, 6, in, 8, MPI_CHAR, left, 6, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK_EQ(MPI_T_pvar_read(other, h2, &v), MPI_SUCCESS);
    CHECK_EQ(v, 1);
    CHECK_EQ(rd(sent), 1);
    /* A handle of one session is not one of the other. */
    CHECK_EQ(MPI_T_pvar_read(ses, h2, &v), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_pvar_handle_free(ses, &h2), MPI_T_ERR_INVALID_HANDLE);
    CHECK_EQ(MPI_T_pvar_session_free(&other), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_read(other, h2, &v), MPI_T_ERR_INVALID_SESSION);
    CHECK_EQ(MPI_T_pvar_handle_free(ses, &sent), MPI_SUCCESS);
    CHECK(sent == MPI_T_PVAR_HANDLE_NULL);
    CHECK_EQ(MPI_T_pvar_read(ses, sent, &v), MPI_T_ERR_INVALID_HANDLE);
}

/* A rank that sleeps parks and is woken. */
static void check_parks(void)
{
    const int C = MPI_T_PVAR_CLASS_COUNTER;
    MPI_T_pvar_handle parks = handle("loom_rank_parks", C),
                      wakeups = handle("loom_rank_wakeups", C);
    CHECK_EQ(MPI_T_pvar_start(ses, parks), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_start(ses, wakeups), MPI_SUCCESS);
    usleep(2000);
    CHECK(rd(parks) >= 1);
    CHECK(rd(wakeups) >= 1);
}

/* Every variable is in one layer's category, and the root holds them. */
static void check_categories(void)
{
    int ncat, ncvar, npvar, root;
    MPI_T_category_get_num(&ncat);
    MPI_T_cvar_get_num(&ncvar);
    MPI_T_pvar_get_num(&npvar);
    CHECK_EQ(MPI_T_category_get_index("loom", &root), MPI_SUCCESS);
    int nsub = 0, sub[8];
    CHECK_EQ(MPI_T_category_get_info(root, NULL, NULL, NULL, NULL, NULL, NULL, &nsub), MPI_SUCCESS);
    CHECK_EQ(nsub, 3);
    CHECK_EQ(MPI_T_category_get_categories(root, 8, sub), MPI_SUCCESS);
    int sc = 0, sp = 0;
    const char *want[] = {"runtime", "pt2pt", "coll"};
    for (int k = 0; k < nsub && k < 3; k++) {
        char name[32];
        int len = sizeof name, nc, np;
        CHECK_EQ(MPI_T_category_get_info(sub[k], name, &len, NULL, NULL, &nc, &np, NULL),
                 MPI_SUCCESS);
        CHECK(strcmp(name, want[k]) == 0);
        sc += nc;
        sp += np;
    }
    CHECK_EQ(sc, ncvar);
    CHECK_EQ(sp, npvar);
    /* Bad arguments. */
    int ix[2];
    CHECK_EQ(MPI_T_category_get_cvars(root, -1, ix), MPI_T_ERR_INVALID);
    CHECK_EQ(MPI_T_category_get_cvars(ncat, 1, ix), MPI_T_ERR_INVALID_INDEX);
    CHECK_EQ(MPI_T_cvar_get_num(NULL), MPI_T_ERR_INVALID);
    CHECK_EQ(MPI_T_init_thread(42, NULL), MPI_T_ERR_INVALID);
    /* No event sources and no events. */
    int nsrc = -1, nev = -1, ne = -1;
    CHECK_EQ(MPI_T_source_get_num(&nsrc), MPI_SUCCESS);
    CHECK_EQ(nsrc, 0);
    CHECK_EQ(MPI_T_event_get_num(&nev), MPI_SUCCESS);
    CHECK_EQ(nev, 0);
    CHECK_EQ(MPI_T_category_get_num_events(root, &ne), MPI_SUCCESS);
    CHECK_EQ(ne, 0);
    MPI_Count ts;
    CHECK_EQ(MPI_T_source_get_timestamp(0, &ts), MPI_T_ERR_INVALID_INDEX);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_EQ(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    CHECK_EQ(MPI_T_pvar_session_create(&ses), MPI_SUCCESS);
    check_cvars();
    check_forcing();
    check_messages();
    check_parks();
    check_categories();
    CHECK_EQ(MPI_T_pvar_session_free(&ses), MPI_SUCCESS);
    CHECK_EQ(MPI_T_finalize(), MPI_SUCCESS);
    /* Finalized: handles are gone. */
    CHECK_EQ(MPI_T_pvar_session_create(&ses), MPI_T_ERR_NOT_INITIALIZED);

    int failed = check_failures_, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && any == 0)
        printf("mpit_loom: %d ranks ok\n", size);
    MPI_Finalize();
    return check_summary();
}
