/* Info objects: set/get/delete/dup/nthkey, MPI_INFO_ENV, limits, errors. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

int main(int argc, char **argv)
{
    int rank, size, flag, n, len;
    char val[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Info info, dup;
    CHECK_EQ(MPI_Info_create(&info), MPI_SUCCESS);
    MPI_Info_get_nkeys(info, &n);
    CHECK_EQ(n, 0);
    MPI_Info_set(info, "a", "1");
    MPI_Info_set(info, "b", "two");
    MPI_Info_set(info, "a", "one"); /* replaces */
    MPI_Info_get_nkeys(info, &n);
    CHECK_EQ(n, 2);
    MPI_Info_get_nthkey(info, 0, key);
    CHECK(strcmp(key, "a") == 0);
    MPI_Info_get_nthkey(info, 1, key);
    CHECK(strcmp(key, "b") == 0);
    MPI_Info_get(info, "a", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag && strcmp(val, "one") == 0);
    MPI_Info_get(info, "a", 2, val, &flag); /* truncated to valuelen */
    CHECK(flag && strcmp(val, "on") == 0);
    MPI_Info_get_valuelen(info, "b", &len, &flag);
    CHECK(flag && len == 3);
    MPI_Info_get(info, "zzz", MPI_MAX_INFO_VAL, val, &flag);
    CHECK_EQ(flag, 0);
    MPI_Info_dup(info, &dup);
    MPI_Info_delete(info, "a");
    MPI_Info_get_nkeys(info, &n);
    CHECK_EQ(n, 1);
    MPI_Info_get_nkeys(dup, &n);
    CHECK_EQ(n, 2);

    /* limits and errors */
    char longkey[MPI_MAX_INFO_KEY + 2];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    static char longval[MPI_MAX_INFO_VAL + 2];
    memset(longval, 'v', sizeof longval - 1);
    CHECK_EQ(MPI_Info_set(info, longkey, "x"), MPI_ERR_INFO_KEY);
    CHECK_EQ(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY);
    CHECK_EQ(MPI_Info_set(info, "k", longval), MPI_ERR_INFO_VALUE);
    longval[MPI_MAX_INFO_VAL] = '\0'; /* exactly the maximum is fine */
    CHECK_EQ(MPI_Info_set(info, "k", longval), MPI_SUCCESS);
    longkey[MPI_MAX_INFO_KEY] = '\0';
    CHECK_EQ(MPI_Info_set(info, longkey, "x"), MPI_SUCCESS);
    CHECK_EQ(MPI_Info_delete(info, "nope"), MPI_ERR_INFO_NOKEY);
    CHECK_EQ(MPI_Info_get_nthkey(info, 99, key), MPI_ERR_ARG);
    CHECK_EQ(MPI_Info_get(info, "k", -1, val, &flag), MPI_ERR_ARG);
    CHECK_EQ(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO);
    MPI_Info stale = dup;
    MPI_Info_free(&dup);
    CHECK(dup == MPI_INFO_NULL);
    CHECK_EQ(MPI_Info_get_nkeys(stale, &n), MPI_ERR_INFO);
    CHECK_EQ(MPI_Info_free(&stale), MPI_ERR_INFO);

    /* MPI_INFO_ENV */
    MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag && atoi(val) == size);
    MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag && strstr(val, "comm_info") != NULL);
    MPI_Info_get_nkeys(MPI_INFO_ENV, &n);
    CHECK(n >= 3);
    CHECK_EQ(MPI_Info_set(MPI_INFO_ENV, "x", "y"), MPI_ERR_INFO);
    MPI_Info env = MPI_INFO_ENV;
    CHECK_EQ(MPI_Info_free(&env), MPI_ERR_INFO);
    MPI_Info_dup(MPI_INFO_ENV, &dup);
    MPI_Info_set(dup, "x", "y");
    MPI_Info_free(&dup);

    MPI_Info_free(&info);
    MPI_Finalize();
    if (check_failures_ == 0 && rank == 0)
        printf("comm_info: %d ranks ok\n", size);
    return check_summary();
}
