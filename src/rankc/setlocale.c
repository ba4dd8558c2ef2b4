/*
 * setlocale and localeconv per rank.
 *
 * Under mpiexec, a rank's setlocale builds the rank's own locale_t (newlocale
 * over a copy of its previous one) and asks the runtime to install it with
 * uselocale whenever the rank runs (loom_rankc_use_locale): everything that
 * reads the current locale (printf's decimal point, strtod, isalpha, strcoll,
 * MB_CUR_MAX, messages) then sees the rank's locale, and the global locale
 * stays "C" for the ranks that never called setlocale, as in their own
 * processes. Queries return the rank's category names, LC_ALL's composed as
 * glibc composes them ("LC_CTYPE=...;LC_NUMERIC=...;..." when they differ),
 * and such a composite name is accepted back. In a program run directly, and
 * on a thread that a rank started (it has no ULT to install a locale on),
 * glibc's setlocale is used: it changes the global locale, which the ranks
 * that never called setlocale use.
 *
 * localeconv fills a struct lconv of this copy from the current locale
 * (glibc's is one struct for the process).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "rankc.h"

#define NCATS (LC_IDENTIFICATION + 1)

static const char *const cat_names[NCATS] = {
    [LC_CTYPE] = "LC_CTYPE",
    [LC_NUMERIC] = "LC_NUMERIC",
    [LC_TIME] = "LC_TIME",
    [LC_COLLATE] = "LC_COLLATE",
    [LC_MONETARY] = "LC_MONETARY",
    [LC_MESSAGES] = "LC_MESSAGES",
    [LC_ALL] = "LC_ALL",
    [LC_PAPER] = "LC_PAPER",
    [LC_NAME] = "LC_NAME",
    [LC_ADDRESS] = "LC_ADDRESS",
    [LC_TELEPHONE] = "LC_TELEPHONE",
    [LC_MEASUREMENT] = "LC_MEASUREMENT",
    [LC_IDENTIFICATION] = "LC_IDENTIFICATION",
};

static const int cat_masks[NCATS] = {
    [LC_CTYPE] = LC_CTYPE_MASK,
    [LC_NUMERIC] = LC_NUMERIC_MASK,
    [LC_TIME] = LC_TIME_MASK,
    [LC_COLLATE] = LC_COLLATE_MASK,
    [LC_MONETARY] = LC_MONETARY_MASK,
    [LC_MESSAGES] = LC_MESSAGES_MASK,
    [LC_ALL] = LC_ALL_MASK,
    [LC_PAPER] = LC_PAPER_MASK,
    [LC_NAME] = LC_NAME_MASK,
    [LC_ADDRESS] = LC_ADDRESS_MASK,
    [LC_TELEPHONE] = LC_TELEPHONE_MASK,
    [LC_MEASUREMENT] = LC_MEASUREMENT_MASK,
    [LC_IDENTIFICATION] = LC_IDENTIFICATION_MASK,
};

static locale_t rank_locale; /* NULL until this rank calls setlocale */
static char *all_name;       /* LC_ALL's name when the categories differ */

static const char *cat_name_in(int cat, locale_t loc)
{
    return nl_langinfo_l(_NL_LOCALE_NAME(cat), loc);
}

/* Recomputes LC_ALL's name for `loc` (as glibc, at every change: a name that
 * setlocale returned stays valid until the next change). */
static void compose_all(locale_t loc)
{
    size_t len = 1;
    bool same = true;
    for (int c = 0; c < NCATS; c++) {
        if (c == LC_ALL)
            continue;
        len += strlen(cat_names[c]) + 2 + strlen(cat_name_in(c, loc));
        same = same && strcmp(cat_name_in(c, loc), cat_name_in(LC_CTYPE, loc)) == 0;
    }
    free(all_name);
    all_name = NULL;
    if (same || !(all_name = malloc(len)))
        return;
    char *p = all_name;
    for (int c = 0; c < NCATS; c++) {
        if (c == LC_ALL)
            continue;
        if (p != all_name)
            *p++ = ';';
        p = stpcpy(stpcpy(stpcpy(p, cat_names[c]), "="), cat_name_in(c, loc));
    }
}

/* The name setlocale(cat, NULL) gives: the category's name lives in `loc`
 * (until it is freed at the next change), LC_ALL's when mixed in all_name. */
static char *name_of(int cat, locale_t loc)
{
    if (cat == LC_ALL && all_name && loc == rank_locale)
        return all_name;
    return (char *)cat_name_in(cat == LC_ALL ? LC_CTYPE : cat, loc);
}

/* newlocale for a composite LC_ALL name: each LC_X=name in turn. */
static locale_t new_composite(const char *name, locale_t base)
{
    char *copy = strdup(name), *save = NULL;
    if (!copy)
        return NULL;
    locale_t loc = base;
    for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(tok, '=');
        int cat = -1;
        if (eq) {
            *eq = '\0';
            for (int c = 0; c < NCATS; c++)
                if (c != LC_ALL && strcmp(tok, cat_names[c]) == 0)
                    cat = c;
        }
        locale_t next = cat >= 0 ? newlocale(cat_masks[cat], eq + 1, loc) : NULL;
        if (!next) {
            if (loc != base)
                freelocale(loc);
            free(copy);
            if (cat < 0)
                errno = EINVAL;
            return NULL;
        }
        loc = next;
    }
    free(copy);
    return loc;
}

RANKC_WEAK char *setlocale(int cat, const char *name)
{
    if (rankc_hosted() != 2 || !loom_rankc_use_locale) {
        static char *(*libc_setlocale)(int, const char *);
        if (!libc_setlocale)
            libc_setlocale = (char *(*)(int, const char *))loom_rankc_libc("setlocale");
        return libc_setlocale(cat, name);
    }
    if (cat < 0 || cat >= NCATS) {
        errno = EINVAL;
        return NULL;
    }
    locale_t cur = rank_locale ? rank_locale : LC_GLOBAL_LOCALE;
    if (!name)
        return name_of(cat, cur);
    locale_t loc;
    if (cat == LC_ALL && !strchr(name, ';')) {
        /* No base: glibc's newlocale returns its static C locale for
         * LC_ALL_MASK and "C" without freeing the base it was given. */
        loc = newlocale(LC_ALL_MASK, name, (locale_t)0);
    } else {
        locale_t base = duplocale(cur);
        if (!base)
            return NULL;
        loc = cat == LC_ALL ? new_composite(name, base) : newlocale(cat_masks[cat], name, base);
        if (!loc)
            freelocale(base);
    }
    if (!loc)
        return NULL;
    loom_rankc_use_locale(loc);
    if (rank_locale)
        freelocale(rank_locale);
    rank_locale = loc;
    compose_all(loc);
    return name_of(cat, loc);
}

/* A char member of struct lconv from nl_langinfo's first byte (glibc's
 * locales store "not available" as -1, localeconv reports CHAR_MAX). */
static char lc_char(nl_item item)
{
    char c = *nl_langinfo(item);
    return c == (char)-1 ? CHAR_MAX : c;
}

/* glibc reports an empty grouping for "no grouping" (CHAR_MAX first). */
static char *lc_grouping(nl_item item)
{
    char *g = nl_langinfo(item);
    return (*g == CHAR_MAX || *g == (char)-1) ? (char *)"" : g;
}

RANKC_WEAK struct lconv *localeconv(void)
{
    static struct lconv lc;
    lc.decimal_point = nl_langinfo(DECIMAL_POINT);
    lc.thousands_sep = nl_langinfo(THOUSANDS_SEP);
    lc.grouping = lc_grouping(GROUPING);
    lc.int_curr_symbol = nl_langinfo(INT_CURR_SYMBOL);
    lc.currency_symbol = nl_langinfo(CURRENCY_SYMBOL);
    lc.mon_decimal_point = nl_langinfo(MON_DECIMAL_POINT);
    lc.mon_thousands_sep = nl_langinfo(MON_THOUSANDS_SEP);
    lc.mon_grouping = lc_grouping(MON_GROUPING);
    lc.positive_sign = nl_langinfo(POSITIVE_SIGN);
    lc.negative_sign = nl_langinfo(NEGATIVE_SIGN);
    lc.int_frac_digits = lc_char(INT_FRAC_DIGITS);
    lc.frac_digits = lc_char(FRAC_DIGITS);
    lc.p_cs_precedes = lc_char(P_CS_PRECEDES);
    lc.p_sep_by_space = lc_char(P_SEP_BY_SPACE);
    lc.n_cs_precedes = lc_char(N_CS_PRECEDES);
    lc.n_sep_by_space = lc_char(N_SEP_BY_SPACE);
    lc.p_sign_posn = lc_char(P_SIGN_POSN);
    lc.n_sign_posn = lc_char(N_SIGN_POSN);
    lc.int_p_cs_precedes = lc_char(INT_P_CS_PRECEDES);
    lc.int_p_sep_by_space = lc_char(INT_P_SEP_BY_SPACE);
    lc.int_n_cs_precedes = lc_char(INT_N_CS_PRECEDES);
    lc.int_n_sep_by_space = lc_char(INT_N_SEP_BY_SPACE);
    lc.int_p_sign_posn = lc_char(INT_P_SIGN_POSN);
    lc.int_n_sign_posn = lc_char(INT_N_SIGN_POSN);
    return &lc;
}
