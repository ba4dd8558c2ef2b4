#!/bin/bash
# A job that ends abnormally leaves no process behind: rank 1 starts a
# background job through system(), a popen child and a fork+exec child (each
# a 'sleep 300'), then the job ends by a rank's exit(3), a crash, MPI_Abort,
# --timeout or SIGTERM to mpiexec. Afterwards none of the three may be alive.
#   children_test.sh MPIEXEC BEHAVE
set -u
mpiexec=$1 behave=$2
fail=0
complain() { echo "FAILED: $*"; fail=1; }
alive() { # a pid that still runs (a zombie waiting for init counts as gone)
    local st
    st=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
for end in exit segv abort timeout sigterm; do
    dir=$(mktemp -d)
    case $end in
        exit) want=3; how=exit ;;
        segv) want=139; how=segv ;;
        abort) want=4; how=abort ;;
        timeout) want=124; how=hang ;;
        sigterm) want=143; how=hang ;;
    esac
    args=(-n 4)
    [ "$end" = timeout ] && args+=(--timeout 3)
    if [ "$end" = sigterm ]; then
        "$mpiexec" "${args[@]}" "$behave" children 1 "$dir" "$how" >"$dir/out" 2>"$dir/err" &
        pid=$!
        for _ in $(seq 100); do grep -q "children started" "$dir/out" && break; sleep 0.1; done
        kill -TERM "$pid"
        wait "$pid"; rc=$?
    else
        "$mpiexec" "${args[@]}" "$behave" children 1 "$dir" "$how" >"$dir/out" 2>"$dir/err"; rc=$?
    fi
    [ "$rc" = "$want" ] || complain "$end: exit status $rc, expected $want"
    grep -q "children started" "$dir/out" || complain "$end: the children were not started"
    for f in bg popen fork; do
        p=$(cat "$dir/$f.pid" 2>/dev/null)
        if [ -z "$p" ]; then complain "$end: no $f.pid"; continue; fi
        for _ in $(seq 20); do alive "$p" || break; sleep 0.1; done
        if alive "$p"; then
            complain "$end: the $f child $p outlived the job"
            kill -KILL "$p" 2>/dev/null
        fi
    done
    [ "$fail" = 0 ] || cat "$dir/err"
    rm -rf "$dir"
done
[ "$fail" = 0 ] && echo "children_test: ok"
exit $fail
