// Allocation, fill and comparison of a kernel's argument buffers.
// See include/tunekit/measure/argument_buffers.hpp.
#include "tunekit/measure/argument_buffers.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

namespace tunekit {
namespace {

/// splitmix64: a small, seedable generator whose stream depends only on its seed.
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
};

template <class T>
void fill_typed(T* out, std::size_t n, const ArgFill& fill, std::uint64_t seed) {
  SplitMix rng{seed};
  for (std::size_t i = 0; i < n; ++i) {
    double v = 0.0;
    switch (fill.kind) {
      case FillKind::kRandom:
        v = std::is_floating_point_v<T> ? rng.unit() * 2.0 - 1.0
                                        : std::floor(rng.unit() * 16.0) - 8.0;
        break;
      case FillKind::kZeros:
        v = 0.0;
        break;
      case FillKind::kOnes:
        v = 1.0;
        break;
      case FillKind::kIndex:
        v = std::is_same_v<T, float> ? static_cast<double>(i % (std::size_t{1} << 24))
                                     : static_cast<double>(i);
        break;
      case FillKind::kConstant:
        v = fill.value;
        break;
      case FillKind::kFile:
        break;  // read_file_fill
    }
    out[i] = static_cast<T>(v);
  }
}

/// A kFile fill: the file's bytes (check_fill_files checked its size before tuning); NaN
/// (floats) or zeros (integers) where it cannot be read, so verification fails loudly.
void read_file_fill(void* data, const KernelArgument& arg) {
  const std::size_t bytes = arg.size * dtype_bytes(arg.dtype);
  std::size_t got = 0;
  if (std::FILE* f = std::fopen(arg.fill.path.c_str(), "rb")) {
    got = std::fread(data, 1, bytes, f);
    std::fclose(f);
  }
  if (got == bytes) return;
  if (arg.dtype == ArgDtype::kFloat32) {
    std::fill_n(static_cast<float*>(data), arg.size, std::numeric_limits<float>::quiet_NaN());
  } else if (arg.dtype == ArgDtype::kFloat64) {
    std::fill_n(static_cast<double*>(data), arg.size, std::numeric_limits<double>::quiet_NaN());
  } else {
    std::memset(data, 0, bytes);
  }
}

void fill_array(void* data, const KernelArgument& arg, std::uint64_t seed) {
  if (arg.fill.kind == FillKind::kFile) return read_file_fill(data, arg);
  switch (arg.dtype) {
    case ArgDtype::kFloat32:
      return fill_typed(static_cast<float*>(data), arg.size, arg.fill, seed);
    case ArgDtype::kFloat64:
      return fill_typed(static_cast<double*>(data), arg.size, arg.fill, seed);
    case ArgDtype::kInt32:
      return fill_typed(static_cast<std::int32_t*>(data), arg.size, arg.fill, seed);
    case ArgDtype::kInt64:
      return fill_typed(static_cast<std::int64_t*>(data), arg.size, arg.fill, seed);
  }
}

/// Index of the first element of `got` outside the tolerance of `ref`, or n when none.
template <class T>
std::size_t first_mismatch(const T* got, const T* ref, std::size_t n, double atol, double rtol) {
  for (std::size_t i = 0; i < n; ++i) {
    const double g = static_cast<double>(got[i]);
    const double r = static_cast<double>(ref[i]);
    if (std::isnan(r) && std::isnan(g)) continue;
    if (!(std::fabs(g - r) <= atol + rtol * std::fabs(r))) return i;
  }
  return n;
}

/// Element i of an array of `dtype` as text (shortest round-trip form).
std::string element_text(const void* data, ArgDtype dtype, std::size_t i) {
  switch (dtype) {
    case ArgDtype::kFloat32:
      return fmt::format("{}", static_cast<const float*>(data)[i]);
    case ArgDtype::kFloat64:
      return fmt::format("{}", static_cast<const double*>(data)[i]);
    case ArgDtype::kInt32:
      return fmt::format("{}", static_cast<const std::int32_t*>(data)[i]);
    case ArgDtype::kInt64:
      return fmt::format("{}", static_cast<const std::int64_t*>(data)[i]);
  }
  return {};
}

std::size_t mismatch_of(const void* got, const void* ref, const KernelArgument& arg, double atol,
                        double rtol) {
  switch (arg.dtype) {
    case ArgDtype::kFloat32:
      return first_mismatch(static_cast<const float*>(got), static_cast<const float*>(ref),
                            arg.size, atol, rtol);
    case ArgDtype::kFloat64:
      return first_mismatch(static_cast<const double*>(got), static_cast<const double*>(ref),
                            arg.size, atol, rtol);
    case ArgDtype::kInt32:
      return first_mismatch(static_cast<const std::int32_t*>(got),
                            static_cast<const std::int32_t*>(ref), arg.size, atol, rtol);
    case ArgDtype::kInt64:
      return first_mismatch(static_cast<const std::int64_t*>(got),
                            static_cast<const std::int64_t*>(ref), arg.size, atol, rtol);
  }
  return arg.size;
}

}  // namespace

Expected<ArgumentBuffers> ArgumentBuffers::allocate(const KernelProblem& problem, Sharing sharing) {
  ArgumentBuffers out;
  out.problem_ = problem;
  out.arrays_.resize(problem.arguments.size());
  for (std::size_t i = 0; i < problem.arguments.size(); ++i) {
    const KernelArgument& arg = problem.arguments[i];
    if (arg.is_scalar) continue;
    if (arg.size == 0) {
      return Status(StatusCode::kInvalidArgument, "array argument '" + arg.name + "' has size 0");
    }
    TUNEKIT_RETURN_IF_ERROR(out.map_array(i, sharing));
  }
  return out;
}

Status ArgumentBuffers::map_array(std::size_t i, Sharing sharing) {
  const KernelArgument& arg = problem_.arguments[i];
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const int flags = MAP_ANONYMOUS | (sharing == Sharing::kShared ? MAP_SHARED : MAP_PRIVATE);
  Array a;
  a.bytes = arg.size * dtype_bytes(arg.dtype);
  a.mapped = (a.bytes + page - 1) / page * page;
  void* base = ::mmap(nullptr, a.mapped + 2 * page, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (base == MAP_FAILED) {
    return Status(StatusCode::kIoError, fmt::format("cannot map {} bytes for argument '{}': {}",
                                                    a.mapped, arg.name, std::strerror(errno)));
  }
  a.data = static_cast<char*>(base) + page;
  a.guard = page;
  arrays_[i] = a;  // from here on release() unmaps it
  char* after = static_cast<char*>(a.data) + a.mapped;
  if (::mprotect(base, page, PROT_NONE) != 0 || ::mprotect(after, page, PROT_NONE) != 0) {
    return Status(StatusCode::kIoError,
                  fmt::format("cannot guard argument '{}': {}", arg.name, std::strerror(errno)));
  }
  return Status::ok();
}

Status ArgumentBuffers::make_read_only() { return protect(PROT_READ, "read-only"); }

Status ArgumentBuffers::make_writable() { return protect(PROT_READ | PROT_WRITE, "writable"); }

Status ArgumentBuffers::protect(int prot, const char* what) {
  for (std::size_t i = 0; i < arrays_.size(); ++i) {
    const Array& a = arrays_[i];
    if (a.data == nullptr || ::mprotect(a.data, a.mapped, prot) == 0) continue;
    return Status(StatusCode::kIoError,
                  fmt::format("cannot make argument '{}' {}: {}", problem_.arguments[i].name, what,
                              std::strerror(errno)));
  }
  return Status::ok();
}

ArgumentBuffers::ArgumentBuffers(ArgumentBuffers&& other) noexcept
    : problem_(std::move(other.problem_)), arrays_(std::exchange(other.arrays_, {})) {}

ArgumentBuffers& ArgumentBuffers::operator=(ArgumentBuffers&& other) noexcept {
  if (this != &other) {
    release();
    problem_ = std::move(other.problem_);
    arrays_ = std::exchange(other.arrays_, {});
  }
  return *this;
}

ArgumentBuffers::~ArgumentBuffers() { release(); }

void ArgumentBuffers::release() noexcept {
  for (Array& a : arrays_) {
    if (a.data != nullptr) ::munmap(static_cast<char*>(a.data) - a.guard, a.mapped + 2 * a.guard);
  }
  arrays_.clear();
}

void ArgumentBuffers::fill(bool outputs_only) {
  for (std::size_t i = 0; i < arrays_.size(); ++i) {
    const KernelArgument& arg = problem_.arguments[i];
    if (arg.is_scalar || (outputs_only && !arg.is_output)) continue;
    const std::uint64_t seed = problem_.seed * 0x100000001b3ULL + i + 1;
    fill_array(arrays_[i].data, arg, seed);
  }
}

void ArgumentBuffers::copy_from(const ArgumentBuffers& other, bool outputs_only) {
  for (std::size_t i = 0; i < arrays_.size() && i < other.arrays_.size(); ++i) {
    const KernelArgument& arg = problem_.arguments[i];
    if (arg.is_scalar || (outputs_only && !arg.is_output)) continue;
    std::memcpy(arrays_[i].data, other.arrays_[i].data, arrays_[i].bytes);
  }
}

std::vector<measure::MemoryRange> ArgumentBuffers::ranges() const {
  std::vector<measure::MemoryRange> out;
  for (const Array& a : arrays_) {
    if (a.data != nullptr) out.push_back({a.data, a.bytes});
  }
  return out;
}

Status ArgumentBuffers::compare_outputs(const ArgumentBuffers& reference, double atol,
                                        double rtol) const {
  for (std::size_t i = 0; i < arrays_.size(); ++i) {
    const KernelArgument& arg = problem_.arguments[i];
    if (arg.is_scalar || !arg.is_output) continue;
    const void* ref = reference.data(i);
    const std::size_t bad = mismatch_of(arrays_[i].data, ref, arg, atol, rtol);
    if (bad == arg.size) continue;
    return Status(StatusCode::kWrongResult,
                  fmt::format("output '{}' element {}: {} vs reference {} (atol {}, rtol {})",
                              arg.name, bad, element_text(arrays_[i].data, arg.dtype, bad),
                              element_text(ref, arg.dtype, bad), atol, rtol));
  }
  return Status::ok();
}

}  // namespace tunekit
