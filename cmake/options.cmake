# Every tunekit build option, in one place.
option(TUNEKIT_BUILD_TESTS "Build the GoogleTest suites" ON)
option(TUNEKIT_BUILD_BENCHMARKS "Build the Google Benchmark programs" ON)
option(TUNEKIT_BUILD_EXAMPLES "Build the example programs" ON)
option(TUNEKIT_BUILD_FUZZERS "Build libFuzzer targets (needs clang)" OFF)
option(TUNEKIT_WITH_OPENCL "Build OpenCL kernel tuning (builder and runner) when OpenCL is found" ON)
option(TUNEKIT_WITH_CUDA "Build CUDA kernel tuning (NVRTC builder, driver runner) when a toolkit is found" ON)
set(TUNEKIT_CUDA_ARCH "compute_80" CACHE STRING
  "NVRTC --gpu-architecture used when no CUDA driver reports the device's compute capability")
option(TUNEKIT_WITH_MPI "Build distributed tuning over MPI when OpenMPI is found" ON)
option(TUNEKIT_WERROR "Treat compiler warnings as errors" OFF)
set(TUNEKIT_SANITIZE "" CACHE STRING "Comma-separated sanitizers, e.g. address,undefined")
option(TUNEKIT_PYTHON "Build the Python module (build/python/tunekit) when Python 3 development files, nanobind and NumPy are found" ON)
option(TUNEKIT_PYTHON_REQUIRED "Fail instead of skipping the Python module when a piece is missing (pip install sets it)" OFF)
# Unity builds compile a target's sources in batches (one translation unit per batch), so the
# heavy headers (nlohmann/json, fmt, CLI11, GoogleTest) are parsed and instantiated once per batch:
# about half the compile time of a clean build. Turn off for fine-grained incremental rebuilds.
option(TUNEKIT_UNITY_BUILD "Compile each target's sources in unity batches" ON)
set(TUNEKIT_UNITY_BATCH_SIZE 8 CACHE STRING "Sources per unity batch (TUNEKIT_UNITY_BUILD)")
set(CMAKE_UNITY_BUILD ${TUNEKIT_UNITY_BUILD})
set(CMAKE_UNITY_BUILD_BATCH_SIZE ${TUNEKIT_UNITY_BATCH_SIZE})
