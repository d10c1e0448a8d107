#!/usr/bin/env bash
# End-to-end tests of the tunekit CLI (tune-file, gemm, results show, candidates, simulate) with tiny budgets:
# exit codes, files written and left untouched, and one-line errors on bad input.
set -uo pipefail
TK="$(realpath "$1")"; SRC="$(realpath "$2")"
DATA="$SRC/tests/integration/data"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"
export TUNEKIT_MAX_TUNING_DURATION_MS=1 TUNEKIT_MAX_TUNING_ITERATIONS=2
fails=0; passes=0
pass() { passes=$((passes+1)); }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
expect_ok() { local name="$1"; shift; if "$@" >out.txt 2>err.txt; then pass; else fail "$name (exit $?)"; cat out.txt err.txt; fi; }
expect_fail() {  # name, expected substring of stderr, command...
  local name="$1" needle="$2"; shift 2
  if "$@" >out.txt 2>err.txt; then fail "$name: succeeded"; return; fi
  if ! grep -qF -- "$needle" err.txt; then fail "$name: stderr lacks '$needle'"; cat err.txt; return; fi
  if [ "$(wc -l <err.txt)" -gt 2 ]; then fail "$name: more than one error line"; cat err.txt; return; fi
  pass
}
expect_early_fail() {  # name, exit status, expected substring of stderr, command...: nothing on stdout
  local name="$1" code="$2" needle="$3"; shift 3
  "$@" >out.txt 2>err.txt; local rc=$?
  if [ "$rc" -ne "$code" ]; then fail "$name: exit $rc, expected $code"; cat err.txt; return; fi
  if ! grep -qF -- "$needle" err.txt; then fail "$name: stderr lacks '$needle'"; cat err.txt; return; fi
  if [ "$(wc -l <err.txt)" -gt 2 ]; then fail "$name: more than one error line"; cat err.txt; return; fi
  if [ -s out.txt ]; then fail "$name: printed before failing"; cat out.txt; return; fi
  pass
}

expect_ok help "$TK" --help
expect_ok help-tune-file "$TK" tune-file --help
expect_ok help-gemm "$TK" gemm --help
# A word that names no command is refused by name, with or without --help after it.
expect_early_fail unknown-command 2 "unknown command 'no-such-command-xyzzy' (commands: " \
  "$TK" no-such-command-xyzzy
expect_early_fail unknown-command-help 2 "unknown command 'no-such-command-xyzzy'" \
  "$TK" no-such-command-xyzzy --help
expect_early_fail no-command 2 "A subcommand is required" "$TK"
# Inside a command group too.
expect_early_fail unknown-results-command 2 \
  "unknown command 'results no-such-command-xyzzy' (commands of 'results': show; see --help)" \
  "$TK" results no-such-command-xyzzy
expect_early_fail unknown-log-command 2 "unknown command 'log no-such-command-xyzzy'" \
  "$TK" log no-such-command-xyzzy --help
expect_ok candidates "$TK" candidates
grep -q '^ *0  *Default' out.txt && pass || fail "candidates: Default is not entry 0"
[ ! -s err.txt ] && pass || { fail "candidates: warnings although nothing is set"; cat err.txt; }
grep -Eq '^native_f32 on AMX tiles \(32x32, bf16\): (offered|not offered: .+)$' out.txt && pass \
  || { fail "candidates: the AMX route's state is not shown"; cat out.txt; }
TUNEKIT_NATIVE_AMX=0 expect_ok candidates-no-amx "$TK" candidates
grep -q '^native_f32 on AMX tiles (32x32, bf16): not offered: ' out.txt \
  && pass || { fail "candidates: TUNEKIT_NATIVE_AMX=0 still offers AMX"; cat out.txt; }
# A wheel library that cannot be found leaves its candidates out, named with the reason.
if grep -q '^ *[0-9][0-9]*  *onednn3_matmul ' out.txt; then
  TUNEKIT_ONEDNN3_LIBRARY=/nonexistent/libdnnl.so.3 expect_ok candidates-no-onednn3 "$TK" candidates
  grep -q '^  onednn3_matmul: TUNEKIT_ONEDNN3_LIBRARY=/nonexistent/libdnnl.so.3: no such file (oneDNN 3)$' out.txt \
    && ! grep -q '^ *[0-9][0-9]*  *onednn3_matmul ' out.txt && pass \
    || { fail "candidates: a missing oneDNN 3 is not named"; cat out.txt; }
fi
# An MKL without the libraries libmkl_rt opens itself would end the process ("Intel oneMKL FATAL
# ERROR"): it is refused before it loads (planned through the Zen 3 fixture, where mkl is offered).
TUNEKIT_CPU_FIXTURE="$SRC/tests/data/cpu/amd_zen3.txt" "$TK" candidates >fixture.txt 2>/dev/null
mkl_rt="$(grep -o '/[^ ]*/libmkl_rt\.so\.3' fixture.txt | head -1)"
if [ -n "$mkl_rt" ]; then
  mkdir -p lonely && ln -sf "$mkl_rt" lonely/libmkl_rt.so.3
  TUNEKIT_CPU_FIXTURE="$SRC/tests/data/cpu/amd_zen3.txt" TUNEKIT_MKL_LIBRARY="$PWD/lonely/libmkl_rt.so.3" \
    expect_ok candidates-incomplete-mkl "$TK" candidates
  grep -q 'incomplete MKL: libmkl_core.so.3 is not beside' out.txt && pass \
    || { fail "candidates: an incomplete MKL is not named"; cat out.txt err.txt; }
fi
# TUNEKIT_CPU_FIXTURE (tests only) plans the list for another CPU; what runs stays this CPU's.
grep -q 'blis\[' out.txt && blis=1 || blis=0  # none under AddressSanitizer
TUNEKIT_CPU_FIXTURE="$SRC/tests/data/cpu/amd_zen3.txt" expect_ok candidates-zen3 "$TK" candidates
grep -q '^CPU: AMD EPYC (AuthenticAMD family 25 model 1), x86-64-v3' out.txt && pass || fail "candidates: fixture CPU not shown"
grep -q '^ *[0-9]  *eigen .*x86-64-v3 build' out.txt && pass || fail "candidates: eigen should run its x86-64-v3 build"
if [ "$blis" = 1 ]; then
  grep -q 'blis\[arch=zen3\]' out.txt && ! grep -q 'blis\[arch=skx\]' out.txt \
    && pass || { fail "candidates: Zen 3 should get blis zen3, no skx"; cat out.txt; }
  TUNEKIT_CPU_FIXTURE="$SRC/tests/data/cpu/intel_xeon_amx.txt" expect_ok candidates-intel "$TK" candidates
  grep -q 'blis\[arch=skx\]' out.txt && pass || fail "candidates: the Intel fixture should get blis skx"
fi
# A TUNEKIT_BLIS_ARCHS entry that is dropped is said once per process (lists are made twice).
TUNEKIT_BLIS_ARCHS=bogus,generic expect_ok blis-archs-warning "$TK" gemm --m 4 --n 4 --k 4 --threads 1 --results warn.csv
[ "$(grep -c "'bogus' is not a BLIS 0.9" err.txt)" -eq 1 ] && pass || { fail "TUNEKIT_BLIS_ARCHS: expected one warning"; cat err.txt; }
printf 'vendor_id : AuthenticAMD\ncpu family : six\n' > badcpu.txt
TUNEKIT_CPU_FIXTURE=badcpu.txt expect_fail bad-cpu-fixture "TUNEKIT_CPU_FIXTURE: badcpu.txt:2: 'cpu family' must be" \
  "$TK" candidates

# Tune a small file of every supported kind.
expect_ok tune-file "$TK" tune-file "$DATA/small_untuned.csv" --results res.csv --threads 1
grep -q "winner" out.txt && pass || fail "tune-file: no table"
[ "$(grep -c '^Validator,' res.csv)" -ge 4 ] && pass || fail "tune-file: validators missing"
[ "$(grep -vc '^Validator,' res.csv)" -eq 6 ] && pass || fail "tune-file: expected 6 results"; 
grep -q '^Validator,TUNEKIT_VERSION,' res.csv && pass || fail "tune-file: TUNEKIT_VERSION missing"
grep -q '^GemmTunableOp_float_NN,nn_37_37_37_ld_40_37_37,' res.csv && pass || fail "tune-file: padded lda not kept"
cp res.csv before.csv
# Re-running tunes nothing and appends nothing.
expect_ok tune-file-again "$TK" tune-file "$DATA/small_untuned.csv" --results res.csv --threads 1
cmp -s res.csv before.csv && pass || fail "tune-file re-run changed the results file"
[ "$(grep -c ' already tuned$' out.txt)" -eq 6 ] && pass || fail "tune-file re-run: expected 6 'already tuned'"

expect_ok results-show "$TK" results show res.csv --threads 1
grep -q "match this machine" out.txt && pass || fail "results show: validators should match"
expect_ok results-show-other-threads "$TK" results show res.csv --threads 2
grep -q "THREADS differs" out.txt && pass || fail "results show: THREADS mismatch not reported"

expect_ok gemm-one "$TK" gemm --m 31 --n 7 --k 45 --trans nt --results res.csv --threads 1
grep -q "^GemmTunableOp_float_NT,nt_31_7_45_ld_31_7_31," res.csv && pass || fail "gemm: result not appended"
# Both bf16 dtypes: bf16 C (upstream's BFloat16) and float C (tunekit's BFloat16_float), each its
# own problem; the BLAS_PARAMS block names the output type.
TUNEKIT_BLAS_LOG=1 expect_ok gemm-bf16 "$TK" gemm --m 24 --n 5 --k 40 --trans tn --dtype bf16 --bias --results bf.csv --threads 1
grep -q '^GemmAndBiasTunableOp_BFloat16_TN,tn_24_5_40_ld_40_40_24,.*c_type: bf16_r, d_type: bf16_r, bias_type: bf16_r' bf.csv \
  && pass || fail "gemm --dtype bf16: no bf16-C result"
TUNEKIT_BLAS_LOG=1 expect_ok gemm-bf16-float "$TK" gemm --m 24 --n 5 --k 40 --trans tn --dtype bf16_float --bias --results bf.csv --threads 1
grep -q '^GemmAndBiasTunableOp_BFloat16_float_TN,tn_24_5_40_ld_40_40_24,.*c_type: f32_r, d_type: f32_r, bias_type: f32_r' bf.csv \
  && pass || fail "gemm --dtype bf16_float: no float-C result"

# A foreign results file is refused and left byte-identical.
cp "$DATA/../../data/foreign_results.csv" foreign.csv 2>/dev/null || \
  printf 'Validator,PT_VERSION,2.9.1\nValidator,HIP_VERSION,603\nGemmTunableOp_float_NT,nt_4096_4096_64,Gemm_Rocblas_1216,0.033\n' > foreign.csv
cp foreign.csv foreign.orig
expect_fail foreign-validators "foreign.csv" "$TK" tune-file "$DATA/small_untuned.csv" --results foreign.csv
cmp -s foreign.csv foreign.orig && pass || fail "foreign results file was modified"

expect_fail missing-file "missing.csv" "$TK" tune-file missing.csv
# Results are not written while untuned problems are recorded: tuning refuses instead of losing them.
TUNEKIT_RECORD_UNTUNED=1 expect_early_fail record-untuned-on 1 "TUNEKIT_RECORD_UNTUNED is on" \
  "$TK" tune-file "$DATA/small_untuned.csv" --results rec.csv
[ ! -e rec.csv ] && pass || fail "record-untuned-on: a results file was made"
expect_fail bad-trans "--trans" "$TK" gemm --m 4 --n 4 --k 4 --trans xy
expect_fail bad-dtype "dtype" "$TK" gemm --m 4 --n 4 --k 4 --dtype int4 --results res.csv
TUNEKIT_MAX_TUNING_ITERATIONS=abc expect_fail bad-env "TUNEKIT_MAX_TUNING_ITERATIONS" \
  "$TK" gemm --m 4 --n 4 --k 4 --results res2.csv
# A malformed search setting stops tune-file once, before any problem, and writes no file.
TUNEKIT_MAX_SEARCH_TRIALS=xyz expect_early_fail bad-search-env 1 "TUNEKIT_MAX_SEARCH_TRIALS" \
  "$TK" tune-file "$DATA/small_untuned.csv" --results never.csv
[ ! -e never.csv ] && pass || fail "bad-search-env wrote never.csv"
printf '\x00\x01\x02binary' > bin.csv
expect_fail binary-input "bin.csv" "$TK" tune-file bin.csv --results res3.csv

# Results files that cannot be written are refused before any tuning.
expect_fail results-folder "does not exist" "$TK" gemm --m 5 --n 5 --k 5 --threads 1 --results nodir/x.csv
expect_fail results-dir "is a directory" "$TK" gemm --m 5 --n 5 --k 5 --threads 1 --results .
expect_fail input-dir "is a directory" "$TK" tune-file .
# A flag typed on the command line wins over its TUNEKIT_* variable.
TUNEKIT_FILENAME=envname.csv expect_ok flag-wins "$TK" gemm --m 5 --n 5 --k 5 --threads 1 \
  --max-tuning-duration-ms 2 --results flagname.csv
[ -f flagname.csv ] && [ ! -e envname0.csv ] && [ ! -e envname.csv ] && pass || fail "--results did not win over TUNEKIT_FILENAME"
# A stored solution this build does not know is reported (dispatch runs Default).
sed -E 's/^(GemmTunableOp[^,]*,[^,]*),[^,[]*(\[[^]]*\])?,/\1,nosuchlib,/' res.csv > unknown.csv
expect_ok unknown-solution "$TK" results show unknown.csv --threads 1
grep -q "nosuchlib (unknown here: Default runs)" out.txt && pass || fail "results show: unknown solution not marked"
expect_fail compare-nothing "nothing to compare" "$TK" compare "$DATA/small_untuned.csv" --results nothere.csv --threads 1

# A problem too big for this machine's memory fails cleanly; the others are still tuned and written.
printf 'GemmTunableOp_float_NN,nn_2147483647_1_2\nGemmTunableOp_float_NN,nn_8_8_8\n' > huge.csv
expect_fail huge-problem "could not be tuned" "$TK" tune-file huge.csv --results huge_res.csv --threads 1 \
  --max-tuning-duration-ms 2
grep -q "memory is available" out.txt && pass || fail "huge problem: no memory reason in the table"
grep -q "^GemmTunableOp_float_NN,nn_8_8_8" huge_res.csv && pass || fail "huge problem: the small one was not written"

# A torn last line is reported once by results show.
cp res.csv torn.csv && printf 'GemmTunableOp_float_NN,nn_4_4' >> torn.csv
expect_ok torn-show "$TK" results show torn.csv --threads 1
[ "$(grep -c 'incomplete last line' out.txt)" -eq 1 ] && pass || fail "results show: torn last line not reported once"

# simulate: a small replay, and bad arguments each give one error naming what is wrong.
CONV="$SRC/tests/data/autotvm/convolution_subset.json.gz"
expect_ok simulate "$TK" simulate --data "$CONV" --budget 20,10,20 --runs 2 --no-score --threads 1 --format json
grep -q '"fraction_of_optimum_per_run"' out.txt && grep -q '"10"' out.txt && pass || fail "simulate: json keys"
expect_ok simulate-evaluations "$TK" simulate --data "$CONV" --budget 10 --runs 2 --threads 1 \
  --score-budget evaluations --traces --format json
grep -q '"objective_ms_per_run"' out.txt && grep -q '"score_budget": "evaluations"' out.txt && pass ||
  fail "simulate: --score-budget evaluations --traces"
expect_fail simulate-score-budget "--score-budget" "$TK" simulate --data "$CONV" --score-budget trials
expect_fail simulate-negative-budget "--budget" "$TK" simulate --data "$CONV" --budget -5
expect_fail simulate-no-runs "--runs" "$TK" simulate --data "$CONV" --runs 0
expect_fail simulate-percentile "--percentile" "$TK" simulate --data "$CONV" --percentile 1.5
expect_fail simulate-negative-count "pool_random" "$TK" simulate --data "$CONV" --settings '{"pool_random":-1}'
expect_fail simulate-fraction-count "pool_pairs" "$TK" simulate --data "$CONV" --settings '{"pool_pairs":64.5}'
expect_fail simulate-overflow "simulate: --settings: a number is out of range (1e400)" "$TK" simulate --data "$CONV" --settings '{"pair_noise":1e400}'
expect_early_fail simulate-settings-syntax 2 "simulate: --settings: not JSON (syntax error at column 2: " \
  "$TK" simulate --data "$CONV" --settings '{x'
grep -q "json.exception" err.txt && fail "simulate: --settings error shows nlohmann's exception id" || pass
deep="$(python3 -c 'print("{\"a\":" + "[" * 50000 + "]" * 50000 + "}")')"
expect_early_fail simulate-settings-deep 2 "simulate: --settings: nested deeper than 256 levels" \
  "$TK" simulate --data "$CONV" --settings "$deep"
# Settings typed by a user: null is not an object, a key given twice is refused, and a key
# with control characters is escaped so that the error stays one line.
expect_early_fail simulate-settings-null 2 "auto: settings must be a JSON object" \
  "$TK" simulate --data "$CONV" --settings 'null'
expect_early_fail simulate-settings-duplicate 2 'simulate: --settings: the key "stall" appears twice in one object' \
  "$TK" simulate --data "$CONV" --settings '{"stall": 5, "stall": 6}'
expect_early_fail simulate-settings-control-key 2 "auto: unknown setting 'a\\u000ab' (accepted: " \
  "$TK" simulate --data "$CONV" --settings '{"a\nb": 5}'
expect_early_fail simulate-stall-mode 2 "auto: setting 'stall_mode' must be" \
  "$TK" simulate --data "$CONV" --settings '{"stall_mode": "restart"}'
expect_fail simulate-ei-without-forest "ei and mean" "$TK" simulate --data "$CONV" --settings '{"acquisition":"ei"}'
# Settings out of range are usage errors (exit 2) naming the key, reported before any data is
# loaded or printed, for every strategy.
expect_early_fail simulate-feature-fraction 2 "auto: setting 'feature_fraction' must be a number in (0, 1]" \
  "$TK" simulate --data "$CONV" --runs 1 --budget 20 --no-score --settings '{"model":"forest","feature_fraction":2}'
for bad in 1.01 -1; do
  expect_early_fail "simulate-feature-fraction-$bad" 2 "feature_fraction" \
    "$TK" simulate --data "$CONV" --runs 1 --budget 20 --no-score --settings "{\"model\":\"forest\",\"feature_fraction\":$bad}"
done
expect_early_fail simulate-good-fraction 2 "setting 'good_fraction'" "$TK" simulate --data "$CONV" --settings '{"good_fraction":5}'
expect_early_fail simulate-empty-noise-grid 2 "setting 'pair_noise_grid' must hold at least one value" \
  "$TK" simulate --data "$CONV" --settings '{"pair_noise_grid":[]}'
expect_early_fail simulate-many-trees 2 "setting 'trees' must be an integer in [1, 10000]" \
  "$TK" simulate --data "$CONV" --settings '{"model":"forest","trees":1000000}'
expect_early_fail simulate-bool-type 2 "auto: setting 'repair' must be true or false" \
  "$TK" simulate --data "$CONV" --settings '{"repair":"yes"}'
expect_early_fail simulate-grid-range 2 "grid: setting 'end' (1) must be >= begin (3)" \
  "$TK" simulate --data "$CONV" --strategy grid --settings '{"begin":3,"end":1}' --runs 2 --budget 10
expect_early_fail simulate-grid-negative 2 "grid: setting 'begin' must be a non-negative integer" \
  "$TK" simulate --data "$CONV" --strategy grid --settings '{"begin":-3}' --runs 2 --budget 10
expect_early_fail simulate-grid-past-space 2 "grid: empty index range: begin 30000000" \
  "$TK" simulate --data "$CONV" --strategy grid --settings '{"begin":30000000}' --runs 2 --budget 10
expect_early_fail simulate-xgb-plan 2 "xgb: setting 'plan_size' must be an integer in [1, 100000]" \
  "$TK" simulate --data "$CONV" --strategy xgb --settings '{"plan_size":0}' --runs 2 --budget 10
expect_early_fail simulate-sa-alpha 2 "sa: setting 'alpha'" \
  "$TK" simulate --data "$CONV" --strategy sa --settings '{"alpha":1}' --runs 2 --budget 10
# Every --data file is checked before the first is replayed.
expect_early_fail simulate-missing-second 1 "nope.json" \
  "$TK" simulate --data "$CONV" --data nope.json --runs 1 --budget 10 --no-score
expect_early_fail simulate-data-dir 1 "is a directory" "$TK" simulate --data . --runs 1 --budget 10 --no-score
# A FIFO without a writer is refused at once instead of blocking the run.
mkfifo data.fifo
expect_early_fail simulate-data-fifo 1 "'data.fifo' is not a regular file" \
  timeout 20 "$TK" simulate --data data.fifo --runs 1 --budget 10 --no-score
rm -f data.fifo
expect_early_fail simulate-data-device 1 "'/dev/null' is not a regular file" \
  "$TK" simulate --data "$CONV" --data /dev/null --runs 1 --budget 10 --no-score
# Every --data file is loaded and checked before the first table is printed: a second file with
# a negative time, a truncated gzip stream, no content or nesting past the limit fails first.
printf '{"tune_params": {"a": [1, 2]}, "cache": {"1": {"a": 1, "time": 1.0}, "2": {"a": 2, "time": -1.0}}}' >negative.json
head -c 200 "$CONV" >truncated.json.gz
python3 -c 'print("{\"tune_params\": {\"a\": [1]}, \"cache\": {\"1\": {\"a\": 1, \"time\": 1.0, \"x\": " + "[" * 50000 + "]" * 50000 + "}}}")' >deep.json
: >empty.json
for bad in negative.json truncated.json.gz empty.json deep.json; do
  expect_early_fail "simulate-bad-second-$(basename "$bad")" 1 "$bad: " \
    "$TK" simulate --data "$CONV" --data "$bad" --runs 1 --budget 5 --no-score --threads 1
done
grep -q "deep.json: nested deeper than 256 levels" err.txt && pass || { fail "simulate: deep.json not named"; cat err.txt; }
# 'all' combines with other names; each strategy runs once.
expect_ok simulate-all-and-auto "$TK" simulate --data "$CONV" --strategy all --strategy auto --runs 1 \
  --budget 5 --no-score --threads 1
[ "$(grep -c '^auto ' out.txt)" -eq 1 ] && [ "$(grep -c '^xgb-rank-binary ' out.txt)" -eq 1 ] && pass || \
  { fail "simulate: 'all' with 'auto' should run every strategy once"; cat out.txt; }
# Seeds are 64-bit unsigned: negative and overflowing ones are refused, the largest one runs.
expect_early_fail simulate-negative-seed 2 "--seed" "$TK" simulate --data "$CONV" --seed -1
expect_early_fail simulate-seed-overflow 2 "--seed" "$TK" simulate --data "$CONV" --seed 18446744073709551616
expect_ok simulate-largest-seed "$TK" simulate --data "$CONV" --seed 18446744073709551615 --runs 1 --budget 5 \
  --no-score --threads 1

# report: the output may not be one of its inputs (nothing written), and write errors name the
# reason.
printf 'Validator,PT_VERSION,2.2.0\nGemmTunableOp_float_NN,nn_68_32_48_ld_68_48_68,<!--<script>,0.007\n' > only.csv
cp only.csv only.bak; cp only.csv victim.db
expect_fail report-over-results "is its input 'only.csv'" "$TK" report --results only.csv -o only.csv
expect_fail report-over-results-other-spelling "is its input" "$TK" report --results only.csv -o "$work/./only.csv"
ln -s only.csv link.csv
expect_fail report-over-results-link "is its input" "$TK" report --results only.csv -o link.csv
expect_fail report-over-db "is its input 'victim.db'" "$TK" report --db victim.db -o victim.db
expect_fail report-over-log "is its input" "$TK" report --log only.csv -o only.csv
expect_fail report-over-user-db "is its input" env TUNEKIT_DB="$work/victim.db" "$TK" report -o victim.db
cmp -s only.csv only.bak && cmp -s victim.db only.bak && pass || fail "report: an input was overwritten"
if "$TK" report --results only.csv -o only.html >out.txt 2>err.txt; then
  grep -q '<!--' only.html && fail "report: '<!--' of a name left in the page" || pass
  expect_fail report-missing-folder "cannot write the report '$work/none/r.html': No such file or directory" \
    "$TK" report --results only.csv -o "$work/none/r.html"
  expect_fail report-into-folder "Is a directory" "$TK" report --results only.csv -o "$work"
  if [ -c /dev/full ]; then
    expect_fail report-full-device "cannot write the report '/dev/full': No space left on device" \
      "$TK" report --results only.csv -o /dev/full
  fi
else
  grep -q "libjs-chart.js" err.txt && echo "report: Chart.js missing, write checks skipped" || \
    { fail "report of a results file"; cat err.txt; }
fi

echo "cli: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
