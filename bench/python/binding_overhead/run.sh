#!/usr/bin/env bash
# Builds the pybind11 and nanobind modules of the binding-overhead benchmark (in
# build-binding-overhead/ at the repository root) and runs bench.py with the same interpreter.
# Needs pybind11-dev (Debian) and nanobind (pip) for `python3`; see docs/python.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
python="${PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}"
cmake -S "$here" -B "$root/build-binding-overhead" -G Ninja -DPython_EXECUTABLE="$python" >/dev/null
cmake --build "$root/build-binding-overhead"
PYTHONPATH="$root/build-binding-overhead" "$python" "$here/bench.py" "$@"
