#!/usr/bin/env bash
# The Eigen kernels are compiled twice, for x86-64-v3 and x86-64-v4 (src/ops/eigen_kernels.inc).
# A symbol with vague linkage (template instance, inline function) defined by both would be
# merged by the linker, and the AVX2 build could run AVX-512 code. Checks that the two objects
# define weak symbols only inside their own renamed Eigen namespace.
# Usage: isa_objects_test.sh <object files of tunekit_ops...>
set -uo pipefail
checked=0; fails=0
for obj in "$@"; do
  case "$(basename "$obj")" in eigen_kernels_v[0-9].cpp.o) ;; *) continue ;; esac
  level="$(basename "$obj" | sed 's/eigen_kernels_\(v[0-9]\).*/\1/')"
  checked=$((checked+1))
  # Weak code or data outside the build's own Eigen namespace; type_info objects (data, emitted by
  # clang's -fsanitize=function) are the same bytes in every build.
  outside="$(nm -C --defined-only "$obj" | awk '$2 ~ /^[WVu]$/' | grep -v "tunekit_eigen_${level}::" \
    | grep -Ev ' V typeinfo (name )?for ' | grep -v ' DW\.ref\.__gxx_personality_v0$')"
  if [ -n "$outside" ]; then
    echo "FAIL: $(basename "$obj") defines weak symbols outside tunekit_eigen_${level}:"; echo "$outside" | head -20
    fails=$((fails+1))
  fi
done
[ "$checked" -eq 2 ] || { echo "FAIL: expected the v3 and v4 objects, found $checked"; fails=$((fails+1)); }
echo "isa objects: $checked checked, $fails failed"
[ "$fails" -eq 0 ]
