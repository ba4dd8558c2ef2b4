/*
 * getopt, getopt_long and getopt_long_only, with optind, optarg, opterr and
 * optopt and the scan's own state in this copy of the program (per rank).
 *
 * Written from the documented GNU behaviour and checked against glibc 2.36 in
 * a plain process (tests/mpi/libc_getopt.c):
 * - Ordering: by default non-options are passed over and moved behind the
 *   options as the scan goes (argv is permuted); '+' first in optstring, or
 *   POSIXLY_CORRECT in the environment, stops at the first non-option; '-'
 *   first returns each non-option as the argument of option 1. "--" ends the
 *   options. The ordering is chosen when a scan starts: on the first call
 *   and whenever optind is 0; setting optind to 1 only restarts the position.
 * - A ':' first in optstring (after '+'/'-') silences the messages and makes
 *   a missing argument return ':'. "x:" takes an argument, "x::" an optional
 *   one (only in the same word), "W;" makes "-W name" a long option.
 * - Long options: "--name", "--name=value" or "--name value"; a unique
 *   prefix is accepted, an exact name wins over prefixes, and prefixes of
 *   several options that differ (in has_arg, flag or val; any two under
 *   getopt_long_only) are ambiguous. getopt_long_only also takes "-name",
 *   falling back to short options when no long option matches and the first
 *   letter is one.
 * - glibc keeps its own copies of optarg and optopt and stores them in the
 *   globals at every return, and reads optind and opterr at every call; so
 *   does this, so that a program that writes those globals sees what it
 *   would see with glibc. The messages are glibc's (its "libc" message
 *   catalogue, so they are translated as glibc's are), one write per message.
 * __posix_getopt, which glibc's headers call for getopt under a strict POSIX
 * feature set, is getopt with POSIXLY_CORRECT ordering.
 *
 * The definitions are weak: a program with its own getopt (or optind...)
 * keeps it and still links with the other names from here.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <libintl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "rankc.h"

RANKC_WEAK char *optarg;
RANKC_WEAK int optind = 1;
RANKC_WEAK int opterr = 1;
RANKC_WEAK int optopt = '?';

int __posix_getopt(int argc, char *const argv[], const char *optstring);

enum order { PERMUTE, REQUIRE_ORDER, RETURN_IN_ORDER };

/* One scan of an argv, between calls. */
static struct {
    bool started;
    enum order order;
    char *cluster; /* the unread rest of a word of short options, or NULL */
    /* argv[skip_begin, skip_end): the non-options passed over (PERMUTE) */
    int skip_begin, skip_end;
    char *arg; /* what optarg gets at every return */
    int opt;   /* what optopt gets at every return */
} scan;

/* What one call works with. */
struct call {
    int argc;
    char **argv;
    const char *optstring; /* without its '+'/'-' */
    const struct option *longopts;
    int *longind;
    bool long_only;
    bool verbose; /* opterr and no ':' first */
    int ind;      /* optind, stored back at return */
};

/* Prints a message on stderr in one write, as glibc's do (wide streams too). */
static void say(const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    char *text = small;
    if (n < 0)
        return;
    if ((size_t)n >= sizeof small) {
        text = malloc((size_t)n + 1);
        if (!text)
            return;
        va_start(ap, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    if (fwide(stderr, 0) > 0)
        fwprintf(stderr, L"%s", text);
    else
        fputs(text, stderr);
    if (text != small)
        free(text);
}

static const char *msg(const char *text)
{
    return dgettext("libc", text);
}

static bool is_nonoption(const char *word)
{
    return word[0] != '-' || word[1] == '\0';
}

/* Swaps argv[b, m) and argv[m, e) (one rotation as three reversals). */
static void reverse(char **argv, int b, int e)
{
    for (e--; b < e; b++, e--) {
        char *t = argv[b];
        argv[b] = argv[e];
        argv[e] = t;
    }
}

/* Moves the skipped non-options behind the options found since. */
static void move_skipped(struct call *c)
{
    reverse(c->argv, scan.skip_begin, scan.skip_end);
    reverse(c->argv, scan.skip_end, c->ind);
    reverse(c->argv, scan.skip_begin, c->ind);
    scan.skip_begin += c->ind - scan.skip_end;
    scan.skip_end = c->ind;
}

/*
 * Whether o, which has the prefix, makes the prefix ambiguous or is listed
 * as a candidate: the first option with the prefix is listed, and each later
 * one that differs from it (any later one under getopt_long_only).
 */
static bool candidate(bool long_only, const struct option *first, const struct option *o)
{
    return o == first || long_only || o->has_arg != first->has_arg || o->flag != first->flag ||
           o->val != first->val;
}

/* Reports an ambiguous prefix with its candidates, in one message. */
static void say_ambiguous(const struct call *c, bool long_only, const char *prefix,
                          const struct option *first, size_t len)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (f) {
        fprintf(f, msg("%s: option '%s%s' is ambiguous; possibilities:"), c->argv[0], prefix,
                scan.cluster);
        for (const struct option *o = first; o->name; o++)
            if (strncmp(o->name, scan.cluster, len) == 0 && candidate(long_only, first, o))
                fprintf(f, " '%s%s'", prefix, o->name);
        fputc('\n', f);
        if (fclose(f) != 0) {
            free(text);
            text = NULL;
        }
    }
    if (text)
        say("%s", text);
    else /* out of memory: the message without the candidates */
        say(msg("%s: option '%s%s' is ambiguous\n"), c->argv[0], prefix, scan.cluster);
    free(text);
}

/*
 * The long option in scan.cluster (after its prefix, "--", "-" or "-W ").
 * Returns what getopt returns, or -1 when getopt_long_only should read the
 * word as short options instead.
 */
static int long_option(struct call *c, const char *prefix, bool long_only)
{
    char *name = scan.cluster;
    size_t len = strcspn(name, "=");
    const struct option *found = NULL;
    int index = -1;

    for (int i = 0; c->longopts[i].name; i++) {
        if (strncmp(c->longopts[i].name, name, len) == 0 && strlen(c->longopts[i].name) == len) {
            found = &c->longopts[i];
            index = i;
            break;
        }
    }
    if (!found) {
        bool ambiguous = false;
        for (int i = 0; c->longopts[i].name; i++) {
            const struct option *o = &c->longopts[i];
            if (strncmp(o->name, name, len) != 0)
                continue;
            if (!found) {
                found = o;
                index = i;
            } else if (candidate(long_only, found, o)) {
                ambiguous = true;
            }
        }
        if (ambiguous) {
            if (c->verbose)
                say_ambiguous(c, long_only, prefix, found, len);
            scan.cluster = NULL;
            c->ind++;
            scan.opt = 0;
            return '?';
        }
    }
    if (!found) {
        if (!long_only || c->argv[c->ind][1] == '-' || !strchr(c->optstring, *name)) {
            if (c->verbose)
                say(msg("%s: unrecognized option '%s%s'\n"), c->argv[0], prefix, name);
            scan.cluster = NULL;
            c->ind++;
            scan.opt = 0;
            return '?';
        }
        return -1;
    }

    c->ind++;
    scan.cluster = NULL;
    if (name[len] == '=') {
        if (!found->has_arg) {
            if (c->verbose)
                say(msg("%s: option '%s%s' doesn't allow an argument\n"), c->argv[0], prefix,
                    found->name);
            scan.opt = found->val;
            return '?';
        }
        scan.arg = name + len + 1;
    } else if (found->has_arg == required_argument) {
        if (c->ind >= c->argc) {
            if (c->verbose)
                say(msg("%s: option '%s%s' requires an argument\n"), c->argv[0], prefix,
                    found->name);
            scan.opt = found->val;
            return c->optstring[0] == ':' ? ':' : '?';
        }
        scan.arg = c->argv[c->ind++];
    }
    if (c->longind)
        *c->longind = index;
    if (found->flag) {
        *found->flag = found->val;
        return 0;
    }
    return found->val;
}

/* A missing argument of short option ch: the message, optopt and the result. */
static int missing_argument(struct call *c, char ch)
{
    if (c->verbose)
        say(msg("%s: option requires an argument -- '%c'\n"), c->argv[0], ch);
    scan.opt = ch;
    return c->optstring[0] == ':' ? ':' : '?';
}

/* The next short option of the current word. */
static int short_option(struct call *c)
{
    char ch = *scan.cluster++;
    const char *spec = strchr(c->optstring, ch);
    if (*scan.cluster == '\0')
        c->ind++;
    if (!spec || ch == ':' || ch == ';') {
        if (c->verbose)
            say(msg("%s: invalid option -- '%c'\n"), c->argv[0], ch);
        scan.opt = ch;
        return '?';
    }
    if (spec[0] == 'W' && spec[1] == ';' && c->longopts) {
        /* "-W name": the rest of the word, or the next word, is a long option. */
        if (*scan.cluster == '\0') {
            if (c->ind == c->argc)
                return missing_argument(c, ch);
            scan.cluster = c->argv[c->ind];
        }
        return long_option(c, "-W ", false);
    }
    if (spec[1] == ':') {
        if (*scan.cluster != '\0') {
            scan.arg = scan.cluster;
            c->ind++;
        } else if (spec[2] == ':') {
            scan.arg = NULL;
        } else if (c->ind == c->argc) {
            scan.cluster = NULL;
            return missing_argument(c, ch);
        } else {
            scan.arg = c->argv[c->ind++];
        }
        scan.cluster = NULL;
    }
    return ch;
}

/* Starts a scan at c->ind: the ordering, and no non-options passed over yet. */
static const char *start(struct call *c, const char *optstring, bool posix)
{
    scan.skip_begin = scan.skip_end = c->ind;
    scan.cluster = NULL;
    if (optstring[0] == '-') {
        scan.order = RETURN_IN_ORDER;
        optstring++;
    } else if (optstring[0] == '+') {
        scan.order = REQUIRE_ORDER;
        optstring++;
    } else if (posix || getenv("POSIXLY_CORRECT")) {
        scan.order = REQUIRE_ORDER;
    } else {
        scan.order = PERMUTE;
    }
    scan.started = true;
    return optstring;
}

/*
 * Moves to the next word that holds options. Returns false there (the word's
 * short options are to be read), true when *result is what getopt returns.
 */
static bool next_word(struct call *c, int *result)
{
    if (scan.skip_end > c->ind)
        scan.skip_end = c->ind;
    if (scan.skip_begin > c->ind)
        scan.skip_begin = c->ind;

    if (scan.order == PERMUTE) {
        if (scan.skip_begin != scan.skip_end && scan.skip_end != c->ind)
            move_skipped(c);
        else if (scan.skip_end != c->ind)
            scan.skip_begin = c->ind;
        while (c->ind < c->argc && is_nonoption(c->argv[c->ind]))
            c->ind++;
        scan.skip_end = c->ind;
    }

    if (c->ind != c->argc && strcmp(c->argv[c->ind], "--") == 0) {
        c->ind++;
        if (scan.skip_begin != scan.skip_end && scan.skip_end != c->ind)
            move_skipped(c);
        else if (scan.skip_begin == scan.skip_end)
            scan.skip_begin = c->ind;
        scan.skip_end = c->argc;
        c->ind = c->argc;
    }

    if (c->ind == c->argc) {
        /* The end: optind points at the non-options, now behind the options. */
        if (scan.skip_begin != scan.skip_end)
            c->ind = scan.skip_begin;
        *result = -1;
        return true;
    }

    char *word = c->argv[c->ind];
    if (is_nonoption(word)) {
        if (scan.order == REQUIRE_ORDER) {
            *result = -1;
            return true;
        }
        scan.arg = word;
        c->ind++;
        *result = 1;
        return true;
    }

    if (c->longopts) {
        if (word[1] == '-') {
            scan.cluster = word + 2;
            *result = long_option(c, "--", c->long_only);
            return true;
        }
        if (c->long_only && (word[2] || !strchr(c->optstring, word[1]))) {
            scan.cluster = word + 1;
            *result = long_option(c, "-", true);
            if (*result != -1)
                return true;
        }
    }
    scan.cluster = word + 1;
    return false;
}

static int parse(int argc, char *const argv[], const char *optstring, const struct option *longopts,
                 int *longind, bool long_only, bool posix)
{
    struct call c = {
        .argc = argc,
        .argv = (char **)argv,
        .longopts = longopts,
        .longind = longind,
        .long_only = long_only,
        .verbose = opterr != 0,
        .ind = optind,
    };
    int r = -1;
    if (argc < 1)
        goto out;
    scan.arg = NULL;
    if (c.ind == 0 || !scan.started) {
        if (c.ind == 0)
            c.ind = 1;
        optstring = start(&c, optstring, posix);
    } else if (optstring[0] == '-' || optstring[0] == '+') {
        optstring++;
    }
    if (optstring[0] == ':')
        c.verbose = false;
    c.optstring = optstring;

    if ((!scan.cluster || *scan.cluster == '\0') && next_word(&c, &r))
        goto out;
    r = short_option(&c);
out:
    optind = c.ind;
    optarg = scan.arg;
    optopt = scan.opt;
    return r;
}

RANKC_WEAK int getopt(int argc, char *const argv[], const char *optstring)
{
    return parse(argc, argv, optstring, NULL, NULL, false, false);
}

RANKC_WEAK int __posix_getopt(int argc, char *const argv[], const char *optstring)
{
    return parse(argc, argv, optstring, NULL, NULL, false, true);
}

RANKC_WEAK int getopt_long(int argc, char *const argv[], const char *optstring,
                           const struct option *longopts, int *longind)
{
    return parse(argc, argv, optstring, longopts, longind, false, false);
}

RANKC_WEAK int getopt_long_only(int argc, char *const argv[], const char *optstring,
                                const struct option *longopts, int *longind)
{
    return parse(argc, argv, optstring, longopts, longind, true, false);
}
