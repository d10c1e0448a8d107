// Checks tunekit's x86-64-v4 kernels (src/ops/native_kernels.inc and native_decode.inc: the
// AVX-512 fp32 blocked GEMM, the bf16 GEMM through AVX512-BF16, the fp32 and bf16 decode
// kernels, widened and through AVX512-BF16) on a CPU without AVX-512,
// by running this program in an emulated Sapphire Rapids CPU (run_v4_kernels.py). Freestanding:
// no C library and one thread (OpenMP's pragmas are ignored, so a configuration of several
// threads runs as one); the few runtime functions the kernels need are defined below. The
// result is left in `tk_report` for the emulator to read.
#define TUNEKIT_NATIVE_LEVEL v4
#define TUNEKIT_NATIVE_LEVEL_UPPER V4
#define TUNEKIT_NATIVE_LEVEL_NAME "x86-64-v4"
#define TUNEKIT_NATIVE_WIDTH 16
#include "ops/native_kernels.inc"

using tunekit::ops::detail::kNativeKernelsV4;
using tunekit::ops::detail::NativeBf16Call;
using tunekit::ops::detail::NativeBlocking;
using tunekit::ops::detail::NativeCall;
using tunekit::ops::detail::NativeCallOf;
using tunekit::ops::detail::NativeOrder;

// ---- the runtime the kernels call (one thread, a bump allocator, no exit) --------------------
namespace {
alignas(64) unsigned char heap[24 << 20];
std::size_t heap_used = 0;
void* bump(std::size_t bytes, std::size_t align) {
  heap_used = (heap_used + align - 1) / align * align;
  if (heap_used + bytes > sizeof(heap)) __builtin_trap();
  void* p = heap + heap_used;
  heap_used += bytes;
  return p;
}
}  // namespace

extern "C" {
void* __dso_handle = nullptr;
int __cxa_thread_atexit(void (*)(void*), void*, void*) { return 0; }
int omp_get_thread_num() { return 0; }
int omp_get_num_threads() { return 1; }
void* aligned_alloc(std::size_t align, std::size_t bytes) { return bump(bytes, align); }
void* malloc(std::size_t bytes) { return bump(bytes, 16); }
void free(void*) {}
void* memset(void* dst, int v, std::size_t n) {
  auto* d = static_cast<volatile unsigned char*>(dst);
  for (std::size_t i = 0; i < n; ++i) d[i] = static_cast<unsigned char>(v);
  return dst;
}
void* memcpy(void* dst, const void* src, std::size_t n) {
  auto* d = static_cast<volatile unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (std::size_t i = 0; i < n; ++i) d[i] = s[i];
  return dst;
}
void* memmove(void* dst, const void* src, std::size_t n) { return memcpy(dst, src, n); }
}
void* operator new(std::size_t bytes) { return bump(bytes, 16); }
void* operator new[](std::size_t bytes) { return bump(bytes, 16); }
void operator delete(void*) noexcept {}
void operator delete(void*, std::size_t) noexcept {}
void operator delete[](void*) noexcept {}
namespace std {
void __throw_length_error(const char*) { __builtin_trap(); }
void __throw_bad_alloc() { __builtin_trap(); }
void __throw_bad_array_new_length() { __builtin_trap(); }
}  // namespace std

// ---- the checks -------------------------------------------------------------------------------
using namespace tunekit::ops::detail::native_v4;

struct Report {
  std::uint64_t magic;             // kDone once every case ran
  std::uint64_t cases;             // problems run
  std::uint64_t failures;          // problems whose C differs from the reference by more than 1e-4
  double worst;                    // largest difference seen
  std::int64_t first_failure[10];  // path, dtype, mr, nr, ta, tb, m, n, k, kc (first failure)
};
constexpr std::uint64_t kDone = 0x7634216b6e6c;

extern "C" {
Report tk_report = {};
}

namespace {

std::uint32_t rng_state = 12345;
float uniform() {  // [-1, 1)
  rng_state = rng_state * 1664525u + 1013904223u;
  return static_cast<float>(rng_state >> 8) / 8388608.0f - 1.0f;
}
std::uint16_t to_bf16(float x) {  // round to nearest even
  std::uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return static_cast<std::uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}
template <class T>
T random_value() {
  if constexpr (std::is_same_v<T, float>) return uniform();
  return to_bf16(uniform());
}
template <class T>
T nan_value() {
  if constexpr (std::is_same_v<T, float>) return __builtin_nanf("");
  return 0x7FC0;  // a bf16 quiet NaN
}
// A rows x cols column-major operand with leading dimension ld: random values, NaN in the
// padding rows past `rows` (a kernel reading past a row or column makes C NaN).
template <class T>
T* operand(std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  auto* x = static_cast<T*>(bump(sizeof(T) * ld * cols, 64));
  for (std::int64_t j = 0; j < cols; ++j) {
    for (std::int64_t i = 0; i < ld; ++i)
      x[i + j * ld] = i < rows ? random_value<T>() : nan_value<T>();
  }
  return x;
}
double value(float x) { return x; }
double value(std::uint16_t b) { return to_float(b); }
double absolute(double x) { return x < 0 ? -x : x; }

// The kernels under test: the blocked GEMM through its entry point (its single-thread driver,
// threads claiming A blocks), or through the drivers that several threads take, entered as
// thread 0 of 1 (threads sharing each A block; all of B packed before the blocks run all their
// depth rounds), or as each of 3 threads in turn (threads owning their rows of C); or the decode
// kernels.
enum class Path { kEntry, kShared, kWholeK, kOwn, kDecode, kDecodePairs };

struct Case {
  Path path;
  int mr, nr;  // the tile; for the decode paths, mr is the rows read together
  char ta, tb;
  std::int64_t m, n, k;
  int kc, mc, nc;
  NativeOrder order;
  float alpha, beta;
  bool constant_a;
};

// The blocked GEMM's element policy and entry points for A and B of type T.
template <class T>
struct Route;
template <>
struct Route<float> {
  using E = Fp32Elements;
  static bool gemm(const NativeCall& c, const NativeBlocking& b, const float* packed) {
    return kNativeKernelsV4.gemm(c, b, packed);
  }
  static std::size_t packed_words(std::int64_t m, std::int64_t k, const NativeBlocking& b) {
    return kNativeKernelsV4.packed_a_floats(m, k, b);
  }
  static bool pack_a(const NativeCall& c, const NativeBlocking& b, float* out) {
    return kNativeKernelsV4.pack_a(c, b, out);
  }
  static bool decode(const NativeCall& c, int rows) {
    return kNativeKernelsV4.gemv_rows(c, rows, 1);
  }
  static bool decode_pairs(const NativeCall&, int) { return false; }
};
template <>
struct Route<std::uint16_t> {
  using E = Bf16Pairs;
  static bool gemm(const NativeBf16Call& c, const NativeBlocking& b, const float* packed) {
    return kNativeKernelsV4.bf16_pairs->gemm(c, b, packed);
  }
  static std::size_t packed_words(std::int64_t m, std::int64_t k, const NativeBlocking& b) {
    return kNativeKernelsV4.bf16_pairs->packed_a_words(m, k, b);
  }
  static bool pack_a(const NativeBf16Call& c, const NativeBlocking& b, float* out) {
    return kNativeKernelsV4.bf16_pairs->pack_a(c, b, out);
  }
  static bool decode(const NativeBf16Call& c, int rows) {
    return kNativeKernelsV4.gemv_rows_bf16(c, rows, 1);
  }
  static bool decode_pairs(const NativeBf16Call& c, int rows) {
    return kNativeKernelsV4.gemv_rows_bf16_pairs(c, rows, 1);
  }
};

// drive()'s rounds with the threads sharing each A block (as when there are fewer than 4 blocks
// per thread), as thread 0 of 1.
template <class E, int MV, int NR>
void shared_rounds(const CallOf<E>& c, const NativeBlocking& b, const float* packed_a) {
  auto* pb = static_cast<float*>(bump(4 * round_up(b.nc, NR) * b.kc, 64));
  auto* sa = static_cast<float*>(bump(4 * 2 * b.mc * b.kc, 64));
  for (std::int64_t jc = 0; jc < c.n; jc += b.nc) {
    const std::int64_t cols = std::min<std::int64_t>(b.nc, c.n - jc);
    const std::int64_t jpanels = (cols + NR - 1) / NR;
    for (std::int64_t pc = 0; pc < c.k; pc += b.kc) {
      const std::int64_t kc = std::min<std::int64_t>(b.kc, c.k - pc);
      E::template pack_b<NR>(c, jc, cols, pc, kc, 0, jpanels, pb);
      const Block blk = round_block(pb, jc, cols, kc, steps_of<E>(kc), pc == 0 ? c.beta : 1.0f);
      shared_blocks<E, MV, NR>(c, b, packed_a, blk, pc, sa, 0, 1, 0, jpanels);
    }
  }
}

template <class E, int MV, int NR>
void run_driver(Path path, const CallOf<E>& c, const NativeBlocking& blocking,
                const float* packed_a) {
  const NativeBlocking b = balanced<E>(blocking, c.m, c.n, c.k);
  if (path == Path::kShared) {
    shared_rounds<E, MV, NR>(c, b, packed_a);
    return;
  }
  if (path == Path::kOwn) {
    for (int t = 0; t < 3; ++t) drive_own<E, MV, NR>(c, b, packed_a, t, 3);
    return;
  }
  const std::int64_t rounds = (c.k + b.kc - 1) / b.kc;
  auto* pb = static_cast<float*>(bump(4 * round_up(c.n, NR) * b.kc * rounds, 64));
  std::atomic<std::int64_t> next{0};
  drive_whole_k<E, MV, NR>(c, b, packed_a, pb, next, 0, 1);
}

template <class T>
bool run_path(Path path, const NativeCallOf<T>& c, const NativeBlocking& b, const float* packed) {
  using E = typename Route<T>::E;
  if (path == Path::kEntry) return Route<T>::gemm(c, b, packed);
  if (path == Path::kDecode) return Route<T>::decode(c, b.mr);
  if (path == Path::kDecodePairs) return Route<T>::decode_pairs(c, b.mr);
  if (b.mr == 32) run_driver<E, 2, 12>(path, c, b, packed);
  if (b.mr == 48) run_driver<E, 3, 8>(path, c, b, packed);
  if (b.mr == 16) run_driver<E, 1, 24>(path, c, b, packed);
  return true;
}

// The largest difference of C from a double reference on the same values; 1e9 when a kernel
// refused the case or wrote into the padding rows of C.
template <class T>
double check(const Case& t, const NativeCallOf<T>& call, const float* c0) {
  double worst = 0;
  for (std::int64_t j = 0; j < t.n; ++j) {
    for (std::int64_t i = 0; i < call.ldc; ++i) {
      const float got = call.c[i + j * call.ldc];
      if (i >= t.m) {
        if (got != c0[i + j * call.ldc]) return 1e9;
        continue;
      }
      double sum = 0;
      for (std::int64_t q = 0; q < t.k; ++q) {
        const double x = value(t.ta == 'n' ? call.a[i + q * call.lda] : call.a[q + i * call.lda]);
        const double y = value(t.tb == 'n' ? call.b[q + j * call.ldb] : call.b[j + q * call.ldb]);
        sum += x * y;
      }
      const double beta_c = t.beta == 0.0f ? 0.0 : t.beta * c0[i + j * call.ldc];
      const double diff = absolute(got - (t.alpha * sum + beta_c));
      if (diff != diff) return 1e9;  // NaN: a padding element or C with beta 0 was read
      if (diff > worst) worst = diff;
    }
  }
  return worst;
}

// One problem with padded leading dimensions, on A and B of type T.
template <class T>
double run_case(const Case& t) {
  const std::int64_t lda = (t.ta == 'n' ? t.m : t.k) + 3, ldb = (t.tb == 'n' ? t.k : t.n) + 1;
  const std::int64_t ldc = t.m + 2;
  T* a = t.ta == 'n' ? operand<T>(t.m, t.k, lda) : operand<T>(t.k, t.m, lda);
  T* b = t.tb == 'n' ? operand<T>(t.k, t.n, ldb) : operand<T>(t.n, t.k, ldb);
  auto* c = static_cast<float*>(bump(4 * ldc * t.n, 64));
  auto* c0 = static_cast<float*>(bump(4 * ldc * t.n, 64));
  for (std::int64_t i = 0; i < ldc * t.n; ++i) {
    // With beta 0, C is not to be read: NaN there would reach the result.
    c[i] = c0[i] = t.beta == 0.0f && i % ldc < t.m ? __builtin_nanf("") : uniform();
  }
  const NativeCallOf<T> call{t.ta, t.tb, t.m, t.n, t.k, t.alpha, t.beta, a, lda, b, ldb, c, ldc};
  const NativeBlocking blocking{t.mr, t.nr, t.kc, t.mc, t.nc, t.order, 1};
  float* packed = nullptr;
  if (t.constant_a) {
    packed = static_cast<float*>(bump(4 * Route<T>::packed_words(t.m, t.k, blocking), 64));
    if (!Route<T>::pack_a(call, blocking, packed)) return 1e9;
  }
  if (!run_path(t.path, call, blocking, packed)) return 1e9;
  return check(t, call, c0);
}

template <class T>
void run(const Case& t) {
  const double worst = run_case<T>(t);
  ++tk_report.cases;
  if (!(worst <= tk_report.worst)) tk_report.worst = worst;
  if (!(worst <= 1e-4) && tk_report.failures++ == 0) {
    const std::int64_t at[10] = {static_cast<std::int64_t>(t.path),
                                 sizeof(T) == 2,
                                 t.mr,
                                 t.nr,
                                 t.ta,
                                 t.tb,
                                 t.m,
                                 t.n,
                                 t.k,
                                 t.kc};
    for (int i = 0; i < 10; ++i) tk_report.first_failure[i] = at[i];
  }
}

// The blocked GEMM on every v4 tile and layout: several mc, nc and kc rounds, edge tiles in both
// dimensions, odd k (an odd last depth round), k = 1, alpha and beta, both orders, the four
// driver paths, constant (packed) weights.
template <class T>
void blocked_cases() {
  constexpr int kTilesV4[3][2] = {{32, 12}, {48, 8}, {16, 24}};
  for (const auto& tile : kTilesV4) {
    const int mr = tile[0], nr = tile[1];
    for (const char* l : {"nn", "nt", "tn", "tt"}) {
      const char ta = l[0], tb = l[1];
      const Case cases[] = {
          {Path::kEntry, mr, nr, ta, tb, 3 * mr + 5, 2 * nr + 3, 77, 32, 2 * mr, nr,
           NativeOrder::kJI, 1.5f, 0.0f, false},
          {Path::kEntry, mr, nr, ta, tb, 2 * mr + 1, nr + 1, 40, 16, mr, 2 * nr, NativeOrder::kIJ,
           1.0f, 0.5f, false},
          {Path::kEntry, mr, nr, ta, tb, mr - 3, 5, 1, 8, mr, nr, NativeOrder::kJI, 1.0f, 1.0f,
           false},
          {Path::kEntry, mr, nr, ta, tb, 2 * mr + 7, nr - 1, 35, 12, mr, nr, NativeOrder::kIJ,
           0.75f, 0.0f, true},
          {Path::kShared, mr, nr, ta, tb, 3 * mr + 5, 2 * nr + 3, 45, 16, 2 * mr, nr,
           NativeOrder::kIJ, 1.0f, 0.5f, false},
          {Path::kShared, mr, nr, ta, tb, 2 * mr + 3, nr + 2, 33, 20, mr, 2 * nr, NativeOrder::kJI,
           1.0f, 0.0f, true},
          {Path::kWholeK, mr, nr, ta, tb, 3 * mr + 5, 2 * nr + 3, 77, 32, mr, 4 * nr,
           NativeOrder::kJI, 1.5f, 0.5f, false},
          {Path::kWholeK, mr, nr, ta, tb, 2 * mr + 9, nr + 5, 51, 16, mr, 4 * nr, NativeOrder::kIJ,
           1.0f, 0.0f, true},
          {Path::kOwn, mr, nr, ta, tb, 4 * mr + 5, 2 * nr + 3, 45, 16, 2 * mr, nr, NativeOrder::kJI,
           1.0f, 0.5f, false},
          {Path::kOwn, mr, nr, ta, tb, 5 * mr + 3, nr + 2, 33, 20, mr, 2 * nr, NativeOrder::kIJ,
           1.0f, 0.0f, true},
      };
      for (const Case& t : cases) run<T>(t);
    }
  }
}

// The decode kernels (for bf16 also the AVX512-BF16 one): rows of A read together, 1 to 16
// columns of B in either layout, k with and without a tail past the vectors.
template <class T>
void decode_cases(Path path) {
  for (int rows : {1, 2, 4, 8}) {
    for (std::int64_t n : {1, 5, 16}) {
      for (char tb : {'n', 't'}) {
        const std::int64_t k = n == 16 ? 613 : 83;
        run<T>({path, rows, 0, 't', tb, 37, n, k, 0, 0, 0, NativeOrder::kJI, 0.5f,
                n == 5 ? 0.25f : 0.0f, false});
      }
    }
  }
}

}  // namespace

extern "C" void tk_main() {
  blocked_cases<float>();
  blocked_cases<std::uint16_t>();
  decode_cases<float>(Path::kDecode);
  decode_cases<std::uint16_t>(Path::kDecode);
  decode_cases<std::uint16_t>(Path::kDecodePairs);
  tk_report.magic = kDone;
}

// Entry: an aligned stack, the checks, then hlt (which faults at user level and stops the run).
asm(R"(
  .text
  .globl _start
_start:
  and $-16, %rsp
  call tk_main
  hlt
)");
