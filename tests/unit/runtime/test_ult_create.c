/*
 * ULT creation and teardown: thousands of ULTs on small stacks across
 * workers, ULTs that create ULTs while running (loom_sched_run must wait for
 * them), the identity accessors, errno kept per ULT across switches, stack
 * bounds, a 4 MiB array on an 8 MiB ULT stack, and the guard page.
 */
#include "ult_test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/wait.h>

#define NWORKERS 2

static int nflat(void)
{
    return ULT_TEST_SANITIZED ? 1000 : 10000; /* sanitizer fibers are costly */
}

static atomic_int ran;
static atomic_int bad_identity;

static void flat_body(void *arg)
{
    long i = (long)arg;
    struct loom_ult *self = loom_ult_self();
    if (!self || loom_sched_worker_self() != (int)(i % NWORKERS) ||
        loom_ult_worker(self) != (int)(i % NWORKERS) || loom_ult_get_data(self) != NULL)
        atomic_fetch_add(&bad_identity, 1);
    loom_ult_set_data(self, arg);
    if (i % 3 == 0)
        loom_ult_yield();
    if (loom_ult_get_data(self) != arg || loom_ult_self() != self)
        atomic_fetch_add(&bad_identity, 1);
    atomic_fetch_add(&ran, 1);
    if (i % 2)
        loom_ult_exit();
}

/* Each child spawns `arg` grandchildren on the other worker. */
static atomic_int tree_ran;

static void tree_leaf(void *arg)
{
    (void)arg;
    loom_ult_yield();
    atomic_fetch_add(&tree_ran, 1);
}

static void tree_node(void *arg)
{
    long kids = (long)arg;
    int other = (loom_sched_worker_self() + 1) % NWORKERS;
    for (long k = 0; k < kids; k++) {
        struct loom_ult *u;
        if (loom_ult_create(tree_leaf, NULL, (int)(k % 2 ? other : loom_sched_worker_self()),
                            64 * 1024, &u) != 0)
            abort();
        if (k % 4 == 0)
            loom_ult_yield();
    }
    atomic_fetch_add(&tree_ran, 1);
}

static void test_many(void)
{
    ult_test_phase("many");
    ult_test_init(NWORKERS, -1, -1);
    int n = nflat();
    for (long i = 0; i < n; i++)
        ult_test_spawn(flat_body, (void *)i, (int)(i % NWORKERS), 16 * 1024);
    CHECK_EQ(loom_sched_nworkers(), NWORKERS);
    CHECK(loom_ult_self() == NULL);
    CHECK_EQ(loom_sched_worker_self(), -1);
    loom_sched_run();
    CHECK_EQ(atomic_load(&ran), n);
    CHECK_EQ(atomic_load(&bad_identity), 0);
    loom_sched_fini();
}

static void test_tree(void)
{
    ult_test_phase("tree");
    ult_test_init(NWORKERS, -1, -1);
    int nodes = 20, kids = ULT_TEST_SANITIZED ? 20 : 50;
    for (long i = 0; i < nodes; i++)
        ult_test_spawn(tree_node, (void *)(long)kids, (int)(i % NWORKERS), 64 * 1024);
    loom_sched_run();
    /* run() returned only after every dynamically created ULT finished. */
    CHECK_EQ(atomic_load(&tree_ran), nodes + nodes * kids);
    loom_sched_fini();
}

/* errno is per kernel thread; each ULT must still see its own. */
static atomic_int errno_bad;

static void errno_body(void *arg)
{
    int mine = (int)(long)arg;
    for (int i = 0; i < 2000; i++) {
        errno = mine + i;
        loom_ult_yield();
        if (errno != mine + i)
            atomic_fetch_add(&errno_bad, 1);
    }
}

static void test_errno(void)
{
    ult_test_phase("errno");
    ult_test_init(1, -1, -1);
    ult_test_spawn(errno_body, (void *)100000L, 0, 64 * 1024);
    ult_test_spawn(errno_body, (void *)200000L, 0, 64 * 1024);
    ult_test_spawn(errno_body, (void *)300000L, 0, 64 * 1024);
    errno = 7;
    loom_sched_run();
    CHECK_EQ(atomic_load(&errno_bad), 0);
    loom_sched_fini();
}

/* Stack bounds and a big array on the ULT stack. */
static atomic_int stack_ok;

__attribute__((noinline)) static long use_big_array(void)
{
    volatile char big[4 << 20];
    for (size_t i = 0; i < sizeof big; i += 4096)
        big[i] = (char)i;
    big[sizeof big - 1] = 1;
    long sum = 0;
    for (size_t i = 0; i < sizeof big; i += 4096)
        sum += big[i];
    return sum + big[sizeof big - 1];
}

static void stack_body(void *arg)
{
    size_t want = (size_t)arg;
    void *lo, *hi, *guard;
    loom_ult_stack_bounds(loom_ult_self(), &lo, &hi, &guard);
    char here;
    long page = sysconf(_SC_PAGESIZE);
    int ok = (char *)&here >= (char *)lo && (char *)&here < (char *)hi &&
             (size_t)((char *)hi - (char *)lo) >= want &&
             (size_t)((char *)hi - (char *)lo) % (size_t)page == 0 &&
             (char *)lo - (char *)guard == page;
    long expect = 0;
    for (size_t i = 0; i < (4u << 20); i += 4096)
        expect += (char)i;
    if (want >= (8u << 20))
        ok = ok && use_big_array() == expect + 1;
    atomic_store(&stack_ok, ok);
}

static void test_stack(void)
{
    ult_test_phase("stack");
    ult_test_init(1, -1, -1);
    ult_test_spawn(stack_body, (void *)(size_t)(8u << 20), 0, 8u << 20);
    loom_sched_run();
    CHECK_EQ(atomic_load(&stack_ok), 1);
    loom_sched_fini();
}

/* Odd sizes round up to pages. */
static void test_stack_rounding(void)
{
    ult_test_phase("rounding");
    ult_test_init(1, -1, -1);
    struct loom_ult *u = ult_test_spawn(stack_body, (void *)(size_t)10000, 0, 10000);
    void *lo, *hi, *guard;
    loom_ult_stack_bounds(u, &lo, &hi, &guard);
    long page = sysconf(_SC_PAGESIZE);
    CHECK((size_t)((char *)hi - (char *)lo) >= 10000);
    CHECK_EQ(((uintptr_t)lo) % (uintptr_t)page, 0);
    CHECK_EQ(((uintptr_t)hi) % (uintptr_t)page, 0);
    CHECK_EQ((char *)lo - (char *)guard, page);
    /* Bad arguments. */
    struct loom_ult *v = (struct loom_ult *)&v;
    CHECK(loom_ult_create(stack_body, NULL, 1, 4096, &v) != 0);
    CHECK(loom_ult_create(stack_body, NULL, -1, 4096, &v) != 0);
    CHECK(v == (struct loom_ult *)&v); /* untouched on failure */
    loom_sched_run();
    loom_sched_fini();
}

/* Writing into the guard page must crash (in a child process). */
static void guard_body(void *arg)
{
    (void)arg;
    void *lo, *hi, *guard;
    loom_ult_stack_bounds(loom_ult_self(), &lo, &hi, &guard);
    *(volatile char *)guard = 1;
}

static void test_guard(void)
{
    ult_test_phase("guard");
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        /* Sanitizers report the fault their own way; keep their output out. */
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        ult_test_init(1, -1, -1);
        ult_test_spawn(guard_body, NULL, 0, 64 * 1024);
        loom_sched_run();
        _exit(0);
    }
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
    if (!ULT_TEST_SANITIZED)
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
}

int main(void)
{
    ult_test_watchdog(45);
    test_guard(); /* first: fork while the process has one thread */
    test_many();
    test_tree();
    test_errno();
    test_stack();
    test_stack_rounding();
    ult_test_phase("end");
    return check_summary();
}
