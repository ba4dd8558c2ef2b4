#!/bin/bash
# What N ranks of a large program cost (issue 18): generates a Loom program
# with FUNCS functions of ~2.5 KB of text each (a table of pointers to all of
# them is relocated per rank) and DATA_MIB MiB of initialized data, builds it
# with mpicc and runs it at each rank count. Rank 0 prints, at a barrier
# after every rank read its data and called some functions:
#   the process's anonymous Pss + the tmpfs pages of its memfds (= the
#   memory the job holds, each page once), the lines of /proc/self/maps,
# and the job's wall time.
#   bench/image_mem.sh BUILD_DIR FUNCS DATA_MIB N...
# e.g. bench/image_mem.sh build/release 20000 1 64 1024  (50 MB text, 1 MiB data)
#      bench/image_mem.sh build/release 0 64 64          (a 64 MiB array)
# The program is kept in $TMPDIR/loom-image-FUNCS-DATA_MIB for the next run
# (e.g. with another build's mpiexec); delete it to rebuild.
set -eu
build=$(cd "$1" && pwd); funcs=$2; data=$3; shift 3
dir=${TMPDIR:-/tmp}/loom-image-$funcs-$data
mkdir -p "$dir"
[ -x "$dir/big" ] || {
python3 - "$funcs" "$data" >"$dir/big.c" <<'PY'
import sys
funcs, data = int(sys.argv[1]), int(sys.argv[2])
w = sys.stdout.write
w('#include <mpi.h>\n#include <dirent.h>\n#include <stdio.h>\n#include <stdlib.h>\n'
  '#include <string.h>\n#include <sys/stat.h>\n#include <unistd.h>\n')
for i in range(funcs):
    w('int f%d(int x) { __asm__ volatile(".fill 2500,1,0x90"); return x + %d; }\n' % (i, i))
w('typedef int (*fn)(int);\nfn table[] = {%s};\n' % ', '.join(['0'] + ['f%d' % i for i in range(funcs)]))
w('char data[%d] = {1};\n' % max(data << 20, 1))
w(r'''
static long field(const char *name)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long kib = 0, n = strlen(name);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, name, n) == 0)
            kib = atol(line + n);
    if (f)
        fclose(f);
    return kib;
}

/* KiB of tmpfs pages held by the process's memfds. */
static long memfd_kib(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    long kib = 0;
    char p[64], l[256];
    while (d && (e = readdir(d))) {
        snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(p, l, sizeof l - 1);
        struct stat st;
        if (n > 0 && (l[n] = 0, strncmp(l, "/memfd:", 7) == 0) && stat(p, &st) == 0)
            kib += st.st_blocks / 2;
    }
    if (d)
        closedir(d);
    return kib;
}

static int maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    int c, n = 0;
    while (f && (c = getc(f)) != EOF)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long s = 0;
    for (size_t i = 0; i < sizeof data; i += 4096)
        s += data[i];
    int n = sizeof table / sizeof table[0];
    for (int i = 1; i < n; i += n / 16 + 1)
        s += table[i](0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long anon = field("Pss_Anon:"), fds = memfd_kib();
        printf("ranks %d: memory %.1f MiB (anon Pss %.1f, memfds %.1f), maps %d (%.2f per rank)\n",
               size, (anon + fds) / 1024.0, anon / 1024.0, fds / 1024.0, maps(),
               (double)maps() / size);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return s == 0;
}
''')
PY
t0=$(date +%s.%N)
"$build/bin/mpicc" -O1 -o "$dir/big" "$dir/big.c"
echo "built in $(echo "$(date +%s.%N) - $t0" | bc) s"
}
text=$(size -A "$dir/big" | awk '$1 == ".text" {print $2}')
echo "$dir/big: .text $((text >> 20)) MiB, data $data MiB, $funcs functions"
for n in "$@"; do
    /usr/bin/time -f "  %e s wall, %U s user, %S s sys" "$build/bin/mpiexec" -n "$n" "$dir/big"
done
