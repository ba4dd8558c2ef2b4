// C++ static constructors run once per rank, on the rank's own copy; static
// destructors run when the rank ends.
#include <mpi.h>
#include <cstdio>
#include <string>
#include <vector>

extern "C" {
#include "shared_counter.h"
}

static int ctor_runs_here;

struct Registry {
    std::vector<std::string> names;
    int owner = -1;
    Registry()
    {
        ctor_runs_here++;
        shared_note_ctor();
        names.push_back("init");
    }
    ~Registry()
    {
        std::printf("destructor of rank %d\n", owner);
    }
};
static Registry registry;

static int &function_static()
{
    static int value = 1000;
    return value;
}

int main(int argc, char **argv)
{
    int rank, size, failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    registry.owner = rank;
    registry.names.push_back("rank" + std::to_string(rank));
    function_static() += rank;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (ctor_runs_here != 1) {
        std::fprintf(stderr, "rank %d: constructor ran %d times\n", rank, ctor_runs_here);
        failures++;
    }
    if (registry.names.size() != 2 || registry.names[1] != "rank" + std::to_string(rank)) {
        std::string seen;
        for (const std::string &n : registry.names)
            seen += " '" + n + "'";
        std::fprintf(stderr, "rank %d: registry shared: %zu names at %p:%s\n", rank,
                     registry.names.size(), (void *)registry.names.data(), seen.c_str());
        failures++;
    }
    if (function_static() != 1000 + rank) {
        std::fprintf(stderr, "rank %d: function static shared\n", rank);
        failures++;
    }
    if (shared_ctor_runs() != size) {
        std::fprintf(stderr, "rank %d: %d constructors for %d ranks\n", rank, shared_ctor_runs(),
                     size);
        failures++;
    }
    MPI_Finalize();
    return failures ? 1 : 0;
}
