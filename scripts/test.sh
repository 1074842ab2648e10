#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12: install, build with warnings as errors, run ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
# Two tests at a time: most of a test's time is spent waiting (deadlines, a stopped rank); the
# test bed's tests take turns, and those that judge rates or the fault campaigns' time bounds
# run alone (RESOURCE_LOCK, RUN_SERIAL in tests/integration/CMakeLists.txt).
(cd build && ctest --output-on-failure --timeout 300 -j2)
# The same suite under ASan + UBSan, the queue and proxy under TSan, the libFuzzer targets for
# 20 s each, and memcheck runs (scripts/sanitize.sh, fuzz.sh, valgrind.sh).
bash scripts/sanitize.sh -j2
bash scripts/fuzz.sh 20
bash scripts/valgrind.sh
