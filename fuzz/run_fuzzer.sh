#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time: new inputs go to <corpus> (created), seeds are
# read from the further directories (those that exist). Fails on any crash, leak or sanitizer
# report, leaving the reproducer next to the corpus.
# Usage: run_fuzzer.sh <fuzzer> <seconds> <corpus> [seed dir...]
set -euo pipefail
fuzzer="$1"; seconds="$2"; corpus="$3"; shift 3
mkdir -p "$corpus"
seeds=()
for d in "$@"; do [ -d "$d" ] && seeds+=("$d"); done
cd "$(dirname "$corpus")"
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -print_final_stats=1 "$corpus" "${seeds[@]}"
