// Reading a Python object as an Operand: NumPy arrays directly (the fast path), DLPack
// producers (PyTorch tensors, bfloat16 included) and capsules through nanobind, and other
// array-likes (buffer protocol, nested lists) through numpy.asarray.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>

#include "operand.hpp"

namespace tunekit::python {

/// What an operand read from Python needs kept alive while it is used.
struct PyOperand {
  Operand op;
  nanobind::object keep;       ///< a converted array (array-likes); empty for NumPy arrays
  nanobind::ndarray<> dlpack;  ///< the imported tensor (DLPack producers and capsules)
};

/// Reads `obj` (argument `name` of function `fn`, e.g. "tunekit.matmul", "b") without copying.
/// `writable`: the operand is an output. NumPy must be ready (numpy_ready()).
/// Errors: raises tunekit.DTypeError naming the argument for a dtype other than float32,
/// float64 or bfloat16 (the message ends "<expected> expected": callers that take fewer dtypes
/// name theirs), or an object that is no array; tunekit.InvalidArgumentError for a read-only
/// output, a non-CPU DLPack tensor, or more than kMaxDims dimensions.
void read_operand(const char* fn, const char* name, nanobind::handle obj, bool writable,
                  PyOperand& out, const char* expected = "float32, float64 or bfloat16");

/// "(2, 3)": a shape as NumPy prints it ("()" for 0-d, "(4,)" for 1-d).
std::string shape_string(const Operand& op);

}  // namespace tunekit::python
