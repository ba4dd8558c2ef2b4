#!/bin/bash
# Runs a command and checks its exit status and output.
#   expect.sh [--status N] [--out REGEX]... [--err REGEX]... [--no-out REGEX]
#             [--no-err REGEX] [--count REGEX N] [--err-count REGEX N]
#             [--stdin FILE] [--sigterm-after S] [--signal SIG AFTER]
#             [--signal-every SIG SECONDS] -- CMD...
# --count checks the number of stdout lines matching REGEX (--err-count, of
# stderr lines). --signal sends SIG once, AFTER seconds after the start;
# --signal-every sends it every SECONDS until the command ends. Prints what
# it saw when a check fails.
set -u
status=0 stdin=/dev/null sigterm="" sig="" sig_after="" every_sig="" every=""
outs=() errs=() nouts=() nerrs=() counts=() ecounts=()
while [ $# -gt 0 ]; do
    case "$1" in
        --status) status=$2; shift 2 ;;
        --out) outs+=("$2"); shift 2 ;;
        --err) errs+=("$2"); shift 2 ;;
        --no-out) nouts+=("$2"); shift 2 ;;
        --no-err) nerrs+=("$2"); shift 2 ;;
        --count) counts+=("$2" "$3"); shift 3 ;;
        --err-count) ecounts+=("$2" "$3"); shift 3 ;;
        --signal) sig=$2 sig_after=$3; shift 3 ;;
        --signal-every) every_sig=$2 every=$3; shift 3 ;;
        --stdin) stdin=$2; shift 2 ;;
        --sigterm-after) sigterm=$2; shift 2 ;;
        --) shift; break ;;
        *) echo "expect.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$sigterm" ] && sig=TERM sig_after=$sigterm
if [ -n "$sig" ] || [ -n "$every_sig" ]; then
    "$@" <"$stdin" >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    if [ -n "$sig" ]; then
        sleep "$sig_after"
        kill -"$sig" "$pid"
    fi
    if [ -n "$every_sig" ]; then
        while kill -0 "$pid" 2>/dev/null; do
            sleep "$every"
            kill -"$every_sig" "$pid" 2>/dev/null
        done
    fi
    wait "$pid"; rc=$?
else
    "$@" <"$stdin" >"$tmp/out" 2>"$tmp/err"; rc=$?
fi
fail=0
complain() { echo "FAILED: $*"; fail=1; }
# count_lines FILE NAME REGEX N...: FILE has N lines matching each REGEX.
count_lines() {
    local file=$1 name=$2 n
    shift 2
    while [ $# -gt 0 ]; do
        n=$(grep -Ec -- "$1" "$file")
        [ "$n" = "$2" ] || complain "$name has $n lines matching /$1/, expected $2"
        shift 2
    done
}
[ "$rc" = "$status" ] || complain "exit status $rc, expected $status"
for re in "${outs[@]+"${outs[@]}"}"; do grep -Eq -- "$re" "$tmp/out" || complain "stdout lacks /$re/"; done
for re in "${errs[@]+"${errs[@]}"}"; do grep -Eq -- "$re" "$tmp/err" || complain "stderr lacks /$re/"; done
for re in "${nouts[@]+"${nouts[@]}"}"; do grep -Eq -- "$re" "$tmp/out" && complain "stdout has /$re/"; done
for re in "${nerrs[@]+"${nerrs[@]}"}"; do grep -Eq -- "$re" "$tmp/err" && complain "stderr has /$re/"; done
count_lines "$tmp/out" stdout "${counts[@]+"${counts[@]}"}"
count_lines "$tmp/err" stderr "${ecounts[@]+"${ecounts[@]}"}"
if [ "$fail" = 1 ]; then
    echo "--- stdout"; head -c 4000 "$tmp/out"; echo "--- stderr"; head -c 4000 "$tmp/err"
    exit 1
fi
exit 0
