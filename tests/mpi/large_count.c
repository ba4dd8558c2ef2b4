/* The large-count (_c) forms of point-to-point and datatype queries
 * (MPI-4.1 3, 5): counts as MPI_Count.
 *
 *   large_count          every _c call on small counts, in a ring: the same
 *                        results as the int forms; errors for negative and
 *                        unaddressable counts
 *   large_count big      one rank, messages of more than INT_MAX elements:
 *                        Isend_c/Recv_c of 2^31 + 8 bytes to itself, and the
 *                        int MPI_Sendrecv_replace of 2^31 + 8 bytes of doubles
 *                        (the packed copy used to be sent with an int count)
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

static int rank, size;

static void fill(int *buf, int n, int seed)
{
    for (int i = 0; i < n; i++)
        buf[i] = seed * 1000 + i;
}

static int same(const int *buf, int n, int seed)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != seed * 1000 + i)
            return 0;
    return 1;
}

static void small_counts(void)
{
    enum { N = 37 };
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    int sbuf[N], rbuf[N];
    MPI_Status st;
    MPI_Count n = -1;
    fill(sbuf, N, rank);

    /* Blocking sends of every mode, each received by Recv_c / Irecv_c. */
    int (*blocking[])(const void *, MPI_Count, MPI_Datatype, int, int,
                      MPI_Comm) = {MPI_Send_c, MPI_Ssend_c, MPI_Bsend_c};
    int bsize = 4 * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *battach = malloc((size_t)bsize);
    CHECK_EQ(MPI_Buffer_attach_c(battach, bsize), MPI_SUCCESS);
    for (int m = 0; m < 3; m++) {
        MPI_Request r;
        memset(rbuf, 0, sizeof rbuf);
        CHECK_EQ(MPI_Irecv_c(rbuf, N, MPI_INT, from, m, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        CHECK_EQ(blocking[m](sbuf, N, MPI_INT, to, m, MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
        CHECK(same(rbuf, N, from));
        CHECK_EQ(MPI_Get_count_c(&st, MPI_INT, &n), MPI_SUCCESS);
        CHECK_EQ(n, N);
        CHECK_EQ(MPI_Get_elements_c(&st, MPI_INT, &n), MPI_SUCCESS);
        CHECK_EQ(n, N);
    }
    /* Ready mode: the receive is posted before the barrier. */
    {
        MPI_Request r;
        CHECK_EQ(MPI_Irecv_c(rbuf, N, MPI_INT, from, 9, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_EQ(MPI_Rsend_c(sbuf, N, MPI_INT, to, 9, MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(same(rbuf, N, from));
    }
    /* Nonblocking sends of every mode into Recv_c. */
    int (*nonblocking[])(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm,
                         MPI_Request *) = {MPI_Isend_c, MPI_Issend_c, MPI_Ibsend_c};
    for (int m = 0; m < 3; m++) {
        MPI_Request r;
        CHECK_EQ(nonblocking[m](sbuf, N, MPI_INT, to, 10 + m, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        memset(rbuf, 0, sizeof rbuf);
        CHECK_EQ(MPI_Recv_c(rbuf, N, MPI_INT, from, 10 + m, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(same(rbuf, N, from));
    }
    {
        MPI_Request rr, sr;
        CHECK_EQ(MPI_Irecv_c(rbuf, N, MPI_INT, from, 13, MPI_COMM_WORLD, &rr), MPI_SUCCESS);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_EQ(MPI_Irsend_c(sbuf, N, MPI_INT, to, 13, MPI_COMM_WORLD, &sr), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&sr, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_EQ(MPI_Wait(&rr, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(same(rbuf, N, from));
    }
    /* Persistent requests, started twice. */
    int (*persistent[])(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm,
                        MPI_Request *) = {MPI_Send_init_c, MPI_Ssend_init_c, MPI_Bsend_init_c};
    for (int m = 0; m < 3; m++) {
        MPI_Request req[2];
        CHECK_EQ(persistent[m](sbuf, N, MPI_INT, to, 20 + m, MPI_COMM_WORLD, &req[0]), MPI_SUCCESS);
        CHECK_EQ(MPI_Recv_init_c(rbuf, N, MPI_INT, from, 20 + m, MPI_COMM_WORLD, &req[1]),
                 MPI_SUCCESS);
        for (int k = 0; k < 2; k++) {
            memset(rbuf, 0, sizeof rbuf);
            CHECK_EQ(MPI_Startall(2, req), MPI_SUCCESS);
            CHECK_EQ(MPI_Waitall(2, req, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            CHECK(same(rbuf, N, from));
        }
        MPI_Request_free(&req[0]);
        MPI_Request_free(&req[1]);
    }
    {
        MPI_Request req[2];
        CHECK_EQ(MPI_Recv_init_c(rbuf, N, MPI_INT, from, 24, MPI_COMM_WORLD, &req[1]), MPI_SUCCESS);
        CHECK_EQ(MPI_Start(&req[1]), MPI_SUCCESS);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_EQ(MPI_Rsend_init_c(sbuf, N, MPI_INT, to, 24, MPI_COMM_WORLD, &req[0]), MPI_SUCCESS);
        CHECK_EQ(MPI_Start(&req[0]), MPI_SUCCESS);
        CHECK_EQ(MPI_Waitall(2, req, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        CHECK(same(rbuf, N, from));
        MPI_Request_free(&req[0]);
        MPI_Request_free(&req[1]);
    }
    void *back = NULL;
    MPI_Count bback = 0;
    CHECK_EQ(MPI_Buffer_detach_c(&back, &bback), MPI_SUCCESS);
    CHECK(back == battach);
    CHECK_EQ(bback, bsize);
    free(battach);

    /* Sendrecv_c, Sendrecv_replace_c, Isendrecv_c, Isendrecv_replace_c. */
    memset(rbuf, 0, sizeof rbuf);
    CHECK_EQ(
        MPI_Sendrecv_c(sbuf, N, MPI_INT, to, 30, rbuf, N, MPI_INT, from, 30, MPI_COMM_WORLD, &st),
        MPI_SUCCESS);
    CHECK(same(rbuf, N, from));
    int rep[N];
    fill(rep, N, rank);
    CHECK_EQ(MPI_Sendrecv_replace_c(rep, N, MPI_INT, to, 31, from, 31, MPI_COMM_WORLD, &st),
             MPI_SUCCESS);
    CHECK(same(rep, N, from));
    MPI_Request r;
    memset(rbuf, 0, sizeof rbuf);
    CHECK_EQ(
        MPI_Isendrecv_c(sbuf, N, MPI_INT, to, 32, rbuf, N, MPI_INT, from, 32, MPI_COMM_WORLD, &r),
        MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
    CHECK(same(rbuf, N, from));
    fill(rep, N, rank);
    CHECK_EQ(MPI_Isendrecv_replace_c(rep, N, MPI_INT, to, 33, from, 33, MPI_COMM_WORLD, &r),
             MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
    CHECK(same(rep, N, from));

    /* Matched receives. */
    for (int k = 0; k < 2; k++) {
        CHECK_EQ(MPI_Send_c(sbuf, N, MPI_INT, to, 40 + k, MPI_COMM_WORLD), MPI_SUCCESS);
        MPI_Message msg;
        CHECK_EQ(MPI_Mprobe(from, 40 + k, MPI_COMM_WORLD, &msg, &st), MPI_SUCCESS);
        CHECK_EQ(MPI_Get_count_c(&st, MPI_INT, &n), MPI_SUCCESS);
        CHECK_EQ(n, N);
        memset(rbuf, 0, sizeof rbuf);
        if (k == 0) {
            CHECK_EQ(MPI_Mrecv_c(rbuf, N, MPI_INT, &msg, &st), MPI_SUCCESS);
        } else {
            CHECK_EQ(MPI_Imrecv_c(rbuf, N, MPI_INT, &msg, &r), MPI_SUCCESS);
            CHECK_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
        }
        CHECK(same(rbuf, N, from));
    }

    /* Datatype queries. */
    MPI_Datatype vec;
    MPI_Type_vector(3, 2, 5, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    MPI_Count sz, lb, ext;
    CHECK_EQ(MPI_Type_size_c(vec, &sz), MPI_SUCCESS);
    CHECK_EQ(sz, 6 * (MPI_Count)sizeof(double));
    CHECK_EQ(MPI_Type_get_extent_c(vec, &lb, &ext), MPI_SUCCESS);
    CHECK_EQ(lb, 0);
    CHECK_EQ(ext, 12 * (MPI_Count)sizeof(double));
    CHECK_EQ(MPI_Type_get_true_extent_c(vec, &lb, &ext), MPI_SUCCESS);
    CHECK_EQ(ext, 12 * (MPI_Count)sizeof(double));
    MPI_Type_free(&vec);

    /* Errors, through MPI_ERRORS_RETURN. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls = 0;
    MPI_Error_class(MPI_Send_c(sbuf, -1, MPI_INT, to, 50, MPI_COMM_WORLD), &cls);
    CHECK_EQ(cls, MPI_ERR_COUNT);
    MPI_Error_class(MPI_Isend_c(sbuf, (MPI_Count)1 << 60, MPI_INT, to, 50, MPI_COMM_WORLD, &r),
                    &cls);
    CHECK_EQ(cls, MPI_ERR_COUNT);
    MPI_Error_class(MPI_Recv_c(rbuf, (MPI_Count)1 << 62, MPI_DOUBLE, from, 50, MPI_COMM_WORLD, &st),
                    &cls);
    CHECK_EQ(cls, MPI_ERR_COUNT);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* MemAvailable of /proc/meminfo in GiB (0 if unknown). */
static double mem_available_gib(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    double kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib / (1024.0 * 1024.0);
}

/* More than INT_MAX elements, to itself. */
static void big_counts(void)
{
    MPI_Count n = (MPI_Count)INT_MAX + 9;
    /* s holds the doubles of the second part too: 2^31 + 16 bytes. */
    size_t s_bytes = ((size_t)1 << 31) + 64;
    unsigned char *s = malloc(s_bytes), *d = malloc((size_t)n);
    REQUIRE(s && d);
    for (MPI_Count i = 0; i < n; i += 4096)
        s[i] = (unsigned char)(i / 4096 * 7 + 1);
    s[n - 1] = 0xa5;
    memset(d, 0, (size_t)n);
    MPI_Request r;
    MPI_Status st;
    CHECK_EQ(MPI_Isend_c(s, n, MPI_BYTE, rank, 1, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    CHECK_EQ(MPI_Recv_c(d, n, MPI_BYTE, rank, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(memcmp(s, d, (size_t)n) == 0);
    MPI_Count got = 0;
    int got_int = 0;
    CHECK_EQ(MPI_Get_count_c(&st, MPI_BYTE, &got), MPI_SUCCESS);
    CHECK_EQ(got, n);
    CHECK_EQ(MPI_Get_count(&st, MPI_BYTE, &got_int), MPI_SUCCESS);
    CHECK_EQ(got_int, MPI_UNDEFINED);
    free(d);
    /* The int form with more than INT_MAX bytes: 2^28 + 2 doubles. */
    int nd = (1 << 28) + 2;
    REQUIRE((size_t)nd * sizeof(double) <= s_bytes);
    double *x = (double *)(void *)s;
    for (int i = 0; i < nd; i += 1024)
        x[i] = i;
    x[nd - 1] = -1.5;
    CHECK_EQ(MPI_Sendrecv_replace(x, nd, MPI_DOUBLE, rank, 2, rank, 2, MPI_COMM_WORLD, &st),
             MPI_SUCCESS);
    int bad = 0;
    for (int i = 0; i < nd - 1; i += 1024)
        bad += x[i] != i;
    CHECK_EQ(bad, 0);
    CHECK(x[nd - 1] == -1.5);
    CHECK_EQ(MPI_Get_count_c(&st, MPI_DOUBLE, &got), MPI_SUCCESS);
    CHECK_EQ(got, nd);
    free(s);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int big = argc > 1 && strcmp(argv[1], "big") == 0;
    if (big && mem_available_gib() < 6) {
        /* 4 GiB of buffers, and room beside them. */
        if (rank == 0)
            printf("large_count: big skipped: %.1f GiB of memory available, 6 needed\n",
                   mem_available_gib());
        MPI_Finalize();
        return 0;
    }
    if (big)
        big_counts();
    else
        small_counts();
    int failed = check_failures_ != 0, total = 0;
    MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf("large_count: %s %d ranks ok\n", big ? "big" : "small", size);
    MPI_Finalize();
    return check_summary();
}
