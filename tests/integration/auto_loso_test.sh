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

expect_fail bad-candidate 1 "--candidates: '{\"stall\": 0' is not a JSON object" \
  loso --candidates '{"stall": 0' --hold-out "$A"
expect_fail bad-baseline 1 "--baseline: '[1]' is not a JSON object" \
  loso --candidates '{}' --baseline '[1]' --hold-out "$A"
expect_fail unknown-setting 2 "auto: setting 'stall' must be" \
  loso --candidates '{"stall": -1}' --hold-out "$A"
expect_fail missing-file 2 "No such file" loso --candidates '{}' --hold-out "$work/none.json.gz"
expect_fail few-runs 1 "need --runs, --regression-runs and --table-runs >= 2" \
  loso --candidates '{}' --hold-out "$A" --regression-runs 1

echo "auto_loso: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
