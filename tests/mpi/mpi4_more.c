/*
 * Smaller MPI-4.1 pieces: datatype attributes (keyvals, set/get/delete,
 * copied by MPI_Type_dup, deleted by MPI_Type_free, per rank even on
 * predefined types), MPI_Info_create_env, MPI_Info_get_string,
 * MPI_Comm_idup_with_info, MPI_Remove_error_class/code/string and
 * MPI_Type_get_value_index.
 *
 * Validated with MPICH 4.0.2 (all but MPI-4.1's MPI_Remove_error_* and
 * MPI_Type_get_value_index, built only with Loom's mpi.h) and Open MPI 4.1
 * (datatype attributes only): both pass, but for what the standard leaves
 * to the implementation (marked LOOM_MPI_H below). Open MPI reports a bad
 * keyval as MPI_ERR_OTHER rather than MPI_ERR_KEYVAL.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

#if defined(LOOM_MPI_H) || MPI_VERSION >= 4
#define HAVE_MPI4 1
#endif

static int rank, size;
static int copies, deletes, last_deleted;

static int copy_fn(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)keyval;
    copies++;
    *(void **)out = (void *)((char *)in + *(int *)extra);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Datatype type, int keyval, void *val, void *extra)
{
    (void)type;
    (void)keyval;
    (void)extra;
    deletes++;
    last_deleted = (int)(long)val;
    return MPI_SUCCESS;
}

static int failing_copy(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)keyval;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

static void type_attrs(void)
{
    int step = 1000, k1, k2, k3, flag = -1;
    void *v = NULL;
    MPI_Type_create_keyval(copy_fn, delete_fn, &k1, &step);
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &k2, NULL);
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_fn, &k3, NULL);
    MPI_Datatype t, d;
    MPI_Type_contiguous(3, MPI_INT, &t);
    CHECK(MPI_Type_get_attr(t, k1, &v, &flag) == MPI_SUCCESS && !flag);
    MPI_Type_set_attr(t, k1, (void *)(long)(rank + 1));
    MPI_Type_set_attr(t, k2, (void *)(long)77);
    MPI_Type_set_attr(t, k3, (void *)(long)5);
    CHECK(MPI_Type_get_attr(t, k1, &v, &flag) == MPI_SUCCESS && flag);
    CHECK_EQ((long)v, rank + 1);
    /* Set again: the old value is deleted. */
    deletes = 0;
    MPI_Type_set_attr(t, k1, (void *)(long)(rank + 2));
    CHECK_EQ(deletes, 1);
    CHECK_EQ(last_deleted, rank + 1);
    /* Dup: k1 through its callback, k2 as is, k3 not. */
    copies = 0;
    CHECK(MPI_Type_dup(t, &d) == MPI_SUCCESS);
    CHECK_EQ(copies, 1);
    MPI_Type_get_attr(d, k1, &v, &flag);
    CHECK(flag && (long)v == rank + 2 + 1000);
    MPI_Type_get_attr(d, k2, &v, &flag);
    CHECK(flag && (long)v == 77);
    MPI_Type_get_attr(d, k3, &v, &flag);
    CHECK(!flag);
    /* Delete, then free: the remaining callbacks run. */
    deletes = 0;
    CHECK(MPI_Type_delete_attr(t, k3) == MPI_SUCCESS);
    CHECK_EQ(deletes, 1);
    CHECK_EQ(last_deleted, 5);
    MPI_Type_get_attr(t, k3, &v, &flag);
    CHECK(!flag);
    /* A freed keyval stays usable by the attributes set with it. The dup
     * goes first: MPICH and Open MPI run a type's delete callbacks only
     * once no type built from it remains (Loom at MPI_Type_free). */
    MPI_Type_free_keyval(&k1);
    CHECK(k1 == MPI_KEYVAL_INVALID);
    deletes = 0;
    MPI_Type_free(&d);
    CHECK_EQ(deletes, 1);
    CHECK_EQ(last_deleted, rank + 2 + 1000);
    deletes = 0;
    MPI_Type_free(&t);
    CHECK_EQ(deletes, 1);
    CHECK_EQ(last_deleted, rank + 2);

    /* Attributes are per process, also on a predefined type. */
    MPI_Type_set_attr(MPI_INT, k2, (void *)(long)(100 + rank));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_get_attr(MPI_INT, k2, &v, &flag);
    CHECK(flag && (long)v == 100 + rank);
    MPI_Type_delete_attr(MPI_INT, k2);
    MPI_Type_get_attr(MPI_INT, k2, &v, &flag);
    CHECK(!flag);

    /* A failing copy callback fails MPI_Type_dup. */
    int kf;
    MPI_Type_create_keyval(failing_copy, MPI_TYPE_NULL_DELETE_FN, &kf, NULL);
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_set_attr(t, kf, NULL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    d = MPI_DATATYPE_NULL;
    CHECK(MPI_Type_dup(t, &d) != MPI_SUCCESS);
    int cls = -1;
    /* Errors on a bad keyval. */
    MPI_Error_class(MPI_Type_set_attr(t, MPI_KEYVAL_INVALID, NULL), &cls);
#ifdef OPEN_MPI
    CHECK(cls != MPI_SUCCESS); /* Open MPI 4.1: MPI_ERR_OTHER */
#else
    CHECK_EQ(cls, MPI_ERR_KEYVAL);
#endif
#ifdef LOOM_MPI_H
    /* Not set (MPICH returns MPI_SUCCESS). */
    MPI_Error_class(MPI_Type_delete_attr(t, k3), &cls);
    CHECK_EQ(cls, MPI_ERR_KEYVAL);
#endif
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&t);
    MPI_Type_free_keyval(&kf);
    MPI_Type_free_keyval(&k2);
    MPI_Type_free_keyval(&k3);
}

#ifdef HAVE_MPI4
static void info(void)
{
    MPI_Info env;
    char *args[] = {"prog", "-x", "7", NULL};
    CHECK(MPI_Info_create_env(3, args, &env) == MPI_SUCCESS);
    char val[64];
    int len = sizeof val, flag = 0;
    CHECK(MPI_Info_get_string(env, "command", &len, val, &flag) == MPI_SUCCESS);
#ifdef LOOM_MPI_H
    /* Whether "command" and "argv" come from argc/argv is the
     * implementation's choice: Loom takes them, MPICH does not. */
    CHECK(flag && strcmp(val, "prog") == 0);
    CHECK_EQ(len, 5);
#endif
    len = sizeof val;
    MPI_Info_get_string(env, "argv", &len, val, &flag);
#ifdef LOOM_MPI_H
    CHECK(flag && strcmp(val, "-x 7") == 0);
#endif
    MPI_Info_free(&env);
    CHECK(MPI_Info_create_env(0, NULL, &env) == MPI_SUCCESS);
    MPI_Info_free(&env);

    MPI_Info in;
    MPI_Info_create(&in);
    MPI_Info_set(in, "key", "a_long_value");
    /* Truncated to the buffer; the length says what is needed. */
    char small[4] = "zzz";
    len = 4;
    CHECK(MPI_Info_get_string(in, "key", &len, small, &flag) == MPI_SUCCESS && flag);
    CHECK_EQ(len, 13);
    CHECK(strcmp(small, "a_l") == 0);
    len = 0;
    MPI_Info_get_string(in, "key", &len, small, &flag); /* MPICH refuses NULL here */
    CHECK(flag && len == 13);
    len = 7;
    CHECK(MPI_Info_get_string(in, "nokey", &len, small, &flag) == MPI_SUCCESS && !flag);
    CHECK_EQ(len, 7);

    /* Comm_idup_with_info: the new communicator has the info's hints. */
    MPI_Comm c;
    MPI_Request r;
    CHECK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, in, &c, &r) == MPI_SUCCESS);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Info got;
    MPI_Comm_get_info(c, &got);
    len = sizeof val;
    MPI_Info_get_string(got, "key", &len, val, &flag);
#ifdef LOOM_MPI_H
    /* MPICH returns only the hints it knows. */
    CHECK(flag && strcmp(val, "a_long_value") == 0);
#endif
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK_EQ(sum, size * (size - 1) / 2);
    MPI_Info_free(&got);
    MPI_Comm_free(&c);
    MPI_Info_free(&in);
}
#endif

#ifdef LOOM_MPI_H
static void remove_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls, code, got, len;
    char s[MPI_MAX_ERROR_STRING];
    MPI_Add_error_class(&cls);
    MPI_Add_error_code(cls, &code);
    MPI_Add_error_string(code, "my code");
    MPI_Error_string(code, s, &len);
    CHECK(strcmp(s, "my code") == 0);
    CHECK(MPI_Remove_error_string(code) == MPI_SUCCESS);
    MPI_Error_string(code, s, &len);
    CHECK_EQ(len, 0);
    MPI_Error_class(MPI_Remove_error_string(code), &got); /* none left */
    CHECK_EQ(got, MPI_ERR_ARG);
    /* A class with codes cannot go; a predefined one never. */
    MPI_Error_class(MPI_Remove_error_class(cls), &got);
    CHECK_EQ(got, MPI_ERR_ARG);
    MPI_Error_class(MPI_Remove_error_class(MPI_ERR_TYPE), &got);
    CHECK_EQ(got, MPI_ERR_ARG);
    MPI_Error_class(MPI_Remove_error_code(cls), &got); /* a class, not a code */
    CHECK_EQ(got, MPI_ERR_ARG);
    CHECK(MPI_Remove_error_code(code) == MPI_SUCCESS);
    CHECK(MPI_Error_class(code, &got) != MPI_SUCCESS); /* gone */
    CHECK(MPI_Remove_error_class(cls) == MPI_SUCCESS);
    CHECK(MPI_Add_error_code(cls, &code) != MPI_SUCCESS);
    int *last, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
    CHECK(flag && *last >= MPI_ERR_LASTCODE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void value_index(void)
{
    MPI_Datatype p;
    MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &p);
    CHECK(p == MPI_DOUBLE_INT);
    MPI_Type_get_value_index(MPI_INT, MPI_INT, &p);
    CHECK(p == MPI_2INT);
    MPI_Type_get_value_index(MPI_REAL, MPI_REAL, &p);
    CHECK(p == MPI_2REAL);
    MPI_Type_get_value_index(MPI_INT, MPI_DOUBLE, &p);
    CHECK(p == MPI_DATATYPE_NULL);
    MPI_Type_get_value_index(MPI_CHAR, MPI_INT, &p);
    CHECK(p == MPI_DATATYPE_NULL);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    type_attrs();
#ifdef HAVE_MPI4
    info();
#endif
#ifdef LOOM_MPI_H
    remove_errors();
    value_index();
#endif
    int failed = check_failures_ != 0, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0 && !any)
        printf("mpi4_more: %d ranks ok\n", size);
    MPI_Finalize();
    return check_summary();
}
