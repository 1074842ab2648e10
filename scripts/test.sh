#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12: install, build with warnings as errors, run ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
cd build
ctest --output-on-failure --timeout 300
