// C++ objects that g++ emits as STB_GNU_UNIQUE symbols (static locals of
// inline functions and of function templates, static data members of class
// templates, C++17 inline variables) are one per process, so one per rank.
// glibc keeps one instance of a unique symbol per process; Loom's loader
// makes them per copy. Each rank adds its own amount; in a process of its
// own it would read back exactly that amount.
#include <mpi.h>
#include <cstdio>
#include <string>
#include <vector>

inline int &inline_static()
{
    static int value;
    return value;
}

template <class T> struct Holder {
    static T value;
};
template <class T> T Holder<T>::value;

template <class T> std::vector<T> &template_registry()
{
    static std::vector<T> items;
    return items;
}

struct Config {
    static inline std::string name = "unset";
    static inline long hits = 0;
};

int main(int argc, char **argv)
{
    int rank, size, failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i <= rank % 5; i++) {
        inline_static() += 1;
        Holder<double>::value += 0.5;
        template_registry<int>().push_back(rank);
        Config::hits++;
    }
    Config::name = "rank" + std::to_string(rank);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    int mine = rank % 5 + 1;
    if (inline_static() != mine) {
        std::fprintf(stderr, "rank %d: inline function static is %d, expected %d\n", rank,
                     inline_static(), mine);
        failures++;
    }
    if (Holder<double>::value != 0.5 * mine) {
        std::fprintf(stderr, "rank %d: template static member is %g, expected %g\n", rank,
                     Holder<double>::value, 0.5 * mine);
        failures++;
    }
    if (template_registry<int>().size() != (size_t)mine) {
        std::fprintf(stderr, "rank %d: function template static holds %zu items, expected %d\n",
                     rank, template_registry<int>().size(), mine);
        failures++;
    }
    if (Config::hits != mine || Config::name != "rank" + std::to_string(rank)) {
        std::fprintf(stderr, "rank %d: inline variables are %ld '%s'\n", rank, Config::hits,
                     Config::name.c_str());
        failures++;
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        std::printf("globals_unique: %d ranks ok\n", size);
    MPI_Finalize();
    return failures ? 1 : 0;
}
