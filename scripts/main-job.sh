#!/usr/bin/env bash
# The main job on a fresh Debian 12: install, build, then `efabench write` across 2 local ranks
# on the shm provider, printing the results table. Extra arguments go to efabench.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh >/dev/null
exec ./build/efabench write --np 2 --provider shm "$@"
