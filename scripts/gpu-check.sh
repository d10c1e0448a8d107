#!/usr/bin/env bash
# GPU check on a machine with an NVIDIA GPU: configures and builds tunekit with CUDA (NVRTC, the
# driver loaded at run time), runs the CUDA and OpenCL unit tests, then tunes the CUDA matmul
# example for 20 trials. Prints versions and the time of each step; meant to finish in < 5 min.
# Usage: scripts/gpu-check.sh            (build in ./build-gpu; TUNEKIT_CMAKE_ARGS as build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${TUNEKIT_GPU_BUILD_DIR:-build-gpu}
step_start=$(date +%s)
step() {  # prints the time the previous step took, then the new step's name
  local now; now=$(date +%s)
  echo "== [$((now - step_start)) s] $*"
  step_start=$now
}

step "versions"
nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv || true
if [ -x /usr/local/cuda/bin/nvcc ]; then /usr/local/cuda/bin/nvcc --version | tail -n 2; fi
command -v clinfo >/dev/null && clinfo -l || true
uname -r; c++ --version | head -n 1; cmake --version | head -n 1

step "configure (CUDA on)"
if [ -x ./scripts/install-deps.sh ] && [ "${TUNEKIT_SKIP_DEPS:-0}" != 1 ]; then
  ./scripts/install-deps.sh
fi
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTUNEKIT_WITH_CUDA=ON \
  -DTUNEKIT_BUILD_BENCHMARKS=OFF -DTUNEKIT_BUILD_EXAMPLES=OFF ${TUNEKIT_CMAKE_ARGS:-} |
  grep -E "tunekit GPU kernels|Error" || true

step "build (measure tests, worker, CLI)"
targets=(--target tunekit_unit_measure --target tunekit_kernel_worker)
if cmake --build "$BUILD" --target help | grep -q '^tunekit_cli'; then
  targets+=(--target tunekit_cli)
fi
cmake --build "$BUILD" -j"$(nproc)" "${targets[@]}"

step "CUDA and OpenCL unit tests"
"$BUILD/tests/tunekit_unit_measure" \
  --gtest_filter='NvrtcCompile.*:CudaDriver.*:DeviceBuilderTest.*:GpuRunnerTest.*:OpenClCompile.*:LaunchDims.*'

step "tune the CUDA matmul example (20 trials)"
cli=$(find "$BUILD" -maxdepth 3 -type f -name tunekit -perm -u+x | head -n 1)
if [ -n "$cli" ] && "$cli" --help 2>&1 | grep -q tune-kernel; then
  log_dir=$(mktemp -d)
  cp examples/kernels/matmul/matmul.cu examples/kernels/matmul/matmul_cuda.json "$log_dir/"
  TUNEKIT_CACHE_DIR="$log_dir/cache" timeout 240 \
    "$cli" tune-kernel "$log_dir/matmul_cuda.json" --budget 20
else
  echo "skipped: this build's tunekit CLI has no tune-kernel command"
fi
step "done"
