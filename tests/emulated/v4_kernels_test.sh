#!/usr/bin/env bash
# tunekit's x86-64-v4 kernels (src/ops/native_kernels.inc: AVX-512 fp32 GEMM, bf16 GEMM through
# AVX512-BF16, fp32 and bf16 decode) checked in an emulated CPU that has those extensions:
# v4_kernels_harness.cpp is built as a static freestanding program and run by run_v4_kernels.py
# in Bochs's Sapphire Rapids model (bochscpu-python, PyPI, installed by scripts/install-deps.sh).
# On CPUs with AVX-512 (and AVX512-BF16) the unit tests run the same kernels natively.
# Exits 77 (skipped) when the Python here cannot import bochscpu (with the shim preloaded).
# Usage: v4_kernels_test.sh <source dir> <work dir>
set -euo pipefail
src="$1"; work="$2"
here="$src/tests/emulated"
python="${TUNEKIT_PYTHON_EXECUTABLE:-python3}"
mkdir -p "$work"
gcc -shared -fPIC -O2 -Wall -Werror "$here/shim.c" -o "$work/libbochs_shim.so" -ldl
if ! LD_PRELOAD="$work/libbochs_shim.so" "$python" -c 'import bochscpu' 2>/dev/null; then
  echo "SKIP: $python cannot import bochscpu (pip install bochscpu-python==0.4.0)"
  exit 77
fi
# One thread, no C library: -nostdlib with the runtime the harness defines; local-exec TLS (the
# emulator sets the thread pointer); no builtin calls to the memset/memcpy being defined.
g++ -std=c++20 -O3 -march=x86-64-v4 -mavx512bf16 -fno-exceptions -fno-rtti -ffreestanding \
  -fno-builtin -fno-tree-loop-distribute-patterns -fno-stack-protector -fno-pic -no-pie \
  -ftls-model=local-exec -fno-asynchronous-unwind-tables -static -nostdlib \
  -I"$src/src" -I"$src/include" "$here/v4_kernels_harness.cpp" -o "$work/v4_kernels_harness" \
  -Wl,--gc-sections -lgcc
LD_PRELOAD="$work/libbochs_shim.so" "$python" "$here/run_v4_kernels.py" "$work/v4_kernels_harness"
