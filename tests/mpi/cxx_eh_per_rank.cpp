// A rank inside a catch block (or unwinding) that waits in MPI keeps its
// own exception state: C++'s caught-exception stack and uncaught count are
// per thread in a process (libstdc++'s thread-locals), so per rank here,
// even when other ranks of the same worker throw and catch meanwhile.
#include <mpi.h>

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

struct rank_error : std::runtime_error {
    int rank;
    explicit rank_error(int r) : std::runtime_error("rank " + std::to_string(r)), rank(r) {}
};

static int failures;

static void check(bool ok, int rank, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "rank %d: %s\n", rank, what);
        failures++;
    }
}

// Its destructor runs during unwinding and waits in MPI there.
struct waits_in_unwind {
    int rank;
    ~waits_in_unwind()
    {
        check(std::uncaught_exceptions() == 1, rank, "uncaught count during unwinding");
        MPI_Barrier(MPI_COMM_WORLD);
        check(std::uncaught_exceptions() == 1, rank, "uncaught count after a barrier in unwinding");
    }
};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < 20; round++) {
        try {
            throw rank_error(rank);
        } catch (const rank_error &e) {
            MPI_Barrier(MPI_COMM_WORLD);
            try {
                throw; // rethrows this rank's exception, not a neighbour's
            } catch (const rank_error &again) {
                check(again.rank == rank, rank, "rethrow gave another rank's exception");
            }
            MPI_Barrier(MPI_COMM_WORLD);
            std::exception_ptr p = std::current_exception();
            try {
                std::rethrow_exception(p);
            } catch (const rank_error &cur) {
                check(cur.rank == rank, rank, "current_exception is another rank's");
            } catch (...) {
                check(false, rank, "current_exception is not a rank_error");
            }
            check(std::uncaught_exceptions() == 0, rank, "uncaught count in a catch block");
        }
        try {
            waits_in_unwind w{rank};
            throw rank_error(rank);
        } catch (const rank_error &e) {
            check(e.rank == rank, rank, "caught another rank's exception");
        }
        check(std::uncaught_exceptions() == 0, rank, "uncaught count after the catch");
        MPI_Barrier(MPI_COMM_WORLD);
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all)
        std::printf("cxx_eh_per_rank: %d failures\n", all);
    else if (rank == 0)
        std::printf("cxx_eh_per_rank: %d ranks ok\n", size);
    MPI_Finalize();
    return all != 0;
}
