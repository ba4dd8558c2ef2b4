/*
 * getpwnam, getpwuid, getgrnam and getgrgid with their results in this copy of
 * the program (per rank): each has its own struct and string buffer, as in
 * glibc, filled by the reentrant form with the buffer grown while it reports
 * ERANGE (RANKC_LOOKUP). Not found: NULL, errno as glibc leaves it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <netdb.h>
#include <pwd.h>

#include "rankc.h"

RANKC_WEAK struct passwd *getpwnam(const char *name){
    RANKC_LOOKUP(passwd, getpwnam_r(name, &res, buf, len, &out), (int *)NULL)}

RANKC_WEAK struct passwd *getpwuid(uid_t uid){
    RANKC_LOOKUP(passwd, getpwuid_r(uid, &res, buf, len, &out), (int *)NULL)}

RANKC_WEAK struct group *getgrnam(const char *name){
    RANKC_LOOKUP(group, getgrnam_r(name, &res, buf, len, &out), (int *)NULL)}

RANKC_WEAK struct group *getgrgid(gid_t gid)
{
    RANKC_LOOKUP(group, getgrgid_r(gid, &res, buf, len, &out), (int *)NULL)
}
