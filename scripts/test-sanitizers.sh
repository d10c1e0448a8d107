#!/usr/bin/env bash
# Builds the unit tests under AddressSanitizer + UndefinedBehaviorSanitizer in build-asan (GCC, -O0
# with line tables; no CLI, examples or benchmarks) and runs them (ctest -L unit). Any sanitizer
# report ends its test with a failure (UBSan does not recover). Tests that cannot work under ASan
# (library namespaces with dlmopen) skip with a message.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" -DCMAKE_C_FLAGS_DEBUG="-O0 -g1" \
  -DTUNEKIT_SANITIZE=address,undefined \
  -DTUNEKIT_BUILD_BENCHMARKS=OFF -DTUNEKIT_BUILD_EXAMPLES=OFF ${TUNEKIT_CMAKE_ARGS:-} >/dev/null
cmake --build build-asan -j"$(nproc)" --target tunekit_unit_tests
# intercept_tls_get_addr=0: GCC 12's LeakSanitizer keeps the dynamic TLS blocks of libraries that
# were unloaded (an OpenCL driver's, in-process) and its leak scan crashes on them at exit
# ("DTLS ... at 0x1320", "Tracer caught signal 11"); without the interception it scans no DTLS.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:check_initialization_order=1:intercept_tls_get_addr=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
ctest --test-dir build-asan -L unit --output-on-failure -j"$(nproc)" --timeout 600
