#!/bin/bash
# Every LOOM_ environment variable Loom reads is read through the options
# table (src/util/options.def), so the MPI_T control variables and
# docs/mpi_t.md list it: no getenv("LOOM_...") or loom_env_size("LOOM_...")
# anywhere else. (The per-collective LOOM_COLL_<COLLECTIVE> variables are
# built from coll.h's list of collectives, and listed by src/mpi/mpit.c from
# the same list.)
#   tests/options_registered.sh SOURCE_ROOT
set -u
root=$1
found=$(grep -rnE 'getenv\("LOOM_|loom_env_size\("LOOM_|secure_getenv\("LOOM_' \
    "$root/src" "$root/tools" --include='*.c' --include='*.h' | grep -v '^[^:]*/src/util/options\.c:')
if [ -n "$found" ]; then
    echo "$found"
    echo "read these through src/util/options.def (loom_opt_size/flag/str)"
    exit 1
fi
n=$(grep -c '^LOOM_OPTION(' "$root/src/util/options.def")
echo "$n options, all read through the table"
