/* A shared library the tests link: loaded once per job, so its state is
 * shared by all ranks (the limit of per-rank globals, on purpose here). It
 * gives the tests a way to observe other ranks without point-to-point. */
#include <stdatomic.h>

#define ROUNDS 4096
static _Atomic int arrivals[ROUNDS];
static _Atomic int ctor_runs;

int shared_arrive(int round);
int shared_count(int round);
int shared_note_ctor(void);
int shared_ctor_runs(void);

int shared_arrive(int round)
{
    return atomic_fetch_add(&arrivals[round % ROUNDS], 1) + 1;
}

int shared_count(int round)
{
    return atomic_load(&arrivals[round % ROUNDS]);
}

int shared_note_ctor(void)
{
    return atomic_fetch_add(&ctor_runs, 1) + 1;
}

int shared_ctor_runs(void)
{
    return atomic_load(&ctor_runs);
}
