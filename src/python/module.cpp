// The _tunekit extension module: the C++ engine under the Python package tunekit
// (python/tunekit). Each concept binds itself from its own file (bindings.hpp).
#include "bindings.hpp"

NB_MODULE(_tunekit, m) {
  m.doc() = "tunekit's C++ engine; use the package tunekit (docs/python.md)";
  tunekit::python::bind_errors(m);
  tunekit::python::bind_tunable(m);
  tunekit::python::bind_offline(m);
  tunekit::python::bind_gemm(m);
  tunekit::python::bind_linear(m);
  tunekit::python::bind_autotvm(m);
  tunekit::python::bind_report(m);
}
