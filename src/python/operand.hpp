// Operand: a strided N-d array of float32, float64 or bfloat16 elements somewhere in memory, as
// the GEMM bindings see NumPy arrays, buffer-protocol and DLPack objects (byte strides).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tunekit::python {

/// Element types the GEMM bindings take (bfloat16 inputs give float32 outputs).
enum class ElementType : std::uint8_t { kFloat32 = 0, kFloat64 = 1, kBFloat16 = 2 };

/// Bytes of one element.
constexpr std::int64_t element_size(ElementType t) noexcept {
  return t == ElementType::kFloat64 ? 8 : (t == ElementType::kFloat32 ? 4 : 2);
}
/// NumPy's name of an element type ("float32", "float64", "bfloat16").
const char* element_name(ElementType t) noexcept;

/// Most dimensions an operand may have.
inline constexpr int kMaxDims = 32;

/// A strided view of memory. Strides are in bytes and may be 0 (broadcast) or negative.
struct Operand {
  char* data = nullptr;
  ElementType type = ElementType::kFloat32;
  int ndim = 0;
  std::int64_t shape[kMaxDims];  // left uninitialised: only ndim entries are used
  std::int64_t strides[kMaxDims];
  /// Memory known to belong to the operand's owner, around `data`: a library may read
  /// [owner_begin, owner_end) in full (a leading dimension's padding after the last column).
  const char* owner_begin = nullptr;
  const char* owner_end = nullptr;

  /// Elements of the view (1 for 0-d).
  std::int64_t size() const noexcept;
  /// Lowest and one-past-highest byte the view touches ([data, data) when empty).
  void byte_range(const char** lo, const char** hi) const noexcept;
  /// Sets owner_begin/owner_end to the view's own byte range (nothing more is known).
  void own_range_only() noexcept;
};

}  // namespace tunekit::python
