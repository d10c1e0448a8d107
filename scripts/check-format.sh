#!/usr/bin/env bash
# Checks that every C++ source of the repository is formatted as .clang-format says, with
# clang-format 14 (other versions format differently). Lists the files that are not and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
fmt="${CLANG_FORMAT:-clang-format-14}"
if ! command -v "$fmt" >/dev/null; then
  echo "check-format: $fmt not found (scripts/install-deps.sh installs clang-format-14)" >&2
  exit 2
fi
# In a git checkout the files git knows or would add (not ignored ones such as build folders),
# else every C++ file outside the build folders.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- \
    '*.cpp' '*.hpp' '*.h' '*.cc' | sort -u | while read -r f; do [ -f "$f" ] && echo "$f"; done)
else
  mapfile -t files < <(find . \( -path './build*' -o -path './.git' \) -prune -o -type f \
    \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cc' \) -print | sed 's|^\./||')
fi
# One clang-format process for all files; each offending file is named in its warnings.
out="$(printf '%s\0' "${files[@]}" | xargs -0 "$fmt" --style=file --dry-run -Werror 2>&1)" && rc=0 || rc=$?
mapfile -t bad < <(printf '%s\n' "$out" |
  sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [ ${#bad[@]} -ne 0 ]; then
  echo "check-format: ${#bad[@]} of ${#files[@]} C++ files differ from .clang-format ($fmt):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "check-format: fix with $fmt -i FILE..." >&2
  exit 1
fi
if [ "$rc" -ne 0 ]; then
  printf '%s\n' "$out" >&2
  echo "check-format: $fmt failed (exit status $rc)" >&2
  exit 1
fi
echo "check-format: ${#files[@]} C++ files formatted ($fmt)"
