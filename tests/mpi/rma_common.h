/*
 * Helpers shared by the one-sided tests (tests/mpi/rma_*.c): error-class
 * checks, and the final line printed when every rank passed.
 *
 * LOOM_EXPECT (passed by tests/rma.cmake, never when validating with other
 * MPIs) makes strict the checks where the standard leaves a choice, or where
 * other implementations do not detect an erroneous call: without it such a
 * check only reports what the implementation did (on stderr, "note:").
 */
#ifndef LOOM_TESTS_RMA_COMMON_H
#define LOOM_TESTS_RMA_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"

#ifdef LOOM_EXPECT
#define RMA_STRICT 1
#else
#define RMA_STRICT 0
#endif

static int rma_rank, rma_size;

/* The rank and size of MPI_COMM_WORLD, once after MPI_Init. */
static inline void rma_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rma_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &rma_size);
}

/* The class of an error code (-1 for MPI_SUCCESS). */
static inline int rma_class(int rc)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* Checks that rc is an error of class want or want2 (0: no alternative).
 * strict: a mismatch is a failure; otherwise it is reported as a note. */
static inline void rma_expect_class(int rc, int want, int want2, int strict, const char *what,
                                    const char *file, int line)
{
    int cls = rma_class(rc);
    int ok = rc != MPI_SUCCESS && (cls == want || (want2 != 0 && cls == want2));
    if (!strict)
        check_count_++;
    else
        CHECK(ok || !"error class");
    if (ok)
        return;
    char name[MPI_MAX_ERROR_STRING] = "success";
    int len = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, name, &len);
    fprintf(stderr, "%s:%d: %s: rank %d: %s returned class %d (%s), expected %d%s\n", file, line,
            strict ? "FAIL" : "note", rma_rank, what, cls, name, want,
            want2 ? " or its alternative" : "");
}

/* An error of class c (strict), of c1 or c2 (strict), and the same checks
 * strict only under LOOM_EXPECT. */
#define EXPECT_ERR(call, c)       rma_expect_class((call), (c), 0, 1, #call, __FILE__, __LINE__)
#define EXPECT_ERR2(call, c1, c2) rma_expect_class((call), (c1), (c2), 1, #call, __FILE__, __LINE__)
#define EXPECT_ERR_LOOM(call, c)                                                                   \
    rma_expect_class((call), (c), 0, RMA_STRICT, #call, __FILE__, __LINE__)
#define EXPECT_ERR2_LOOM(call, c1, c2)                                                             \
    rma_expect_class((call), (c1), (c2), RMA_STRICT, #call, __FILE__, __LINE__)

/* Checks that a call succeeded. */
#define CHECK_OK(call) CHECK_EQ((call), MPI_SUCCESS)

/* Which class an error code has, by name, for notes on the choices. */
static inline const char *rma_class_name(int rc)
{
    switch (rma_class(rc)) {
    case -1:
        return "MPI_SUCCESS";
    case MPI_ERR_RMA_RANGE:
        return "MPI_ERR_RMA_RANGE";
    case MPI_ERR_DISP:
        return "MPI_ERR_DISP";
    case MPI_ERR_RMA_SYNC:
        return "MPI_ERR_RMA_SYNC";
    case MPI_ERR_RANK:
        return "MPI_ERR_RANK";
    case MPI_ERR_WIN:
        return "MPI_ERR_WIN";
    case MPI_ERR_ARG:
        return "MPI_ERR_ARG";
    case MPI_ERR_COUNT:
        return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE:
        return "MPI_ERR_TYPE";
    case MPI_ERR_OP:
        return "MPI_ERR_OP";
    case MPI_ERR_RMA_FLAVOR:
        return "MPI_ERR_RMA_FLAVOR";
    default:
        return "another class";
    }
}

/* Ends the program: prints "<name>: N ranks ok" on rank 0 when no rank
 * failed a check, finalizes and returns the status of this rank. */
static inline int rma_finish(const char *name)
{
    int mine = check_failures_, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (all == 0 && rma_rank == 0)
        printf("%s: %d ranks ok\n", name, rma_size);
    else if (all != 0 && rma_rank == 0)
        printf("%s: %d failed checks on %d ranks\n", name, all, rma_size);
    fflush(stdout);
    MPI_Finalize();
    return check_summary();
}

/* The attribute value of a predefined window key, or def when absent. */
static inline MPI_Aint rma_attr_aint(MPI_Win win, int key, MPI_Aint def)
{
    void *val = NULL;
    int flag = 0;
    MPI_Win_get_attr(win, key, &val, &flag);
    return flag ? *(MPI_Aint *)val : def;
}

static inline int rma_attr_int(MPI_Win win, int key, int def)
{
    void *val = NULL;
    int flag = 0;
    MPI_Win_get_attr(win, key, &val, &flag);
    return flag ? *(int *)val : def;
}

#endif
