// What a copy of the program made without dlopen (a clone, see
// src/runtime/image.c) must do as a process would: thread-locals of its own
// with relocated initial values, in the rank and in threads it starts;
// C++ exceptions through its frames; pointers between its globals, to its
// functions, vtables and to shared libraries' functions; dlsym-free
// function pointers compared with the copy's own. Each rank checks what it
// would see in a process of its own, and that no other rank's copy is
// reached through any of them.
#include <mpi.h>
#include <pthread.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

static int counter = 7;
static int *counter_ptr = &counter;             // RELATIVE in .data
static const char *words[] = {"alpha", "beta"}; // pointers in .data.rel.ro
static void *(*alloc_fn)(size_t) = malloc;      // a shared library's function

__thread int tls_plain = 42;
__thread int *tls_ptr = &counter; // relocated TLS initial image
thread_local std::string tls_name = "initial";

struct Shape {
    virtual ~Shape() = default;
    virtual int sides() const
    {
        return 0;
    }
};
struct Square : Shape {
    int sides() const override
    {
        return 4 + counter;
    }
};
static Square square;
static Shape *shape = &square;

static int depth_throw(int n, int rank)
{
    if (n == 0)
        throw std::runtime_error("rank " + std::to_string(rank));
    return depth_throw(n - 1, rank) + 1;
}

static void *thread_main(void *arg)
{
    int rank = *(int *)arg;
    int bad = 0;
    // A new thread starts from the initial image, not the rank's values.
    bad += tls_plain != 42;
    bad += tls_ptr != &counter;
    bad += tls_name != "initial";
    tls_plain = 1000 + rank;
    tls_name = "thread" + std::to_string(rank);
    bad += tls_plain != 1000 + rank;
    return (void *)(long)bad;
}

int main(int argc, char **argv)
{
    int rank, size, failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "rank %d: line %d: %s\n", rank, __LINE__, #cond);                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)
    EXPECT(counter_ptr == &counter);
    EXPECT(std::strcmp(words[1], "beta") == 0);
    EXPECT(alloc_fn == &malloc);
    EXPECT(tls_plain == 42 && tls_ptr == &counter && tls_name == "initial");
    counter = 100 + rank;
    tls_plain = rank;
    tls_name = "rank" + std::to_string(rank);
    *tls_ptr += 1;
    EXPECT(shape->sides() == 4 + 101 + rank);
    for (int i = 0; i < 3; i++) {
        try {
            depth_throw(5 + i, rank);
            EXPECT(!"no exception");
        } catch (const std::runtime_error &e) {
            EXPECT(e.what() == "rank " + std::to_string(rank));
        }
    }
    pthread_t t;
    void *bad = nullptr;
    EXPECT(pthread_create(&t, nullptr, thread_main, &rank) == 0);
    EXPECT(pthread_join(t, &bad) == 0);
    EXPECT(bad == nullptr);
    MPI_Barrier(MPI_COMM_WORLD);
    // Nothing another rank did reached this one.
    EXPECT(counter == 101 + rank);
    EXPECT(tls_plain == rank);
    EXPECT(tls_name == "rank" + std::to_string(rank));
    EXPECT(*counter_ptr == 101 + rank);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        std::printf("image_clone: %d ranks ok\n", size);
    MPI_Finalize();
    return failures ? 1 : 0;
}
