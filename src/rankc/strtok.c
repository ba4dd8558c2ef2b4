/*
 * strtok, with its saved position in this copy of the program (per rank).
 * glibc's strtok keeps one position for the process; strtok_r does the same
 * work with the position passed in, so the result is glibc's own.
 */
#include <string.h>

#include "rankc.h"

static char *strtok_pos;

RANKC_WEAK char *strtok(char *restrict s, const char *restrict delim)
{
    return strtok_r(s, delim, &strtok_pos);
}
