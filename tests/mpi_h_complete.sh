#!/bin/bash
# Every function mpi.h declares (src/mpi/functions*.def) is defined by
# libloom.so as LMPI_x (weak, overridable by a profiling library) and LPMPI_x,
# and under the standard names MPI_x (weak) and PMPI_x for callers without
# mpi.h (configure probes).
set -u
defdir=$1 lib=$2
syms=$(nm -D --defined-only "$lib")
missing=0 n=0
while read -r name; do
    n=$((n + 1))
    grep -Eq " W LMPI_${name}$" <<<"$syms" || { echo "missing or not weak: LMPI_${name}"; missing=1; }
    grep -Eq " T LPMPI_${name}$" <<<"$syms" || { echo "missing: LPMPI_${name}"; missing=1; }
    grep -Eq " W MPI_${name}$" <<<"$syms" || { echo "missing or not weak: MPI_${name}"; missing=1; }
    grep -Eq " T PMPI_${name}$" <<<"$syms" || { echo "missing: PMPI_${name}"; missing=1; }
done < <(cat "$defdir"/functions*.def | sed -nE 's/^LOOM_FN\([^,]+, ([A-Za-z0-9_]+), .*/\1/p')
echo "$n functions checked"
exit $missing
