#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every CTest test (unit + integration),
# then builds the fuzz targets with clang in build-fuzz (only the readers they need) and runs each
# for a bounded time (TUNEKIT_FUZZ_SECONDS, default 12).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTUNEKIT_BUILD_FUZZERS=ON -DTUNEKIT_FUZZ_SECONDS="${TUNEKIT_FUZZ_SECONDS:-12}" >/dev/null
cmake --build build-fuzz --target fuzz_results_csv fuzz_signature
ctest --test-dir build-fuzz -R '^fuzz\.' --output-on-failure --timeout 300
