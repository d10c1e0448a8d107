// tunekit.matmul (numpy.matmul's semantics) and tunekit.gemm (BLAS's C = alpha op(A) op(B) +
// beta C) on arrays from Python: shapes checked here, the work done by strided_gemm() with the
// GIL released, errors raised as tunekit exceptions.
#include <fmt/format.h>
#include <nanobind/ndarray.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "errors.hpp"
#include "numpy_bridge.hpp"
#include "operand_reader.hpp"
#include "strided_gemm.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

constexpr const char* kMatmul = "tunekit.matmul";
constexpr const char* kGemm = "tunekit.gemm";

void require_numpy() {
  if (!numpy_ready()) throw nb::python_error();
}

/// The output element type of operands of type t (bfloat16 accumulates into float32).
ElementType result_type(ElementType t) {
  return t == ElementType::kFloat64 ? ElementType::kFloat64 : ElementType::kFloat32;
}

void check_same_type(const char* fn, const Operand& a, const Operand& b) {
  if (a.type != b.type) {
    raise_type_error(fmt::format("{}: a is {} and b is {}; both operands must have one dtype", fn,
                                 element_name(a.type), element_name(b.type)));
  }
}

/// x with dimension `at` (0..ndim) of extent 1 inserted (stride 0).
Operand with_unit_dim(const Operand& x, int at) {
  Operand y = x;
  for (int i = x.ndim; i > at; --i) {
    y.shape[i] = x.shape[i - 1];
    y.strides[i] = x.strides[i - 1];
  }
  y.shape[at] = 1;
  y.strides[at] = 0;
  y.ndim = x.ndim + 1;
  return y;
}

/// x with its last two dimensions swapped (op(X) = X^T).
Operand transposed(const Operand& x) {
  Operand y = x;
  std::swap(y.shape[x.ndim - 1], y.shape[x.ndim - 2]);
  std::swap(y.strides[x.ndim - 1], y.strides[x.ndim - 2]);
  return y;
}

/// The broadcast batch shape of a and b (both >= 2-d) followed by M and N: the shape of C.
/// Errors: batch dimensions that do not broadcast; more than kMaxDims dimensions.
Operand product_shape(const char* fn, const Operand& a, const Operand& b, const Operand& a_in,
                      const Operand& b_in) {
  if (a.shape[a.ndim - 1] != b.shape[b.ndim - 2]) {
    raise_value_error(fmt::format(
        "{}: a of shape {} and b of shape {} do not match: {} columns against {} rows", fn,
        shape_string(a_in), shape_string(b_in), a.shape[a.ndim - 1], b.shape[b.ndim - 2]));
  }
  Operand c;
  c.ndim = std::max(a.ndim, b.ndim);
  const int batch = c.ndim - 2;
  for (int i = 0; i < batch; ++i) {
    const int ia = i - (batch - (a.ndim - 2)), ib = i - (batch - (b.ndim - 2));
    const std::int64_t ea = ia >= 0 ? a.shape[ia] : 1, eb = ib >= 0 ? b.shape[ib] : 1;
    if (ea != eb && ea != 1 && eb != 1) {
      raise_value_error(
          fmt::format("{}: the batch dimensions of a {} and b {} do not broadcast ({} against {})",
                      fn, shape_string(a_in), shape_string(b_in), ea, eb));
    }
    c.shape[i] = ea == 1 ? eb : ea;
  }
  c.shape[batch] = a.shape[a.ndim - 2];
  c.shape[batch + 1] = b.shape[b.ndim - 1];
  return c;
}

/// Removes from a product shape (batch..., M, N) the dimensions numpy.matmul drops: M for a 1-d
/// a, N for a 1-d b.
void drop_promoted(Operand& shape, bool drop_m, bool drop_n) {
  const int n = shape.ndim;
  if (drop_m) shape.shape[n - 2] = shape.shape[n - 1];
  shape.ndim = n - static_cast<int>(drop_m) - static_cast<int>(drop_n);
}

/// Checks a given output (the argument `name`) against the expected shape and type.
void check_output(const char* fn, const char* name, const Operand& out, const Operand& expected,
                  ElementType type) {
  if (out.type != type) {
    raise_type_error(fmt::format("{}: {} has dtype {}; the result is {}", fn, name,
                                 element_name(out.type), element_name(type)));
  }
  bool same = out.ndim == expected.ndim;
  for (int i = 0; same && i < out.ndim; ++i) same = out.shape[i] == expected.shape[i];
  if (!same) {
    raise_value_error(fmt::format("{}: {} has shape {}; the result has shape {}", fn, name,
                                  shape_string(out), shape_string(expected)));
  }
}

/// Runs the GEMM without the GIL and raises its failure.
void run(const Operand& a, const Operand& b, Operand& c, double alpha, double beta) {
  Status s;
  {
    nb::gil_scoped_release unlocked;
    s = strided_gemm(a, b, c, alpha, beta);
  }
  check(std::move(s));
}

/// matmul's output: a new NumPy array of the result's shape, or the caller's `out` checked
/// against it. Fills `out`; returns the object to give back.
nb::object matmul_output(nb::handle out_obj, const Operand& shape, ElementType type,
                         PyOperand& out) {
  if (!out_obj.is_none()) {
    read_operand(kMatmul, "out", out_obj, true, out);
    check_output(kMatmul, "out", out.op, shape, type);
    return nb::borrow(out_obj);
  }
  nb::object result = nb::steal(new_numpy_array(shape.ndim, shape.shape, type));
  if (!result.is_valid()) throw nb::python_error();
  read_operand(kMatmul, "out", result, true, out);
  return result;
}

nb::object matmul(nb::handle a_obj, nb::handle b_obj, nb::handle out_obj) {
  require_numpy();
  PyOperand a, b, out;
  read_operand(kMatmul, "a", a_obj, false, a);
  read_operand(kMatmul, "b", b_obj, false, b);
  if (a.op.ndim == 0 || b.op.ndim == 0) {
    raise_value_error(fmt::format("{}: {} is 0-dimensional; matmul needs at least 1 dimension",
                                  kMatmul, a.op.ndim == 0 ? "a" : "b"));
  }
  check_same_type(kMatmul, a.op, b.op);
  // numpy.matmul: a 1-d a is a row (1 x K), a 1-d b a column (K x 1); both dropped after.
  const bool a_row = a.op.ndim == 1, b_col = b.op.ndim == 1;
  Operand promoted[2];
  const Operand& a2 = a_row ? (promoted[0] = with_unit_dim(a.op, 0)) : a.op;
  const Operand& b2 = b_col ? (promoted[1] = with_unit_dim(b.op, 1)) : b.op;
  Operand shape = product_shape(kMatmul, a2, b2, a.op, b.op);
  if (a_row || b_col) drop_promoted(shape, a_row, b_col);
  nb::object result = matmul_output(out_obj, shape, result_type(a.op.type), out);
  Operand& c = out.op;  // the output seen as (batch..., M, N)
  if (a_row) c = with_unit_dim(c, c.ndim - (b_col ? 0 : 1));
  if (b_col) c = with_unit_dim(c, c.ndim);
  run(a2, b2, c, 1.0, 0.0);
  if (shape.ndim == 0 && out_obj.is_none()) {  // numpy.matmul of two vectors: a scalar
    PyObject* scalar = numpy_return(result.release().ptr());
    if (scalar == nullptr) throw nb::python_error();
    return nb::steal(scalar);
  }
  return result;
}

bool transposes(const char* name, nb::handle flag) {
  if (PyBool_Check(flag.ptr())) return flag.ptr() == Py_True;
  if (nb::isinstance<nb::str>(flag)) {
    const std::string s = nb::borrow<nb::str>(flag).c_str();
    if (s == "n" || s == "N") return false;
    if (s == "t" || s == "T") return true;
  }
  raise_value_error(fmt::format("{}: {} must be 'n' or 't' (or a bool), got {}", kGemm, name,
                                nb::repr(flag).c_str()));
}

/// gemm's scalar `name` (alpha or beta) as a double. Errors: DTypeError for what is no real
/// number (None, a string, a complex number); InvalidArgumentError for NaN or an infinity.
double real_scalar(const char* name, nb::handle x) {
  PyObject* p = x.ptr();
  const bool complex =
      PyComplex_Check(p) || (nb::hasattr(x, "dtype") && nb::hasattr(x.attr("dtype"), "kind") &&
                             std::string(nb::str(x.attr("dtype").attr("kind")).c_str()) == "c");
  const bool number = !complex && !PyUnicode_Check(p) && !PyBytes_Check(p) &&
                      (PyFloat_Check(p) || PyLong_Check(p) || PyNumber_Check(p));
  const double value = number ? PyFloat_AsDouble(p) : -1.0;
  if (!number || (value == -1.0 && PyErr_Occurred())) {
    PyErr_Clear();
    raise_type_error(
        fmt::format("{}: {} must be a real number, got {}", kGemm, name, nb::repr(x).c_str()));
  }
  if (!std::isfinite(value)) {
    raise_value_error(fmt::format("{}: {} must be finite, got {}", kGemm, name, value));
  }
  return value;
}

/// Refuses a scalar (alpha or beta) that is finite as a double but not in `type`, in which the
/// product scales (float for float32 and bfloat16 operands): InvalidArgumentError naming it.
void check_scalar_fits(const char* name, double value, ElementType type) {
  if (type == ElementType::kFloat64 || std::isfinite(static_cast<float>(value))) return;
  raise_value_error(
      fmt::format("{}: {} = {} is not finite in float32, the type {} operands are "
                  "scaled in (at most {:g} in magnitude)",
                  kGemm, name, value, element_name(type), std::numeric_limits<float>::max()));
}

nb::object gemm(nb::handle transa, nb::handle transb, nb::handle alpha_obj, nb::handle a_obj,
                nb::handle b_obj, nb::handle beta_obj, nb::handle c_obj) {
  require_numpy();
  const double alpha = real_scalar("alpha", alpha_obj), beta = real_scalar("beta", beta_obj);
  const bool ta = transposes("transa", transa), tb = transposes("transb", transb);
  PyOperand a, b, c;
  read_operand(kGemm, "a", a_obj, false, a);
  read_operand(kGemm, "b", b_obj, false, b);
  read_operand(kGemm, "c", c_obj, true, c);
  check_same_type(kGemm, a.op, b.op);
  check_scalar_fits("alpha", alpha, a.op.type);
  check_scalar_fits("beta", beta, a.op.type);
  if (a.op.ndim < 2 || b.op.ndim < 2) {
    raise_value_error(fmt::format("{}: {} has {} dimension(s); gemm needs matrices (2 or more)",
                                  kGemm, a.op.ndim < 2 ? "a" : "b",
                                  a.op.ndim < 2 ? a.op.ndim : b.op.ndim));
  }
  const Operand a2 = ta ? transposed(a.op) : a.op;
  const Operand b2 = tb ? transposed(b.op) : b.op;
  const Operand expected = product_shape(kGemm, a2, b2, a2, b2);
  check_output(kGemm, "c", c.op, expected, result_type(a.op.type));
  run(a2, b2, c.op, alpha, beta);
  return nb::borrow(c_obj);
}

/// A DLPack capsule viewing a uint16 NumPy array's memory as bfloat16: lets the tests reach the
/// DLPack bfloat16 path without PyTorch.
nb::object bfloat16_dlpack_view(nb::handle array) {
  require_numpy();
  nb::ndarray<std::uint16_t, nb::device::cpu> bits = nb::cast<decltype(bits)>(array, false);
  std::size_t shape[kMaxDims];
  std::int64_t strides[kMaxDims];
  for (std::size_t i = 0; i < bits.ndim(); ++i) {
    shape[i] = bits.shape(i);
    strides[i] = bits.stride(i);
  }
  const nb::dlpack::dtype bf16{static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bfloat), 16, 1};
  nb::ndarray<> view(bits.data(), bits.ndim(), shape, array, strides, bf16);
  return nb::cast(view);
}

constexpr const char* kMatmulDoc =
    R"(Matrix product with ``numpy.matmul``'s semantics: 2-d operands, 1-d operands promoted (and the
added dimension removed from the result), N-d operands as stacks of matrices with their leading
dimensions broadcast. Operands: NumPy arrays, buffer-protocol objects and DLPack producers
(PyTorch CPU tensors), float32, float64 or bfloat16 (ml_dtypes or DLPack); both of one dtype.
The result is float32 for float32 and bfloat16 operands (bfloat16 accumulates in float32),
float64 for float64. ``out``, when given, must have the result's shape and dtype and is
written in place. Operands are used where they lie when a BLAS library can take their strides;
others are copied first (docs/python.md). Each distinct problem is tuned on its first call
(when tuning is on) and dispatched to its winner afterwards; the GIL is released meanwhile.
)";

constexpr const char* kGemmDoc =
    R"(BLAS GEMM on arrays: ``c = alpha * op(a) @ op(b) + beta * c``, written into ``c`` in place and
returned. ``transa``/``transb`` are 'n' or 't' (or a bool); op(x) is x or its transpose (the
last two dimensions swapped). op(a) is M x K, op(b) K x N, c M x N; leading dimensions broadcast
as in matmul, and c has the broadcast batch shape. dtypes as matmul (c float32 for float32 and
bfloat16 operands, float64 for float64). When beta is 0, c is not read. alpha and beta must be
real numbers finite in the type the result is scaled in (float32 for float32 and bfloat16
operands: NaN, an infinity or 1e300 there is a tunekit.InvalidArgumentError).
)";

}  // namespace

void bind_gemm(nb::module_& m) {
  // .none(): None reaches the functions, which refuse it with tunekit's DTypeError.
  m.def("matmul", &matmul, nb::arg("a").none(), nb::arg("b").none(),
        nb::arg("out").none() = nb::none(), kMatmulDoc);
  m.def("gemm", &gemm, nb::arg("transa").none(), nb::arg("transb").none(), nb::arg("alpha").none(),
        nb::arg("a").none(), nb::arg("b").none(), nb::arg("beta").none(), nb::arg("c").none(),
        kGemmDoc);
  m.def("_bfloat16_dlpack_view", &bfloat16_dlpack_view, nb::arg("array"));
  m.def("_copies", &strided_gemm_copies, "operands copied by matmul/gemm so far (for tests)");
}

}  // namespace tunekit::python
