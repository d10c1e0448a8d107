// Operand helpers. See operand.hpp.
#include "operand.hpp"

namespace tunekit::python {

const char* element_name(ElementType t) noexcept {
  switch (t) {
    case ElementType::kFloat32:
      return "float32";
    case ElementType::kFloat64:
      return "float64";
    case ElementType::kBFloat16:
      return "bfloat16";
  }
  return "?";
}

std::int64_t Operand::size() const noexcept {
  std::int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= shape[i];
  return n;
}

void Operand::byte_range(const char** lo, const char** hi) const noexcept {
  std::int64_t low = 0, high = 0;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] == 0) {
      *lo = *hi = data;
      return;
    }
    const std::int64_t reach = (shape[i] - 1) * strides[i];
    (reach < 0 ? low : high) += reach;
  }
  *lo = data + low;
  *hi = data + high + element_size(type);
}

void Operand::own_range_only() noexcept { byte_range(&owner_begin, &owner_end); }

}  // namespace tunekit::python
