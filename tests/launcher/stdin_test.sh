#!/bin/bash
# stdin reaches rank 0 byte for byte (a few MB, through fgets, getchar, fread
# mixed) and nothing else: the output must equal the input, compared with
# cmp; other ranks read EOF.
#   stdin_test.sh MPIEXEC BEHAVE NRANKS
set -u
mpiexec=$1 behave=$2 n=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# 4 MB of lines of varied length, some long (no newline for 200 KB).
{
    seq 1 200000 | sed 's/$/ of the input/'
    head -c 200000 /dev/zero | tr '\0' 'x'
    echo
    seq 200000 260000
    printf 'last line without newline'
} >"$tmp/in"
if ! "$mpiexec" -n "$n" "$behave" cat <"$tmp/in" >"$tmp/out" 2>"$tmp/err"; then
    echo "FAILED: mpiexec exited $?"; cat "$tmp/err"; exit 1
fi
if ! cmp "$tmp/in" "$tmp/out"; then
    echo "FAILED: output differs from input ($(wc -c <"$tmp/in") bytes in, $(wc -c <"$tmp/out") out)"
    exit 1
fi
echo "stdin_test: $(wc -c <"$tmp/in") bytes ok"
