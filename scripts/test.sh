#!/bin/bash
# Runs every test: formatting, the ASAN+UBSAN and TSAN builds, then the
# release build with -Werror (its ctest summary comes last).
# LOOM_TEST_PRESETS="ci" runs a subset (default: "asan tsan ci").
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh || exit 1
jobs=$(nproc)
status=0

echo "== clang-format check"
# Judged by what clang-format prints: under pipefail a pipeline's status
# would be xargs' own, whatever grep found.
fmt=$(git ls-files '*.c' '*.h' '*.cpp' | xargs clang-format --dry-run -Werror 2>&1 | head -20)
if [ -z "$fmt" ]; then
    echo "formatting: ok"
else
    printf '%s\n' "$fmt"
    echo "formatting: the files above differ from .clang-format (run clang-format -i)"
    status=1
fi

for preset in ${LOOM_TEST_PRESETS:-asan tsan ci}; do
    echo "== preset $preset"
    cmake --preset "$preset" >/dev/null || { status=1; continue; }
    log=$(mktemp)
    if ! cmake --build --preset "$preset" -j "$jobs" >"$log" 2>&1; then
        grep -Ev '^\[[0-9]+/[0-9]+\] ' "$log" | tail -60
        echo "build failed: $preset"
        rm -f "$log"
        status=1
        continue
    fi
    rm -f "$log"
    ctest --preset "$preset" -j "$jobs" --timeout 300 || status=1
done
exit $status
