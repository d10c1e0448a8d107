#!/usr/bin/env bash
# Hostile disks and files: a full disk in the middle of an append (RLIMIT_FSIZE), results that
# cannot be saved (a removed folder, a dangling link, a file raced by another environment) end
# the run non-zero with the reason last, devices and FIFOs are refused at once, local jobs end
# with their parent, and the small findings (BOM, --buckets bound, --sample-ms, 2^53, advice).
# Usage: disk_test.sh <tunekit>
set -uo pipefail
source "$(dirname "$(realpath "$0")")/harness.sh"
TK="$(realpath "$1")"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"
export TUNEKIT_THREADS=1 TUNEKIT_MAX_TUNING_DURATION_MS=1 TUNEKIT_MAX_TUNING_ITERATIONS=2
# BLIS kernels every x86-64 machine of the project runs (no warning about AVX-512 ones on stderr).
export TUNEKIT_BLIS_ARCHS=haswell
fast=(--candidates eigen)
results_of() { grep -vc '^Validator,' "$1"; }
all_lines_whole() {
  [ "$(tail -c1 "$1" | od -An -c | tr -d ' ')" = '\n' ] &&
    awk '!/^Validator,/ { line = $0; gsub(/\[[^]]*\]/, "[]", line); n = split(line, f, ",")
      if (n < 4 || f[4] !~ /^[0-9.e+-]+$/) bad = 1 } END { exit bad }' "$1"
}
# Runs a command with a file size limit of $1 bytes (SIGXFSZ ignored, so writes fail with EFBIG
# as on a full disk); its output goes through a pipe, which the limit does not touch.
with_file_limit() {
  local bytes="$1"; shift
  python3 -c 'import os, resource, signal, sys
n = int(sys.argv[1]); signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (n, n)); os.execvp(sys.argv[2], sys.argv[2:])' "$bytes" "$@"
}
last_line_has() { [ -s "$1" ] && tail -n1 "$1" | grep -qF -- "$2"; }

for m in 16 24 32 40; do echo "GemmTunableOp_float_NN,nn_${m}_8_8_ld_${m}_8_${m}"; done >u.csv
head -1 u.csv >first.csv

# 1. A full disk in the middle of an append: nothing half-written stays, the run fails and says so
#    last, and the next run tunes what was lost (nothing persisted is lost).
expect_ok first "$TK" tune-file first.csv --results res.csv "${fast[@]}"
cp res.csv before.csv
size=$(stat -c %s res.csv)
with_file_limit $((size + 30)) "$TK" tune-file u.csv --results res.csv "${fast[@]}" 2>&1 | cat >full.txt
rc=${PIPESTATUS[0]}
check "full disk: exit non-zero" test "$rc" -ne 0
check "full disk: the last line says results were not saved" last_line_has full.txt "could NOT be saved"
check "full disk: the file is as before" cmp -s res.csv before.csv
check "full disk: every line whole" all_lines_whole res.csv
expect_ok rerun "$TK" tune-file u.csv --results res.csv "${fast[@]}"
check "full disk: the rerun finds the saved result" grep -q ' already tuned$' out.txt
check "full disk: the rerun tunes the lost ones" test "$(results_of res.csv)" -eq 4

# 1b. The same under a plain `ulimit -f` (SIGXFSZ at its default action): tunekit ignores the
#     signal itself, so the write fails instead of killing the run with a torn line.
cp before.csv res2.csv
for m in $(seq 8 4 160); do echo "GemmTunableOp_float_NN,nn_${m}_8_8_ld_${m}_8_${m}"; done >many.csv
(ulimit -f 1; "$TK" tune-file many.csv --results res2.csv "${fast[@]}") 2>&1 | cat >ulimit.txt
rc=${PIPESTATUS[0]}
check "ulimit -f: not killed by SIGXFSZ (exit 1)" test "$rc" -eq 1
check "ulimit -f: every line whole" all_lines_whole res2.csv
check "ulimit -f: the last line says results were not saved" last_line_has ulimit.txt "could NOT be saved"
check "ulimit -f: the file stayed within the limit" test "$(stat -c %s res2.csv)" -le 1024

# 2. The output path is checked before any tuning, also with --jobs (before forking).
expect_fail jobs-missing-folder 1 "folder 'gone' does not exist" \
  "$TK" tune-file u.csv --jobs 2 --results gone/res.csv "${fast[@]}"
check "jobs: nothing tuned before the error" test ! -s out.txt
ln -s missing/res.csv link.csv
expect_fail dangling-link 1 "results file 'link.csv' (a link to 'missing/res.csv'): folder 'missing' does not exist" \
  "$TK" tune-file u.csv --results link.csv "${fast[@]}"
check "dangling link: nothing tuned before the error" test ! -s out.txt

# 3. A results file created by another environment after this run read it (missing then) and
#    before its first append (the one problem takes >= 2 x 2.5 s to time): the result cannot be
#    saved. (Should the file appear before the run reads it, the run stops at once: also non-zero.)
echo "GemmTunableOp_float_NN,nn_48_64_64_ld_48_64_48" >slow.csv
TUNEKIT_MAX_TUNING_DURATION_MS=2500 TUNEKIT_MAX_TUNING_ITERATIONS=0 \
  "$TK" tune-file slow.csv --results raced.csv "${fast[@]}" >raced.txt 2>&1 &
pid=$!
sleep 1
printf 'Validator,TUNEKIT_VERSION,9.9.9\nGemmTunableOp_float_NN,nn_1_1_1_ld_1_1_1,Default,1\n' >raced.csv
wait "$pid"; rc=$?
check "raced file: exit non-zero" test "$rc" -ne 0
if ! last_line_has raced.txt "could NOT be saved" && ! last_line_has raced.txt "TUNEKIT_VERSION"; then
  fail "raced file: the last line gives no reason"; tail -3 raced.txt
fi
check "raced file: no advice a CLI user cannot follow" bash -c '! grep -q "write_file(" raced.txt'
check "raced file: the other environment's file is untouched" test "$(wc -l <raced.csv)" -eq 2

# 4. Devices and FIFOs are refused at once with one line naming the path (never a read without
#    end or a hang; the address space is capped so a regression fails instead of eating memory).
mkfifo fifo.csv
capped() { (ulimit -v 4000000; timeout 30 "$@"); }
expect_fail results-dev-full 1 "results file '/dev/full' is not a regular file (a character device)" \
  capped "$TK" tune-file u.csv --results /dev/full "${fast[@]}"
expect_fail results-fifo 1 "'fifo.csv' is not a regular file (a FIFO)" \
  capped "$TK" tune-file u.csv --results fifo.csv "${fast[@]}"
expect_fail show-dev-zero 1 "results file '/dev/zero' is not a regular file (a character device)" \
  capped "$TK" results show /dev/zero
expect_fail show-fifo 1 "results file 'fifo.csv' is not a regular file (a FIFO)" capped "$TK" results show fifo.csv
expect_fail log-dev-zero 1 "tuning log '/dev/zero' is not a regular file (a character device)" \
  capped "$TK" log show /dev/zero
expect_fail input-dev-zero 1 "cannot read '/dev/zero': it is a character device, not a regular file" \
  capped "$TK" tune-file /dev/zero
check "input /dev/zero is not 'no such file'" bash -c '! grep -q "no such file" err.txt'

# 5. SIGTERM to the parent of --jobs: no worker survives it.
for m in $(seq 100 8 260); do echo "GemmTunableOp_float_NN,nn_${m}_96_96_ld_${m}_96_${m}"; done >many.csv
TUNEKIT_MAX_TUNING_DURATION_MS=300 TUNEKIT_MAX_TUNING_ITERATIONS=0 "$TK" tune-file many.csv --jobs 2 --results jobs.csv >/dev/null 2>&1 &
parent=$!
workers=""
for _ in $(seq 1 300); do
  workers=$(ps -o pid= --ppid "$parent" | tr -d ' ' | tr '\n' ' ')
  [ "$(echo $workers | wc -w)" -ge 2 ] && break
  sleep 0.05
done
check "jobs: two workers started" test "$(echo $workers | wc -w)" -ge 2
kill -TERM "$parent"; wait "$parent" 2>/dev/null
alive() {  # a worker that is neither gone nor a zombie
  [ -e "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]
}
survivors=""
for w in $workers; do
  for _ in $(seq 1 100); do alive "$w" || break; sleep 0.1; done
  if alive "$w"; then survivors="$survivors $w"; kill -9 "$w"; fi
done
check "jobs: no worker outlives a SIGTERM to its parent" test -z "$survivors"

# 6. Small findings.
printf '\xef\xbb\xbfGemmTunableOp_float_NN,nn_8_8_8_ld_8_8_8\n' >bom.csv
expect_ok bom-input "$TK" tune-file bom.csv --results bomres.csv "${fast[@]}"
check "bom: the op name is clean" grep -q '^GemmTunableOp_float_NN,nn_8_8_8_ld_8_8_8,' bomres.csv
{ printf '\xef\xbb\xbf'; cat res.csv; } >bomshow.csv
expect_ok bom-results "$TK" results show bomshow.csv --threads 1
check "bom: validators read from a results file with a BOM" grep -q "validators: match this machine" out.txt
expect_fail buckets-bound 1 "from 1 to 2147483647" \
  "$TK" tune-file u.csv --buckets 2147483648 --results b.csv "${fast[@]}"
expect_fail sample-ms-bound 2 "60000" "$TK" compare u.csv --sample-ms 1e9 --results res.csv
# An untuned file given as --results: the advice fits tune-file (choose another results file).
expect_fail untuned-as-results 1 "choose another results file (--results)" \
  "$TK" tune-file first.csv --results u.csv "${fast[@]}"
check "no tune-file hint to a tune-file user" bash -c '! grep -q "tune such files\|tune its problems" err.txt'
expect_fail untuned-shown 1 "tune its problems with 'tunekit tune-file u.csv'" "$TK" results show u.csv
cat >big.json <<'JSON'
{"parameters": {"x": [9007199254740992, 9007199254740993], "y": [1, 2]}}
JSON
expect_rc exact-2-53 0 "$TK" space check big.json x=9007199254740993 y=1
check "space check: 2^53 + 1 is the second value" grep -q '^valid: index 1$' out.txt
cat >bigr.json <<'JSON'
{"parameters": {"x": [9007199254740992, 9007199254740993]}, "restrictions": ["x != 9007199254740992"]}
JSON
expect_fail inexact-restriction 1 "beyond 2^53" "$TK" space check bigr.json x=9007199254740993

echo "disk: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
