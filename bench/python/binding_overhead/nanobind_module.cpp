// The trivial function of the binding-overhead benchmark in nanobind: two float32 arrays in,
// a new float32 array of the first one's shape out (holding the sum of their first elements).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <vector>

namespace nb = nanobind;

namespace {

using InArray = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
using OutArray = nb::ndarray<nb::numpy, float>;

/// Typed arrays in, a new NumPy array out: what a binding written in the library's idiom costs.
OutArray typed(const InArray& a, const InArray& b) {
  std::vector<std::size_t> shape(a.ndim());
  std::size_t count = 1;
  for (std::size_t i = 0; i < a.ndim(); ++i) count *= (shape[i] = a.shape(i));
  auto* data = new float[count];
  data[0] = a.data()[0] + b.data()[0];
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<float*>(p); });
  return OutArray(data, a.ndim(), shape.data(), owner);
}

/// Untyped handles in, the first one back: the library's own call dispatch alone.
nb::object handles(nb::handle a, nb::handle /*b*/) { return nb::borrow(a); }

}  // namespace

NB_MODULE(overhead_nanobind, m) {
  m.def("typed", &typed, nb::arg("a"), nb::arg("b"));
  m.def("handles", &handles, nb::arg("a"), nb::arg("b"));
}
