# Shared helpers of the CLI integration scripts (sourced): count passes and failures, run a
# command expecting success, or a given exit status with one error line containing a text.
fails=0; passes=0
pass() { passes=$((passes+1)); }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
check() { local name="$1"; shift; if "$@"; then pass; else fail "$name"; fi; }
expect_ok() { local name="$1"; shift; if "$@" >out.txt 2>err.txt; then pass; else fail "$name (exit $?)"; cat out.txt err.txt; fi; }
expect_rc() {  # name, expected exit status, command...
  local name="$1" want="$2"; shift 2
  "$@" >out.txt 2>err.txt; local rc=$?
  if [ "$rc" -ne "$want" ]; then fail "$name: exit $rc, expected $want"; cat out.txt err.txt; return 1; fi
  pass
}
expect_fail() {  # name, expected exit status, expected substring of stderr, command...
  local name="$1" code="$2" needle="$3"; shift 3
  "$@" >out.txt 2>err.txt; local got=$?
  if [ "$got" -ne "$code" ]; then fail "$name: exit $got, expected $code"; cat err.txt; return; fi
  if ! grep -qF -- "$needle" err.txt; then fail "$name: stderr lacks '$needle'"; cat err.txt; return; fi
  if [ "$(wc -l <err.txt)" -gt 1 ]; then fail "$name: more than one error line"; cat err.txt; return; fi
  pass
}
