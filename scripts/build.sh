#!/usr/bin/env bash
# Configures and builds tunekit (Release, Ninja) into ./build after installing missing packages.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTUNEKIT_WERROR=ON ${TUNEKIT_CMAKE_ARGS:-} >/dev/null
cmake --build build -j"$(nproc)"
