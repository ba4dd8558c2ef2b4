#!/bin/bash
# The gdb extension (tools/loom-gdb.py, docs/debugging.md) on a live job:
# `loom ranks` lists what each rank waits for, `loom rank N bt` walks a
# parked rank's own stack into the program's source, and --debug-rank stops a
# rank in MPI_Init until `loom release`.
#   gdb_test.sh MPIEXEC GDB_SCRIPT DEADLOCK_PROGRAM HELLO_PROGRAM
# Exits 77 (skipped) where gdb is missing or may not trace (ptrace refused).
set -u
mpiexec=$1 script=$2 deadlock=$3 hello=$4
command -v gdb >/dev/null || { echo "gdb is not installed: skipped"; exit 77; }
gdb -nx -batch -ex run --args /bin/true 2>&1 | grep -q "exited normally" ||
    { echo "gdb cannot run a program here (ptrace refused?): skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { grep -Eq -- "$2" "$1" || { echo "FAILED: $(basename "$1") lacks /$2/"; fail=1; }; }
common='set pagination off
set confirm off
set breakpoint pending on
handle SIG64 nostop noprint pass
handle SIGQUIT nostop noprint pass'

# 1. Stopped right after a state view, at 1 s: rank 0 sleeps 1.5 s, ranks 1-2
#    wait for its message.
cat >"$tmp/state.gdb" <<GDB
$common
break loom_debug_state_printed
run
delete
loom ranks
loom rank 1 bt
loom rank 0 bt
kill
GDB
timeout -s KILL 120 gdb -nx -batch -x "$script" -x "$tmp/state.gdb" \
    --args "$mpiexec" --report-state-after 1 -n 3 "$deadlock" sleep >"$tmp/state.out" 2>&1
check "$tmp/state.out" "^loom: ranks 1-2: waits for a receive from rank 0 \(tag 0"
check "$tmp/state.out" "^loom: rank 0: is parked outside MPI"
check "$tmp/state.out" "^rank 1:$"
check "$tmp/state.out" "^#[0-9]+ .* in (P?MPI_Recv|loom_req_wait) "
check "$tmp/state.out" "^#[0-9]+ .* in recv_from "
check "$tmp/state.out" "^#[0-9]+ .*main "
check "$tmp/state.out" "^#[0-9]+ .* in usleep "

# 2. --debug-rank 1: rank 1 waits in MPI_Init, says how to attach, and goes
#    on after `loom release`.
cat >"$tmp/debug.gdb" <<GDB
$common
break loom_debug_waiting
run
delete
print \$loom_rank()
loom release
continue
GDB
timeout -s KILL 120 gdb -nx -batch -x "$script" -x "$tmp/debug.gdb" \
    --args "$mpiexec" --debug-rank 1 -n 2 "$hello" >"$tmp/debug.out" 2>&1
check "$tmp/debug.out" "^loom: rank 1 waits in MPI_Init for a debugger: gdb -p [0-9]+ -x .*loom-gdb.py"
check "$tmp/debug.out" "hit Breakpoint 1.* loom_debug_waiting"
check "$tmp/debug.out" "^\\\$1 = 1$"
check "$tmp/debug.out" "^hello from rank 1 of 2$"
check "$tmp/debug.out" "exited normally"
if [ "$fail" = 1 ]; then
    for f in state debug; do echo "--- $f"; grep -v '^\[New Thread' "$tmp/$f.out" | head -c 6000; done
    exit 1
fi
echo "gdb_test: ok"
