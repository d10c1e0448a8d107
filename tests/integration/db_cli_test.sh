#!/usr/bin/env bash
# `tunekit db`: PyTorch's and tunekit's results files imported and exported byte for byte, an
# AutoTVM log round trip, a Kernel Tuner cache, tune-file writing the user database (results and
# the native searches' trials) and a later run dispatching from it with the results file gone,
# --jobs gathering into one database, merge of two machines' databases (comparisons included),
# prune, and clear errors for bad inputs.
# Usage: db_cli_test.sh <tunekit> <source dir>
set -uo pipefail
source "$(dirname "$(realpath "$0")")/harness.sh"
TK="$(realpath "$1")"; SRC="$(realpath "$2")"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"
export TUNEKIT_THREADS=1 TUNEKIT_MAX_TUNING_DURATION_MS=1 TUNEKIT_MAX_TUNING_ITERATIONS=2
export TUNEKIT_BLIS_ARCHS=haswell TUNEKIT_DB="$work/user.db" TUNEKIT_SYSTEM_DB=off
fast=(--candidates 'eigen,native*')
DATA="$SRC/tests/data"

# 1. PyTorch's files: import, export per environment, byte-identical.
expect_ok "import PyTorch files" "$TK" db import "$DATA/tunableop/readme_example_results.csv" \
  "$DATA/tunableop/rocm_mid2024_results.csv"
check "import says how many" grep -q 'readme_example_results.csv (tunableop): 2 new result(s)' out.txt
expect_fail "export needs an environment" 1 "choose one with --environment" \
  "$TK" db export --format tunableop
expect_ok "export 1" "$TK" db export --format tunableop --environment 1 -o e1.csv
check "README example byte-identical" cmp -s e1.csv "$DATA/tunableop/readme_example_results.csv"
expect_ok "export 2" "$TK" db export --format tunableop --environment 2 -o e2.csv
check "ROCm file byte-identical" cmp -s e2.csv "$DATA/tunableop/rocm_mid2024_results.csv"
expect_ok "import again" "$TK" db import "$DATA/tunableop/readme_example_results.csv"
check "a second import adds nothing" grep -q ': 0 new result(s)' out.txt
expect_ok "show --machine" "$TK" db show --problem nt_4096_4096_64
check "show lists the problem" grep -q 'nt_4096_4096_64' out.txt

# 2. AutoTVM log and Kernel Tuner cache.
grep '^{"input"' "$DATA/autotvm/tophub_lines.log" >tvm.log
expect_ok "import AutoTVM log" "$TK" db import tvm.log
expect_ok "export AutoTVM log" "$TK" db export --format autotvm -o tvm_out.log
check "AutoTVM log byte-identical" cmp -s tvm.log tvm_out.log
expect_ok "import Kernel Tuner cache" "$TK" db import "$DATA/autotvm/convolution_subset.json.gz"
check "Kernel Tuner trials" grep -q '(kernel_tuner): [1-9][0-9]* new trial(s)' out.txt
expect_ok "show trials" "$TK" db show
check "show has a trials table" grep -q 'kernel_tuner' out.txt

# 3. tune-file writes the database; dispatch reads it with the results file gone.
for m in 16 24 40; do echo "GemmTunableOp_float_NN,nn_${m}_8_8_ld_${m}_8_${m}"; done >u.csv
expect_ok "tune-file" "$TK" tune-file u.csv --results r.csv "${fast[@]}"
check "tune-file names the database" grep -q "tuning database: $work/user.db" out.txt
rm r.csv
expect_ok "rerun from the database" "$TK" tune-file u.csv --results r.csv "${fast[@]}"
check "the rerun finds every result in the database" grep -q '0 tuned, 3 already tuned' out.txt
# The native templates' searches are trials: one search (workload) per problem, each with more
# than one configuration, under the environment of the results.
native_searches() {
  python3 - "$1" <<'PY'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT workload, count(*), min(environment) FROM trials WHERE task = 'native_f32' "
    "AND format = 'autotvm' GROUP BY workload").fetchall()
print(len(rows), all(n > 1 for _, n, _ in rows), all(e is not None for _, _, e in rows))
PY
}
check "tune-file stores each problem's native search" test "$(native_searches user.db)" = "3 True True"
# Names tunekit writes have no comma: every result line is 4 fields to PyTorch's reader.
"$TK" db export --format tunableop --environment 3 -o mine.csv
check "4 comma-separated fields per result line" \
  awk -F, '!/^Validator,/ && NF != 4 { bad = 1 } END { exit bad }' mine.csv
# A result another machine tuned is queryable but never dispatched.
sed 's/^Validator,CPU_MODEL,.*/Validator,CPU_MODEL,Another CPU/; s/,native[^,]*,/,eigen,/' mine.csv >foreign.csv
sed -i 's/nn_16_8_8_ld_16_8_16/nn_48_8_8_ld_48_8_48/' foreign.csv
expect_ok "import a foreign file" "$TK" db import foreign.csv
expect_ok "query by machine" "$TK" db show --machine "Another CPU"
check "the foreign entry is queryable" grep -q 'nn_48_8_8_ld_48_8_48' out.txt
echo "GemmTunableOp_float_NN,nn_48_8_8_ld_48_8_48" >u48.csv
expect_ok "tune the foreign problem" "$TK" tune-file u48.csv --results r48.csv "${fast[@]}"
check "a foreign entry is tuned here, not dispatched" grep -q '1 tuned, 0 already tuned' out.txt

# 4. --jobs: the jobs and the gathering write one database.
for m in 56 64 72 80; do echo "GemmTunableOp_float_NN,nn_${m}_8_8_ld_${m}_8_${m}"; done >j.csv
TUNEKIT_DB="$work/jobs.db" "$TK" tune-file j.csv --jobs 2 --results rj.csv "${fast[@]}" >out.txt 2>&1
check "--jobs succeeds" test $? -eq 0
check "--jobs reports the database" grep -q "tuning database: $work/jobs.db" out.txt
check "--jobs: 4 results in the database" test "$(TUNEKIT_DB="$work/jobs.db" "$TK" db show | grep -c 'nn_[5-8][0-9]_8_8')" -eq 4
check "--jobs: the workers store their native searches" test "$(native_searches jobs.db | cut -d' ' -f1)" -eq 4

# 5. merge two machines' databases (results, trials, comparisons); prune.
cmp_args=(--results rj_full0.csv --threads 1 --head-to-head 0 --sample-ms 0.2)
TUNEKIT_DB="$work/jobs.db" "$TK" compare j.csv "${cmp_args[@]}" >out.txt 2>&1
check "compare into the other database" test $? -eq 0
expect_ok "merge" "$TK" db merge "$work/jobs.db"
check "merge counts the new results" grep -q 'jobs.db: 4 new result(s)' out.txt
check "merge copies the comparison" grep -qE 'jobs.db: .* [1-9][0-9]* new comparison row\(s\)' out.txt
expect_ok "merge again" "$TK" db merge "$work/jobs.db"
check "merging again adds nothing" \
  grep -q 'jobs.db: 0 new result(s), 0 new trial(s), 0 new comparison row(s)' out.txt
expect_ok "a later comparison" "$TK" compare j.csv "${cmp_args[@]}"
rows_of_runs() {
  python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*), count(DISTINCT run) FROM comparisons').fetchone())" "$1"
}
before="$(rows_of_runs user.db)"
expect_ok "prune" "$TK" db prune
check "prune drops the failed and slower trials" grep -q 'removed 0 result(s), [1-9][0-9]* trial(s)' out.txt
removed="$(sed -n 's/.* \([0-9][0-9]*\) comparison row(s).*/\1/p' out.txt)"
after="$(rows_of_runs user.db)"
check "prune keeps each problem's latest comparison run (rows, runs: $before -> $after)" \
  test "${before#*, }" = "2)" -a "${after#*, }" = "1)" -a "${removed:-0}" -gt 0

# 6. Bad inputs: one clear line each.
printf 'not a database at all, but long enough to be read as one by SQLite.....\n' >bad.db
expect_fail "not a database" 1 "not a tunekit database" "$TK" db show --db bad.db
expect_fail "a directory" 1 "is not a regular file" "$TK" db show --db "$work"
expect_fail "an untuned file" 1 "a line of an untuned file" "$TK" db import --format tunableop u.csv
expect_fail "TUNEKIT_DB=off" 1 "no user database" env TUNEKIT_DB=off "$TK" db show

echo "db_cli_test: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
