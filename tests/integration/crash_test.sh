#!/usr/bin/env bash
# Results files that survive anything: a tune-file process killed with SIGKILL mid-tuning leaves
# a file that loads with every completed result; a torn last line is ignored with a warning
# naming it and removed by the next append; four tune-file processes share one results file.
# Usage: crash_test.sh <tunekit>
set -uo pipefail
TK="$(realpath "$1")"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"
export TUNEKIT_THREADS=1
fails=0; passes=0
pass() { passes=$((passes+1)); }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
check() { local name="$1"; shift; if "$@"; then pass; else fail "$name"; fi; }
results_of() { grep -vc '^Validator,' "$1"; }
# Every result line has >= 4 fields and a numeric time, and the file ends with a line end.
all_lines_whole() {
  [ "$(tail -c1 "$1" | od -An -c | tr -d ' ')" = '\n' ] &&
    awk '!/^Validator,/ { line = $0; gsub(/\[[^]]*\]/, "[]", line); n = split(line, f, ",")
      if (n < 4 || f[4] !~ /^[0-9.e+-]+$/) bad = 1 } END { exit bad }' "$1"
}

for i in $(seq 0 11); do m=$((160 + 8 * i)); echo "GemmTunableOp_float_NN,nn_${m}_96_160_ld_${m}_160_${m}"; done >u.csv

# 1. SIGKILL in the middle of tuning.
TUNEKIT_MAX_TUNING_DURATION_MS=40 TUNEKIT_MAX_TUNING_ITERATIONS=0 \
  "$TK" tune-file u.csv --results res.csv --candidates 'eigen,openblas*' >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 1000); do
  [ -f res.csv ] && [ "$(results_of res.csv)" -ge 2 ] && break
  sleep 0.01
done
kill -9 "$pid"; wait "$pid" 2>/dev/null
done_before=$(results_of res.csv)
check "killed before the end" test "$done_before" -ge 2 -a "$done_before" -lt 12
check "every line whole after SIGKILL" all_lines_whole res.csv
"$TK" results show res.csv --threads 1 >show.txt 2>&1 || { fail "results show after SIGKILL"; cat show.txt; }
export TUNEKIT_MAX_TUNING_DURATION_MS=1 TUNEKIT_MAX_TUNING_ITERATIONS=2
"$TK" tune-file u.csv --results res.csv >again.txt 2>&1 || { fail "re-run after SIGKILL"; cat again.txt; }
check "completed results kept" test "$(grep -c ' already tuned$' again.txt)" -eq "$done_before"
check "the rest tuned" test "$(results_of res.csv)" -eq 12
check "no duplicates" test "$(grep -v '^Validator,' res.csv | cut -d, -f1,2 | sort -u | wc -l)" -eq 12

# 2. A torn last line (a writer cut short): ignored on load, removed by the next append.
printf 'GemmTunableOp_float_NN,nn_9_9_9_ld_9_9_9,Defa' >>res.csv
torn_line=$(wc -l <res.csv); torn_line=$((torn_line + 1))
echo "GemmTunableOp_float_NN,nn_11_11_11_ld_11_11_11" >one.csv
"$TK" tune-file one.csv --results res.csv >torn.txt 2>&1 || { fail "tune-file on a torn file"; cat torn.txt; }
check "torn line named on load" grep -q "res.csv:$torn_line: ignoring the incomplete last line 'GemmTunableOp_float_NN,nn_9_9_9_ld_9_9_9,Defa'" torn.txt
check "torn line removed on append" grep -q "res.csv:$torn_line: removed the incomplete last line" torn.txt
check "file whole again" all_lines_whole res.csv
check "13 results" test "$(results_of res.csv)" -eq 13

# 3. Four processes tuning into one results file at once.
for p in 0 1 2 3; do
  for i in 0 1 2 3 4; do n=$((3 + p * 5 + i)); echo "GemmTunableOp_float_TN,tn_16_${n}_24_ld_24_24_16"; done >"p$p.csv"
done
pids=()
for p in 0 1 2 3; do "$TK" tune-file "p$p.csv" --results shared.csv >"p$p.txt" 2>&1 & pids+=($!); done
for p in "${pids[@]}"; do wait "$p" || fail "concurrent tune-file $p"; done
check "one header" test "$(grep -c '^Validator,TUNEKIT_VERSION,' shared.csv)" -eq 1
check "20 results from 4 processes" test "$(results_of shared.csv)" -eq 20
check "shared file whole" all_lines_whole shared.csv
"$TK" results show shared.csv --threads 1 >/dev/null 2>&1 || fail "shared file does not load"

echo "crash: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
