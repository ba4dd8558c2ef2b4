/*
 * Shared by the libc fidelity tests (libc_rand.c, libc_getopt.c), each built
 * twice from one source:
 * - with -DREFERENCE by the plain system compiler, no MPI: a reference
 *   program whose seq_out() prints every result line on stdout;
 * - with Loom's mpicc: every rank runs the same code, seq_out() compares each
 *   line with the reference's output (a file named on the command line) and
 *   seq_sync() is an MPI_Barrier, so that ranks switch between draws and
 *   other ranks run their own draws in between.
 * tests/launcher/libc_seq.sh runs both and also compares each rank's stderr
 * with the reference's. A difference fails loudly: the first ones are
 * printed with the rank and the line.
 */
#ifndef LOOM_TESTS_LIBC_SEQ_H
#define LOOM_TESTS_LIBC_SEQ_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef REFERENCE

static void seq_sync(void) {}

static void seq_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void seq_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

/* Starts the section that rank r checks (all of them are in the reference). */
static inline void seq_section(int r)
{
    seq_out("== section %d", r);
}

#else

#include <mpi.h>

static char **seq_ref;
static size_t seq_nref, seq_pos;
static long seq_fail, seq_lines;
static int seq_rank;

/* Reads the reference's output, one entry per line. */
static void seq_load(const char *path)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &seq_rank);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "rank %d: cannot read the reference output %s\n", seq_rank, path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t cap = 0;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    while ((len = getline(&line, &lcap, f)) >= 0) {
        if (len > 0 && line[len - 1] == '\n')
            line[len - 1] = '\0';
        if (seq_nref == cap) {
            cap = cap ? 2 * cap : 1024;
            seq_ref = realloc(seq_ref, cap * sizeof *seq_ref);
        }
        seq_ref[seq_nref++] = strdup(line);
    }
    free(line);
    fclose(f);
}

static void seq_sync(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
}

static void seq_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void seq_out(const char *fmt, ...)
{
    char got[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(got, sizeof got, fmt, ap);
    va_end(ap);
    const char *want = seq_pos < seq_nref ? seq_ref[seq_pos] : "(end of the reference output)";
    seq_lines++;
    if (strcmp(got, want) != 0) {
        if (seq_fail < 5)
            fprintf(stderr, "rank %d: line %zu: got '%s', the reference has '%s'\n", seq_rank,
                    seq_pos + 1, got, want);
        seq_fail++;
    }
    seq_pos++;
}

/* Moves to the section of rank r (the reference has sections for ranks 0-63). */
static inline void seq_section(int r)
{
    char marker[64];
    snprintf(marker, sizeof marker, "== section %d", r % 64);
    for (seq_pos = 0; seq_pos < seq_nref; seq_pos++)
        if (strcmp(seq_ref[seq_pos], marker) == 0)
            break;
    seq_out("%s", marker);
}

/* Prints the verdict on rank 0; returns main's status. */
static int seq_finish(const char *name)
{
    long fails = 0, lines = 0;
    MPI_Allreduce(&seq_fail, &fails, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&seq_lines, &lines, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (seq_rank == 0) {
        if (fails)
            printf("%s: FAILED: %ld of %ld lines differ from the reference\n", name, fails, lines);
        else
            printf("%s: %d ranks ok (%ld lines as the reference's)\n", name, size, lines);
    }
    MPI_Finalize();
    return fails ? 1 : 0;
}

#endif
#endif
