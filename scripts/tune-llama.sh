#!/usr/bin/env bash
# The main job: installs what is missing, builds the tunekit program (and the library it links,
# not the tests or benchmarks), and tunes the GEMMs of Llama-2-7B on this machine, printing a table
# and appending to llama2-7b_results.csv (re-runs only tune what is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh tunekit_cli >/dev/null
# --results llama2-7b_results.csv unless the arguments name a results file of their own.
results=(--results llama2-7b_results.csv)
for arg in "$@"; do
  case "$arg" in --results | --results=*) results=() ;; esac
done
exec ./build/tools/cli/tunekit tune-file examples/workloads/llama2-7b_float_untuned.csv \
  "${results[@]}" "$@"
