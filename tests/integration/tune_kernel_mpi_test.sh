#!/usr/bin/env bash
# `mpirun -n 3 tunekit tune-kernel SPEC --distributed` on localhost: rank 0 searches, ranks 1-2
# build and run. A clean run measures the bad space (tests/data/kernels/bad_space) with its three
# failures reported; then rank 2 cannot measure (its kernel worker is missing): it is reported
# and every configuration is still measured by rank 1; one rank alone is refused.
# Usage: tune_kernel_mpi_test.sh <tunekit> <mpiexec> <source dir>
set -uo pipefail
source "$(dirname "$(realpath "$0")")/harness.sh"
TK="$(realpath "$1")"; MPIEXEC="$2"; SRC="$(realpath "$3")"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cd "$work"
# CI runs as root; OpenMPI refuses that unless told (--allow-run-as-root or its variables).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export TUNEKIT_CACHE_DIR="$work/cache"
SPEC="$SRC/tests/data/kernels/bad_space/bad_space.json"
lines() { wc -l <"$1" | tr -d ' '; }
reports_bad_space() {
  grep -q "VARIANT=2: RUNTIME_DEVICE: killed by SIGSEGV" out.txt &&
    grep -q "VARIANT=3: RUN_TIMEOUT: ran past the 1 s timeout" out.txt &&
    grep -q "VARIANT=4: WRONG_ANSWER: output 'y' element 17" out.txt &&
    grep -qE "^best: VARIANT=(0|1|5) " out.txt
}

expect_ok clean-run "$MPIEXEC" -n 3 "$TK" tune-kernel "$SPEC" --distributed --log "$work/a.log.json"
check "clean run reports the bad space" reports_bad_space
check "clean run: one record per configuration" [ "$(lines a.log.json)" -eq 6 ]
check "clean run: no rank failed" bash -c "! grep -q 'rank [0-9]* failed' out.txt err.txt"

expect_ok broken-rank "$MPIEXEC" -n 2 "$TK" tune-kernel "$SPEC" --distributed --log "$work/b.log.json" \
  : -n 1 -x TUNEKIT_KERNEL_WORKER=/nonexistent/worker "$TK" tune-kernel "$SPEC" --distributed \
  --log "$work/b.log.json"
check "broken rank reported" grep -q "rank 2 failed: \$TUNEKIT_KERNEL_WORKER names '/nonexistent/worker'" out.txt
check "broken rank: the others measured everything" reports_bad_space
check "broken rank: one record per configuration" [ "$(lines b.log.json)" -eq 6 ]

expect_rc one-rank 2 "$MPIEXEC" -n 1 "$TK" tune-kernel "$SPEC" --distributed --log "$work/c.log.json"
check "one rank: the reason" grep -q "needs at least 2 MPI ranks" out.txt err.txt

echo "tune_kernel_mpi_test: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
