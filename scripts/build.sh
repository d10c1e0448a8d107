#!/usr/bin/env bash
# Configures and builds tunekit (Release, Ninja) into ./build after installing missing packages.
# Usage: build.sh [TARGET...]   builds only the named targets (e.g. tunekit_cli), else everything.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTUNEKIT_WERROR=ON ${TUNEKIT_CMAKE_ARGS:-} >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j"$(nproc)" "${targets[@]}"
