/*
 * l64a with its result buffer in this copy of the program (per rank): the low
 * 32 bits of the value in radix 64, least significant digit first, digits
 * "./0-9A-Za-z", no trailing zero digits ("" for 0).
 */
#include <stdlib.h>

#include "rankc.h"

RANKC_WEAK char *l64a(long n)
{
    static const char digits[] = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    static char buf[7];
    unsigned long v = (unsigned long)n & 0xffffffffUL;
    int i = 0;
    for (; v != 0; v >>= 6)
        buf[i++] = digits[v & 63];
    buf[i] = '\0';
    return buf;
}
