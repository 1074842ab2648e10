#!/usr/bin/env bash
# Configure and build into ./build (warnings are errors). Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DEB_WERROR=ON "$@"
cmake --build build -j"$(nproc)"
