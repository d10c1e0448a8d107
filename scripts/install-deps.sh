#!/usr/bin/env bash
# Installs every Debian package that tunekit's build, tests and main job need.
# Idempotent and non-interactive: does nothing when all packages are present.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git clang-format-14
  clang-14 libclang-rt-14-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev libsqlite3-dev zlib1g-dev libsimdjson-dev
  libopenblas-openmp-dev libopenblas0-openmp
  libblis4-openmp libblis-openmp-dev
  libeigen3-dev libdnnl-dev libxsmm-dev
  libxgboost-dev
  libopenmpi-dev openmpi-bin
  libffi-dev libssl-dev
  ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
