/* Error handlers (user, RETURN, inheritance, call_errhandler), user error
 * classes/codes/strings, and bad communicator arguments. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

static int calls, last_code;
static MPI_Comm last_comm;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_code = *code;
    last_comm = *comm;
}

int main(int argc, char **argv)
{
    int rank, size, r, cls;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Errhandler eh, got;
    CHECK_EQ(MPI_Comm_create_errhandler(handler, &eh), MPI_SUCCESS);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, eh);
    MPI_Comm_get_errhandler(c, &got);
    CHECK(got == eh);
    MPI_Errhandler_free(&got);
    CHECK(got == MPI_ERRHANDLER_NULL);
    CHECK_EQ(MPI_Comm_rank(c, NULL), MPI_ERR_ARG);
    CHECK_EQ(calls, 1);
    CHECK_EQ(last_code, MPI_ERR_ARG);
    CHECK(last_comm == c);
    /* inherited by new communicators, and still alive after free */
    MPI_Errhandler_free(&eh);
    MPI_Comm d;
    MPI_Comm_split(c, 0, 0, &d);
    CHECK_EQ(MPI_Comm_split(d, -5, 0, &c), MPI_ERR_ARG); /* c kept: it fails */
    CHECK_EQ(calls, 2);
    CHECK(last_comm == d);
    CHECK_EQ(MPI_Comm_call_errhandler(d, MPI_ERR_OTHER), MPI_SUCCESS);
    CHECK_EQ(calls, 3);
    CHECK_EQ(last_code, MPI_ERR_OTHER);
    MPI_Comm_free(&d);
    MPI_Comm_free(&c);

    /* MPI_COMM_WORLD default is fatal; switch to RETURN */
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    CHECK(got == MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_EQ(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER), MPI_SUCCESS);

    /* bad communicators: errors on MPI_COMM_WORLD's handler */
    CHECK_EQ(MPI_Comm_rank(MPI_COMM_NULL, &r), MPI_ERR_COMM);
    CHECK_EQ(MPI_Comm_size(12345, &r), MPI_ERR_COMM);
    MPI_Comm w = MPI_COMM_WORLD, s = MPI_COMM_SELF;
    CHECK_EQ(MPI_Comm_free(&w), MPI_ERR_COMM);
    CHECK_EQ(MPI_Comm_free(&s), MPI_ERR_COMM);
    MPI_Comm nul = MPI_COMM_NULL;
    CHECK_EQ(MPI_Comm_free(&nul), MPI_ERR_COMM);
    CHECK_EQ(MPI_Comm_dup(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Comm_split_type(MPI_COMM_WORLD, 99, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG);
    CHECK_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
    CHECK_EQ(MPI_Comm_set_info(MPI_COMM_WORLD, MPI_INFO_NULL), MPI_ERR_INFO);
    CHECK_EQ(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &r), MPI_ERR_COMM);
    CHECK_EQ(MPI_Comm_get_name(MPI_COMM_WORLD, NULL, &r), MPI_ERR_ARG);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm stale = c;
    MPI_Comm_free(&c);
    CHECK_EQ(MPI_Comm_rank(stale, &r), MPI_ERR_COMM);
    CHECK_EQ(MPI_Comm_free(&stale), MPI_ERR_COMM);

    /* user error classes, codes, strings */
    int code;
    char str[MPI_MAX_ERROR_STRING];
    int len;
    CHECK_EQ(MPI_Add_error_class(&cls), MPI_SUCCESS);
    CHECK(cls > MPI_T_ERR_MEMORY);
    CHECK_EQ(MPI_Add_error_code(cls, &code), MPI_SUCCESS);
    CHECK(code != cls);
    CHECK_EQ(MPI_Add_error_string(code, "my own error"), MPI_SUCCESS);
    int k;
    MPI_Error_class(code, &k);
    CHECK_EQ(k, cls);
    MPI_Error_class(cls, &k);
    CHECK_EQ(k, cls);
    MPI_Error_string(code, str, &len);
    CHECK(strcmp(str, "my own error") == 0);
    CHECK_EQ(len, 12);
    MPI_Error_string(MPI_ERR_COMM, str, &len);
    CHECK(strstr(str, "communicator") != NULL);
    int c2;
    CHECK_EQ(MPI_Add_error_code(MPI_ERR_ARG, &c2), MPI_SUCCESS);
    MPI_Error_class(c2, &k);
    CHECK_EQ(k, MPI_ERR_ARG);
    CHECK_EQ(MPI_Add_error_code(code, &c2), MPI_ERR_ARG); /* a code, not a class */
    CHECK_EQ(MPI_Add_error_string(MPI_ERR_ARG, "no"), MPI_ERR_ARG);
    CHECK_EQ(MPI_Error_class(100000, &k), MPI_ERR_ARG);
    /* a user handler gets a user code through call_errhandler */
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, eh);
    MPI_Errhandler_free(&eh);
    MPI_Comm_call_errhandler(MPI_COMM_SELF, code);
    CHECK_EQ(last_code, code);
    CHECK(last_comm == MPI_COMM_SELF);

    MPI_Finalize();
    if (check_failures_ == 0 && rank == 0)
        printf("comm_errors: %d ranks ok\n", size);
    return check_summary();
}
