#!/usr/bin/env bash
# The Eigen kernels are compiled twice, for x86-64-v3 and x86-64-v4 (src/ops/eigen_kernels.inc).
# A symbol with vague linkage (template instance, inline function) defined by both would be
# merged by the linker, and the AVX2 build could run AVX-512 code. Checks that the two objects
# define weak symbols only inside their own renamed Eigen namespace. tunekit's own kernels
# (src/ops/native_kernels.inc, built the same way) must define none at all: their code has
# internal linkage, so a weak symbol there is a library template instantiated for one ISA (an
# optimised build is assumed: at -O0 std:: helpers stay out of line). tunekit's x86-64-v4 kernels
# are compiled with AVX512-BF16 enabled for their bf16 GEMM; x86-64-v4 CPUs without the extension
# run the rest, so the object's AVX512-BF16 instructions must all be inside the bf16 element
# policy's (Bf16Pairs, vdot_pairs) functions or the decode kernel on bf16 columns (templates
# of <unsigned short, unsigned short>, gemv_rows_bf16_pairs, accumulate on bf16 rows and
# columns), which only CPUs with the
# extension enter; likewise its AMX instructions inside the AMX policy's (Bf16Tiles), which
# only CPUs with AMX enter.
# Usage: isa_objects_test.sh <object files of tunekit_ops...>
set -uo pipefail
eigen=0; native=0; fails=0
for obj in "$@"; do
  # Weak symbols an object may define (an extended regex): the Eigen builds, code of their own
  # renamed namespace and type_info objects (data, emitted by clang's -fsanitize=function, the
  # same bytes in every build); tunekit's kernels, none but the personality reference.
  case "$(basename "$obj")" in
    eigen_kernels_v[0-9].cpp.o)
      eigen=$((eigen+1))
      level="$(basename "$obj" | sed 's/eigen_kernels_\(v[0-9]\).*/\1/')"
      allowed="tunekit_eigen_${level}::| V typeinfo (name )?for | DW\.ref\.__gxx_personality_v0$" ;;
    native_kernels_v[0-9].cpp.o)
      native=$((native+1))
      allowed=' DW\.ref\.__gxx_personality_v0$' ;;
    *) continue ;;
  esac
  weak="$(nm -C --defined-only "$obj" | awk '$2 ~ /^[WVu]$/' | grep -Ev "$allowed")"
  if [ -n "$weak" ]; then
    echo "FAIL: $(basename "$obj") defines weak symbols it must not:"; echo "$weak" | head -20
    fails=$((fails+1))
  fi
done
[ "$eigen" -eq 2 ] || { echo "FAIL: expected the v3 and v4 Eigen objects, found $eigen"; fails=$((fails+1)); }
[ "$native" -eq 2 ] || { echo "FAIL: expected the two native kernel objects, found $native"; fails=$((fails+1)); }
# Functions of object $1 holding an instruction matching $3 ($2 names the extension) must all
# match $4, and there must be some.
confined() {
  local holders outside
  holders="$(objdump -d -C --no-show-raw-insn "$1" |
    awk -v ins="$3" '/^[0-9a-f]+ </ {fn = $0} $0 ~ "\t(" ins ")" {print fn}' | sort -u)"
  if [ -z "$holders" ]; then
    echo "FAIL: $(basename "$1") has no $2 instruction (its bf16 route is missing)"
    fails=$((fails+1))
  fi
  outside="$(printf '%s\n' "$holders" | grep -Ev "$4" | grep -v '^$' || true)"
  if [ -n "$outside" ]; then
    echo "FAIL: $2 instructions outside their bf16 route:"; echo "$outside" | head -10
    fails=$((fails+1))
  fi
}
v4_checked=0
for obj in "$@"; do
  [ "$(basename "$obj")" = native_kernels_v4.cpp.o ] || continue
  v4_checked=1
  confined "$obj" AVX512-BF16 'vdpbf16ps|vcvtneps2bf16|vcvtne2ps2bf16' \
    'Bf16Pairs|vdot_pairs|<unsigned short, unsigned short|gemv_rows_bf16_pairs|accumulate<[0-9]+, [0-9]+>\(unsigned short const\* const\*, long, unsigned short const\* const\*'
  confined "$obj" AMX 'ldtilecfg|tilerelease|tilezero|tileloadd|tileloaddt1|tilestored|tdp' \
    'Bf16Tiles'
done
[ "$v4_checked" -eq 1 ] || { echo "FAIL: native_kernels_v4.cpp.o not given"; fails=$((fails+1)); }
echo "isa objects: $eigen Eigen and $native native objects checked, $fails failed"
[ "$fails" -eq 0 ]
