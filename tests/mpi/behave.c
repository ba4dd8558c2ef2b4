/* One program, many behaviours, chosen by argv[1], for the launcher tests:
 *   exit RANK CODE     rank RANK calls exit(CODE) mid-job, others wait
 *   _exit RANK CODE    the same with _exit
 *   return RANK CODE   rank RANK returns CODE from main
 *   abort RANK CODE    rank RANK calls MPI_Abort(MPI_COMM_WORLD, CODE)
 *   segv RANK          rank RANK dereferences NULL
 *   assert RANK        rank RANK fails an assert (SIGABRT)
 *   overflow RANK      rank RANK recurses until its stack overflows
 *   bigframe RANK      rank RANK has a 9 MiB frame and touches its low 512 KiB
 *                      (past the guard page of an 8 MiB stack)
 *   nofinalize RANK    rank RANK returns 0 without MPI_Finalize
 *   hang               every rank waits forever (for --timeout and SIGTERM)
 *   stdin              every rank reads stdin and says what it got
 *   children RANK DIR END
 *                      rank RANK starts three processes that would outlive it
 *                      (a background job of system(), popen, fork+exec),
 *                      writes their pids into DIR, then ends by END: exit
 *                      (status 3), segv, abort (MPI_Abort 4) or hang
 *   cat                rank 0 copies stdin to stdout, mixing fgets, getchar,
 *                      fread and scanf; the others check that they read EOF
 *   env VAR...         rank 0 prints VAR=value for each VAR
 *   atexit             every rank registers an atexit handler and calls exit(0)
 *   partial            every rank prints a line in two pieces around a barrier
 *   fatal              rank 0 passes MPI_COMM_NULL to MPI_Comm_rank (fatal error)
 *   forkexit           every rank forks two children that end with _exit(3) and
 *                      exit(5), and says the statuses it got from waitpid
 */
#include <assert.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int rank;

static void on_exit_handler(void)
{
    printf("atexit handler of rank %d\n", rank);
}

static int recurse(volatile char *prev, int depth)
{
    volatile char frame[4096];
    frame[0] = prev ? prev[0] : 1;
    if (depth > (1 << 30))
        return frame[0];
    return recurse(frame, depth + 1) + frame[100];
}

/* One frame larger than the whole stack; only its far end is touched, so
 * without probes the stores land beyond the guard page. */
__attribute__((noinline)) static int bigframe(void)
{
    volatile char big[9 << 20];
    for (size_t i = 0; i < (512u << 10); i += 64)
        big[i] = (char)i;
    return big[4096];
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *what = argc > 1 ? argv[1] : "";
    int who = argc > 2 ? atoi(argv[2]) : 0;
    int code = argc > 3 ? atoi(argv[3]) : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(what, "exit") == 0 && rank == who)
        exit(code);
    if (strcmp(what, "_exit") == 0 && rank == who)
        _exit(code);
    if (strcmp(what, "return") == 0 && rank == who)
        return code;
    if (strcmp(what, "abort") == 0 && rank == who)
        MPI_Abort(MPI_COMM_WORLD, code);
    if (strcmp(what, "segv") == 0 && rank == who) {
        /* An unmapped low address, not NULL: UBSan would stop a NULL store
         * before the signal does. */
        volatile uintptr_t where = 64;
        volatile int *p = (volatile int *)where;
        *p = 1;
    }
    if (strcmp(what, "assert") == 0 && rank == who)
        assert(rank != who);
    if (strcmp(what, "overflow") == 0 && rank == who)
        return recurse(NULL, 0);
    if (strcmp(what, "bigframe") == 0 && rank == who)
        return bigframe();
    if (strcmp(what, "nofinalize") == 0 && rank == who)
        return 0;
    if (strcmp(what, "hang") == 0) {
        if (rank == 0)
            printf("hanging\n");
        fflush(stdout);
        if (rank == 0)
            for (;;)
                sleep(1);
    }
    if (strcmp(what, "stdin") == 0) {
        char line[256];
        if (fgets(line, sizeof line, stdin))
            printf("rank %d read: %s", rank, line);
        else
            printf("rank %d read: EOF\n", rank);
    }
    if (strcmp(what, "children") == 0 && rank == who && argc > 4) {
        const char *dir = argv[3], *end = argv[4];
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "sleep 300 & echo $! > %s/bg.pid", dir);
        if (system(cmd) != 0)
            return 2;
        snprintf(cmd, sizeof cmd, "echo $$ > %s/popen.pid; exec sleep 300", dir);
        FILE *pp = popen(cmd, "r");
        if (!pp)
            return 2;
        pid_t pid = fork();
        if (pid == 0) {
            execlp("sleep", "sleep", "300", (char *)NULL);
            _exit(127);
        }
        snprintf(cmd, sizeof cmd, "%s/fork.pid", dir);
        FILE *f = fopen(cmd, "w");
        if (!f || pid < 0)
            return 2;
        fprintf(f, "%d\n", (int)pid);
        fclose(f);
        snprintf(cmd, sizeof cmd, "%s/popen.pid", dir);
        for (int i = 0; i < 500 && access(cmd, R_OK) != 0; i++)
            usleep(10000);
        printf("children started\n");
        fflush(stdout);
        if (strcmp(end, "exit") == 0)
            exit(3);
        if (strcmp(end, "abort") == 0)
            MPI_Abort(MPI_COMM_WORLD, 4);
        if (strcmp(end, "segv") == 0) {
            volatile uintptr_t where = 64;
            *(volatile int *)where = 1;
        }
        for (;;)
            sleep(1);
    }
    if (strcmp(what, "cat") == 0) {
        if (rank == 0) {
            static char block[100000];
            for (int turn = 0;; turn++) {
                if (turn % 3 == 0) {
                    if (!fgets(block, sizeof block, stdin))
                        break;
                    fputs(block, stdout);
                } else if (turn % 3 == 1) {
                    int c = getchar();
                    if (c == EOF)
                        break;
                    putchar(c);
                } else {
                    size_t n = fread(block, 1, (size_t)(turn * 37 % sizeof block), stdin);
                    fwrite(block, 1, n, stdout);
                }
            }
        } else if (getchar() != EOF) {
            printf("rank %d read from stdin\n", rank);
        }
    }
    if (strcmp(what, "env") == 0 && rank == 0)
        for (int i = 2; i < argc; i++)
            printf("%s=%s\n", argv[i], getenv(argv[i]) ? getenv(argv[i]) : "(unset)");
    if (strcmp(what, "atexit") == 0) {
        atexit(on_exit_handler);
        MPI_Finalize();
        exit(0);
    }
    if (strcmp(what, "forkexit") == 0) {
        int st[2] = {-1, -1};
        for (int i = 0; i < 2; i++) {
            pid_t p = fork();
            if (p == 0) {
                if (i == 0)
                    _exit(3);
                exit(5);
            }
            int w = -1;
            if (p > 0 && waitpid(p, &w, 0) == p && WIFEXITED(w))
                st[i] = WEXITSTATUS(w);
        }
        printf("rank %d: children ended with %d and %d\n", rank, st[0], st[1]);
    }
    if (strcmp(what, "partial") == 0) {
        printf("rank %d says ", rank);
        MPI_Barrier(MPI_COMM_WORLD);
        printf("hello\n");
    }
    if (strcmp(what, "fatal") == 0 && rank == 0) {
        int r;
        MPI_Comm_rank(MPI_COMM_NULL, &r);
    }
    /* Everyone else waits for the failing rank (the job must end anyway). */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
