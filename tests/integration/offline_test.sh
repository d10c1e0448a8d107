#!/usr/bin/env bash
# Offline tuning end to end: record untuned GEMMs from the example program, tune them, run tuned;
# PyTorch TunableOp's own files as input (every op kind, skips with reasons, exact padded lds);
# malformed files named by file:line; bucketing; --jobs with a worker killed mid-tuning.
# Usage: offline_test.sh <tunekit> <example_offline_workflow> <source dir>
set -uo pipefail
TK="$(realpath "$1")"; EXAMPLE="$(realpath "$2")"; SRC="$(realpath "$3")"
PT_FILES="$SRC/tests/data/tunableop"; WORKLOADS="$SRC/examples/workloads"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"
export TUNEKIT_MAX_TUNING_DURATION_MS=1 TUNEKIT_MAX_TUNING_ITERATIONS=2 TUNEKIT_THREADS=1
fails=0; passes=0
pass() { passes=$((passes+1)); }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
check() { local name="$1"; shift; if "$@"; then pass; else fail "$name"; fi; }
results_of() { grep -vc '^Validator,' "$1"; }

# 1. Record: tuning off, record-untuned on, BLAS_PARAMS on. 20 GEMMs, 15 distinct.
TUNEKIT_TUNING=0 TUNEKIT_RECORD_UNTUNED=1 TUNEKIT_BLAS_LOG=1 "$EXAMPLE" >rec.txt 2>&1 || fail "record run"
check "untuned file name" test -f tunekit_untuned0.csv
check "15 distinct problems recorded" test "$(wc -l <tunekit_untuned0.csv)" -eq 15
check "BLAS_PARAMS suffix" grep -q ',BLAS_PARAMS: - { function: matmul, M: 768, N: 1, K: 256,' tunekit_untuned0.csv
check "no results file while recording" test ! -e tunekit_results0.csv

# 2. Tune the recorded file (BLAS_PARAMS blocks contain commas).
"$TK" tune-file tunekit_untuned0.csv >tune.txt 2>&1 || { fail "tune-file"; cat tune.txt; }
check "15 results" test "$(results_of tunekit_results0.csv)" -eq 15
while IFS=, read -r op params _; do
  grep -q "^$op,$params," tunekit_results0.csv || fail "untuned $op,$params missing from results"
done <tunekit_untuned0.csv

# 3. Run tuned with tuning off: the results are used, nothing is added.
cp tunekit_results0.csv before.csv
TUNEKIT_TUNING=0 TUNEKIT_VERBOSE=1 "$EXAMPLE" >run.txt 2>&1 || fail "tuned run"
check "tuned run loads 15" grep -q "loaded results from 'tunekit_results0.csv' (15 results" run.txt
check "tuned run adds nothing" cmp -s before.csv tunekit_results0.csv
checksum() { grep -o 'checksum [-0-9.]*' "$1" | cut -d' ' -f2; }
check "same checksum (up to rounding)" awk -v a="$(checksum rec.txt)" -v b="$(checksum run.txt)" \
  'BEGIN { d = a - b; exit !(a != "" && d < 0.05 && d > -0.05) }'

# 4. PyTorch TunableOp's own files, plus lines tunekit cannot run.
cat >mixed_untuned.csv <<'EOF'
ScaledGemmTunableOp_Float8_e4m3fn_Float8_e4m3fn_BFloat16_TN,tn_64_32_128_ld_128_128_64_rw_0_bias_None
GemmTunableOp_Half_NT,nt_65536_32768_384_ld_65536_65536_65536
GemmTunableOp_float_NT,nt_64_32_16_ld_64_64_64
GemmTunableOp_float_NN,nn_*_32_16_ld_*_16_*,eigen,0.1
GemmTunableOp_float_TN,tn_24_8_40_ld_48_40_24,Gemm_Rocblas_-61,0.5,BLAS_PARAMS: - { function: matmul, M: 24, N: 8 }
EOF
"$TK" tune-file "$PT_FILES/untuned_mixed_ops.csv" mixed_untuned.csv \
  "$PT_FILES/rocm_mid2024_results.csv" --results pt.csv >pt.txt 2>&1 || { fail "tune-file on PyTorch files"; cat pt.txt; }
check "skipped list" grep -q '^skipped 3 problem(s):' pt.txt
check "ScaledGemm reason" grep -q 'mixed_untuned.csv:1: .*ScaledGemm (fp8 with scales) has no CPU candidates' pt.txt
check "Half reason" grep -q "mixed_untuned.csv:2: .*dtype 'Half' is not supported" pt.txt
check "wildcard reason" grep -q 'mixed_untuned.csv:4: .*wildcard or bucket entry' pt.txt
# Padded lds are rebuilt exactly (ROCm/TheRock#5553): the tuned key is the recorded key.
check "padded ldb kept" grep -q '^GemmTunableOp_float_NT,nt_64_32_16_ld_64_64_64,' pt.csv
check "padded lda kept" grep -q '^GemmTunableOp_float_TN,tn_24_8_40_ld_48_40_24,' pt.csv
# 10 problems; tn_8192_2_3584 comes twice (old and _ld_ form, the same problem).
check "every kind tuned" test "$(results_of pt.csv)" -eq 9
check "old signatures get _ld_" grep -q '^GemmTunableOp_BFloat16_TN,tn_7168_2_8192_ld_8192_8192_7168,' pt.csv

# 5. Malformed files: one message naming file and line.
expect_fail() {  # name, expected stderr substring, command...
  local name="$1" needle="$2"; shift 2
  if "$@" >out.txt 2>err.txt; then fail "$name: succeeded"; return; fi
  grep -qF -- "$needle" err.txt || { fail "$name: stderr lacks '$needle'"; cat err.txt; return; }
  [ "$(wc -l <err.txt)" -le 2 ] || { fail "$name: more than one error line"; cat err.txt; return; }
  pass
}
header_lines=$(grep -c '^Validator,' tunekit_results0.csv)
{ grep '^Validator,' tunekit_results0.csv; printf 'GemmTunableOp_float_NN,nn_8_8_8_ld_8_8_8,Default,fast\n'; } >badtime.csv
expect_fail "non-numeric time" "badtime.csv:$((header_lines + 1)): could not parse time 'fast'" \
  "$TK" tune-file tunekit_untuned0.csv --results badtime.csv
printf 'GemmTunableOp_float_NN,nn_8_8_8_ld_8_8_8,Default,0.1\r\n' >headerless.csv
expect_fail "header-less" 'headerless.csv:1: key="TUNEKIT_VERSION" is not provided' \
  "$TK" tune-file tunekit_untuned0.csv --results headerless.csv
printf 'GemmTunableOp_float_NN\0\1\2' >binary.csv
expect_fail "binary" "binary.csv:1: binary content" "$TK" tune-file binary.csv

# 6. Buckets: representatives tuned, one [lo-hi] entry per bucket, served by the fallback.
"$TK" tune-file "$WORKLOADS/bert-base_float_untuned.csv" --buckets 1-200:128,201-1000:512 \
  --results buckets.csv --candidates 'onednn_sgemm' >buckets.txt 2>&1 || { fail "buckets"; cat buckets.txt; }
check "bucket entries" test "$(grep -c '_\[' buckets.csv)" -eq 6
check "open last bucket" grep -q '^GemmTunableOp_float_TN,tn_768_\[201-\]_3072_ld_3072_3072_768,' buckets.csv

# 7. --jobs 2 with a worker killed mid-tuning: the other's results and the dead worker's complete
#    results are gathered; its lost problems are reported.
for i in 0 1 2 3 4 5 6 7; do m=$((200 + i)); echo "GemmTunableOp_float_NN,nn_${m}_64_200_ld_${m}_200_${m}"; done >jobs.csv
TUNEKIT_MAX_TUNING_DURATION_MS=100 TUNEKIT_MAX_TUNING_ITERATIONS=0 "$TK" tune-file jobs.csv \
  --jobs 2 --results jobs_results.csv --candidates 'eigen,onednn_sgemm' >jobs.txt 2>&1 &
parent=$!
for _ in $(seq 1 600); do
  [ -f jobs_results1.csv ] && [ "$(grep -vc '^Validator,' jobs_results1.csv 2>/dev/null)" -ge 1 ] && break
  sleep 0.02
done
victim=$(pgrep -P "$parent" | sed -n 2p)
[ -n "$victim" ] && kill -9 "$victim"
wait "$parent"; rc=$?
check "jobs: exit status reports the failure" test "$rc" -ne 0
check "jobs: killed job named" grep -q 'rank 1.*killed by signal 9' jobs.txt
check "jobs: recovered" grep -q 'recovered from jobs_results1.csv' jobs.txt
check "jobs: full files written" test -s jobs_results_full0.csv -a -s jobs_results_full1.csv
check "jobs: full copies equal" cmp -s jobs_results_full0.csv jobs_results_full1.csv
check "jobs: rank 0 results gathered" test "$(results_of jobs_results_full0.csv)" -ge "$(results_of jobs_results0.csv)"

echo "offline: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
