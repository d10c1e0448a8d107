#!/usr/bin/env bash
# End-to-end tests of `tunekit log show|best|merge`: malformed lines reported as file:line and
# skipped, unreadable inputs, option checks, -o naming an input, and concurrent runs on one output.
set -uo pipefail
source "$(dirname "$(realpath "$0")")/harness.sh"
TK="$(realpath "$1")"; SRC="$(realpath "$2")"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"
lines() { wc -l <"$1" | tr -d ' '; }

# rec WORKLOAD INDEX COST [ERROR_NO] [SPACE_HASH]: one v0.2 line of workload dense(WORKLOAD, 64) on llvm.
rec() {
  local hash=""; [ -n "${5:-}" ] && hash=", \"space_hash\": \"$5\""
  printf '{"input": ["llvm -mcpu=skylake", "dense.x86", [%s, 64], {}], "config": {"index": %s, "code_hash": null, "entity": [["tile", "sp", [-1, %s]]]}, "result": [[%s], %s, 0.5, 1700000000.0], "version": 0.2, "tvm_version": "0.7.dev0"%s}\n' \
    "$1" "$2" "$2" "$3" "${4:-0}" "$hash"
}
# many WORKLOAD N: N successful records of one workload, costs 1e-3 .. distinct.
many() { for i in $(seq 1 "$2"); do rec "$1" "$i" "$((1000 + i))e-06"; done; }

# --- Malformed lines: every per-line failure is file:line and the line is skipped. -----------------
{ rec 1 1 1e-03; rec 1 2 1e400; rec 1 3 2e-03; } > bad.log
expect_ok show-out-of-range "$TK" log show bad.log
grep -q "bad.log:2: a number is out of range" err.txt && pass || fail "show: no bad.log:2 warning"
grep -q "^2 records" out.txt && pass || fail "show: the good records are not shown"
expect_fail show-strict 1 "bad.log:2:" "$TK" log show --strict bad.log
expect_ok best-out-of-range "$TK" log best bad.log -o b.log
check "best: one best record" [ "$(lines b.log)" -eq 1 ]
expect_ok merge-out-of-range "$TK" log merge bad.log -o m.log
check "merge: the 2 good records" [ "$(lines m.log)" -eq 2 ]
expect_fail merge-strict 1 "bad.log:2:" "$TK" log merge --strict bad.log -o m2.log
check "merge --strict wrote nothing" [ ! -e m2.log ]

# Nesting past the parse limit (deep args or entity payload; these parse, but copies and dumps of
# them overflowed the stack), a syntax error and a NUL byte: reported as file:line without
# nlohmann's exception ids, and skipped.
deep_args="$(python3 -c 'print("[" * 50000 + "]" * 50000)')"
{ rec 1 1 1e-03; rec "$deep_args" 2 2e-03; rec 1 3 3e-03 | sed "s/\[-1, 3\]/$deep_args/"
  printf '{"input": x}\n'; rec 1 5 5e-03 | tr 'k' '\0'; rec 1 6 6e-03; } > deep.log
for cmd in show best merge; do
  out=(); [ "$cmd" = show ] || out=(-o "deep_$cmd.log")
  expect_ok "$cmd-deep" "$TK" log "$cmd" deep.log "${out[@]}"
  check "$cmd: deep args reported" grep -q "deep.log:2: nested deeper than 256 levels (line skipped)" err.txt
  check "$cmd: deep payload reported" grep -q "deep.log:3: nested deeper than 256 levels" err.txt
  check "$cmd: syntax error reported" grep -q "deep.log:4: not JSON (syntax error at column 11: " err.txt
  check "$cmd: NUL byte reported" grep -q "deep.log:5: not JSON (contains a NUL byte at column " err.txt
  grep -q "json.exception" err.txt && fail "$cmd: nlohmann's exception id in a message" || pass
  [ "$cmd" = show ] && { grep -q "^2 records" out.txt && pass || fail "show: the good records of deep.log"; }
done
check "merge kept the 2 good records" [ "$(lines deep_merge.log)" -eq 2 ]

# The real TopHub lines still load.
expect_ok show-tophub "$TK" log show "$SRC/tests/data/autotvm/tophub_lines.log"
grep -q "^2 records (2 successful" out.txt && pass || fail "tophub lines not loaded"

# Costs of successful records must be finite and > 0; failed records keep upstream's placeholder.
{ rec 1 1 -1.0; rec 1 2 0; rec 1 3 5e-03; rec 1 4 1000000000.0 4; } > neg.log
expect_ok show-negative "$TK" log show neg.log
check "negative cost reported" grep -q "neg.log:1: cost -1.0 of a successful record" err.txt
check "zero cost reported" grep -q "neg.log:2: cost 0 of a successful record" err.txt
grep -q "^2 records (1 successful, 1 failed)" out.txt && pass || fail "show: negative/zero costs not skipped"
expect_ok best-negative "$TK" log best neg.log -o nb.log
check "best keeps the positive cost" grep -q '"result": \[\[0.005\], 0,' nb.log

# Config indices must be integers >= 0; a record without "version" reads as v0.2 (as upstream).
{ rec 1 -7 1e-03; rec 1 1e30 1e-03; rec 1 18446744073709551621 1e-03; rec 1 1.5 1e-03; rec 1 18446744073709551615 1e-03
  rec 1 3 1e-03 | sed 's/, "version": 0.2//'; } > idx.log
expect_ok show-indices "$TK" log show idx.log
for n in 1 2 3 4; do check "index line $n reported" grep -q "idx.log:$n: config index" err.txt; done
grep -q 'idx.log:6' err.txt && fail "row without version reported" || pass
grep -q "^2 records" out.txt && pass || fail "show: only the 2^64-1 index and the row without version are valid"

# --- Unreadable inputs: one clear error. ---------------------------------------------------------
mkdir adir
expect_fail show-directory 1 "'adir': Is a directory" "$TK" log show adir
expect_fail merge-directory 1 "'adir': Is a directory" "$TK" log merge adir -o fromdir.log
check "merge of a directory wrote nothing" [ ! -e fromdir.log ]
many 1 3 > plain.log
expect_fail best-into-directory 1 "'adir': Is a directory" "$TK" log best plain.log -o adir
expect_fail show-missing 1 "cannot open tuning log 'missing.log': No such file or directory" "$TK" log show missing.log
gzip -k plain.log
expect_fail show-gzip 1 "gzip-compressed" "$TK" log show plain.log.gz
if [ "$(id -u)" -ne 0 ]; then  # root reads any file
  cp plain.log secret.log; chmod 000 secret.log
  expect_fail show-denied 1 "cannot open tuning log 'secret.log': Permission denied" "$TK" log show secret.log
fi

# --- Option checks. ------------------------------------------------------------------------------
expect_fail top-negative 2 "--top" "$TK" log show plain.log --top -1
expect_fail top-zero 2 "--top" "$TK" log show plain.log --top 0
expect_fail width-zero 2 "--width" "$TK" log show plain.log --width 0
expect_ok top-one "$TK" log show plain.log --top 1
grep -q "; 1 shown" out.txt && pass || fail "--top 1 did not show one record"
expect_ok width-six "$TK" log show plain.log --width 6
grep -q " til...$" out.txt && pass || fail "--width 6 did not cut the config to 6 characters"
expect_ok width-two "$TK" log show plain.log --width 2
grep -q " ti$" out.txt && pass || fail "--width 2 did not cut the config to 2 characters"

# --- -o naming an input is refused unless --in-place (compared by file identity). ---------------
many 1 30 > a.log; cp a.log a.orig; ln a.log hard.log
expect_fail best-self 2 "--in-place" "$TK" log best a.log -o a.log
expect_fail best-self-dot 2 "--in-place" "$TK" log best ./a.log -o "$work/a.log"
expect_fail best-self-hardlink 2 "--in-place" "$TK" log best hard.log -o a.log
expect_fail merge-self 2 "--in-place" "$TK" log merge a.log plain.log -o a.log
check "refused runs left a.log unchanged" cmp -s a.log a.orig
expect_ok best-in-place "$TK" log best a.log -o a.log --in-place
check "best --in-place keeps the best record" [ "$(lines a.log)" -eq 1 ]
cp a.orig a.log
expect_ok merge-in-place "$TK" log merge a.log plain.log -o a.log --in-place
check "merge --in-place appends the other input" [ "$(lines a.log)" -eq 33 ]
check "merge --in-place keeps the output's records first" [ "$(head -30 a.log | grep -c '"dense.x86", \[1, 64\]')" -eq 30 ]

# --- An existing output: best merges it first, merge replaces it. --------------------------------
many 2 5 > w2.log
"$TK" log best plain.log -o kept.log >/dev/null 2>&1
expect_ok best-merges-output "$TK" log best w2.log -o kept.log
check "best kept the existing output's workload" [ "$(lines kept.log)" -eq 2 ]
expect_ok merge-replaces-output "$TK" log merge w2.log -o kept.log
check "merge replaced the existing output" [ "$(lines kept.log)" -eq 5 ]

# --- Space definitions: only the definition of a workload's last record competes. ---------------
{ rec 1 1 1e-06 0 aaaa; rec 1 2 5e-03 0 bbbb; rec 1 3 4e-03 0 bbbb; rec 2 1 1e-03; } > mixed.log
expect_ok best-mixed "$TK" log best mixed.log -o mixed_best.log
check "one warning for the mixed workload" [ "$(grep -c 'another config space definition' err.txt)" -eq 1 ]
check "the warning names the counts" grep -q "1 record(s) of another config space definition skipped; the 2 record(s) of space hash bbbb" err.txt
check "the odd definition did not win" grep -q '"index": 3,.*"space_hash": "bbbb"' mixed_best.log
check "best of mixed: one per workload" [ "$(lines mixed_best.log)" -eq 2 ]

# --- Concurrent runs on one output serialize under the log's lock. ------------------------------
for n in $(seq 1 12); do many "$((100 + n))" 200 > "w$n.log"; done
for n in $(seq 1 12); do "$TK" log best "w$n.log" -o best.log >/dev/null 2>>conc_err.txt & done; wait
check "12 concurrent best: every workload kept" [ "$(lines best.log)" -eq 12 ]
: > all.log
for n in $(seq 1 12); do "$TK" log merge all.log "w$n.log" -o all.log --in-place >/dev/null 2>>conc_err.txt & done; wait
check "12 concurrent merge --in-place: the union" [ "$(lines all.log)" -eq 2400 ]
for n in $(seq 1 12); do "$TK" log merge "w$n.log" -o one.log >/dev/null 2>>conc_err.txt & done; wait
check "12 concurrent merge: one complete input" [ "$(lines one.log)" -eq 200 ] && [ "$(sort -u <(cut -c1-80 one.log) | wc -l)" -eq 1 ]
check "concurrent runs reported no error" [ ! -s conc_err.txt ]
check "no temporary files left" [ -z "$(ls | grep '\.tmp\.')" ]

# "-" is stdin as an input, but not a file to write.
expect_fail out-dash 2 "-o - is not a file" "$TK" log merge m.log -o -
[ ! -e ./- ] && pass || fail "log merge -o - created a file named '-'"
echo "log CLI: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
