/*
 * hcreate, hsearch and hdestroy with the table in this copy of the program
 * (per rank), over glibc's reentrant forms.
 */
#define _GNU_SOURCE
#include <search.h>

#include "rankc.h"

static struct hsearch_data htab;

RANKC_WEAK int hcreate(size_t nel)
{
    return hcreate_r(nel, &htab);
}

RANKC_WEAK ENTRY *hsearch(ENTRY item, ACTION action)
{
    ENTRY *found;
    (void)hsearch_r(item, action, &found, &htab);
    return found;
}

RANKC_WEAK void hdestroy(void)
{
    hdestroy_r(&htab);
}
