#!/usr/bin/env bash
# Distributed offline tuning over MPI on localhost: mpirun --oversubscribe -n 3 tune-file
# 'tunekit_untuned?.csv' --distributed. A clean run (per-rank files, one gathered _full file and a
# copy per rank, re-runs tune nothing), then a run where rank 1 fails (a malformed setting) and
# rank 2's validators differ: the others' results are written and both ranks are reported.
# Usage: mpi_test.sh <tunekit> <mpiexec>
set -uo pipefail
TK="$(realpath "$1")"; MPIEXEC="$2"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"
# CI runs as root; OpenMPI refuses that unless told (--allow-run-as-root or its variables).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export TUNEKIT_MAX_TUNING_DURATION_MS=1 TUNEKIT_MAX_TUNING_ITERATIONS=2
fails=0; passes=0
pass() { passes=$((passes+1)); }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
check() { local name="$1"; shift; if "$@"; then pass; else fail "$name"; fi; }
results_of() { grep -vc '^Validator,' "$1"; }

# Two untuned files as two processes (devices) would record them; one problem is in both.
for i in 0 1 2 3 4; do echo "GemmTunableOp_float_TN,tn_$((16 + i))_8_24_ld_24_24_$((16 + i))"; done >tunekit_untuned0.csv
for i in 4 5 6 7 8 9; do echo "GemmTunableOp_float_TN,tn_$((16 + i))_8_24_ld_24_24_$((16 + i))"; done >tunekit_untuned1.csv
echo "ScaledGemmTunableOp_Float8_e4m3fn_Float8_e4m3fn_BFloat16_TN,tn_64_32_128_ld_128_128_64_rw_0_bias_None" >>tunekit_untuned1.csv

"$MPIEXEC" --oversubscribe -n 3 "$TK" tune-file 'tunekit_untuned?.csv' --distributed >run1.txt 2>&1 ||
  { fail "clean distributed run"; cat run1.txt; }
for r in 0 1 2; do
  check "rank $r results file" test -s "tunekit_results$r.csv"
  check "full copy $r" cmp -s tunekit_results_full0.csv "tunekit_results_full$r.csv"
done
check "10 distinct problems gathered" test "$(results_of tunekit_results_full0.csv)" -eq 10
check "full larger than a rank's file" test "$(wc -c <tunekit_results_full0.csv)" -gt "$(wc -c <tunekit_results0.csv)"
check "round-robin: rank 1 tuned 3" test "$(results_of tunekit_results1.csv)" -eq 3
check "ScaledGemm skipped with reason" grep -q 'tunekit_untuned1.csv:7: .*ScaledGemm' run1.txt
check "duplicate dropped" grep -q '1 duplicate line(s) ignored' run1.txt
check "ranks agree" grep -q 'from 3 rank(s) with matching validators' run1.txt

# A re-run finds every problem in the gathered file and tunes nothing.
"$MPIEXEC" --oversubscribe -n 3 "$TK" tune-file 'tunekit_untuned?.csv' --distributed >run2.txt 2>&1 ||
  { fail "re-run"; cat run2.txt; }
check "re-run tunes nothing" grep -q '^0 tuned, 10 already tuned' run2.txt

# Rank 1 fails (malformed setting), rank 2 runs with another thread count (THREADS validator).
rm -f tunekit_results*.csv
"$MPIEXEC" --oversubscribe -n 1 "$TK" tune-file 'tunekit_untuned?.csv' --distributed \
  : -n 1 env TUNEKIT_MAX_TUNING_ITERATIONS=abc "$TK" tune-file 'tunekit_untuned?.csv' --distributed \
  : -n 1 env TUNEKIT_THREADS=2 "$TK" tune-file 'tunekit_untuned?.csv' --distributed >run3.txt 2>&1
rc=$?
check "failure gives a non-zero exit status" test "$rc" -ne 0
check "failed rank reported" grep -q "rank 1 (.*): failed: TUNEKIT_MAX_TUNING_ITERATIONS: expected an integer, got 'abc'" run3.txt
check "its problems reported" test "$(grep -c 'not tuned: rank 1 failed' run3.txt)" -eq 3
check "mismatched rank reported" grep -q "rank 2 (.*): validators differ from rank 0's (THREADS is '2'" run3.txt
check "rank 0's results written" test "$(results_of tunekit_results_full0.csv)" -eq "$(results_of tunekit_results0.csv)"
check "rank 2 kept apart" test "$(results_of tunekit_results2.csv)" -eq 3
check "rank 2 not merged" test "$(cat tunekit_results_full0.csv tunekit_results2.csv | grep -v '^Validator,' | sort | uniq -d | wc -l)" -eq 0
check "copies per rank" cmp -s tunekit_results_full0.csv tunekit_results_full2.csv

echo "mpi: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
