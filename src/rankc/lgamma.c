/*
 * signgam and the lgamma family with signgam in this copy of the program (per
 * rank). Each function is libm's reentrant form with this copy's sign, so
 * values and errno are glibc's own. gamma, gammaf and gammal are glibc's old
 * names of lgamma, lgammaf and lgammal.
 *
 * Unlike glibc's (which sets an internal __signgam whose weak alias signgam
 * is), signgam here is a plain definition: binutils 2.40's ld crashes linking
 * the program when a weak definition here overrides libm's. So a program that
 * defines its own signgam (ISO C allows it) gets a multiple-definition error.
 *
 * This member is always linked (app_crt.c refers to loom_rankc_lgamma_anchor):
 * a program linked with -lm before the archive would otherwise take libm's
 * definitions. So libm's functions are weak references (a program that does
 * not link libm still links), looked up in libm when the program lacks them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <math.h>
#include <stddef.h>

#include "rankc.h"

int signgam;
const char loom_rankc_lgamma_anchor = 0;

#pragma weak lgamma_r
#pragma weak lgammaf_r
#pragma weak lgammal_r

static void *libm_sym(const char *name)
{
    void *m = dlopen(LIBM_SO, RTLD_LAZY);
    return m ? dlsym(m, name) : NULL;
}

RANKC_WEAK double lgamma(double x)
{
    double (*f)(double, int *) =
        lgamma_r ? lgamma_r : (double (*)(double, int *))libm_sym("lgamma_r");
    return f(x, &signgam);
}

RANKC_WEAK float lgammaf(float x)
{
    float (*f)(float, int *) =
        lgammaf_r ? lgammaf_r : (float (*)(float, int *))libm_sym("lgammaf_r");
    return f(x, &signgam);
}

RANKC_WEAK long double lgammal(long double x)
{
    long double (*f)(long double, int *) =
        lgammal_r ? lgammal_r : (long double (*)(long double, int *))libm_sym("lgammal_r");
    return f(x, &signgam);
}

RANKC_WEAK double gamma(double x)
{
    return lgamma(x);
}

RANKC_WEAK float gammaf(float x)
{
    return lgammaf(x);
}

RANKC_WEAK long double gammal(long double x)
{
    return lgammal(x);
}
