#!/usr/bin/env bash
# Reproduces the figures in docs/performance.md: tunes Llama-2-7B with 1 and 2 threads (timed),
# re-times Default / every candidate / the tuned dispatch interleaved, and measures the dispatch
# overhead; where torch and transformers are installed, runs the Llama model through
# tunekit.torch (bench/python/llama_e2e.py) in float32 and bfloat16. Writes everything under
# ${OUT:-figures/}. Takes about 50-70 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh tunekit_cli dispatch_overhead >/dev/null
out="${OUT:-figures}"; mkdir -p "$out"
tk=./build/tools/cli/tunekit
wl=examples/workloads/llama2-7b_float_untuned.csv
for t in 1 2; do
  rm -f "$out/llama2-7b_t$t.csv"
  /usr/bin/time -f "tune-file wall %e s" "$tk" tune-file "$wl" --threads "$t" \
    --results "$out/llama2-7b_t$t.csv" 2>&1 | tee "$out/tune_t$t.txt"
  /usr/bin/time -f "compare wall %e s" "$tk" compare "$wl" --threads "$t" \
    --results "$out/llama2-7b_t$t.csv" --repeats 5 --all 2>&1 | tee "$out/compare_t$t.txt"
done
# Hit overhead of the op and of the public tunekit::gemm over the direct call: 5 runs, each the
# median of 5 repetitions, the same candidate every run.
for run in 1 2 3 4 5; do
  echo "## run $run"
  DISPATCH_BENCH_SOLUTION=libxsmm ./build/bench/dispatch_overhead \
    --benchmark_filter='BM_InterleavedOverhead(PublicApi)?/4/' --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true 2>/dev/null | grep median
done | tee "$out/dispatch_overhead.txt"
# A real model through PyTorch (docs/performance.md, "A real model through PyTorch").
if python3 -c "import torch, transformers" 2>/dev/null; then
  ./scripts/build.sh tunekit_python >/dev/null
  for dtype in float32 bfloat16; do
    PYTHONPATH=build/python python3 bench/python/llama_e2e.py --dtype "$dtype" --batch 1 16 \
      --overhead --pools --results "$out/llama_e2e_$dtype.csv" --json "$out/llama_e2e_$dtype.json" \
      2>&1 | tee "$out/llama_e2e_$dtype.txt"
  done
fi
