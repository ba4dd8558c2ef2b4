/*
 * libc's hidden state per rank (src/rankc, docs/libc-per-rank.md): every rank
 * calls the functions with hidden state (static result buffers, saved
 * positions, shift states, signgam, the hsearch table, the locale, errno) on
 * inputs of its own, and uses each result only after an MPI_Barrier, during
 * which the other ranks (on the same worker with --workers 1 or when
 * oversubscribed) make the same calls. It prints every result, one line each,
 * prefixed by its rank.
 *
 * Built twice: with Loom's mpicc, and with the system's cc and -DREFERENCE,
 * which makes a plain program that runs the same code for ranks 0..N-1, each
 * in a fresh process of its own (fork), with no MPI. libc_compare.sh runs
 * both and compares their lines rank by rank: the expected values are
 * glibc's own in a process, never typed in here.
 *
 * Usage: libc_state            (MPI)
 *        libc_state_ref N      (reference for N ranks)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <mntent.h>
#include <netinet/ether.h>
#include <netdb.h>
#include <pwd.h>
#include <search.h>
#include <shadow.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#ifdef REFERENCE
#include <sys/wait.h>
#define SYNC() ((void)0)
#else
#include <mpi.h>
/* A point where the other ranks run (and would overwrite shared state). */
#define SYNC() MPI_Barrier(MPI_COMM_WORLD)
#endif

static int rank, nranks;

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void out(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (char *p = line; (p = strchr(p, '\n'));)
        *p = '|'; /* ctime's and asctime's newlines */
    printf("%d: %s\n", rank, line);
}

static const char *str(const char *s)
{
    return s ? s : "(null)";
}

static void test_strtok(void)
{
    char buf[64];
    snprintf(buf, sizeof buf, "r%d:alpha,%d;beta,,gamma%d", rank, rank * 7, rank);
    char *t = strtok(buf, ":,;");
    while (t) {
        SYNC();
        out("strtok %s", t);
        t = strtok(NULL, ":,;");
    }
    SYNC();
    out("strtok end");
}

static void print_tm(const char *what, const struct tm *p)
{
    if (!p) {
        out("%s NULL errno %d", what, errno);
        return;
    }
    out("%s %d-%02d-%02d %02d:%02d:%02d wday %d yday %d dst %d off %ld %s", what, p->tm_year + 1900,
        p->tm_mon + 1, p->tm_mday, p->tm_hour, p->tm_min, p->tm_sec, p->tm_wday, p->tm_yday,
        p->tm_isdst, p->tm_gmtoff, str(p->tm_zone));
}

static void test_time(void)
{
    time_t t = 1000000000 + (time_t)rank * 86400 * 37 + rank * 3607;
    time_t t2 = t + 12345 * (rank + 1);
    struct tm *p = localtime(&t);
    SYNC();
    print_tm("localtime", p);
    struct tm *q = gmtime(&t2);
    SYNC();
    out("gmtime same struct as localtime: %d", p == q);
    print_tm("gmtime", q);
    char *c = ctime(&t2);
    SYNC();
    out("ctime %s", str(c));
    print_tm("after ctime, gmtime's result", q);
    char *a = asctime(q);
    SYNC();
    out("asctime %s", str(a));
    out("asctime same buffer as ctime: %d", a == c);
    time_t huge = (time_t)INT64_C(1) << 60;
    errno = 0;
    p = localtime(&huge);
    print_tm("localtime(2^60)", p);
    /* asctime on fields out of their ranges. */
    struct tm odd = {.tm_sec = -5 - rank,
                     .tm_min = 99,
                     .tm_hour = rank,
                     .tm_mday = 100 + rank,
                     .tm_mon = 12 + rank % 2,
                     .tm_year = 100000 * rank,
                     .tm_wday = 7 + rank % 3};
    errno = 0;
    a = asctime(&odd);
    SYNC();
    out("asctime(odd) %s errno %d", str(a), errno);
    odd.tm_year = 2147483647 - 1900 + rank % 2;
    odd.tm_mon = -1;
    errno = 0;
    a = asctime(&odd);
    out("asctime(year max) %s errno %d", str(a), errno);
    errno = 0;
    struct tm *g = getdate("2020-01-01");
    out("getdate %d err %d", g != NULL, getdate_err);
}

static void test_strings(void)
{
    char *s = strerror(rank % 134 + 1);
    SYNC();
    out("strerror %s", s);
    s = strerror(1000 + rank);
    SYNC();
    out("strerror %s", s);
    s = strerror(-rank - 1);
    SYNC();
    out("strerror %s", s);
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    s = strerror_l(2000 + rank, c);
    SYNC();
    out("strerror_l %s", s);
    s = strerror_l(rank % 20, c);
    SYNC();
    out("strerror_l %s", s);
    freelocale(c);
    for (int sig = -1; sig <= 68; sig += 3) {
        s = strsignal((sig + rank) % 70);
        SYNC();
        out("strsignal(%d) %s", (sig + rank) % 70, s);
    }
    struct in_addr in;
    in.s_addr = htonl(0x0a000001u | ((uint32_t)rank << 16) | ((uint32_t)(rank * 7 % 256) << 8));
    s = inet_ntoa(in);
    SYNC();
    out("inet_ntoa %s", s);
    for (long k = 0; k < 5; k++) {
        long v = rank * 123456789L + k * 987654321L - (k == 4 ? 1L << 40 : 0);
        s = l64a(v);
        SYNC();
        out("l64a(%ld) %s", v, s);
    }
    out("l64a(0) '%s'", l64a(0));
}

static void test_db(void)
{
    errno = 0;
    struct passwd *pw = getpwuid((uid_t)(rank % 4));
    SYNC();
    if (pw)
        out("getpwuid %s %d %d %s %s", pw->pw_name, (int)pw->pw_uid, (int)pw->pw_gid, pw->pw_dir,
            pw->pw_shell);
    else
        out("getpwuid NULL errno %d", errno);
    errno = 0;
    struct passwd *pn = getpwnam(rank % 2 ? "root" : "daemon");
    SYNC();
    out("getpwnam %s %d, same struct as getpwuid: %d", pn ? pn->pw_name : "NULL",
        pn ? (int)pn->pw_uid : -1, pn == pw);
    errno = 1234;
    pn = getpwnam("no-such-user-here");
    out("getpwnam(unknown) %p errno %d", (void *)pn, errno);
    errno = 0;
    struct group *gr = getgrgid((gid_t)(rank % 5));
    SYNC();
    if (gr)
        out("getgrgid %s %d first member %s", gr->gr_name, (int)gr->gr_gid, str(gr->gr_mem[0]));
    else
        out("getgrgid NULL errno %d", errno);
    struct group *gn = getgrnam(rank % 2 ? "root" : "bin");
    SYNC();
    out("getgrnam %s %d", gn ? gn->gr_name : "NULL", gn ? (int)gn->gr_gid : -1);
    errno = 1234;
    gn = getgrnam("no-such-group-here");
    out("getgrnam(unknown) %p errno %d", (void *)gn, errno);
    /* Iterations: each rank its own position (glibc's is one per process). */
    if (rank % 3 == 1)
        setpwent();
    int npw = 0;
    for (int i = 0; i < rank % 7; i++)
        npw += getpwent() != NULL;
    for (int i = 0; i < 4; i++) { /* the same number of SYNCs in every rank */
        struct passwd *p = getpwent();
        SYNC();
        out("getpwent %s %d", p ? p->pw_name : "NULL", p ? (int)p->pw_uid : -1);
        npw += p != NULL;
    }
    struct passwd *pa = getpwent(), *pb = getpwent();
    out("getpwent same struct %d", pa == pb && pa);
    int rest = 0;
    while (getpwent())
        rest++;
    out("getpwent rest %d, %d before", rest, npw);
    setpwent();
    pa = getpwent();
    SYNC();
    out("after setpwent %s", pa ? pa->pw_name : "NULL");
    endpwent();
    for (int i = 0; i < rank % 5; i++)
        (void)getgrent();
    for (int i = 0; i < 3; i++) {
        struct group *g = getgrent();
        SYNC();
        out("getgrent %s %d %s", g ? g->gr_name : "NULL", g ? (int)g->gr_gid : -1,
            g && g->gr_mem[0] ? g->gr_mem[0] : "-");
    }
    rest = 0;
    while (getgrent())
        rest++;
    out("getgrent rest %d", rest);
    endgrent();
    struct spwd *sp = getspnam(rank % 2 ? "root" : "daemon");
    SYNC();
    out("getspnam %s max %ld", sp ? sp->sp_namp : "NULL", sp ? sp->sp_max : -2L);
    FILE *f = fopen("/etc/passwd", "r");
    for (int i = 0; f && i < rank % 4; i++)
        (void)fgetpwent(f);
    struct passwd *fp = f ? fgetpwent(f) : NULL;
    SYNC();
    out("fgetpwent %s", fp ? fp->pw_name : "NULL");
    if (f)
        fclose(f);
    f = fopen("/etc/group", "r");
    for (int i = 0; f && i < rank % 5; i++)
        (void)fgetgrent(f);
    struct group *fg = f ? fgetgrent(f) : NULL;
    SYNC();
    out("fgetgrent %s", fg ? fg->gr_name : "NULL");
    if (f)
        fclose(f);
    f = setmntent("/proc/self/mounts", "r");
    for (int i = 0; f && i < rank % 3; i++)
        (void)getmntent(f);
    struct mntent *m = f ? getmntent(f) : NULL;
    SYNC();
    out("getmntent %s %s", m ? m->mnt_dir : "NULL", m ? m->mnt_type : "-");
    if (f)
        endmntent(f);
    struct ether_addr ea = {{0x02, 0, 0, (uint8_t)rank, (uint8_t)(rank * 3), 0xab}};
    char *es = ether_ntoa(&ea);
    SYNC();
    out("ether_ntoa %s", es);
    char asc[32];
    snprintf(asc, sizeof asc, "0:1:2:%x:%x:ff", rank % 256, (rank * 5) % 256);
    struct ether_addr *ep = ether_aton(asc);
    SYNC();
    out("ether_aton %s", ep ? ether_ntoa(ep) : "NULL");
    static const char *const protos[] = {"tcp", "udp", "icmp", "ipv6", "no-such-proto"};
    errno = 0;
    struct protoent *pe = getprotobyname(protos[rank % 5]);
    int e = errno;
    SYNC();
    out("getprotobyname %s %d errno %d", pe ? pe->p_name : "NULL", pe ? pe->p_proto : -1,
        pe ? 0 : e);
    pe = getprotobynumber(rank % 20);
    SYNC();
    out("getprotobynumber %s", pe ? pe->p_name : "NULL");
    static const char *const servs[] = {"http", "ssh", "domain", "ntp", "no-such-service"};
    errno = 0;
    struct servent *se = getservbyname(servs[rank % 5], rank % 2 ? "tcp" : "udp");
    e = errno;
    SYNC();
    out("getservbyname %s %d errno %d", se ? se->s_name : "NULL",
        se ? ntohs((uint16_t)se->s_port) : -1, se ? 0 : e);
    se = getservbyport(htons((uint16_t)(20 + rank)), "tcp");
    SYNC();
    out("getservbyport %s", se ? se->s_name : "NULL");
    h_errno = 0;
    struct hostent *he = gethostbyname(rank % 2 ? "localhost" : "127.0.0.1");
    int he_err = h_errno;
    SYNC();
    out("gethostbyname %s %d h_errno %d", he ? he->h_name : "NULL", he ? he->h_length : -1, he_err);
    struct in_addr lo = {htonl(0x7f000001)};
    he = gethostbyaddr(&lo, sizeof lo, AF_INET);
    SYNC();
    out("gethostbyaddr %s", he ? he->h_name : "NULL");
}

static void test_lgamma(void)
{
    double xs[] = {-(rank + 0.5), rank + 0.25, -rank - 0.75, 0.0, -1.0 * (rank + 1), 1e308, -0.0};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        errno = 0;
        signgam = 42;
        double y = lgamma(xs[i]);
        int e = errno;
        SYNC();
        out("lgamma(%a) %a signgam %d errno %d", xs[i], y, signgam, e);
        errno = 0;
        float yf = lgammaf((float)xs[i]);
        e = errno;
        SYNC();
        out("lgammaf %a signgam %d errno %d", (double)yf, signgam, e);
        errno = 0;
        long double yl = lgammal((long double)xs[i] * 1.5L);
        e = errno;
        SYNC();
        out("lgammal %La signgam %d errno %d", yl, signgam, e);
        errno = 0;
        y = gamma(xs[i] - 0.125);
        e = errno;
        SYNC();
        out("gamma %a signgam %d errno %d", y, signgam, e);
        errno = 0;
        yf = gammaf((float)xs[i] + 0.5f);
        e = errno;
        SYNC();
        out("gammaf %a signgam %d errno %d", (double)yf, signgam, e);
    }
}

static void test_hsearch(void)
{
    static char keys[12][32];
    out("hcreate %d", hcreate(8 + (size_t)rank) != 0);
    out("hcreate again %d", hcreate(100) != 0);
    for (int i = 0; i < 12; i++) {
        snprintf(keys[i], sizeof keys[i], "k%d_%d", rank, i);
        ENTRY e = {keys[i], (void *)(intptr_t)(rank * 100 + i)};
        errno = 0;
        ENTRY *r = hsearch(e, ENTER);
        out("enter %s %d errno %d", keys[i], r != NULL, r ? 0 : errno);
        SYNC();
    }
    for (int i = 0; i < 12; i += 3) {
        char k[32];
        snprintf(k, sizeof k, "k%d_%d", rank, i);
        ENTRY e = {k, NULL};
        ENTRY *r = hsearch(e, FIND);
        SYNC();
        out("find %s %ld", k, r ? (long)(intptr_t)r->data : -1L);
        snprintf(k, sizeof k, "k%d_%d", (rank + 1) % (nranks + 1), i);
        errno = 0;
        r = hsearch(e, FIND);
        int err = r ? 0 : errno;
        SYNC();
        out("find %s %ld errno %d", k, r ? (long)(intptr_t)r->data : -1L, err);
    }
    hdestroy();
    out("hcreate after hdestroy %d", hcreate(4) != 0);
    hdestroy();
}

static void test_cvt(void)
{
    double v = (rank + 1) * 3.14159265358979 * (rank % 2 ? -1 : 1) * pow(10, rank % 9 - 4);
    int decpt, sign;
    for (int nd = 0; nd <= 24; nd += 4) {
        char *s = ecvt(v, nd, &decpt, &sign);
        SYNC();
        out("ecvt(%a,%d) %s %d %d", v, nd, s, decpt, sign);
        s = fcvt(v, nd, &decpt, &sign);
        SYNC();
        out("fcvt(%a,%d) %s %d %d", v, nd, s, decpt, sign);
        s = qecvt((long double)v / 3, nd, &decpt, &sign);
        SYNC();
        out("qecvt %s %d %d", s, decpt, sign);
        s = qfcvt((long double)v / 3, nd, &decpt, &sign);
        SYNC();
        out("qfcvt %s %d %d", s, decpt, sign);
    }
    char *s = fcvt(1e300 * (rank + 1), 5, &decpt, &sign);
    out("fcvt(big) %zu %.20s %d", strlen(s), s, decpt);
    s = ecvt(1.0 / 3.0, 40, &decpt, &sign);
    out("ecvt(1/3,40) %s %d", s, decpt);
}

static void test_term(void)
{
    char *t = tmpnam(NULL);
    char copy[L_tmpnam + 1];
    snprintf(copy, sizeof copy, "%s", str(t));
    SYNC();
    out("tmpnam kept %d prefix %d", t && strcmp(t, copy) == 0,
        t && strncmp(t, P_tmpdir, strlen(P_tmpdir)) == 0);
    out("tmpnam same buffer %d", tmpnam(NULL) == t);
    char mine[L_tmpnam];
    out("tmpnam(buf) returns buf %d", tmpnam(mine) == mine);
    out("ctermid %s", ctermid(NULL));
    errno = 0;
    char *tty = ttyname(100 + rank);
    out("ttyname(bad fd) %s errno %d", str(tty), errno);
    errno = 0;
    tty = ttyname(0); /* stdin is /dev/null or a pipe in the tests */
    out("ttyname(0) %s errno %d", str(tty), errno);
    errno = 0;
    char *p = ptsname(-1);
    out("ptsname(-1) %s errno %d", str(p), errno);
}

static void test_mb(void)
{
    out("setlocale %s", str(setlocale(LC_CTYPE, "C.UTF-8")));
    /* Each rank feeds its own 3-byte character one byte at a time. */
    wchar_t want = (wchar_t)(0x4e00 + rank);
    char mb[8];
    mbstate_t st;
    memset(&st, 0, sizeof st);
    size_t n = wcrtomb(mb, want, &st);
    out("wcrtomb %zu", n);
    wchar_t wc = 0;
    for (size_t i = 0; i < n; i++) {
        size_t r = mbrtowc(&wc, mb + i, 1, NULL);
        SYNC();
        out("mbrtowc byte %zu: %zd wc %x", i, (ssize_t)r, r == 1 ? (unsigned)wc : 0);
    }
    for (size_t i = 0; i < n; i++) {
        size_t r = mbrlen(mb + i, 1, NULL);
        SYNC();
        out("mbrlen byte %zu: %zd", i, (ssize_t)r);
    }
    /* wcrtomb with no state, mbsrtowcs and wcsrtombs with no state. */
    char o[8];
    n = wcrtomb(o, (wchar_t)(0xe9 + rank), NULL);
    SYNC();
    out("wcrtomb(NULL ps) %zu %02x", n, (unsigned char)o[0]);
    const char *src = mb;
    char two[8];
    memcpy(two, mb, 3);
    two[3] = '\0';
    src = two;
    wchar_t wbuf[4];
    n = mbsrtowcs(wbuf, &src, 4, NULL);
    SYNC();
    out("mbsrtowcs %zd %x", (ssize_t)n, (unsigned)wbuf[0]);
    src = two;
    n = mbsnrtowcs(wbuf, &src, 2, 4, NULL); /* stops inside the character */
    SYNC();
    out("mbsnrtowcs(2 bytes) %zd", (ssize_t)n);
    src = two + 2;
    n = mbsnrtowcs(wbuf, &src, 2, 4, NULL); /* completes it from the state */
    SYNC();
    out("mbsnrtowcs(rest) %zd %x", (ssize_t)n, n != (size_t)-1 && n > 0 ? (unsigned)wbuf[0] : 0);
    wchar_t ws[2] = {want, 0};
    const wchar_t *wsrc = ws;
    char cb[16];
    n = wcsrtombs(cb, &wsrc, sizeof cb, NULL);
    SYNC();
    out("wcsrtombs %zd", (ssize_t)n);
    wsrc = ws;
    n = wcsnrtombs(cb, &wsrc, 1, sizeof cb, NULL);
    SYNC();
    out("wcsnrtombs %zd", (ssize_t)n);
    /* mblen, mbtowc, wctomb: hidden states too. */
    out("mblen(NULL) %d mbtowc(NULL) %d wctomb(NULL) %d", mblen(NULL, 0), mbtowc(NULL, NULL, 0),
        wctomb(NULL, 0));
    for (size_t i = 0; i < 3; i++) {
        int r = mblen(mb + i, 1);
        SYNC();
        out("mblen byte %zu: %d", i, r);
    }
    out("mblen whole %d", mblen(mb, 3));
    for (size_t i = 0; i < 3; i++) {
        wc = 0;
        int r = mbtowc(&wc, mb + i, 1);
        SYNC();
        out("mbtowc byte %zu: %d", i, r);
    }
    wc = 0;
    int r = mbtowc(&wc, mb, 3);
    out("mbtowc whole %d %x", r, (unsigned)wc);
    out("wctomb %d", wctomb(o, want));
    out("MB_CUR_MAX %zu", MB_CUR_MAX);
}

static void print_lconv(void)
{
    struct lconv *l = localeconv();
    SYNC();
    out("localeconv '%s' '%s' %zu '%s' '%s' '%s' %d %d %d %d", l->decimal_point, l->thousands_sep,
        strlen(l->grouping), l->int_curr_symbol, l->currency_symbol, l->mon_decimal_point,
        l->int_frac_digits, l->frac_digits, l->p_sign_posn, l->int_n_sep_by_space);
}

static void test_locale(void)
{
    const char *want = rank % 2 ? "C.UTF-8" : "POSIX";
    char *r = setlocale(rank % 3 == 0 ? LC_ALL : LC_CTYPE, want);
    SYNC();
    out("setlocale(%s) %s", want, str(r));
    r = setlocale(LC_ALL, NULL);
    SYNC();
    out("LC_ALL %s", str(r));
    char saved[512];
    snprintf(saved, sizeof saved, "%s", str(r));
    out("LC_CTYPE %s LC_NUMERIC %s", str(setlocale(LC_CTYPE, NULL)),
        str(setlocale(LC_NUMERIC, NULL)));
    SYNC();
    out("codeset %s MB_CUR_MAX %zu", nl_langinfo(CODESET), MB_CUR_MAX);
    print_lconv();
    r = setlocale(LC_MESSAGES, "no_such_locale");
    out("setlocale(bad) %s LC_ALL %s", str(r), str(setlocale(LC_ALL, NULL)));
    r = setlocale(LC_TIME, rank % 2 ? "C.utf8" : "C");
    SYNC();
    out("setlocale(LC_TIME) %s LC_ALL %s", str(r), str(setlocale(LC_ALL, NULL)));
    r = setlocale(LC_ALL, "");
    SYNC();
    out("setlocale(\"\") %s", str(r));
    out("codeset %s", nl_langinfo(CODESET));
    r = setlocale(LC_ALL, saved);
    SYNC();
    out("restore %s", str(r));
    out("LC_ALL %s codeset %s", str(setlocale(LC_ALL, NULL)), nl_langinfo(CODESET));
    print_lconv();
    r = setlocale(LC_ALL, "C");
    out("back to C %s codeset %s", str(r), nl_langinfo(CODESET));
}

static void test_errno(void)
{
    for (int i = 0; i < 3; i++) {
        errno = 1000 + rank * 10 + i;
        SYNC();
        out("errno %d", errno);
    }
    /* A ring: each rank blocks in MPI_Recv with its errno set while the
     * others (on its worker too) set theirs before blocking. */
    errno = 2000 + rank;
#ifndef REFERENCE
    int token = 0;
    if (nranks > 1) {
        if (rank == 0)
            MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
        errno = 2000 + rank;
        MPI_Recv(&token, 1, MPI_INT, (rank + nranks - 1) % nranks, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        int e = errno;
        if (rank != 0)
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % nranks, 7, MPI_COMM_WORLD);
        errno = e;
    }
#endif
    out("errno after a blocking receive %d", errno);
}

static void run(void)
{
    test_strtok();
    test_time();
    test_strings();
    test_db();
    test_lgamma();
    test_hsearch();
    test_cvt();
    test_term();
    test_mb();
    test_locale();
    test_errno();
    fflush(stdout);
}

#ifdef REFERENCE
int main(int argc, char **argv)
{
    nranks = argc > 1 ? atoi(argv[1]) : 1;
    for (rank = 0; rank < nranks; rank++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            run();
            exit(0);
        }
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "libc_state_ref: rank %d failed\n", rank);
            return 1;
        }
    }
    return 0;
}
#else
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    run();
    MPI_Finalize();
    return 0;
}
#endif
