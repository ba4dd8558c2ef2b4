/*
 * The drand48 family with its state in this copy of the program (per rank):
 * drand48, erand48, lrand48, nrand48, mrand48, jrand48, srand48, seed48 and
 * lcong48.
 *
 * POSIX defines the generator exactly: X(n+1) = (a X(n) + c) mod 2^48, with
 * a = 0x5DEECE66D and c = 0xB until lcong48 sets others. The hidden state is
 * X, a and c (erand48, nrand48 and jrand48 bring their own X but use the
 * hidden a and c, so those are per rank too) and seed48's copy of the
 * previous X. Results:
 *   drand48/erand48  X / 2^48, exact in a double (48 < 53 bits), so the bits
 *                    are those of glibc's 1.<X as mantissa> - 1.0;
 *   lrand48/nrand48  the top 31 bits of X, in [0, 2^31);
 *   mrand48/jrand48  the top 32 bits of X as a signed 32-bit value.
 * srand48 takes the low 32 bits of its argument as the high bits of X and
 * 0x330E as the low 16. glibc's family takes no lock, nor does this one.
 * The definitions are weak, as in rand.c.
 */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rankc.h"

#define A_DEFAULT 0x5deece66dULL
#define C_DEFAULT 0xb

static unsigned short x_main[3] = {0, 0, 0}; /* X as 16-bit words, least significant first */
static unsigned short x_old[3];              /* what seed48 returns */
static uint64_t mult = A_DEFAULT;
static unsigned short addend = C_DEFAULT;

/* Steps the generator whose X is xsubi; returns the new X (48 bits). */
static uint64_t step(unsigned short xsubi[3])
{
    uint64_t x = (uint64_t)xsubi[2] << 32 | (uint64_t)xsubi[1] << 16 | xsubi[0];
    x = (x * mult + addend) & 0xffffffffffffULL;
    xsubi[0] = (unsigned short)x;
    xsubi[1] = (unsigned short)(x >> 16);
    xsubi[2] = (unsigned short)(x >> 32);
    return x;
}

static void reset_parameters(void)
{
    mult = A_DEFAULT;
    addend = C_DEFAULT;
}

RANKC_WEAK double erand48(unsigned short xsubi[3])
{
    return (double)step(xsubi) * 0x1p-48;
}

RANKC_WEAK double drand48(void)
{
    return erand48(x_main);
}

RANKC_WEAK long nrand48(unsigned short xsubi[3])
{
    return (long)(step(xsubi) >> 17);
}

RANKC_WEAK long lrand48(void)
{
    return nrand48(x_main);
}

RANKC_WEAK long jrand48(unsigned short xsubi[3])
{
    return (long)(int32_t)(uint32_t)(step(xsubi) >> 16);
}

RANKC_WEAK long mrand48(void)
{
    return jrand48(x_main);
}

RANKC_WEAK void srand48(long seedval)
{
    uint32_t s = (uint32_t)seedval;
    x_main[2] = (unsigned short)(s >> 16);
    x_main[1] = (unsigned short)s;
    x_main[0] = 0x330e;
    reset_parameters();
}

RANKC_WEAK unsigned short *seed48(unsigned short seed16v[3])
{
    memcpy(x_old, x_main, sizeof x_old);
    memcpy(x_main, seed16v, sizeof x_main);
    reset_parameters();
    return x_old;
}

RANKC_WEAK void lcong48(unsigned short param[7])
{
    memcpy(x_main, param, sizeof x_main);
    mult = (uint64_t)param[5] << 32 | (uint64_t)param[4] << 16 | param[3];
    addend = param[6];
}
