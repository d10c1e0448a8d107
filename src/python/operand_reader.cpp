// Python objects as Operands. See operand_reader.hpp.
#include "operand_reader.hpp"

#include <fmt/format.h>
#include <nanobind/ndarray.h>

#include "errors.hpp"
#include "numpy_bridge.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

constexpr int kCpuDevice = 1;  // DLPack's kDLCPU

bool dlpack_type(nb::dlpack::dtype t, ElementType* type) {
  using Code = nb::dlpack::dtype_code;
  if (t.lanes != 1) return false;
  if (t.code == static_cast<std::uint8_t>(Code::Float) && t.bits == 32) {
    *type = ElementType::kFloat32;
  } else if (t.code == static_cast<std::uint8_t>(Code::Float) && t.bits == 64) {
    *type = ElementType::kFloat64;
  } else if (t.code == static_cast<std::uint8_t>(Code::Bfloat) && t.bits == 16) {
    *type = ElementType::kBFloat16;
  } else {
    return false;
  }
  return true;
}

std::string dlpack_type_name(nb::dlpack::dtype t) {
  static const char* const kCodes[] = {"int", "uint", "float", "?", "bfloat", "complex", "bool"};
  const char* code = t.code < 7 ? kCodes[t.code] : "dlpack-code-";
  return fmt::format("{}{}", code, static_cast<int>(t.bits));
}

[[noreturn]] void bad_dtype(const char* fn, const char* name, const std::string& dtype,
                            const char* expected) {
  raise_type_error(fmt::format("{}: {} has dtype {}; {} expected", fn, name, dtype, expected));
}

/// Fills `op` from an imported DLPack tensor (strides in elements, possibly absent).
template <class Array>
void from_dlpack(const char* fn, const char* name, const Array& arr, Operand& op,
                 const char* expected) {
  if (!dlpack_type(arr.dtype(), &op.type)) {
    bad_dtype(fn, name, dlpack_type_name(arr.dtype()), expected);
  }
  if (arr.device_type() != kCpuDevice) {
    raise_value_error(fmt::format("{}: {} is not in CPU memory (DLPack device type {})", fn, name,
                                  arr.device_type()));
  }
  if (arr.ndim() > static_cast<std::size_t>(kMaxDims)) {
    raise_value_error(
        fmt::format("{}: {} has {} dimensions; at most {}", fn, name, arr.ndim(), kMaxDims));
  }
  op.ndim = static_cast<int>(arr.ndim());
  op.data = static_cast<char*>(const_cast<void*>(static_cast<const void*>(arr.data())));
  const std::int64_t elem = element_size(op.type);
  std::int64_t dense = elem;
  for (int i = op.ndim - 1; i >= 0; --i) {
    op.shape[i] = static_cast<std::int64_t>(arr.shape(static_cast<std::size_t>(i)));
    op.strides[i] =
        arr.stride_ptr() != nullptr ? arr.stride(static_cast<std::size_t>(i)) * elem : dense;
    dense *= op.shape[i];
  }
  op.own_range_only();  // nothing is known of the memory around a foreign tensor
}

bool read_dlpack(const char* fn, const char* name, nb::handle obj, bool writable, PyOperand& out,
                 const char* expected) {
  if (writable) {
    nb::ndarray<> arr;
    if (!nb::try_cast(obj, arr, /*convert=*/false)) return false;
    from_dlpack(fn, name, arr, out.op, expected);
    out.dlpack = std::move(arr);
  } else {
    nb::ndarray<nb::ro> arr;
    if (!nb::try_cast(obj, arr, /*convert=*/false)) return false;
    from_dlpack(fn, name, arr, out.op, expected);
    out.dlpack = nb::ndarray<>(arr);
  }
  return true;
}

void read_numpy(const char* fn, const char* name, PyObject* arr, bool writable, Operand& op,
                const char* expected) {
  std::string dtype;
  switch (view_numpy_array(arr, writable, op, &dtype)) {
    case ViewResult::kOk:
      return;
    case ViewResult::kBadType:
      bad_dtype(fn, name, dtype, expected);
    case ViewResult::kReadOnly:
      raise_value_error(fmt::format("{}: {} is read-only", fn, name));
    case ViewResult::kTooManyDims:
      break;
  }
  raise_value_error(fmt::format("{}: {} has more than {} dimensions", fn, name, kMaxDims));
}

}  // namespace

void read_operand(const char* fn, const char* name, nb::handle obj, bool writable, PyOperand& out,
                  const char* expected) {
  if (is_numpy_array(obj.ptr())) return read_numpy(fn, name, obj.ptr(), writable, out.op, expected);
  const bool dlpack = PyCapsule_CheckExact(obj.ptr()) || nb::hasattr(obj, "__dlpack__");
  if (dlpack && read_dlpack(fn, name, obj, writable, out, expected)) return;
  // None is refused here: NumPy would make it a 0-d array of dtype object.
  PyObject* arr = obj.is_none() ? nullptr : as_numpy_array(obj.ptr());
  if (arr == nullptr) {
    PyErr_Clear();
    raise_type_error(
        fmt::format("{}: {} ({}) is not an array: NumPy arrays, buffer-protocol and "
                    "DLPack objects are accepted",
                    fn, name, Py_TYPE(obj.ptr())->tp_name));
  }
  out.keep = nb::steal(arr);
  if (writable && numpy_owns_data(arr)) {
    raise_type_error(
        fmt::format("{}: {} ({}) is written in place: it must be an array, a "
                    "writable buffer-protocol or a DLPack object",
                    fn, name, Py_TYPE(obj.ptr())->tp_name));
  }
  read_numpy(fn, name, arr, writable, out.op, expected);
}

std::string shape_string(const Operand& op) {
  std::string s = "(";
  for (int i = 0; i < op.ndim; ++i) {
    s += (i > 0 ? ", " : "") + std::to_string(op.shape[i]);
  }
  return s + (op.ndim == 1 ? ",)" : ")");
}

}  // namespace tunekit::python
