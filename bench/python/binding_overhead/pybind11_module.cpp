// The trivial function of the binding-overhead benchmark in pybind11: two float32 arrays in,
// a new float32 array of the first one's shape out (holding the sum of their first elements).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace {

using FloatArray = py::array_t<float, py::array::c_style>;

/// Typed arrays in, a new typed array out: what a binding written in the library's idiom costs.
FloatArray typed(const FloatArray& a, const FloatArray& b) {
  FloatArray out(std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()));
  out.mutable_data()[0] = a.data()[0] + b.data()[0];
  return out;
}

/// Untyped handles in, the first one back: the library's own call dispatch alone.
py::object handles(py::handle a, py::handle /*b*/) { return py::reinterpret_borrow<py::object>(a); }

}  // namespace

PYBIND11_MODULE(overhead_pybind11, m) {
  m.def("typed", &typed, py::arg("a"), py::arg("b"));
  m.def("handles", &handles, py::arg("a"), py::arg("b"));
}
