/*
 * What the point-to-point order tests (p2p_inbox.c, p2p_box.c) share: a
 * message body that carries its sequence number and a pattern of its
 * sender, the check of it, and a busy wait that makes no MPI call.
 */
#ifndef LOOM_TESTS_P2P_MSG_H
#define LOOM_TESTS_P2P_MSG_H

#include <string.h>
#include <time.h>

/* Fills a message: its sequence number first (if it fits), then a pattern. */
static void fill(unsigned char *b, int n, int src, int seq)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(src * 7 + seq * 13 + i);
    if (n >= 4)
        memcpy(b, &seq, 4);
}

/* The bytes of message seq of src that fill() would not have written. */
static int check_msg(const unsigned char *b, int n, int src, int seq)
{
    int bad = 0;
    for (int i = n >= 4 ? 4 : 0; i < n; i++)
        bad += b[i] != (unsigned char)(src * 7 + seq * 13 + i);
    if (n >= 4) {
        int got;
        memcpy(&got, b, 4);
        bad += got != seq;
    }
    return bad;
}

/* Computes for `seconds` without calling MPI. */
static void burn(double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < seconds);
}

#endif
