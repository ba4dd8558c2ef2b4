/*
 * inet_ntoa with its result buffer in this copy of the program (per rank).
 */
#include <arpa/inet.h>
#include <stdio.h>

#include "rankc.h"

RANKC_WEAK char *inet_ntoa(struct in_addr in)
{
    static char buf[sizeof "255.255.255.255"];
    const unsigned char *b = (const unsigned char *)&in.s_addr;
    snprintf(buf, sizeof buf, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
    return buf;
}
