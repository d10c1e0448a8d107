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
  python3-dev pybind11-dev
  libjs-chart.js chromium
)
# libjs-chart.js: the plotting library `tunekit report` inlines into its page; chromium: the
# headless browser the report's test opens the page in (docs/report.md).

# The Python module (docs/python.md) is built for the first `python3` on PATH (a virtual
# environment, pyenv) or TUNEKIT_PYTHON_EXECUTABLE: NumPy and pytest come from Debian when that is
# Debian's own interpreter, else from pip (with ml_dtypes for the bfloat16 tests); nanobind is on
# PyPI only (pip, also into Debian's interpreter; it depends on nothing).
PYTHON="${TUNEKIT_PYTHON_EXECUTABLE:-$(command -v python3 || true)}"
if [ -n "$PYTHON" ]; then
  PYTHON="$("$PYTHON" -c 'import sys; print(sys.executable)' 2>/dev/null || echo "$PYTHON")"
fi
debian_python=0
case "$PYTHON" in /usr/bin/python3*) debian_python=1 ;; esac
if [ "$debian_python" -eq 1 ]; then PACKAGES+=(python3-numpy python3-pytest python3-pip); fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if [ ${#missing[@]} -ne 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python packages for $PYTHON (skipped when they import; a failure only skips the module and
# its tests, with a message from CMake and pytest).
if [ -n "$PYTHON" ] && ! "$PYTHON" -c 'import nanobind, numpy, pytest' 2>/dev/null; then
  if [ "$debian_python" -eq 1 ]; then
    pip_packages=(nanobind)
    pip_flags=(--break-system-packages)
  else
    pip_packages=(nanobind numpy pytest ml_dtypes)
    pip_flags=()
    if [ -n "${SUDO}" ] && [ ! -w "$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" ]; then
      pip_flags=(--user)
    fi
  fi
  echo "install-deps: pip installing ${pip_packages[*]} for $PYTHON" >&2
  "$PYTHON" -m pip install -q --disable-pip-version-check "${pip_flags[@]}" "${pip_packages[@]}" >&2 ||
    echo "install-deps: pip failed; the Python module will be skipped" >&2
fi

# pip_missing WHAT_FAILS PACKAGE==VERSION...: pip-installs into $PYTHON's environment the packages
# it lacks (any version installed counts); a failure only prints what it leaves out.
pip_missing() {
  local fails="$1" missing=() flags=()
  shift
  [ -n "$PYTHON" ] || return 0
  for w in "$@"; do
    "$PYTHON" -m pip show -q "${w%%==*}" >/dev/null 2>&1 || missing+=("$w")
  done
  [ ${#missing[@]} -ne 0 ] || return 0
  if [ "$debian_python" -eq 1 ]; then flags=(--break-system-packages); fi
  echo "install-deps: pip installing ${missing[*]} for $PYTHON" >&2
  "$PYTHON" -m pip install -q --disable-pip-version-check "${flags[@]}" "${missing[@]}" >&2 ||
    echo "install-deps: pip failed; $fails" >&2
}

# GEMM libraries newer than Debian's, from PyPI (docs/candidates.md): MKL, oneDNN 3 built for the
# CPU with GNU OpenMP (its headers too: tunekit compiles against them), OpenBLAS with prefixed
# symbols. Installed into $PYTHON's environment, where CMake finds them (cmake/wheels.cmake); a
# failure only leaves their candidates out (`tunekit candidates` says why).
pip_missing "the MKL, oneDNN 3 or scipy-openblas candidates will be absent" \
  mkl==2026.2.1 onednn-cpu-gomp==2023.2.0 onednn-devel-cpu-gomp==2023.2.0 \
  scipy-openblas32==0.3.34.481.3

# PyTorch (the default PyPI wheel; it runs on CPU, its CUDA libraries simply unused) and
# transformers, for tunekit.torch, its tests and bench/python/llama_e2e.py: about 3 GB. A torch
# already installed is kept (tunekit.torch compiles its kernels against whichever is there).
pip_missing "the tunekit.torch tests will be skipped" torch==2.15.0 transformers==5.25.0 ninja

# bochscpu-python (PyPI; a CPU emulator) for the AVX512-BF16 kernels' emulated check
# (tests/emulated).
pip_missing "the emulated AVX512-BF16 check will be skipped" bochscpu-python==0.4.0
