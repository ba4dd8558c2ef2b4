#!/bin/bash
# Installs the build tree into a prefix, moves the prefix (relocatable), and
# checks that everything works from there: mpicc/mpicxx -show, mpiexec and
# mpirun, loom-info, the pkg-config file, a program built and run on 4 ranks,
# the gdb extension where --debug-rank names it.
#   install_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/first" >/dev/null
mv "$tmp/first" "$tmp/moved"
p=$tmp/moved
for f in bin/mpicc bin/mpicxx bin/mpiexec bin/mpirun bin/loom-info include/mpi.h; do
    [ -e "$p/$f" ] || { echo "install_test: $f is missing from the prefix"; exit 1; }
done
pc=$(find "$p" -name loom.pc | head -1)
[ -n "$pc" ] || { echo "install_test: loom.pc is missing"; exit 1; }
PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags loom | grep -q -- "-I$p" ||
    { echo "install_test: pkg-config does not point into the moved prefix"; exit 1; }
"$p/bin/mpicc" -show | grep -q "$p" || { echo "install_test: mpicc -show does not use the moved prefix"; exit 1; }
"$p/bin/mpicc" -O2 -o "$tmp/hello" "$src/tests/mpi/hello.c"
out=$("$p/bin/mpirun" -n 4 "$tmp/hello" | sort)
[ "$(echo "$out" | grep -c '^hello from rank [0-3] of 4$')" = 4 ] ||
    { echo "install_test: unexpected output:"; echo "$out"; exit 1; }
"$p/bin/loom-info" | grep -q "^Topology:" || { echo "install_test: loom-info failed"; exit 1; }
# The gdb extension sits beside libloom, where --debug-rank names it.
gdbx=$(find "$p" -path "*/loom/loom-gdb.py" | head -1)
[ -n "$gdbx" ] || { echo "install_test: loom/loom-gdb.py is missing"; exit 1; }
LOOM_DEBUG_RANK=none "$p/bin/mpirun" -n 1 "$tmp/hello" >/dev/null
msg=$(LOOM_DEBUG_RANK=0 "$p/bin/mpirun" --timeout 1 -n 1 "$tmp/hello" 2>&1 >/dev/null | head -1 || true)
echo "$msg" | grep -q -- "-x $(cd "$(dirname "$gdbx")" && pwd -P)/loom-gdb.py" ||
    { echo "install_test: --debug-rank does not name the installed gdb extension: $msg"; exit 1; }
echo "install_test: ok"
