#!/bin/bash
# Configure probes see what Loom really has: autoconf's AC_CHECK_FUNCS and
# CMake's check_function_exists / check_symbol_exists, run with Loom's mpicc
# as CC, find the MPI functions that src/mpi/functions*.def lists and miss
# the others (mpicc links with -z defs); a program that calls a missing MPI
# function fails to link with a message naming it; legacy C with implicit
# declarations of libc functions still builds and runs.
#   probe_test.sh BUILD_DIR SOURCE_DIR
set -u
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
mpicc=$build/bin/mpicc mpiexec=$build/bin/mpiexec
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
complain() { echo "FAILED: $*"; fail=1; }

# The truth: what mpi.h declares.
implemented=$(cat "$src"/src/mpi/functions*.def | sed -nE 's/^LOOM_FN\([^,]+, ([A-Za-z0-9_]+), .*/MPI_\1/p' | sort -u)
has() { grep -qx "$1" <<<"$implemented"; }
candidates="MPI_Init MPI_Allreduce MPI_Comm_split MPI_Session_init MPI_Win_create MPI_Comm_spawn
            MPI_File_open MPI_Cart_create MPI_Intercomm_create MPI_T_init_thread"
names=()
for f in $candidates; do names+=("$f"); done
nyes=0 nno=0
for f in "${names[@]}"; do if has "$f"; then nyes=$((nyes + 1)); else nno=$((nno + 1)); fi; done
[ "$nyes" -gt 0 ] && [ "$nno" -gt 0 ] || complain "the candidate list needs names Loom has and names it lacks ($nyes/$nno)"

# autoconf
if command -v autoconf >/dev/null; then
    mkdir "$tmp/ac"
    {
        echo 'AC_INIT([probe], [1])'
        echo 'AC_PROG_CC'
        echo "AC_CHECK_FUNCS([${names[*]} strtok_r loom_no_such_function])"
        echo 'AC_OUTPUT'
    } >"$tmp/ac/configure.ac"
    if (cd "$tmp/ac" && autoconf && ./configure CC="$mpicc" >configure.out 2>&1); then
        for f in "${names[@]}" strtok_r loom_no_such_function; do
            want=no
            { has "$f" || [ "$f" = strtok_r ]; } && want=yes
            grep -q "^checking for $f\\.\\.\\. $want\$" "$tmp/ac/configure.out" ||
                complain "autoconf: $f: $(grep "^checking for $f\\.\\.\\." "$tmp/ac/configure.out"), expected $want"
        done
    else
        complain "autoconf or configure failed"; cat "$tmp/ac/configure.out" "$tmp/ac/config.log" 2>/dev/null | tail -40
    fi
else
    complain "autoconf is not installed (scripts/install-deps.sh installs it)"
fi

# CMake
mkdir "$tmp/cm"
{
    echo 'cmake_minimum_required(VERSION 3.22)'
    echo 'project(probe C)'
    echo 'include(CheckFunctionExists)'
    echo 'include(CheckSymbolExists)'
    for f in "${names[@]}"; do
        echo "check_function_exists($f FN_$f)"
        echo "check_symbol_exists($f mpi.h SYM_$f)"
        echo "message(STATUS \"probe $f fn=\${FN_$f} sym=\${SYM_$f}\")"
    done
} >"$tmp/cm/CMakeLists.txt"
if CC=$mpicc cmake -S "$tmp/cm" -B "$tmp/cm/b" >"$tmp/cm/out" 2>&1; then
    for f in "${names[@]}"; do
        if has "$f"; then want="fn=1 sym=1"; else want="fn= sym="; fi
        grep -q -- "-- probe $f $want\$" "$tmp/cm/out" ||
            complain "cmake: $(grep -- "-- probe $f " "$tmp/cm/out"), expected $want"
    done
else
    complain "cmake configure failed"; tail -30 "$tmp/cm/out"
fi

# A call to a missing MPI function fails at link time, naming it.
for f in "${names[@]}"; do has "$f" || { missing=$f; break; }; done
cat >"$tmp/missing.c" <<EOC
#include <mpi.h>
int $missing();
int main(int argc, char **argv) { MPI_Init(&argc, &argv); $missing(); MPI_Finalize(); return 0; }
EOC
if "$mpicc" -o "$tmp/missing" "$tmp/missing.c" 2>"$tmp/missing.err"; then
    complain "a program calling $missing linked"
else
    grep -q "undefined reference to \`$missing'" "$tmp/missing.err" || complain "no linker error for $missing"
    grep -q "mpicc: Loom does not implement $missing yet (what is missing: .*mpi-coverage.md)" "$tmp/missing.err" ||
        { complain "no mpicc message for $missing"; cat "$tmp/missing.err"; }
fi
[ -e "$tmp/missing" ] && complain "the failed link left $tmp/missing"

# Another undefined function fails too, without the MPI note.
printf 'int loom_nowhere(void);\nint main(void) { return loom_nowhere(); }\n' >"$tmp/nowhere.c"
if "$mpicc" -o "$tmp/nowhere" "$tmp/nowhere.c" 2>"$tmp/nowhere.err"; then
    complain "a program calling an undefined function linked"
else
    grep -q "Loom does not implement" "$tmp/nowhere.err" && complain "MPI note for a non-MPI symbol"
fi

# Legacy C: implicit declarations of libc functions still build and run.
printf '#include <mpi.h>\nint main(int argc, char **argv) { MPI_Init(&argc, &argv); printf("legacy ok\\n"); MPI_Finalize(); return 0; }\n' >"$tmp/legacy.c"
if "$mpicc" -std=gnu89 -o "$tmp/legacy" "$tmp/legacy.c" 2>"$tmp/legacy.err"; then
    out=$("$mpiexec" -n 2 "$tmp/legacy")
    [ "$(grep -c '^legacy ok$' <<<"$out")" = 2 ] || complain "legacy program printed: $out"
else
    complain "legacy C with an implicit declaration did not build"; cat "$tmp/legacy.err"
fi

# -show prints the flag.
"$mpicc" -show -o x x.c | grep -qE -- '-z\\?,defs' || complain "-show lacks -z,defs"

[ "$fail" = 0 ] && echo "probe_test: ok"
exit $fail
