#!/usr/bin/env bash
# The whole test suite (CI runs exactly this), in stages:
#  format      clang-format 14 check of every C++ source (check-format.sh);
#  tests       Release build with warnings as errors, every CTest test (unit + integration);
#  fuzz        the fuzz targets built with clang in build-fuzz (only the readers they need), each
#              run for a bounded time (TUNEKIT_FUZZ_SECONDS, default 12);
#  sanitizers  the unit tests built under AddressSanitizer + UndefinedBehaviorSanitizer in
#              build-asan and run there (test-sanitizers.sh).
# A failing stage (build or test) does not stop the later ones; the exit status is non-zero when
# any failed, and the last lines give each stage's time and name the failed ones.
set -euo pipefail
cd "$(dirname "$0")/.."
failed=()
times=()
stage() {  # name, command...: runs one stage, records its time and whether it failed
  local name="$1" start=$SECONDS rc=0
  shift
  "$@" || rc=$?
  times+=("$name $((SECONDS - start)) s")
  if [ "$rc" -ne 0 ]; then failed+=("$name"); fi
}
tests() {
  ./scripts/build.sh &&
    ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
}
fuzz() {
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DTUNEKIT_BUILD_FUZZERS=ON -DTUNEKIT_FUZZ_SECONDS="${TUNEKIT_FUZZ_SECONDS:-12}" >/dev/null &&
    cmake --build build-fuzz --target fuzz_results_csv fuzz_signature &&
    ctest --test-dir build-fuzz -R '^fuzz\.' --output-on-failure --timeout 300
}
./scripts/install-deps.sh
stage format ./scripts/check-format.sh
stage tests tests
stage fuzz fuzz
stage sanitizers ./scripts/test-sanitizers.sh
echo "test.sh: ${times[*]/%/;} total $SECONDS s"
if [ ${#failed[@]} -ne 0 ]; then
  echo "test.sh: FAILED stage(s): ${failed[*]}" >&2
  exit 1
fi
echo "test.sh: all stages passed"
