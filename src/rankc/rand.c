/*
 * rand, srand, random, srandom, initstate and setstate with their generator
 * in this copy of the program (per rank).
 *
 * glibc keeps one generator for the process: a struct random_data over a
 * 128-byte table of type 3, as if from initstate(1, table, 128). Here each
 * copy has its own table and struct random_data, set up the same way on
 * first use, and glibc's own reentrant functions (random_r, srandom_r,
 * initstate_r, setstate_r) do the arithmetic. The numbers, the words left in
 * a caller's state buffer (type and rear index in word 0) and the old-state
 * pointers that initstate and setstate return are therefore glibc's, and so
 * is the errno of a refused size or state. A lock per copy keeps the
 * generator whole when a rank runs threads of its own, as glibc's lock does.
 *
 * The definitions are weak: a program that defines some of these names itself
 * keeps its own, and the others still link without a duplicate definition.
 */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "rankc.h"

/* The default table: 32 words, 128 bytes, as glibc's. */
static int32_t default_table[32];
static struct random_data gen;
static pthread_mutex_t gen_lock = PTHREAD_MUTEX_INITIALIZER;

/* Locks the generator, setting up the default one on first use. */
static void gen_enter(void)
{
    pthread_mutex_lock(&gen_lock);
    if (!gen.state)
        initstate_r(1, (char *)default_table, sizeof default_table, &gen);
}

static void gen_leave(void)
{
    pthread_mutex_unlock(&gen_lock);
}

/* The buffer that initstate/setstate returned or were given for the current state. */
static char *gen_buffer(void)
{
    return (char *)(gen.state - 1);
}

RANKC_WEAK long random(void)
{
    int32_t r;
    gen_enter();
    random_r(&gen, &r);
    gen_leave();
    return r;
}

RANKC_WEAK int rand(void)
{
    return (int)random();
}

RANKC_WEAK void srandom(unsigned int seed)
{
    gen_enter();
    srandom_r(seed, &gen);
    gen_leave();
}

RANKC_WEAK void srand(unsigned int seed)
{
    srandom(seed);
}

RANKC_WEAK char *initstate(unsigned int seed, char *state, size_t size)
{
    gen_enter();
    char *old = gen_buffer();
    int rc = initstate_r(seed, state, size, &gen);
    gen_leave();
    return rc == 0 ? old : NULL;
}

RANKC_WEAK char *setstate(char *state)
{
    gen_enter();
    char *old = gen_buffer();
    int rc = setstate_r(state, &gen);
    gen_leave();
    return rc == 0 ? old : NULL;
}
