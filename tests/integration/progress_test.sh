#!/usr/bin/env bash
# Progress of tune-file, compare and simulate: in a pseudo-terminal (script -qc) one line on
# stderr rewritten in place with elapsed and estimated remaining time; piped, one plain line per
# finished problem ("[i/N] <problem>: winner ... (elapsed ...)").
# Usage: progress_test.sh TUNEKIT_CLI SOURCE_DIR
set -u
TK="$1"; SRC="$2"
. "$(dirname "$0")/harness.sh"
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT; cd "$WORK" || exit 1
export TUNEKIT_DB="$WORK/t.db" TUNEKIT_SYSTEM_DB=off
printf 'GemmTunableOp_float_NN,nn_64_32_48_ld_64_48_64\nGemmTunableOp_float_NN,nn_96_17_33_ld_96_33_96\n' > p.csv
BUDGET=(--max-tuning-duration-ms 2 --max-tuning-iterations 5 --threads 1)

# Piped (not a terminal): one plain line per finished problem, on stdout, before the table.
"$TK" tune-file p.csv --results plain.csv "${BUDGET[@]}" > out.txt 2> err.txt
check "tune-file plain: 2 lines" test "$(grep -cE '^\[[12]/2\] GemmTunableOp_float_NN,.*: winner .* ms.*\(elapsed [0-9.]+ s\)$' out.txt)" -eq 2
check "tune-file plain: no terminal codes" bash -c "! grep -q $'\r' out.txt err.txt"
check "tune-file plain: the table follows" grep -q '^problem .*winner' out.txt
"$TK" compare p.csv --results plain.csv --threads 1 --head-to-head 0 --sample-ms 0.2 > out.txt 2> err.txt
check "compare plain: 2 lines" test "$(grep -cE '^\[[12]/2\] .*: winner .*tuned/best single .*\(elapsed' out.txt)" -eq 2
CONV="$SRC/tests/data/autotvm/convolution_subset.json.gz"
"$TK" simulate --data "$CONV" --strategy random grid --budget 10 --runs 2 --no-score --threads 1 --format json > out.txt 2> err.txt
check "simulate plain: a line per strategy on stderr" test "$(grep -cE '^\[[12]/2\] .*(random|grid): 2 runs, FoO@10' err.txt)" -eq 2
check "simulate plain: stdout stays JSON" python3 -c "import json,sys; json.load(open('out.txt'))"

# A terminal: the line is rewritten with '\r', shows elapsed and time left, and no plain lines.
script -qec "'$TK' tune-file p.csv --results tty.csv ${BUDGET[*]}" /dev/null > tty.txt 2>&1
check "tune-file terminal: rewritten line" grep -q $'\r\033\[K\[#*\.*\] [012]/2' tty.txt
check "tune-file terminal: elapsed and left" grep -qE 'elapsed, (~[0-9.]+ s left|estimating)' tty.txt
check "tune-file terminal: no plain lines" bash -c "! grep -qE '^\[[12]/2\] ' tty.txt"
check "tune-file terminal: tuned" grep -q 'tuned' tty.txt
# Log lines (here the tuning status of TUNEKIT_VERBOSE=2) clear the progress line first: none is
# glued onto it ("...ld_96_33_96tunekit: ...").
script -qec "TUNEKIT_VERBOSE=2 '$TK' tune-file p.csv --results verbose.csv ${BUDGET[*]}" /dev/null > tty.txt 2>&1
check "tune-file terminal: log lines shown" grep -q 'tunekit: ' tty.txt
check "tune-file terminal: no log line glued onto the progress line" python3 -c "
import sys
lines = open('tty.txt', encoding='utf-8', errors='replace').read().split('\n')
glued = [l for l in lines if 'elapsed, ' in l.split('\r')[-1] and 'tunekit' in l.split('\r')[-1]]
sys.exit(1 if glued else 0)"
script -qec "'$TK' compare p.csv --results tty.csv --threads 1 --head-to-head 0 --sample-ms 0.2" /dev/null > tty.txt 2>&1
check "compare terminal: rewritten line" grep -qE $'\r\033\\[K\\[[#.]+\\] [0-9]/2 .*elapsed' tty.txt
script -qec "'$TK' simulate --data '$CONV' --strategy random grid --budget 10 --runs 2 --no-score --threads 1" /dev/null > tty.txt 2>&1
check "simulate terminal: rewritten line" grep -qE $'\r\033\\[K\\[[#.]+\\] [0-9]/2 .*elapsed' tty.txt
check "simulate terminal: no plain lines" bash -c "! grep -qE '^\[[12]/2\] ' tty.txt"
echo "progress: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
