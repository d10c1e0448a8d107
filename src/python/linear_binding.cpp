// tunekit.Linear: ops::Linear (constant weights) on NumPy float32 or bfloat16 arrays. The weights
// object is kept alive by the handle; calls run without the GIL.
#include <fmt/format.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <string>

#include "bindings.hpp"
#include "errors.hpp"
#include "numpy_bridge.hpp"
#include "operand_reader.hpp"
#include "tunekit/ops/linear.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

constexpr const char* kLinear = "tunekit.Linear";

// ops::Linear's errors start with "Linear:"; in Python the class is tunekit.Linear.
void check_linear(Status status) {
  if (status.is_ok()) return;
  std::string message = status.message();
  if (message.rfind("Linear:", 0) == 0) message = "tunekit." + message;
  check(Status(status.code(), message));
}
constexpr const char* kLinearDtypes = "float32 or bfloat16";

// A float32 or bfloat16 matrix whose rows are contiguous: (rows, cols, leading dimension in
// elements).
struct RowMajor {
  std::int64_t rows = 0, cols = 0, ld = 0;
};

RowMajor row_major(const char* name, const Operand& op) {
  if (op.type != ElementType::kFloat32 && op.type != ElementType::kBFloat16) {
    raise_type_error(fmt::format("{}: {} has dtype {}; {} expected", kLinear, name,
                                 element_name(op.type), kLinearDtypes));
  }
  if (op.ndim != 2) {
    raise_value_error(
        fmt::format("{}: {} must be 2-d, got shape {}", kLinear, name, shape_string(op)));
  }
  if (op.shape[0] == 0 || op.shape[1] == 0) return RowMajor{op.shape[0], op.shape[1], op.shape[1]};
  const std::int64_t size = element_size(op.type);
  const std::int64_t row_stride = op.strides[0] / size;
  if ((op.shape[1] > 1 && op.strides[1] != size) || op.strides[0] % size != 0 ||
      (op.shape[0] > 1 && row_stride < op.shape[1])) {
    raise_value_error(
        fmt::format("{}: {} must have contiguous rows (a C-ordered array or a "
                    "slice of rows of one)",
                    kLinear, name));
  }
  return RowMajor{op.shape[0], op.shape[1], op.shape[0] > 1 ? row_stride : op.shape[1]};
}

class PyLinear {
 public:
  explicit PyLinear(nb::handle weights) {
    if (!numpy_ready()) throw nb::python_error();
    read_operand(kLinear, "weights", weights, false, weights_, kLinearDtypes);
    keep_ = nb::borrow(weights);
    const RowMajor w = row_major("weights", weights_.op);
    auto made =
        weights_.op.type == ElementType::kBFloat16
            ? ops::Linear::create(w.rows, w.cols,
                                  reinterpret_cast<const ops::BFloat16*>(weights_.op.data), w.ld)
            : ops::Linear::create(w.rows, w.cols, reinterpret_cast<const float*>(weights_.op.data),
                                  w.ld);
    check_linear(made.status());
    linear_ = std::move(*made);
  }

  nb::object call(nb::handle x_obj) {
    PyOperand x;
    read_operand(kLinear, "x", x_obj, false, x, kLinearDtypes);
    const RowMajor in = row_major("x", x.op);
    if (x.op.type != weights_.op.type) {
      raise_type_error(fmt::format("{}: x is {} but the weights are {}", kLinear,
                                   element_name(x.op.type), element_name(weights_.op.type)));
    }
    if (in.cols != linear_->in_features()) {
      raise_value_error(fmt::format("{}: x has {} columns, the weights {} (in_features)", kLinear,
                                    in.cols, linear_->in_features()));
    }
    const std::int64_t shape[2] = {in.rows, linear_->out_features()};
    nb::object y = nb::steal(new_numpy_array(2, shape, ElementType::kFloat32));
    if (!y.is_valid()) throw nb::python_error();
    PyOperand out;
    read_operand(kLinear, "y", y, true, out);
    Status s;
    {
      nb::gil_scoped_release unlocked;
      float* y_data = reinterpret_cast<float*>(out.op.data);
      s = x.op.type == ElementType::kBFloat16
              ? linear_->forward(in.rows, reinterpret_cast<const ops::BFloat16*>(x.op.data), in.ld,
                                 y_data, shape[1])
              : linear_->forward(in.rows, reinterpret_cast<const float*>(x.op.data), in.ld, y_data,
                                 shape[1]);
    }
    check_linear(std::move(s));
    return y;
  }

  nb::dict choice(std::int64_t tokens) const {
    auto c = linear_->choice(tokens);
    check_linear(c.status());
    nb::dict d;
    d["solution"] = c->solution;
    d["call_ms"] = c->call_ms;
    d["pack_ms"] = c->pack_ms;
    d["tuning_ms"] = c->tuning_ms;
    return d;
  }

  std::int64_t out_features() const { return linear_->out_features(); }
  std::int64_t in_features() const { return linear_->in_features(); }

 private:
  PyOperand weights_;
  nb::object keep_;  // the caller's weights stay alive (and in place) with the handle
  std::unique_ptr<ops::Linear> linear_;
};

}  // namespace

void bind_linear(nb::module_& m) {
  nb::class_<PyLinear>(
      m, "Linear",
      "y = x @ weights.T with constant float32 or bfloat16 weights (out_features x "
      "in_features; x of the same dtype, y float32), tuned per token count "
      "(docs/native.md)")
      .def(nb::init<nb::handle>(), nb::arg("weights").none())
      .def("__call__", &PyLinear::call, nb::arg("x").none())
      .def("choice", &PyLinear::choice, nb::arg("tokens"))
      .def_prop_ro("out_features", &PyLinear::out_features)
      .def_prop_ro("in_features", &PyLinear::in_features);
}

}  // namespace tunekit::python
