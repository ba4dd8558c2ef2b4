#!/bin/bash
# Installs what is missing, builds Loom (release) and runs the demo job on 16 ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
echo
echo "== mpiexec -n 16 examples/demo  (16 ranks, one process, $(nproc) cores)"
build/release/bin/mpiexec -n 16 build/release/examples/demo
