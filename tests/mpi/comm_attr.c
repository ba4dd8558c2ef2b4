/* Attributes: keyvals, set/get/delete, copy callbacks on dup, delete
 * callbacks on overwrite/delete/free, predefined attributes, errors. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>

#include "../check.h"

static int copies, deletes, last_deleted;

static int copy_plus_one(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    copies++;
    *(long *)out = (long)in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    deletes++;
    last_deleted = (int)(long)val;
    CHECK_EQ((long)extra, 42);
    return MPI_SUCCESS;
}

static int failing_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    return MPI_ERR_OTHER;
}

int main(int argc, char **argv)
{
    int rank, size, flag;
    void *v;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* predefined */
    int *ip;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ip, &flag);
    CHECK(flag && *ip == INT_MAX);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &ip, &flag);
    CHECK(flag && *ip == MPI_PROC_NULL);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &ip, &flag);
    CHECK(flag && *ip == MPI_ANY_SOURCE);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &ip, &flag);
    CHECK(flag && *ip == 1);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &ip, &flag);
    CHECK(flag && *ip == size);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &ip, &flag);
    CHECK(flag && *ip == 0);

    int k1, k2, k3;
    CHECK_EQ(MPI_Comm_create_keyval(copy_plus_one, count_delete, &k1, (void *)42L), MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &k2, (void *)42L),
             MPI_SUCCESS);
    CHECK_EQ(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k3, NULL),
             MPI_SUCCESS);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_get_attr(c, k1, &v, &flag);
    CHECK_EQ(flag, 0);
    MPI_Comm_set_attr(c, k1, (void *)10L);
    MPI_Comm_set_attr(c, k2, (void *)20L);
    MPI_Comm_set_attr(c, k3, (void *)30L);
    MPI_Comm_get_attr(c, k1, &v, &flag);
    CHECK(flag && (long)v == 10);
    /* overwrite: delete callback on the old value */
    MPI_Comm_set_attr(c, k1, (void *)11L);
    CHECK_EQ(deletes, 1);
    CHECK_EQ(last_deleted, 10);

    /* dup: k1 copied (+1), k2 not copied, k3 copied as is */
    MPI_Comm d;
    MPI_Comm_dup(c, &d);
    CHECK_EQ(copies, 1);
    MPI_Comm_get_attr(d, k1, &v, &flag);
    CHECK(flag && (long)v == 12);
    MPI_Comm_get_attr(d, k2, &v, &flag);
    CHECK_EQ(flag, 0);
    MPI_Comm_get_attr(d, k3, &v, &flag);
    CHECK(flag && (long)v == 30);

    /* delete */
    CHECK_EQ(MPI_Comm_delete_attr(c, k2), MPI_SUCCESS);
    CHECK_EQ(deletes, 2);
    CHECK_EQ(last_deleted, 20);
    MPI_Comm_get_attr(c, k2, &v, &flag);
    CHECK_EQ(flag, 0);

    /* free the keyval while attributes still use it; free runs callbacks */
    MPI_Comm_free_keyval(&k1);
    CHECK_EQ(k1, MPI_KEYVAL_INVALID);
    MPI_Comm_free(&d);
    CHECK_EQ(deletes, 3);
    CHECK_EQ(last_deleted, 12);
    MPI_Comm_free(&c);
    CHECK_EQ(deletes, 4);
    CHECK_EQ(last_deleted, 11);

    /* attributes on MPI_COMM_WORLD and SELF */
    MPI_Comm_set_attr(MPI_COMM_SELF, k3, (void *)5L);
    MPI_Comm_get_attr(MPI_COMM_SELF, k3, &v, &flag);
    CHECK(flag && (long)v == 5);

    /* errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &flag), MPI_ERR_KEYVAL);
    CHECK_EQ(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB), MPI_ERR_KEYVAL);
    CHECK_EQ(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &flag), MPI_ERR_KEYVAL);
    int stale = k2;
    MPI_Comm_free_keyval(&k2);
    CHECK_EQ(MPI_Comm_set_attr(MPI_COMM_WORLD, stale, NULL), MPI_ERR_KEYVAL);
    CHECK_EQ(MPI_Comm_get_attr(MPI_COMM_WORLD, stale, &v, &flag), MPI_ERR_KEYVAL);
    CHECK_EQ(MPI_Comm_free_keyval(&stale), MPI_ERR_KEYVAL);
    CHECK_EQ(MPI_Comm_delete_attr(MPI_COMM_WORLD, k3), MPI_ERR_KEYVAL); /* not set */
    CHECK_EQ(MPI_Comm_get_attr(MPI_COMM_NULL, k3, &v, &flag), MPI_ERR_COMM);
    CHECK_EQ(MPI_Comm_get_attr(MPI_COMM_WORLD, k3, &v, NULL), MPI_ERR_ARG);
    int kf;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, failing_delete, &kf, NULL);
    MPI_Comm e;
    MPI_Comm_dup(MPI_COMM_WORLD, &e);
    MPI_Comm_set_errhandler(e, MPI_ERRORS_RETURN);
    MPI_Comm_set_attr(e, kf, NULL);
    CHECK_EQ(MPI_Comm_delete_attr(e, kf), MPI_ERR_OTHER);
    CHECK(MPI_Comm_free(&e) != MPI_SUCCESS);
    CHECK(e != MPI_COMM_NULL); /* left alone; MPI_Finalize frees it */

    /* MPI_LASTUSEDCODE follows MPI_Add_error_class */
    int cls;
    MPI_Add_error_class(&cls);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &ip, &flag);
    CHECK(flag && *ip == cls);
    MPI_Comm_free_keyval(&k3);
    MPI_Comm_free_keyval(&kf);

    MPI_Finalize();
    if (check_failures_ == 0 && rank == 0)
        printf("comm_attr: %d ranks ok\n", size);
    return check_summary();
}
