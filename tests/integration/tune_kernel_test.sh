#!/usr/bin/env bash
# End to end `tunekit tune-kernel` on a space holding a segfaulting, a hanging and a wrong
# configuration (tests/data/kernels/bad_space): the run finishes, reports the three with their
# reasons, returns the best of the others (also with the warm worker); a second run measures
# nothing new (resume); `tunekit log best` reads the log; bad specs and options fail with one line.
set -uo pipefail
source "$(dirname "$(realpath "$0")")/harness.sh"
TK="$(realpath "$1")"; SRC="$(realpath "$2")"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"
export TUNEKIT_CACHE_DIR="$work/cache"
SPEC="$SRC/tests/data/kernels/bad_space/bad_space.json"
lines() { wc -l <"$1" | tr -d ' '; }

# --- First run: every configuration measured, the three failures named with their reasons. ------
expect_ok first-run "$TK" tune-kernel "$SPEC" --log "$work/bad.log.json"
grep -q "VARIANT=2: RUNTIME_DEVICE: killed by SIGSEGV (segmentation fault)" out.txt && pass \
  || { fail "the segfault is not reported"; cat out.txt; }
grep -q "VARIANT=3: RUN_TIMEOUT: ran past the 1 s timeout" out.txt && pass \
  || { fail "the hang is not reported"; cat out.txt; }
grep -q "VARIANT=4: WRONG_ANSWER: output 'y' element 17" out.txt && pass \
  || { fail "the wrong answer is not reported"; cat out.txt; }
grep -qE "^best: VARIANT=(0|1|5) " out.txt && pass || { fail "no good best"; cat out.txt; }
grep -q "Failed configurations (3):" out.txt && pass || fail "not exactly 3 failures listed"
grep -q "6 trial(s): 6 measured now, 0 from the log; 3 failed" out.txt && pass \
  || { fail "first run summary"; cat out.txt; }
grep -q "Current/Best:" out.txt && pass || fail "no AutoTVM progress line"
check "one record per configuration" [ "$(lines bad.log.json)" -eq 6 ]

# --- Second run: resumed from the log, nothing measured again. ---------------------------------
expect_ok second-run "$TK" tune-kernel "$SPEC" --log "$work/bad.log.json"
grep -q "6 trial(s): 0 measured now, 6 from the log" out.txt && pass \
  || { fail "the second run measured again"; cat out.txt; }
grep -qE "^best: VARIANT=(0|1|5) " out.txt && pass || fail "second run: no best"
check "nothing appended" [ "$(lines bad.log.json)" -eq 6 ]

# --- A log that cannot grow (ulimit -f; the artefacts are cached already): the run fails. --------
# (Standard error through a pipe: the limit applies to every file the program writes.)
(ulimit -f 1; "$TK" tune-kernel "$SPEC" --log "$work/small.log.json" 2>&1 >/dev/null) | cat >err.txt
rc=${PIPESTATUS[0]}
check "ulimit -f: exit 1" test "$rc" -eq 1
check "ulimit -f: the last line says records are lost" \
  grep -q "record(s) of this run are not in the log and are lost" <(tail -n 1 err.txt)
check "ulimit -f: the log stayed within the limit" test "$(stat -c %s small.log.json)" -le 1024

# --- tunekit log best / show on the log written. -----------------------------------------------
expect_ok log-best "$TK" log best bad.log.json -o best.log.json
grep -q "1 best records from 6 records" out.txt && pass || { fail "log best"; cat out.txt; }
grep -qE '"entity": \[\["VARIANT", "ot", (0|1|5)\]\]' best.log.json && pass \
  || { fail "log best kept a failed config"; cat best.log.json; }
expect_ok log-show "$TK" log show --top 1 bad.log.json

# --- The warm worker (--isolation worker): the same three failures, the worker replaced. --------
expect_ok warm-worker "$TK" tune-kernel "$SPEC" --log "$work/warm.log.json" --isolation worker
grep -q "isolated (warm worker)" out.txt && pass || { fail "warm worker not announced"; cat out.txt; }
grep -q "VARIANT=2: RUNTIME_DEVICE: the kernel crashed its worker (killed by SIGSEGV" out.txt \
  && pass || { fail "warm worker: the segfault is not reported"; cat out.txt; }
grep -q "VARIANT=3: RUN_TIMEOUT: ran past the 1 s timeout" out.txt && pass \
  || { fail "warm worker: the hang is not reported"; cat out.txt; }
grep -q "VARIANT=4: WRONG_ANSWER: output 'y' element 17" out.txt && pass \
  || { fail "warm worker: the wrong answer is not reported"; cat out.txt; }
grep -qE "^best: VARIANT=(0|1|5) " out.txt && pass || { fail "warm worker: no good best"; cat out.txt; }

# --- A user verification function instead of a reference (verify.function). ---------------------
expect_ok verify-function "$TK" tune-kernel "$SRC/tests/data/kernels/bad_space/bad_space_function.json" \
  --log "$work/fn.log.json"
grep -q "VARIANT=4: WRONG_ANSWER: verification function 'check' rejected the outputs: y\[17\]" out.txt \
  && pass || { fail "the verification function's reason is not reported"; cat out.txt; }
grep -qE "^best: VARIANT=(0|1|5) " out.txt && pass || { fail "no good best with a function"; cat out.txt; }

# --- A C source: the header names the language it compiles as. ---------------------------------
cp "$SRC/tests/data/kernels/vadd.c" .
cat >c.json <<'EOF'
{"name": "vadd_c", "language": "c", "source": "vadd.c", "entry": "kernel",
 "arguments": [{"name": "n", "dtype": "int32", "value": 64},
               {"name": "a", "dtype": "float32", "size": "n"},
               {"name": "b", "dtype": "float32", "size": "n"},
               {"name": "c", "dtype": "float32", "size": "n", "output": true}],
 "space": {"params": {"U": [1, 2]}}, "timing": {"number": 1, "repeat": 1}}
EOF
expect_ok c-source "$TK" tune-kernel c.json --top 0
grep -q "^tune-kernel vadd_c: vadd.c (c), 2 configurations" out.txt && pass \
  || { fail "the header of a C source does not say (c)"; cat out.txt; }

# --- A kernel's process that left its session (setsid, fork) ends with its trial, in both
#     isolations: nothing holds the output open after tune-kernel ends, so a pipeline ends too.
cat >escape.json <<EOF
{"name": "escape", "source": "$SRC/tests/data/kernels/escapes_session.c", "entry": "kernel",
 "arguments": [{"name": "n", "dtype": "int32", "value": 64},
               {"name": "a", "dtype": "float32", "size": "n"},
               {"name": "b", "dtype": "float32", "size": "n"},
               {"name": "c", "dtype": "float32", "size": "n", "output": true}],
 "space": {"params": {"U": [1]}}, "timing": {"number": 1, "repeat": 1}}
EOF
for iso in process worker; do
  rm -f sleeper.txt
  start=$(date +%s)
  TUNEKIT_TEST_SLEEPER_FILE="$work/sleeper.txt" "$TK" tune-kernel escape.json --isolation "$iso" \
    --log "$work/escape-$iso.log.json" 2>&1 | cat >out.txt
  rc=${PIPESTATUS[0]}
  check "$iso: a kernel's escaped process: exit 0" test "$rc" -eq 0
  check "$iso: the pipeline ends with tune-kernel" test $(($(date +%s) - start)) -lt 30
  sleeper=$(cat sleeper.txt 2>/dev/null || echo 0)
  check "$iso: the kernel started its process" test "$sleeper" -gt 0
  check "$iso: the escaped process is gone" bash -c "! kill -0 $sleeper 2>/dev/null"
  [ "$sleeper" -gt 0 ] && kill -9 "$sleeper" 2>/dev/null
done

# --- Errors: one line naming the file and the field. -------------------------------------------
sed 's/"size": "n", "fill": "random"/"size": "n*q", "fill": "random"/' "$SPEC" >typo.json
cp "$SRC/tests/data/kernels/bad_space/bad_space.cpp" .
expect_fail unknown-name 1 "typo.json: arguments[1].size: unknown name 'q' in 'n*q'" \
  "$TK" tune-kernel typo.json
expect_fail missing-spec 1 "cannot open kernel spec 'nope.json'" "$TK" tune-kernel nope.json
mkdir -p a-directory
expect_fail log-not-writable 1 "tuning log '$work/a-directory': Is a directory" \
  "$TK" tune-kernel "$SPEC" --log "$work/a-directory"
expect_fail log-not-writable-fresh 1 "cannot write tuning log '$work/a-directory': Is a directory" \
  "$TK" tune-kernel "$SPEC" --log "$work/a-directory" --no-resume
touch "$work/a-file"
TUNEKIT_CACHE_DIR="$work/a-file/cache" expect_fail cache-not-a-directory 1 \
  "cannot create the kernel cache directory '$work/a-file/cache': Not a directory (from TUNEKIT_CACHE_DIR, XDG_CACHE_HOME or HOME)" \
  "$TK" tune-kernel "$SPEC" --log "$work/cache.log.json"
sed 's/"value": 64}/"value": -5}/' c.json >negative.json
expect_fail negative-scalar 1 \
  "negative.json: arguments[0].value: n = -5 gives arguments[1].size 'n' = -5 elements" \
  "$TK" tune-kernel negative.json
expect_fail zero-timeout 2 "--timeout: '0' is not a number > 0" "$TK" tune-kernel "$SPEC" --timeout 0
expect_fail bad-isolation 2 "--isolation" "$TK" tune-kernel "$SPEC" --isolation thread
expect_fail bad-strategy 2 "magic" "$TK" tune-kernel "$SPEC" --strategy magic

echo "tune-kernel CLI: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
