#!/usr/bin/env bash
# End-to-end tests of `tunekit space show|check` on JSON space specs: sizes, exact and estimated
# valid fractions, samples that satisfy the restrictions, per-restriction verdicts, and one-line
# errors on bad input.
set -uo pipefail
source "$(dirname "$(realpath "$0")")/harness.sh"
TK="$(realpath "$1")"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"

cat >small.json <<'JSON'
{"parameters": {"block_size_x": {"range": [16, 257, 16]}, "block_size_y": {"power2": [1, 16]},
                "tile_size_x": [1, 2, 3, 4], "use_shmem": [0, 1], "mode": ["fast", "safe"]},
 "restrictions": ["block_size_x*block_size_y<=1024", "use_shmem == 0 or block_size_x % 32 != 0"]}
JSON
# 16 * 5 * 4 * 2 * 2 = 1280 points. Valid (x, y) pairs with x*y <= 1024: for y = 1, 2, 4 all 16
# x; y = 8: x <= 128 (8); y = 16: x <= 64 (4) -> 60 pairs. use_shmem = 1 needs x % 32 != 0:
# 8 of 16 x values per y for y <= 4 (24), y = 8: 16,48,80,112 (4), y = 16: 16,48 (2) -> 30.
# Valid = 4 tiles * 2 modes * (60 + 30) = 720.
expect_rc show 0 "$TK" space show small.json --sample 5 --seed 3
grep -q '5 parameters, 2 restrictions, 1280 points' out.txt && pass || fail "show: size line"
grep -q '^valid: 720 (56.25%)' out.txt && pass || fail "show: exact valid count"
grep -q 'block_size_x  *16  *16, 32, 48, \.\.\., 240, 256' out.txt && pass || fail "show: value list"
expect_rc show-json 0 "$TK" space show small.json --sample 20 --seed 3 --format json
python3 - out.txt <<'PY' && pass || fail "show --format json: sample or counts wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["points"] == 1280 and d["valid"] == 720 and len(d["sample"]) == 20
assert len({r["index"] for r in d["sample"]}) == 20
for r in d["sample"]:
    x, y, s = r["block_size_x"], r["block_size_y"], r["use_shmem"]
    assert x * y <= 1024 and (s == 0 or x % 32 != 0), r
PY
# The same seed gives the same sample, another seed another one.
"$TK" space show small.json --sample 5 --seed 3 >a.txt && "$TK" space show small.json --sample 5 --seed 3 >b.txt
cmp -s a.txt b.txt && pass || fail "show: sample not reproducible"
"$TK" space show small.json --sample 5 --seed 4 >c.txt
cmp -s a.txt c.txt && fail "show: seed ignored" || pass

# 10^12 points, a restriction keeping 1%: estimated, not enumerated, and sampled quickly.
cat >big.json <<'JSON'
{"parameters": {"a": {"range": [0, 1000]}, "b": {"range": [0, 1000]}, "c": {"range": [0, 1000]},
                "d": {"range": [0, 1000]}},
 "restrictions": ["(a*7 + b*3 + c + d) % 100 == 0"]}
JSON
expect_rc show-big 0 timeout 60 "$TK" space show big.json --sample 50 --format json
python3 - out.txt <<'PY' && pass || fail "show big: estimate or sample wrong"
import json, sys
d = json.load(open(sys.argv[1]))
e = d["valid_fraction_estimate"]
assert d["points"] == 10**12 and "valid" not in d
assert e["low"] <= 0.01 <= e["high"] and e["high"] - e["low"] < 0.002, e
assert len(d["sample"]) == 50
assert all((r["a"] * 7 + r["b"] * 3 + r["c"] + r["d"]) % 100 == 0 for r in d["sample"])
PY

# Asking for more configurations than there are valid ones gives each valid one once.
expect_rc show-all 0 "$TK" space show small.json --sample 100000 --format json
python3 - out.txt <<'PY' && pass || fail "show: --sample beyond the valid count"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["sample"]) == 720 and len({r["index"] for r in d["sample"]}) == 720
PY
# 10^12 points and no valid one (or a single one): the sample gives up after a bounded number
# of random indices instead of searching the whole space.
cat >none.json <<'JSON'
{"parameters": {"a": {"range": [0, 1000]}, "b": {"range": [0, 1000]}, "c": {"range": [0, 1000]},
                "d": {"range": [0, 1000]}},
 "restrictions": ["a + b + c + d < 0"]}
JSON
expect_rc show-none 0 timeout 60 "$TK" space show none.json --sample 2
grep -q 'found 0 of 2 valid configurations in [0-9]* random indices' out.txt && pass || fail "show: no valid point not reported"
expect_fail sample-cap 2 "--sample" "$TK" space show small.json --sample 1000001

expect_rc seed-max 0 "$TK" space show small.json --sample 1 --seed 18446744073709551615
expect_fail seed-over 2 "is not a whole number in [0, 18446744073709551615]" "$TK" space show small.json --seed 18446744073709551616

# check: valid, invalid (exit 3, the failing restriction named), bad values and names.
expect_rc check-valid 0 "$TK" space check small.json block_size_x=48 block_size_y=16 tile_size_x=2 use_shmem=1 mode=safe
grep -q '^valid: index ' out.txt && pass || fail "check: valid verdict"
expect_rc check-invalid 3 "$TK" space check small.json block_size_x=64 block_size_y=16 tile_size_x=2 use_shmem=1 mode=fast
grep -q 'fails 1 restriction' out.txt && grep -q 'block_size_x % 32 != 0' out.txt && pass || fail "check: failing restriction not named"
expect_rc check-invalid-both 3 "$TK" space check small.json block_size_x=256 block_size_y=16 tile_size_x=1 use_shmem=1 mode=fast
grep -q 'fails 2 restriction' out.txt && pass || fail "check: expected both restrictions to fail"
expect_fail check-bad-value 2 "'47' is not a value of parameter 'block_size_x'" "$TK" space check small.json block_size_x=47 block_size_y=1 tile_size_x=1 use_shmem=0 mode=fast
expect_fail check-bad-name 2 "no parameter 'colour'" "$TK" space check small.json colour=red
expect_fail check-missing 2 "no value for parameter(s) tile_size_x, use_shmem, mode" "$TK" space check small.json block_size_x=16 block_size_y=1
expect_fail check-not-assignment 2 "'block_size_x' is not NAME=VALUE" "$TK" space check small.json block_size_x
expect_fail check-twice 2 "given twice" "$TK" space check small.json mode=fast mode=safe

# Bad specs: one line naming the file.
printf '{"parameters": {"a": [1, 2]' >truncated.json
expect_fail truncated 1 "truncated.json" "$TK" space show truncated.json
printf '{"parameters": {"a": [1, 2]}, "restrictions": ["a +* 2"]}' >badexpr.json
expect_fail bad-restriction 1 "badexpr.json" "$TK" space show badexpr.json
printf '{"parameters": {"a": [1, 2]}, "restrictions": ["b > 1"]}' >unknown.json
expect_fail unknown-parameter 1 "unknown.json" "$TK" space show unknown.json
expect_fail missing-file 1 "nope.json" "$TK" space show nope.json
# JSON errors name the file without nlohmann's exception ids; nesting past the parse limit is
# refused when parsed (a value or restriction 100,000 levels deep overflowed the stack).
expect_fail truncated-clean 1 "truncated.json: not JSON (syntax error at column 28: " "$TK" space show truncated.json
printf '{"parameters": {"a": [1e400]}}' >overflow.json
expect_fail number-overflow 1 "overflow.json: a number is out of range (1e400)" "$TK" space show overflow.json
python3 -c 'print("{\"parameters\": {\"a\": [1, 2, " + "[" * 100000 + "]" * 100000 + "]}}")' >deep_value.json
python3 -c 'print("{\"parameters\": {\"a\": [1, 2]}, \"restrictions\": " + "[" * 100000 + "]" * 100000 + "}")' >deep_restriction.json
for f in deep_value deep_restriction; do
  expect_fail "$f" 1 "$f.json: nested deeper than 256 levels" "$TK" space show "$f.json"
  expect_fail "$f-check" 1 "$f.json: nested deeper than 256 levels" "$TK" space check "$f.json" a=1
done
for f in truncated overflow; do
  "$TK" space show "$f.json" 2>&1 | grep -q "json.exception" && fail "$f: nlohmann's exception id" || pass
done
expect_fail bad-format 2 "--format" "$TK" space show small.json --format xml

echo "space cli: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
