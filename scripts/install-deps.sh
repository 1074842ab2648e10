#!/usr/bin/env bash
# Install what efabench needs on Debian 12 (run as root). Only missing packages are fetched.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libfabric-dev libfabric-bin libopenmpi-dev openmpi-bin mpich libmpich-dev
	libhwloc-dev python3 python3-matplotlib bc procps iproute2
	slurm-wlm munge groff-base
	clang libclang-rt-14-dev valgrind)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
