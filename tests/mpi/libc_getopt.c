/*
 * libc_getopt: getopt, getopt_long, getopt_long_only (and __posix_getopt,
 * which glibc's headers call under strict POSIX) with optind, optarg,
 * opterr and optopt per rank, behaving as glibc 2.36's in a plain process
 * (issue 17). Built twice (libc_seq.h): the reference prints every result,
 * the MPI program checks it in every rank, with a barrier after every call,
 * so that other ranks are mid-scan of their own argv in between;
 * tests/launcher/libc_seq.sh compares each rank's stderr (glibc's messages)
 * with the reference's.
 * First the program parses its own command line ("-n 7 FILE", in any order),
 * as the issue's `mpiexec -n 4 ./app -n 7`: every rank must get 7. Then a
 * battery of argv cases, each restarted with optind = 0 or 1 as programs do:
 * permutation, '+', '-' and ':' prefixes, POSIXLY_CORRECT, missing and
 * optional arguments, "W;", long options with '=' or a separate argument,
 * abbreviations, exact matches, ambiguity, getopt_long_only, flag/val,
 * longindex, opterr = 0, and the globals a program may overwrite.
 * Usage: libc_getopt -n N (reference) | libc_getopt -n N REFERENCE_OUTPUT (MPI)
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <unistd.h>

#include "libc_seq.h"

/* glibc's getopt under a strict POSIX feature set (no public declaration). */
extern int __posix_getopt(int argc, char *const argv[], const char *optstring);

static int flag_a;

static const struct option longs[] = {
    {"verbose", no_argument, NULL, 'v'},
    {"verify", no_argument, NULL, 'V'},
    {"output", required_argument, NULL, 'o'},
    {"opt", optional_argument, NULL, 'p'},
    {"flag", no_argument, &flag_a, 42},
    {"file", required_argument, NULL, 'f'},
    {"color", optional_argument, NULL, 'c'},
    {"colour", optional_argument, NULL, 'c'},
    {"all", no_argument, NULL, 'a'},
    {"al", no_argument, NULL, 'A'},
    {"num", required_argument, NULL, 'n'},
    {"xylophone", no_argument, NULL, 1000},
    {NULL, 0, NULL, 0},
};

static const struct option dups[] = {
    {"dup", no_argument, NULL, 'd'},
    {"dup", required_argument, NULL, 'D'},
    {"duplex", no_argument, &flag_a, 7},
    {"duplicate", no_argument, &flag_a, 7},
    {NULL, 0, NULL, 0},
};

enum fn { G, L, O, P }; /* getopt, getopt_long, getopt_long_only, __posix_getopt */

struct gcase {
    enum fn fn;
    const char *optstring;
    const struct option *longopts;
    const char *args[16]; /* after argv[0] */
    int reset;            /* what optind is set to first: 0 or 1 */
    int quiet;            /* opterr = 0 */
    int posixly;          /* POSIXLY_CORRECT is set during the case */
    int scribble;         /* optarg and optopt are overwritten before each call */
    int argc0;            /* called with argc 0 */
};

static const struct gcase cases[] = {
    {G, "ab:c::", NULL, {"-a", "-b", "x", "-cfoo", "-c", "rest1", "--", "-a"}, .reset = 0},
    {G, "ab:", NULL, {"file1", "-a", "file2", "-b", "val", "file3"}, .reset = 0},
    {G, "ab:", NULL, {"-a", "-b"}, .reset = 0},
    {G, ":ab:", NULL, {"-a", "-b"}, .reset = 0},
    {G, "ab", NULL, {"-x", "-a", "-?", "-ax"}, .reset = 1},
    {G, "+ab", NULL, {"-a", "file", "-b"}, .reset = 0},
    {G, "-ab", NULL, {"-a", "file", "-b", "file2", "--", "-a"}, .reset = 0},
    {G, "ab:", NULL, {"-abval", "-ab", "val", "-ba"}, .reset = 1},
    {G, "a:", NULL, {"--", "-a"}, .reset = 0},
    {G, "ab", NULL, {"-x", "-a"}, .quiet = 1},
    {G, "a:b", NULL, {"-:", "-b", "-;"}, .reset = 0},
    {G, "a;b", NULL, {"-;", "-a"}, .reset = 0},
    {G, "ab:", NULL, {"-b", "-a", "x", "-", "-a"}, .reset = 1},
    {G, "a::b", NULL, {"-a", "val", "-aval", "-ba"}, .reset = 0},
    {G, "+:ab:", NULL, {"-b"}, .reset = 0},
    {G, ":+ab:", NULL, {"-+", "-b"}, .reset = 0},
    {G, "ab", NULL, {"-x", "-a", "-b"}, .reset = 1, .scribble = 1},
    {G, "a", NULL, {"-a"}, .reset = 1, .argc0 = 1},
    {L,
     "ab:",
     longs,
     {"--verbose", "--output=f1", "--output", "f2", "--opt", "--opt=3", "--flag", "-v",
      "--xylophone"},
     .reset = 0},
    {L, "v", longs, {"--ver", "--veri", "--ver=1", "--verbose"}, .reset = 1},
    {L, "", longs, {"--out", "x", "--fi", "f", "--fl", "--col=red", "--colo"}, .reset = 0},
    {L, "", longs, {"--al", "--a", "--all", "--al=1"}, .reset = 0},
    {L, "", longs, {"--unknown", "--verbose=3", "--unknown=5", "--output"}, .reset = 0},
    {L, ":", longs, {"--output"}, .reset = 0},
    {L, ":", longs, {"--ver", "--nope", "--verbose=1"}, .reset = 1},
    {L, "", longs, {"--=x", "--"}, .reset = 0},
    {L, "", dups, {"--dup", "--dupl", "--du", "--dup=1"}, .reset = 0},
    {L, "ab", longs, {"a", "--output", "x", "b", "--", "c", "-v"}, .reset = 0},
    {L, "-ab", longs, {"x", "--verbose", "y", "--", "z"}, .reset = 0},
    {L, "ab", longs, {"-a", "file", "--verbose"}, .posixly = 1},
    {L, "ab", longs, {"-a", "file", "--verbose"}, .reset = 1},
    {L, "ab", longs, {"-a", "file", "--verbose"}, .reset = 0},
    {L,
     "W;ab",
     longs,
     {"-W", "verbose", "-Woutput=f", "-Wout", "g", "-W", "nope", "-Wver", "-a", "-W"},
     .reset = 0},
    {L, ":W;a", longs, {"-W"}, .reset = 0},
    {O,
     "vxo:a",
     longs,
     {"-verbose", "-output", "f", "-o", "g", "-a", "-al", "-all", "-v", "-vx", "-x"},
     .reset = 0},
    {O, "", longs, {"-col", "-x", "-q", "--col", "-verbose=1", "-num"}, .reset = 0},
    {O, "ab", longs, {"-", "-v", "--", "-v"}, .reset = 1},
    {O, "W;", longs, {"-Wver", "-W", "col", "-Wcol"}, .reset = 0},
    {O, "", dups, {"-dup", "-du", "-duplex"}, .reset = 0},
    {P, "ab", NULL, {"-a", "file", "-b"}, .reset = 0},
    {G, "ab", NULL, {"-a", "file", "-b"}, .reset = 0},
    {G, "n:", NULL, {"-n", "7", "x", "-n8"}, .reset = 1},
    {L, "", longs, {"--num", "--verbose", "--opt", "x", "--color"}, .reset = 0},
    {G, "abc", NULL, {"-abc", "-cba", "-a", "-", "-b"}, .reset = 1},
    {L, "ab", longs, {"x", "-a", "y", "--file", "z", "w", "--verbose", "v"}, .reset = 0},
};

enum { MAX_CALLS = 24 };

/* Sets or clears POSIXLY_CORRECT: the environment is the job's, so rank 0
 * does it while the others wait. */
static void posixly(int on)
{
#ifndef REFERENCE
    seq_sync();
    if (seq_rank == 0) {
#endif
        if (on)
            setenv("POSIXLY_CORRECT", "1", 1);
        else
            unsetenv("POSIXLY_CORRECT");
#ifndef REFERENCE
    }
    seq_sync();
#endif
}

static const char *show(const char *s)
{
    static char buf[64];
    if (!s)
        return "NULL";
    snprintf(buf, sizeof buf, "'%s'", s);
    return buf;
}

static void run_case(int k, const struct gcase *c)
{
    char *argv[18];
    int argc = 0;
    argv[argc++] = (char *)"prog";
    for (int i = 0; c->args[i]; i++)
        argv[argc++] = (char *)c->args[i];
    argv[argc] = NULL;
    static const char *fns[] = {"getopt", "getopt_long", "getopt_long_only", "__posix_getopt"};
    fprintf(stderr, "== case %d\n", k);
    seq_out("== case %d: %s \"%s\" optind=%d opterr=%d", k, fns[c->fn], c->optstring, c->reset,
            !c->quiet);
    if (c->posixly)
        posixly(1);
    optind = c->reset;
    opterr = !c->quiet;
    flag_a = 0;
    int done = 0;
    for (int i = 0; i < MAX_CALLS; i++) {
        if (!done) {
            int li = -1;
            int r = -1;
            if (c->scribble) {
                optarg = (char *)"scribbled";
                optopt = 12345;
            }
            int n = c->argc0 ? 0 : argc;
            switch (c->fn) {
            case G:
                r = getopt(n, argv, c->optstring);
                break;
            case P:
                r = __posix_getopt(n, argv, c->optstring);
                break;
            case L:
                r = getopt_long(n, argv, c->optstring, c->longopts, &li);
                break;
            case O:
                r = getopt_long_only(n, argv, c->optstring, c->longopts, &li);
                break;
            }
            seq_out("  %d: r=%d optind=%d optarg=%s optopt=%d longindex=%d flag=%d", i, r, optind,
                    show(optarg), optopt, li, flag_a);
            done = r == -1;
        }
        seq_sync();
    }
    char order[1024];
    size_t o = 0;
    for (int i = 0; i < argc; i++)
        o += (size_t)snprintf(order + o, sizeof order - o, " %s", argv[i]);
    seq_out("  argv:%s", order);
    if (c->posixly)
        posixly(0);
}

int main(int argc, char **argv)
{
    /* The program's own options, parsed first, as programs do. */
    char before[160];
    snprintf(before, sizeof before, "initial: optind=%d opterr=%d optopt=%d optarg=%s", optind,
             opterr, optopt, show(optarg));
    const char *n = "(none)";
    int c;
    while ((c = getopt(argc, argv, "n:")) != -1)
        if (c == 'n')
            n = optarg;
    char after[256];
    snprintf(after, sizeof after, "parsed: -n %s optind=%d optopt=%d", n, optind, optopt);
#ifndef REFERENCE
    MPI_Init(&argc, &argv);
    if (optind >= argc) {
        fprintf(stderr, "usage: libc_getopt -n N REFERENCE_OUTPUT\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    seq_load(argv[optind]);
    printf("libc_getopt: rank %d parsed -n %s\n", seq_rank, n);
#endif
    seq_out("%s", before);
    seq_out("%s", after);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        run_case((int)k, &cases[k]);
#ifdef REFERENCE
    return 0;
#else
    return seq_finish("libc_getopt");
#endif
}
