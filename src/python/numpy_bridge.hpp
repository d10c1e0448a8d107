// The one place that uses NumPy's C API (imported on first use, so `import tunekit` works
// without NumPy): reading arrays as Operands, allocating result arrays, converting array-likes.
#pragma once

#include <Python.h>

#include <cstdint>
#include <string>

#include "operand.hpp"

namespace tunekit::python {

/// Imports NumPy's C API on the first call. False (with the Python error set) when NumPy is not
/// importable. Needs the GIL.
bool numpy_ready();
/// Whether `obj` is a NumPy array (or subclass). numpy_ready() must have returned true.
bool is_numpy_array(PyObject* obj) noexcept;

/// How reading an array as an operand went.
enum class ViewResult : std::uint8_t {
  kOk,
  kBadType,   ///< dtype not float32/float64/bfloat16, or byte-swapped
  kReadOnly,  ///< `writable` was asked and the array is read-only
  kTooManyDims,
};
/// Fills `op` from a NumPy array (no copy); the owner range is the outermost NumPy array `arr`
/// views (its own base chain). `dtype_name` receives the dtype's name when kBadType.
ViewResult view_numpy_array(PyObject* arr, bool writable, Operand& op, std::string* dtype_name);
/// numpy.asarray(obj) for array-likes that are neither arrays nor DLPack producers (buffer
/// protocol, __array_interface__, nested lists). New reference, or null with the Python error
/// set.
PyObject* as_numpy_array(PyObject* obj);
/// Whether a NumPy array owns its memory (numpy.asarray made it: writing to it would not reach
/// the object it came from).
bool numpy_owns_data(PyObject* arr) noexcept;
/// `arr` itself, or its element as a NumPy scalar when it is 0-d (what NumPy's functions
/// return, PyArray_Return). Steals the reference; returns a new one (null: Python error set).
PyObject* numpy_return(PyObject* arr);
/// A new uninitialised C-ordered array (float32 or float64). New reference, or null with the
/// Python error set.
PyObject* new_numpy_array(int ndim, const std::int64_t* shape, ElementType type);

}  // namespace tunekit::python
