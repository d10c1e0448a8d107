#!/usr/bin/env bash
# scripts/auto_loso.py end to end on the two small convolution fixtures: the score table, the
# regression check's eligibility, a choice only among eligible settings, and bad input.
set -u
TK="$1"; SRC="$2"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
. "$SRC/tests/integration/harness.sh"
A="$SRC/tests/data/autotvm/convolution_subset.json.gz"
B="$SRC/tests/data/autotvm/convolution_subset_T4.json.gz"
loso() { python3 "$SRC/scripts/auto_loso.py" --tunekit "$TK" --runs 4 --seed 5 "$@"; }

expect_ok loso-regression-check loso --cache cache.json --picks-out picks.json \
  --candidates '{"stall": 0}' '{"acquisition": "none"}' '{"stall": 3}' \
  --hold-out "$A" "$B" --no-regression "$A" --regression-runs 12 --regression-seed 100
cp out.txt first.txt
check table-has-eligibility grep -qF '| eligible |' first.txt
# Ranking at random loses far more than one standard error at 50 evaluations.
check random-ranking-not-eligible grep -qE '^\| `\{"acquisition": "none"\}` \| .* \| no \|$' first.txt
check baseline-eligible grep -qE '^\| `\{"stall": 0\}` \| \+0\.00 / \+0\.00 / \+0\.00 \| yes \|$' first.txt
# The shipped setting and every fold's pick are rows marked eligible.
shipped=$(sed -n 's/^chosen on all files (shipped): `\(.*\)`$/\1/p' first.txt)
check shipped-named test -n "$shipped"
check shipped-eligible grep -qF "| \`$shipped\` |" <(grep -F '| yes |' first.txt)
python3 - picks.json first.txt <<'PY' && pass || fail picks-eligible
import json, sys
picks = json.load(open(sys.argv[1]))
eligible = [l for l in open(sys.argv[2]) if l.rstrip().endswith("| yes |")]
assert len(picks) == 2 and all(any(f"`{p}`" in l for l in eligible) for p in picks.values()), picks
PY
# A rerun replays nothing (every result is in the cache) and prints the same.
expect_ok loso-cached loso --cache cache.json --picks-out picks.json \
  --candidates '{"stall": 0}' '{"acquisition": "none"}' '{"stall": 3}' \
  --hold-out "$A" "$B" --no-regression "$A" --regression-runs 12 --regression-seed 100
check cached-same cmp -s out.txt first.txt
check cached-silent test ! -s err.txt

expect_fail bad-candidate 2 "--candidates: '{\"stall\": 0' is not a JSON object" \
  loso --candidates '{"stall": 0' --hold-out "$A"
expect_fail bad-baseline 2 "--baseline: '[1]' is not a JSON object" \
  loso --candidates '{}' --baseline '[1]' --hold-out "$A"
expect_fail unknown-setting 2 "--candidates '{\"stall\": -1}': tunekit failed (exit 2): tunekit: auto: setting 'stall' must be" \
  loso --candidates '{}' '{"stall": -1}' --hold-out "$A" "$B"
expect_fail duplicate-key 2 "appears twice" loso --cache cache.json --candidates '{"stall": 0, "stall": 3}' --hold-out "$A" "$B"
expect_fail missing-file 2 "none.json.gz" loso --candidates '{}' --hold-out "$A" "$work/none.json.gz"
expect_fail one-file 2 "need at least two files" loso --candidates '{}' --hold-out "$A"
mkdir -p other && cp "$A" other/
expect_fail same-name 2 "have the same file name" loso --candidates '{}' --hold-out "$A" other/convolution_subset.json.gz
echo '[1, 2]' >list.json
expect_fail bad-cache 2 "--cache 'list.json': not a cache" loso --cache list.json --candidates '{}' --hold-out "$A" "$B"
expect_fail cache-folder 2 "--picks-out 'nowhere/p.json': not a file in an existing folder" \
  loso --picks-out nowhere/p.json --candidates '{}' --hold-out "$A" "$B"
expect_fail bad-tunekit 2 "cannot run --tunekit '/nonexistent/tunekit'" \
  python3 "$SRC/scripts/auto_loso.py" --tunekit /nonexistent/tunekit --candidates '{}' --hold-out "$A" "$B"
expect_fail not-tunekit 2 "did not print tunekit's JSON" \
  python3 "$SRC/scripts/auto_loso.py" --tunekit /bin/echo --candidates '{}' --hold-out "$A" "$B"

# compare_auto_settings.py: budgets as tunekit takes them, and each error blamed on its input.
compare() { python3 "$SRC/scripts/compare_auto_settings.py" --tunekit "$TK" --runs 3 "$@"; }
expect_ok compare-ok compare --budgets 5,10 --before '{"stall": 0}' --after '{}' "$A"
check compare-row grep -qF '| convolution_subset.json.gz |' out.txt
expect_fail compare-budgets 2 "--budgets '10,5': need increasing evaluations >= 1, each once" \
  compare --budgets 10,5 --before '{}' --after '{}' "$A"
expect_fail compare-budgets-text 2 "--budgets '5,': not a comma list of integers" \
  compare --budgets 5, --before '{}' --after '{}' "$A"
printf 'not gzip' >bad.json.gz
expect_fail compare-bad-data 2 "bad.json.gz: tunekit failed" compare --before '{}' --after '{}' "$A" bad.json.gz
expect_fail compare-bad-after 2 "--after '{\"stall_mode\": \"restart\"}'" \
  compare --before '{}' --after '{"stall_mode": "restart"}' "$A"

echo "auto_loso: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
