#!/bin/bash
# Runs a command and checks its exit status and output.
#   expect.sh [--status N] [--out REGEX]... [--err REGEX]... [--no-out REGEX]
#             [--count REGEX N] [--stdin FILE] [--sigterm-after S] -- CMD...
# --count checks the number of stdout lines matching REGEX. Prints what it
# saw when a check fails.
set -u
status=0 stdin=/dev/null sigterm=""
outs=() errs=() nouts=() counts=()
while [ $# -gt 0 ]; do
    case "$1" in
        --status) status=$2; shift 2 ;;
        --out) outs+=("$2"); shift 2 ;;
        --err) errs+=("$2"); shift 2 ;;
        --no-out) nouts+=("$2"); shift 2 ;;
        --count) counts+=("$2" "$3"); shift 3 ;;
        --stdin) stdin=$2; shift 2 ;;
        --sigterm-after) sigterm=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "expect.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$sigterm" ]; then
    "$@" <"$stdin" >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    sleep "$sigterm"
    kill -TERM "$pid"
    wait "$pid"; rc=$?
else
    "$@" <"$stdin" >"$tmp/out" 2>"$tmp/err"; rc=$?
fi
fail=0
complain() { echo "FAILED: $*"; fail=1; }
[ "$rc" = "$status" ] || complain "exit status $rc, expected $status"
for re in "${outs[@]+"${outs[@]}"}"; do grep -Eq -- "$re" "$tmp/out" || complain "stdout lacks /$re/"; done
for re in "${errs[@]+"${errs[@]}"}"; do grep -Eq -- "$re" "$tmp/err" || complain "stderr lacks /$re/"; done
for re in "${nouts[@]+"${nouts[@]}"}"; do grep -Eq -- "$re" "$tmp/out" && complain "stdout has /$re/"; done
set -- "${counts[@]+"${counts[@]}"}"
while [ $# -gt 0 ]; do
    n=$(grep -Ec -- "$1" "$tmp/out")
    [ "$n" = "$2" ] || complain "stdout has $n lines matching /$1/, expected $2"
    shift 2
done
if [ "$fail" = 1 ]; then
    echo "--- stdout"; head -c 4000 "$tmp/out"; echo "--- stderr"; head -c 4000 "$tmp/err"
    exit 1
fi
exit 0
