#!/bin/bash
# Validates the one-sided tests (tests/mpi/rma_*.c) with another MPI, as
# Loom's build cannot yet: builds each program with Open MPI's or MPICH's
# wrapper (without LOOM_EXPECT) and runs it at several rank counts.
#   tests/rma_validate.sh openmpi|mpich [PROGRAM...] [-- RANKS...]
# Prints one line per run: PASS or FAIL, the program, the ranks, the time.
set -u
mpi=${1:?openmpi or mpich}; shift
progs=() ranks=(1 2 7 16)
while [ $# -gt 0 ] && [ "$1" != "--" ]; do progs+=("$1"); shift; done
[ "${1:-}" = "--" ] && { shift; [ $# -gt 0 ] && ranks=("$@"); }
src=$(cd "$(dirname "$0")/mpi" && pwd)
[ ${#progs[@]} -gt 0 ] || progs=($(cd "$src" && ls rma_*.c | sed 's/\.c$//'))
out=${RMA_VALIDATE_DIR:-/tmp/rma_validate}/$mpi
mkdir -p "$out"
case $mpi in
    # (Open MPI 4.1's osc rdma, its default, cannot make a window on a
    # communicator of one process: MPI_ERR_WIN; set RMA_MCA to choose)
    openmpi) cc=mpicc.openmpi run=(mpirun.openmpi --allow-run-as-root --oversubscribe ${RMA_MCA:---mca osc sm,pt2pt}) ;;
    # (MPICH 4.0 with UCX: windows over memory in one registered region
    # receive each other's Puts unless the registration cache is off)
    mpich) cc="mpicc.mpich -Wno-stringop-overflow" run=(mpirun.mpich -genv UCX_RCACHE_ENABLE n) ;;
    *) echo "unknown MPI $mpi" >&2; exit 2 ;;
esac
fail=0
for p in "${progs[@]}"; do
    $cc -O2 -g -Wall -o "$out/$p" "$src/$p.c" || { echo "FAIL $p: does not build"; fail=1; continue; }
    for n in "${ranks[@]}"; do
        t0=$(date +%s.%N)
        timeout 120 "${run[@]}" -n "$n" "$out/$p" >"$out/$p.$n.out" 2>"$out/$p.$n.err"
        rc=$?
        t=$(echo "$(date +%s.%N) - $t0" | bc)
        if [ $rc = 0 ] && grep -q "^$p: $n ranks ok$" "$out/$p.$n.out"; then
            echo "PASS $p $n ranks ${t}s$(grep -c '^.*note:' "$out/$p.$n.err" | sed 's/^0$//; s/^\(.\+\)$/ (\1 notes)/')"
        else
            echo "FAIL $p $n ranks rc=$rc ${t}s: $out/$p.$n.err"; fail=1
        fi
    done
done
exit $fail
