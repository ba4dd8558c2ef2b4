#!/bin/bash
# Compares what a Loom program prints with what a plain process prints.
#   libc_compare.sh [--status N] REFERENCE_CMD... -- MPI_CMD...
# Both print lines "RANK: text"; the lines are compared rank by rank, in each
# rank's order (a stable sort on the rank); the program must exit with N
# (default 0). Prints the differences and fails,
# or prints "libc_compare: N lines identical".
set -u
want=0
[ "${1:-}" = --status ] && { want=$2; shift 2; }
ref=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do ref+=("$1"); shift; done
[ $# -gt 0 ] || { echo "usage: libc_compare.sh REF... -- CMD..." >&2; exit 2; }
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${ref[@]}" >"$tmp/ref.raw" || { echo "libc_compare: the reference failed"; exit 1; }
"$@" >"$tmp/mpi.raw" 2>"$tmp/mpi.err"; rc=$?
if [ "$rc" != "$want" ]; then
    echo "libc_compare: the program exited with $rc, expected $want"; head -c 4000 "$tmp/mpi.err"; exit 1
fi
sort -s -n -t: -k1,1 "$tmp/ref.raw" >"$tmp/ref"
sort -s -n -t: -k1,1 "$tmp/mpi.raw" >"$tmp/mpi"
if ! diff "$tmp/ref" "$tmp/mpi" >"$tmp/diff"; then
    echo "libc_compare: DIFFERENT from a plain process (< reference, > Loom):"
    head -n 60 "$tmp/diff"
    exit 1
fi
[ -s "$tmp/ref" ] || { echo "libc_compare: no output"; exit 1; }
echo "libc_compare: $(wc -l <"$tmp/ref") lines identical"
