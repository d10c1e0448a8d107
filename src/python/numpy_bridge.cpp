// NumPy's C API behind numpy_bridge.hpp (this file alone includes it).
#define PY_ARRAY_UNIQUE_SYMBOL tunekit_numpy_api
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include "numpy_bridge.hpp"

#include <numpy/arrayobject.h>

#include <cstring>

namespace tunekit::python {
namespace {

int g_bfloat16_type = -1;  // NumPy's number of ml_dtypes' bfloat16, once seen

/// Whether a user-defined dtype is ml_dtypes' bfloat16 (remembered by its type number).
bool is_bfloat16(PyArray_Descr* descr, int type_num, npy_intp itemsize) {
  if (type_num == g_bfloat16_type) return true;
  if (type_num < NPY_USERDEF || itemsize != 2) return false;
  const char* name = descr->typeobj->tp_name;
  const std::size_t len = std::strlen(name);
  if (len < 8 || std::strcmp(name + len - 8, "bfloat16") != 0) return false;
  g_bfloat16_type = type_num;
  return true;
}

bool element_type_of(PyArrayObject* arr, ElementType* type) {
  PyArray_Descr* descr = PyArray_DESCR(arr);
  if (!PyArray_ISNOTSWAPPED(arr)) return false;
  switch (const int t = PyArray_TYPE(arr)) {
    case NPY_FLOAT:
      *type = ElementType::kFloat32;
      return true;
    case NPY_DOUBLE:
      *type = ElementType::kFloat64;
      return true;
    default:
      if (!is_bfloat16(descr, t, PyArray_ITEMSIZE(arr))) return false;
      *type = ElementType::kBFloat16;
      return true;
  }
}

/// The byte range of the outermost NumPy array in `arr`'s base chain (the memory a view may
/// read beyond its own elements, e.g. a leading dimension's padding), joined with the view's own.
void owner_range(PyArrayObject* arr, Operand& op) {
  op.own_range_only();
  PyArrayObject* owner = arr;
  while (PyArray_BASE(owner) != nullptr && PyArray_Check(PyArray_BASE(owner))) {
    owner = reinterpret_cast<PyArrayObject*>(PyArray_BASE(owner));
  }
  std::int64_t low = 0, high = 0;
  for (int i = 0; i < PyArray_NDIM(owner); ++i) {
    if (PyArray_DIM(owner, i) == 0) return;
    const std::int64_t reach = (PyArray_DIM(owner, i) - 1) * PyArray_STRIDE(owner, i);
    (reach < 0 ? low : high) += reach;
  }
  const char* begin = PyArray_BYTES(owner) + low;
  const char* end = PyArray_BYTES(owner) + high + PyArray_ITEMSIZE(owner);
  if (begin < op.owner_begin) op.owner_begin = begin;
  if (end > op.owner_end) op.owner_end = end;
}

}  // namespace

bool numpy_ready() {
  static bool ready = false;
  if (ready) return true;
  if (_import_array() < 0) return false;
  ready = true;
  return true;
}

bool is_numpy_array(PyObject* obj) noexcept { return PyArray_Check(obj); }

ViewResult view_numpy_array(PyObject* obj, bool writable, Operand& op, std::string* dtype_name) {
  auto* arr = reinterpret_cast<PyArrayObject*>(obj);
  if (!element_type_of(arr, &op.type)) {
    if (dtype_name != nullptr) {
      PyObject* s = PyObject_Str(reinterpret_cast<PyObject*>(PyArray_DESCR(arr)));
      const char* text = s != nullptr ? PyUnicode_AsUTF8(s) : nullptr;
      *dtype_name = text != nullptr ? text : "?";
      Py_XDECREF(s);
      PyErr_Clear();
      if (!PyArray_ISNOTSWAPPED(arr)) *dtype_name += " (byte-swapped)";
    }
    return ViewResult::kBadType;
  }
  if (writable && !PyArray_ISWRITEABLE(arr)) return ViewResult::kReadOnly;
  const int nd = PyArray_NDIM(arr);
  if (nd > kMaxDims) return ViewResult::kTooManyDims;
  op.data = PyArray_BYTES(arr);
  op.ndim = nd;
  const npy_intp* dims = PyArray_DIMS(arr);
  const npy_intp* strides = PyArray_STRIDES(arr);
  for (int i = 0; i < nd; ++i) {
    op.shape[i] = dims[i];
    op.strides[i] = strides[i];
  }
  if (PyArray_BASE(arr) == nullptr) {
    op.own_range_only();
  } else {
    owner_range(arr, op);
  }
  return ViewResult::kOk;
}

PyObject* as_numpy_array(PyObject* obj) { return PyArray_FromAny(obj, nullptr, 0, 0, 0, nullptr); }

bool numpy_owns_data(PyObject* arr) noexcept {
  return PyArray_CHKFLAGS(reinterpret_cast<PyArrayObject*>(arr), NPY_ARRAY_OWNDATA);
}

PyObject* numpy_return(PyObject* arr) {
  return PyArray_Return(reinterpret_cast<PyArrayObject*>(arr));
}

PyObject* new_numpy_array(int ndim, const std::int64_t* shape, ElementType type) {
  npy_intp dims[kMaxDims];
  for (int i = 0; i < ndim; ++i) dims[i] = static_cast<npy_intp>(shape[i]);
  return PyArray_SimpleNew(ndim, dims, type == ElementType::kFloat64 ? NPY_DOUBLE : NPY_FLOAT);
}

}  // namespace tunekit::python
