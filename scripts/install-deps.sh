#!/bin/bash
# Installs what building and testing Loom needs on Debian 12, if missing.
# Benchmarks install Open MPI and MPICH themselves (bench/compare).
set -euo pipefail
need=()
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in build-essential cmake ninja-build pkg-config libhwloc-dev hwloc clang-format \
         python3 python3-matplotlib binutils valgrind autoconf gdb; do
    have "$p" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "loom: installing ${need[*]}"
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
