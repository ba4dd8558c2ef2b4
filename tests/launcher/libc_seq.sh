#!/bin/bash
# Runs a libc fidelity test (tests/libc_seq.cmake): the reference program in a
# plain process, then the MPI program under mpiexec, and checks that every
# rank wrote on stderr exactly what the reference wrote there.
#   libc_seq.sh NRANKS REF_CMD... -- MPI_CMD...
# @REF@ in MPI_CMD becomes the file holding the reference's stdout, which the
# MPI program compares its own results with (rank by rank, itself). MPI_CMD
# must run mpiexec with --tag-output, so that stderr lines name their rank.
# Prints the MPI program's stdout; exits non-zero on any difference.
set -u
n=$1; shift
ref=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do ref+=("$1"); shift; done
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset POSIXLY_CORRECT
"${ref[@]}" >"$tmp/ref.out" 2>"$tmp/ref.err" || { echo "libc_seq: the reference program failed"; cat "$tmp/ref.err"; exit 1; }
cmd=()
for a in "$@"; do cmd+=("${a//@REF@/$tmp/ref.out}"); done
"${cmd[@]}" >"$tmp/out" 2>"$tmp/err"; rc=$?
cat "$tmp/out"
if [ "$rc" != 0 ]; then
    echo "libc_seq: mpiexec exited with status $rc"; head -c 4000 "$tmp/err"; exit 1
fi
# One file per rank of its stderr lines, untagged.
awk -v dir="$tmp" 'match($0, /^\[1,[0-9]+\]<stderr>:/) {
    r = substr($0, 4, RLENGTH - 13); print substr($0, RLENGTH + 1) > (dir "/err." r) }' "$tmp/err"
fail=0
for ((r = 0; r < n; r++)); do
    [ -f "$tmp/err.$r" ] || : >"$tmp/err.$r"
    if ! cmp -s "$tmp/ref.err" "$tmp/err.$r"; then
        echo "libc_seq: rank $r's stderr differs from the reference's:"
        diff "$tmp/ref.err" "$tmp/err.$r" | head -20
        fail=1
    fi
done
[ "$fail" = 0 ] && echo "libc_seq: stderr of all $n ranks as the reference's"
exit $fail
