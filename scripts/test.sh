#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every CTest test (unit + integration).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
