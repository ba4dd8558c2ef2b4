/*
 * The conversion functions with a hidden shift state, with that state in this
 * copy of the program (per rank): mblen, mbtowc and wctomb, and mbrlen,
 * mbrtowc, wcrtomb, mbsrtowcs, wcsrtombs, mbsnrtowcs and wcsnrtombs when given
 * no state (ps == NULL). Each has its own state, as in glibc.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "rankc.h"

static mbstate_t mblen_st, mbtowc_st, wctomb_st;
static mbstate_t mbrlen_st, mbrtowc_st, wcrtomb_st, mbsrtowcs_st, wcsrtombs_st, mbsnrtowcs_st,
    wcsnrtombs_st;

/* mblen(NULL, 0) and its kin say whether the encoding has shift states:
 * none of glibc's locales has (localedef refuses stateful charsets). */
static int stateful(void)
{
    return 0;
}

RANKC_WEAK int mblen(const char *s, size_t n)
{
    if (!s) {
        memset(&mblen_st, 0, sizeof mblen_st);
        return stateful();
    }
    if (*s == '\0')
        return 0;
    /* An incomplete character does not stay (as glibc's does not). */
    size_t r = mbrtowc(NULL, s, n, &mblen_st);
    if (r == (size_t)-1 || r == (size_t)-2) {
        memset(&mblen_st, 0, sizeof mblen_st);
        return -1;
    }
    return (int)r;
}

RANKC_WEAK int mbtowc(wchar_t *pwc, const char *s, size_t n)
{
    if (!s) {
        memset(&mbtowc_st, 0, sizeof mbtowc_st);
        return stateful();
    }
    /* An incomplete character stays in the state (as glibc's does). */
    size_t r = mbrtowc(pwc, s, n, &mbtowc_st);
    return r == (size_t)-1 || r == (size_t)-2 ? -1 : (int)r;
}

RANKC_WEAK int wctomb(char *s, wchar_t wc)
{
    if (!s) {
        memset(&wctomb_st, 0, sizeof wctomb_st);
        return stateful();
    }
    size_t r = wcrtomb(s, wc, &wctomb_st);
    return r == (size_t)-1 ? -1 : (int)r;
}

RANKC_WEAK size_t mbrlen(const char *restrict s, size_t n, mbstate_t *restrict ps)
{
    return mbrtowc(NULL, s, n, ps ? ps : &mbrlen_st);
}

/* The functions below call libc's own definition (the name here is ours). */
#define LIBC(F) ((__typeof__(&F))loom_rankc_libc(#F))

RANKC_WEAK size_t mbrtowc(wchar_t *restrict pwc, const char *restrict s, size_t n,
                          mbstate_t *restrict ps)
{
    static __typeof__(&mbrtowc) f;
    if (!f)
        f = LIBC(mbrtowc);
    return f(pwc, s, n, ps ? ps : &mbrtowc_st);
}

RANKC_WEAK size_t wcrtomb(char *restrict s, wchar_t wc, mbstate_t *restrict ps)
{
    static __typeof__(&wcrtomb) f;
    if (!f)
        f = LIBC(wcrtomb);
    return f(s, wc, ps ? ps : &wcrtomb_st);
}

RANKC_WEAK size_t mbsrtowcs(wchar_t *restrict dst, const char **restrict src, size_t len,
                            mbstate_t *restrict ps)
{
    static __typeof__(&mbsrtowcs) f;
    if (!f)
        f = LIBC(mbsrtowcs);
    return f(dst, src, len, ps ? ps : &mbsrtowcs_st);
}

RANKC_WEAK size_t wcsrtombs(char *restrict dst, const wchar_t **restrict src, size_t len,
                            mbstate_t *restrict ps)
{
    static __typeof__(&wcsrtombs) f;
    if (!f)
        f = LIBC(wcsrtombs);
    return f(dst, src, len, ps ? ps : &wcsrtombs_st);
}

RANKC_WEAK size_t mbsnrtowcs(wchar_t *restrict dst, const char **restrict src, size_t nms,
                             size_t len, mbstate_t *restrict ps)
{
    static __typeof__(&mbsnrtowcs) f;
    if (!f)
        f = LIBC(mbsnrtowcs);
    return f(dst, src, nms, len, ps ? ps : &mbsnrtowcs_st);
}

RANKC_WEAK size_t wcsnrtombs(char *restrict dst, const wchar_t **restrict src, size_t nwc,
                             size_t len, mbstate_t *restrict ps)
{
    static __typeof__(&wcsnrtombs) f;
    if (!f)
        f = LIBC(wcsnrtombs);
    return f(dst, src, nwc, len, ps ? ps : &wcsnrtombs_st);
}

/* The names that glibc's headers call instead: mbrlen's inline form (with
 * optimization) calls __mbrlen when ps is NULL, and _FORTIFY_SOURCE calls the
 * checking forms, which fail as glibc's do when the buffer is too small. */
RANKC_WEAK size_t __mbrlen(const char *restrict s, size_t n, mbstate_t *restrict ps)
{
    return mbrlen(s, n, ps);
}

void __chk_fail(void) __attribute__((noreturn));
int __wctomb_chk(char *s, wchar_t wc, size_t buflen);
size_t __wcrtomb_chk(char *restrict s, wchar_t wc, mbstate_t *restrict ps, size_t buflen);
size_t __mbsrtowcs_chk(wchar_t *restrict dst, const char **restrict src, size_t len,
                       mbstate_t *restrict ps, size_t dstlen);
size_t __wcsrtombs_chk(char *restrict dst, const wchar_t **restrict src, size_t len,
                       mbstate_t *restrict ps, size_t dstlen);
size_t __mbsnrtowcs_chk(wchar_t *restrict dst, const char **restrict src, size_t nms, size_t len,
                        mbstate_t *restrict ps, size_t dstlen);
size_t __wcsnrtombs_chk(char *restrict dst, const wchar_t **restrict src, size_t nwc, size_t len,
                        mbstate_t *restrict ps, size_t dstlen);

RANKC_WEAK int __wctomb_chk(char *s, wchar_t wc, size_t buflen)
{
    if (buflen < MB_CUR_MAX)
        __chk_fail();
    return wctomb(s, wc);
}

RANKC_WEAK size_t __wcrtomb_chk(char *restrict s, wchar_t wc, mbstate_t *restrict ps, size_t buflen)
{
    if (buflen < MB_CUR_MAX)
        __chk_fail();
    return wcrtomb(s, wc, ps);
}

RANKC_WEAK size_t __mbsrtowcs_chk(wchar_t *restrict dst, const char **restrict src, size_t len,
                                  mbstate_t *restrict ps, size_t dstlen)
{
    if (dstlen < len)
        __chk_fail();
    return mbsrtowcs(dst, src, len, ps);
}

RANKC_WEAK size_t __wcsrtombs_chk(char *restrict dst, const wchar_t **restrict src, size_t len,
                                  mbstate_t *restrict ps, size_t dstlen)
{
    if (dstlen < len)
        __chk_fail();
    return wcsrtombs(dst, src, len, ps);
}

RANKC_WEAK size_t __mbsnrtowcs_chk(wchar_t *restrict dst, const char **restrict src, size_t nms,
                                   size_t len, mbstate_t *restrict ps, size_t dstlen)
{
    if (dstlen < len)
        __chk_fail();
    return mbsnrtowcs(dst, src, nms, len, ps);
}

RANKC_WEAK size_t __wcsnrtombs_chk(char *restrict dst, const wchar_t **restrict src, size_t nwc,
                                   size_t len, mbstate_t *restrict ps, size_t dstlen)
{
    if (dstlen < len)
        __chk_fail();
    return wcsnrtombs(dst, src, nwc, len, ps);
}
