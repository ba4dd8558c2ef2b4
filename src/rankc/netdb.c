/*
 * The netdb lookups with their results in this copy of the program (per
 * rank), over the reentrant forms (RANKC_LOOKUP): gethostbyname,
 * gethostbyname2, gethostbyaddr, getnetbyname, getnetbyaddr, getprotobyname,
 * getprotobynumber, getservbyname, getservbyport. Each has its own struct and
 * buffer, as in glibc; the host and network lookups set h_errno on failure.
 * h_errno itself is libc's, one per worker thread (docs/libc-per-rank.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <sys/socket.h>

#include "rankc.h"

RANKC_WEAK struct hostent *gethostbyname(const char *name)
{
    int herr = 0;
    RANKC_LOOKUP(hostent, gethostbyname_r(name, &res, buf, len, &out, &herr), &herr)
}

RANKC_WEAK struct hostent *gethostbyname2(const char *name, int af)
{
    int herr = 0;
    RANKC_LOOKUP(hostent, gethostbyname2_r(name, af, &res, buf, len, &out, &herr), &herr)
}

RANKC_WEAK struct hostent *gethostbyaddr(const void *addr, socklen_t alen, int type)
{
    int herr = 0;
    RANKC_LOOKUP(hostent, gethostbyaddr_r(addr, alen, type, &res, buf, len, &out, &herr), &herr)
}

RANKC_WEAK struct netent *getnetbyname(const char *name)
{
    int herr = 0;
    RANKC_LOOKUP(netent, getnetbyname_r(name, &res, buf, len, &out, &herr), &herr)
}

RANKC_WEAK struct netent *getnetbyaddr(uint32_t net, int type)
{
    int herr = 0;
    RANKC_LOOKUP(netent, getnetbyaddr_r(net, type, &res, buf, len, &out, &herr), &herr)
}

RANKC_WEAK struct protoent *getprotobyname(const char *name){
    RANKC_LOOKUP(protoent, getprotobyname_r(name, &res, buf, len, &out), (int *)NULL)}

RANKC_WEAK struct protoent *getprotobynumber(int proto){
    RANKC_LOOKUP(protoent, getprotobynumber_r(proto, &res, buf, len, &out), (int *)NULL)}

RANKC_WEAK struct servent *getservbyname(const char *name, const char *proto){
    RANKC_LOOKUP(servent, getservbyname_r(name, proto, &res, buf, len, &out), (int *)NULL)}

RANKC_WEAK struct servent *getservbyport(int port, const char *proto)
{
    RANKC_LOOKUP(servent, getservbyport_r(port, proto, &res, buf, len, &out), (int *)NULL)
}
