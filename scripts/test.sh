#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12: install, build with warnings as errors, run ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
(cd build && ctest --output-on-failure --timeout 300)
# The same suite under ASan + UBSan, the queue and proxy under TSan, the libFuzzer targets for
# a minute each, and memcheck runs (scripts/sanitize.sh, fuzz.sh, valgrind.sh).
bash scripts/sanitize.sh
bash scripts/fuzz.sh 60
bash scripts/valgrind.sh
