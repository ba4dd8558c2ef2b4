/*
 * Attributes and error handlers of windows: MPI_Win_create_keyval with copy
 * and delete callbacks (and the predefined MPI_WIN_NULL_COPY_FN,
 * MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN), set_attr (replacing a value calls
 * the delete callback on the old one), get_attr, delete_attr, free_keyval
 * while an attribute still uses the key (its delete callback runs at
 * MPI_Win_free), and the delete callbacks of every attribute at MPI_Win_free
 * with the window being freed and the keyval's extra state.
 * MPI_Win_create_errhandler, set/get_errhandler (the default is
 * MPI_ERRORS_ARE_FATAL), MPI_Win_call_errhandler, and a user handler called
 * by an erroneous RMA call with the window and the error code.
 */
#include <stdlib.h>

#include "rma_common.h"

enum { KEYS = 3 };

static int deletes[KEYS], copies;
static MPI_Aint deleted_val[KEYS];
static MPI_Win deleted_win[KEYS];
static int extra[KEYS];

/* Never called: windows cannot be duplicated. */
static int copy_fn(MPI_Win win, int key, void *extra_state, void *in, void *out, int *flag)
{
    (void)win, (void)key, (void)extra_state;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Records the call in the slot its extra state names. */
static int delete_fn(MPI_Win win, int key, void *val, void *extra_state)
{
    (void)key;
    int k = *(int *)extra_state;
    if (k < 0 || k >= KEYS || extra_state != &extra[k])
        return MPI_ERR_OTHER;
    deletes[k]++;
    deleted_val[k] = (MPI_Aint)val;
    deleted_win[k] = win;
    return MPI_SUCCESS;
}

static void test_keyvals(void)
{
    int mem = 0;
    MPI_Win win, other;
    MPI_Win_create(&mem, sizeof mem, sizeof mem, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_create(&mem, sizeof mem, sizeof mem, MPI_INFO_NULL, MPI_COMM_WORLD, &other);
    int key[KEYS], nullkey, dupkey;
    for (int k = 0; k < KEYS; k++) {
        extra[k] = k;
        CHECK_OK(MPI_Win_create_keyval(copy_fn, delete_fn, &key[k], &extra[k]));
        CHECK(key[k] != MPI_KEYVAL_INVALID);
    }
    CHECK(key[0] != key[1] && key[1] != key[2] && key[0] != key[2]);
    CHECK_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &nullkey, NULL));
    CHECK_OK(MPI_Win_create_keyval(MPI_WIN_DUP_FN, MPI_WIN_NULL_DELETE_FN, &dupkey, NULL));

    /* Absent, set, read back; per window. */
    void *val = (void *)1;
    int flag = 1;
    CHECK_OK(MPI_Win_get_attr(win, key[0], &val, &flag));
    CHECK_EQ(flag, 0);
    CHECK_OK(MPI_Win_set_attr(win, key[0], (void *)(MPI_Aint)(100 + rma_rank)));
    CHECK_OK(MPI_Win_set_attr(other, key[0], (void *)(MPI_Aint)7));
    CHECK_OK(MPI_Win_get_attr(win, key[0], &val, &flag));
    CHECK_EQ(flag, 1);
    CHECK_EQ((MPI_Aint)val, 100 + rma_rank);
    CHECK_OK(MPI_Win_get_attr(other, key[0], &val, &flag));
    CHECK_EQ((MPI_Aint)val, 7);
    CHECK_EQ(deletes[0], 0);

    /* Replacing a value deletes the old one. */
    CHECK_OK(MPI_Win_set_attr(win, key[0], (void *)(MPI_Aint)200));
    CHECK_EQ(deletes[0], 1);
    CHECK_EQ(deleted_val[0], 100 + rma_rank);
    CHECK(deleted_win[0] == win);
    CHECK_OK(MPI_Win_get_attr(win, key[0], &val, &flag));
    CHECK_EQ((MPI_Aint)val, 200);

    /* delete_attr calls the callback and removes the value. */
    CHECK_OK(MPI_Win_set_attr(win, key[1], (void *)(MPI_Aint)11));
    CHECK_OK(MPI_Win_delete_attr(win, key[1]));
    CHECK_EQ(deletes[1], 1);
    CHECK_EQ(deleted_val[1], 11);
    CHECK_OK(MPI_Win_get_attr(win, key[1], &val, &flag));
    CHECK_EQ(flag, 0);
    CHECK_OK(MPI_Win_set_attr(win, key[1], (void *)(MPI_Aint)12));

    /* Freeing a keyval in use: the handle becomes invalid, the attribute
     * stays until the window goes. */
    CHECK_OK(MPI_Win_set_attr(win, key[2], (void *)(MPI_Aint)21));
    int k2 = key[2];
    CHECK_OK(MPI_Win_free_keyval(&key[2]));
    CHECK_EQ(key[2], MPI_KEYVAL_INVALID);
    CHECK_EQ(deletes[2], 0);

    /* Predefined callbacks. */
    CHECK_OK(MPI_Win_set_attr(win, nullkey, &mem));
    CHECK_OK(MPI_Win_set_attr(win, dupkey, &mem));
    CHECK_OK(MPI_Win_get_attr(win, dupkey, &val, &flag));
    CHECK(flag && val == &mem);

    /* Predefined attributes are still there beside the user's. */
    CHECK_EQ(rma_attr_int(win, MPI_WIN_DISP_UNIT, -1), sizeof mem);

    /* MPI_Win_free deletes every attribute, with the window being freed. */
    MPI_Win freed = win;
    CHECK_OK(MPI_Win_free(&win));
    CHECK_EQ(deletes[0], 2);
    CHECK_EQ(deleted_val[0], 200);
    CHECK(deleted_win[0] == freed);
    CHECK_EQ(deletes[1], 2);
    CHECK_EQ(deleted_val[1], 12);
    CHECK_EQ(deletes[2], 1);
    CHECK_EQ(deleted_val[2], 21);
    CHECK(deleted_win[2] == freed);
    (void)k2;
    /* The other window keeps its own value. */
    CHECK_OK(MPI_Win_get_attr(other, key[0], &val, &flag));
    CHECK_EQ((MPI_Aint)val, 7);
    CHECK_OK(MPI_Win_free(&other));
    CHECK_EQ(deletes[0], 3);
    CHECK_EQ(deleted_val[0], 7);
    CHECK_EQ(copies, 0);

    /* A keyval freed when no window uses it. */
    CHECK_OK(MPI_Win_free_keyval(&key[0]));
    CHECK_OK(MPI_Win_free_keyval(&key[1]));
    CHECK_OK(MPI_Win_free_keyval(&nullkey));
    CHECK_OK(MPI_Win_free_keyval(&dupkey));
    CHECK_EQ(key[0], MPI_KEYVAL_INVALID);
    CHECK_EQ(deletes[0], 3);
}

static int eh_calls, eh_code;
static MPI_Win eh_win;

static void handler(MPI_Win *win, int *code, ...)
{
    eh_calls++;
    eh_code = *code;
    eh_win = *win;
}

static void test_errhandlers(void)
{
    int mem[4] = {0, 0, 0, 0};
    MPI_Win win;
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Errhandler eh, got;
    CHECK_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL);
    if (got != MPI_ERRORS_ARE_FATAL)
        MPI_Errhandler_free(&got);

    CHECK_OK(MPI_Win_create_errhandler(handler, &eh));
    CHECK(eh != MPI_ERRHANDLER_NULL);
    CHECK_OK(MPI_Win_set_errhandler(win, eh));
    CHECK_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == eh);
    CHECK_OK(MPI_Errhandler_free(&got));
    CHECK(got == MPI_ERRHANDLER_NULL);
    /* Freed by the user, alive while the window uses it. */
    CHECK_OK(MPI_Errhandler_free(&eh));

    CHECK_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK_EQ(eh_calls, 1);
    CHECK_EQ(eh_code, MPI_ERR_OTHER);
    CHECK(eh_win == win);
    /* A user error code reaches the handler unchanged. */
    int cls, code;
    MPI_Add_error_class(&cls);
    MPI_Add_error_code(cls, &code);
    CHECK_OK(MPI_Win_call_errhandler(win, code));
    CHECK_EQ(eh_calls, 2);
    CHECK_EQ(eh_code, code);

    /* An erroneous call raises the error on the window's handler. */
    int v = 1;
    MPI_Win_fence(0, win);
    int rc = MPI_Put(&v, 1, MPI_INT, rma_size + 1, 0, 1, MPI_INT, win);
    CHECK(rc != MPI_SUCCESS);
    CHECK_EQ(eh_calls, 3);
    CHECK_EQ(rma_class(eh_code), MPI_ERR_RANK);
    CHECK(eh_win == win);
    MPI_Win_fence(0, win);

    /* MPI_ERRORS_RETURN: errors come back as codes; the window works. */
    CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    CHECK_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == MPI_ERRORS_RETURN);
    CHECK_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK_EQ(eh_calls, 3);
    MPI_Win_fence(0, win);
    EXPECT_ERR(MPI_Put(&v, 1, MPI_INT, -7, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    int right = (rma_rank + 1) % rma_size;
    v = 50 + rma_rank;
    CHECK_OK(MPI_Put(&v, 1, MPI_INT, right, 2, 1, MPI_INT, win));
    MPI_Win_fence(0, win);
    CHECK_EQ(mem[2], 50 + (rma_rank + rma_size - 1) % rma_size);

    /* The handler of one window is not another's. */
    MPI_Win other;
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &other);
    CHECK_OK(MPI_Win_get_errhandler(other, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL);
    MPI_Win_free(&other);
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    rma_init(&argc, &argv);
    test_keyvals();
    test_errhandlers();
    return rma_finish("rma_attr");
}
