/* Ranks share process-shared pthread mutexes and a POSIX semaphore in an
 * MPI_Win_allocate_shared window, as codes using MPI-3 shared memory do, and
 * hold them while they wait in MPI or sleep. Under a process MPI each rank
 * blocks in its own process; under Loom a rank that waits must park, not
 * block its worker, or ranks of one worker deadlock (run with --workers 1).
 * Checks mutual exclusion, recursive and error-checking semantics between
 * ranks, trylock, timed waits, the semaphore's count, and condition
 * variables waited on by ranks while others signal them.
 *
 *   lock_park [rounds]
 */
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct shared {
    pthread_mutex_t normal, recursive, errorcheck;
    pthread_cond_t cv, cv_mono;
    sem_t sem;
    volatile long counter, inside, flag, turn, acks;
};

static int rank, size, failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "rank %d: %s\n", rank, what);
        failures++;
    }
}

static void init_mutex(pthread_mutex_t *m, int type)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_settype(&a, type);
    pthread_mutex_init(m, &a);
    pthread_mutexattr_destroy(&a);
}

static void init_cond(pthread_cond_t *c, clockid_t clock)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_condattr_setclock(&a, clock);
    pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
}

static struct timespec on_clock_in_ms(clockid_t clock, int ms)
{
    struct timespec t;
    clock_gettime(clock, &t);
    t.tv_nsec += (long)ms * 1000000;
    t.tv_sec += t.tv_nsec / 1000000000;
    t.tv_nsec %= 1000000000;
    return t;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static struct timespec in_ms(int ms)
{
    return on_clock_in_ms(CLOCK_REALTIME, ms);
}

/* Rank 0 hands a turn to each other rank in order through a condition
 * variable; each acknowledges through the same one. */
static void turns(struct shared *s)
{
    if (rank == 0)
        s->turn = s->acks = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    pthread_mutex_t *m = &s->normal;
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            check(pthread_mutex_lock(m) == 0, "lock to give a turn");
            s->turn = r;
            check(pthread_cond_broadcast(&s->cv) == 0, "broadcast");
            while (s->acks < r)
                check(pthread_cond_wait(&s->cv, m) == 0, "wait for an acknowledgement");
            check(pthread_mutex_unlock(m) == 0, "unlock after a turn");
        }
    } else {
        check(pthread_mutex_lock(m) == 0, "lock to wait for a turn");
        while (s->turn != rank)
            check(pthread_cond_wait(&s->cv, m) == 0, "wait for a turn");
        check(s->acks == rank - 1, "turns out of order");
        s->acks++;
        check(pthread_cond_signal(&s->cv) == 0 && pthread_cond_broadcast(&s->cv) == 0,
              "signal the acknowledgement");
        check(pthread_mutex_unlock(m) == 0, "unlock after the turn");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check(s->acks == size - 1, "acknowledgements missing");
    MPI_Barrier(MPI_COMM_WORLD);
}

/* A timed wait that nobody signals times out on the variable's clock,
 * holding the mutex again. */
static void cond_timeout(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock)
{
    check(pthread_mutex_lock(m) == 0, "lock for a timed wait");
    double t0 = now();
    struct timespec t = on_clock_in_ms(clock, 30);
    int rc;
    do
        rc = pthread_cond_timedwait(c, m, &t);
    while (rc == 0); /* spurious wake-ups */
    check(rc == ETIMEDOUT, "timed wait on a condition variable did not time out");
    check(now() - t0 >= 0.025, "timed wait on a condition variable returned early");
    check(pthread_mutex_unlock(m) == 0, "timed wait left the mutex unlocked");
}

/* Rank 0 holds m (locked depth times) while the others try to lock it; they
 * must get it only after rank 0's last unlock. */
static void holder_handoff(struct shared *s, pthread_mutex_t *m, int depth)
{
    if (rank == 0) {
        s->flag = 0;
        for (int i = 0; i < depth; i++)
            check(pthread_mutex_lock(m) == 0, "lock by the holder");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        usleep(20000); /* the others are waiting for m meanwhile */
        for (int i = 0; i < depth; i++) {
            s->flag = i + 1;
            check(pthread_mutex_unlock(m) == 0, "unlock by the holder");
            if (i + 1 < depth)
                usleep(5000);
        }
    } else {
        check(pthread_mutex_lock(m) == 0, "lock by a waiter");
        check(s->flag == depth, "got the mutex before the holder's last unlock");
        check(pthread_mutex_unlock(m) == 0, "unlock by a waiter");
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Everyone increments a shared counter under m, waiting in MPI inside the
 * critical section now and then. */
static void exclusion(struct shared *s, pthread_mutex_t *m, int rounds)
{
    if (rank == 0)
        s->counter = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < rounds; i++) {
        check(pthread_mutex_lock(m) == 0, "lock in the loop");
        check(++s->inside == 1, "two ranks inside the critical section");
        long c = s->counter;
        if (i % 8 == 0) {
            int flag;
            MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(i % 64 == 0 ? 200 : 0);
        }
        s->counter = c + 1;
        s->inside--;
        check(pthread_mutex_unlock(m) == 0, "unlock in the loop");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check(s->counter == (long)size * rounds, "lost increments");
    MPI_Barrier(MPI_COMM_WORLD); /* before rank 0 resets it */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 200;

    /* One node: every rank sees rank 0's segment. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    struct shared *s;
    MPI_Win win;
    MPI_Win_allocate_shared(rank == 0 ? (MPI_Aint)sizeof *s : 0, 1, MPI_INFO_NULL, node, &s, &win);
    MPI_Aint bytes;
    int unit;
    MPI_Win_shared_query(win, 0, &bytes, &unit, &s);
    if (rank == 0) {
        init_mutex(&s->normal, PTHREAD_MUTEX_NORMAL);
        init_mutex(&s->recursive, PTHREAD_MUTEX_RECURSIVE);
        init_mutex(&s->errorcheck, PTHREAD_MUTEX_ERRORCHECK);
        init_cond(&s->cv, CLOCK_REALTIME);
        init_cond(&s->cv_mono, CLOCK_MONOTONIC);
        sem_init(&s->sem, 1, 0);
        s->counter = s->inside = s->flag = 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);

    holder_handoff(s, &s->normal, 1);
    holder_handoff(s, &s->recursive, 3);
    holder_handoff(s, &s->errorcheck, 1);
    exclusion(s, &s->normal, rounds);
    exclusion(s, &s->recursive, rounds / 2);

    /* Error-checking: relock by the holder, unlock by another rank. */
    if (size == 1) {
        check(pthread_mutex_lock(&s->errorcheck) == 0, "errorcheck lock");
        check(pthread_mutex_lock(&s->errorcheck) == EDEADLK, "relock did not give EDEADLK");
        check(pthread_mutex_unlock(&s->errorcheck) == 0, "errorcheck unlock");
        check(pthread_mutex_unlock(&s->errorcheck) == EPERM, "second unlock did not give EPERM");
    }
    if (size > 1) {
        if (rank == 0) {
            check(pthread_mutex_lock(&s->errorcheck) == 0, "errorcheck lock by rank 0");
            check(pthread_mutex_lock(&s->errorcheck) == EDEADLK, "relock did not give EDEADLK");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank != 0) {
            check(pthread_mutex_unlock(&s->errorcheck) == EPERM,
                  "unlock of rank 0's errorcheck mutex did not give EPERM");
            check(pthread_mutex_trylock(&s->errorcheck) == EBUSY,
                  "trylock of rank 0's errorcheck mutex did not give EBUSY");
            /* Free, but other ranks may be trying it at the same time. */
            int rc = pthread_mutex_trylock(&s->recursive);
            check(rc == 0 || rc == EBUSY, "trylock of a recursive mutex");
            if (rc == 0)
                check(pthread_mutex_unlock(&s->recursive) == 0, "unlock after trylock");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            check(pthread_mutex_lock(&s->recursive) == 0, "recursive lock by rank 0");
            check(pthread_mutex_trylock(&s->recursive) == 0, "recursive relock by trylock");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank != 0) {
            check(pthread_mutex_trylock(&s->recursive) == EBUSY,
                  "trylock of rank 0's recursive mutex did not give EBUSY");
            check(pthread_mutex_unlock(&s->recursive) == EPERM,
                  "unlock of rank 0's recursive mutex did not give EPERM");
            /* A timed lock of a mutex another rank holds times out. */
            struct timespec t = in_ms(30);
            double t0 = now();
            check(pthread_mutex_timedlock(&s->normal, &t) == 0, "timedlock of a free mutex");
            check(pthread_mutex_unlock(&s->normal) == 0, "unlock after timedlock");
            t = in_ms(30);
            check(pthread_mutex_timedlock(&s->errorcheck, &t) == ETIMEDOUT,
                  "timedlock of a held mutex did not time out");
            check(now() - t0 >= 0.025, "timedlock returned before its time");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            check(pthread_mutex_unlock(&s->recursive) == 0, "recursive unlock 1");
            check(pthread_mutex_unlock(&s->recursive) == 0, "recursive unlock 2");
            check(pthread_mutex_unlock(&s->errorcheck) == 0, "errorcheck unlock by rank 0");
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    turns(s);
    if (rank == size - 1) {
        cond_timeout(&s->cv, &s->errorcheck, CLOCK_REALTIME);
        cond_timeout(&s->cv_mono, &s->normal, CLOCK_MONOTONIC);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Semaphore: the others wait on a zero count until rank 0 posts. */
    if (rank == 0) {
        usleep(20000);
        for (int i = 1; i < size; i++)
            check(sem_post(&s->sem) == 0, "sem_post");
    } else {
        check(sem_wait(&s->sem) == 0, "sem_wait");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int v = -1;
    sem_getvalue(&s->sem, &v);
    check(v == 0, "semaphore count after the waits");
    if (rank == size - 1) {
        struct timespec t = in_ms(30);
        errno = 0;
        check(sem_timedwait(&s->sem, &t) == -1 && errno == ETIMEDOUT,
              "sem_timedwait on a zero count did not time out");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* A semaphore as a lock, around an MPI wait. */
    if (rank == 0)
        sem_post(&s->sem);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < rounds / 4; i++) {
        check(sem_wait(&s->sem) == 0, "sem_wait as a lock");
        check(++s->inside == 1, "two ranks inside the semaphore's section");
        if (i % 4 == 0)
            usleep(100);
        s->inside--;
        check(sem_post(&s->sem) == 0, "sem_post as a lock");
    }
    MPI_Barrier(MPI_COMM_WORLD);

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all)
        printf("lock_park: %d failures\n", all);
    else if (rank == 0)
        printf("lock_park: %d ranks ok\n", size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        sem_destroy(&s->sem);
        pthread_cond_destroy(&s->cv);
        pthread_cond_destroy(&s->cv_mono);
        pthread_mutex_destroy(&s->normal);
        pthread_mutex_destroy(&s->recursive);
        pthread_mutex_destroy(&s->errorcheck);
    }
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return all != 0;
}
