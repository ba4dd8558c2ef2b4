/*
 * More glibc functions with a static result, with it in this copy of the
 * program (per rank), over the reentrant forms: getspnam, fgetpwent,
 * fgetgrent, fgetspent (RANKC_LOOKUP), getmntent, ether_ntoa, ether_aton.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <mntent.h>
#include <netdb.h>
#include <netinet/ether.h>
#include <pwd.h>
#include <shadow.h>
#include <stdio.h>

#include "rankc.h"

RANKC_WEAK struct spwd *getspnam(const char *name){
    RANKC_LOOKUP(spwd, getspnam_r(name, &res, buf, len, &out), (int *)NULL)}

RANKC_WEAK struct passwd *fgetpwent(FILE *stream){
    RANKC_LOOKUP(passwd, fgetpwent_r(stream, &res, buf, len, &out), (int *)NULL)}

RANKC_WEAK struct group *fgetgrent(FILE *stream){
    RANKC_LOOKUP(group, fgetgrent_r(stream, &res, buf, len, &out), (int *)NULL)}

RANKC_WEAK struct spwd *fgetspent(FILE *stream){
    RANKC_LOOKUP(spwd, fgetspent_r(stream, &res, buf, len, &out), (int *)NULL)}

/* glibc's getmntent reads into a buffer of BUFSIZ (longer lines are cut). */
RANKC_WEAK struct mntent *getmntent(FILE *stream)
{
    static struct mntent res;
    static char buf[BUFSIZ];
    return getmntent_r(stream, &res, buf, sizeof buf);
}

RANKC_WEAK char *ether_ntoa(const struct ether_addr *addr)
{
    static char buf[sizeof "ff:ff:ff:ff:ff:ff"];
    return ether_ntoa_r(addr, buf);
}

RANKC_WEAK struct ether_addr *ether_aton(const char *asc)
{
    static struct ether_addr addr;
    return ether_aton_r(asc, &addr);
}
