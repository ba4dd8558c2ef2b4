/*
 * A minimal check header for Loom's tests (the shape of mimalloc's
 * testhelper.h). CHECK records a failure and continues; REQUIRE stops the
 * test. A test program returns check_summary() from main; 77 means skipped.
 */
#ifndef LOOM_TESTS_CHECK_H
#define LOOM_TESTS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int check_failures_;
static int check_count_;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        check_count_++;                                                                            \
        if (!(cond)) {                                                                             \
            check_failures_++;                                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                            \
        check_count_++;                                                                            \
        if (check_a_ != check_b_) {                                                                \
            check_failures_++;                                                                     \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", __FILE__,          \
                    __LINE__, #a, check_a_, #b, check_b_);                                         \
        }                                                                                          \
    } while (0)

#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond);             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CHECK_SKIP(why)                                                                            \
    do {                                                                                           \
        fprintf(stderr, "skipped: %s\n", why);                                                     \
        exit(77);                                                                                  \
    } while (0)

static inline int check_summary(void)
{
    if (check_failures_)
        fprintf(stderr, "%d of %d checks failed\n", check_failures_, check_count_);
    return check_failures_ ? 1 : 0;
}

#endif
