// The exception classes of tunekit (TunekitError and its subclasses) and the translation of
// statuses into them. See errors.hpp.
#include "errors.hpp"

#include <array>
#include <utility>

#include "bindings.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

/// The classes by status code (index = StatusCode), created by bind_errors().
std::array<PyObject*, 13> g_by_code{};
PyObject* g_base = nullptr;
PyObject* g_dtype_error = nullptr;

/// A new exception class tunekit.<name> deriving from TunekitError and the built-ins given (none:
/// TunekitError itself, from Exception), added to the module.
PyObject* make_class(nb::module_& m, const char* name, PyObject* builtin, const char* doc,
                     PyObject* builtin2 = nullptr) {
  const std::string qualified = std::string("tunekit.") + name;
  PyObject* bases = builtin == nullptr    ? PyTuple_Pack(1, PyExc_Exception)
                    : builtin2 == nullptr ? PyTuple_Pack(2, g_base, builtin)
                                          : PyTuple_Pack(3, g_base, builtin, builtin2);
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  Py_DECREF(bases);
  if (cls == nullptr) throw nb::python_error();
  m.attr(name) = nb::borrow(cls);  // the module keeps a reference; so do the globals
  return cls;
}

PyObject* class_of(StatusCode code) {
  const auto i = static_cast<std::size_t>(code);
  PyObject* cls = i < g_by_code.size() ? g_by_code[i] : nullptr;
  return cls != nullptr ? cls : g_base;
}

void set_status_error(const Status& status) {
  PyObject* cls = class_of(status.code());
  PyObject* code = PyUnicode_FromString(std::string(to_string(status.code())).c_str());
  PyObject* exc = PyObject_CallFunction(cls, "s", status.message().c_str());
  if (exc != nullptr && code != nullptr) PyObject_SetAttrString(exc, "code", code);
  Py_XDECREF(code);
  if (exc == nullptr) return;  // the call's own error is set
  PyErr_SetObject(cls, exc);
  Py_DECREF(exc);
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const StatusError& e) {
    set_status_error(e.status());
  } catch (const DTypeError& e) {
    PyErr_SetString(g_dtype_error, e.what());
  } catch (const tunekit::Error& e) {
    set_status_error(e.status());
  }
}

}  // namespace

void raise(Status status) { throw StatusError(std::move(status)); }

void raise_value_error(std::string message) {
  throw StatusError(Status(StatusCode::kInvalidArgument, std::move(message)));
}

void raise_type_error(std::string message) { throw DTypeError(std::move(message)); }

void bind_errors(nb::module_& m) {
  g_base = make_class(m, "TunekitError", nullptr,
                      "Base of every tunekit exception; `code` names the status "
                      "(e.g. 'parse error').");
  const auto set = [&](StatusCode code, PyObject* cls) {
    g_by_code[static_cast<std::size_t>(code)] = cls;
  };
  PyObject* invalid = make_class(m, "InvalidArgumentError", PyExc_ValueError,
                                 "A malformed argument or setting (shape, value).");
  set(StatusCode::kInvalidArgument, invalid);
  set(StatusCode::kUnsupported,
      make_class(m, "UnsupportedError", PyExc_ValueError,
                 "A problem or dtype tunekit cannot run (e.g. fp8 lines of a TunableOp file)."));
  set(StatusCode::kParseError, make_class(m, "ParseError", PyExc_ValueError,
                                          "A malformed file; the message names file:line."));
  set(StatusCode::kValidatorMismatch,
      make_class(m, "ValidatorMismatchError", PyExc_ValueError,
                 "A results file written under another environment (validator lines)."));
  set(StatusCode::kIoError, make_class(m, "FileIOError", PyExc_OSError,
                                       "A file that cannot be opened, read or written."));
  set(StatusCode::kNotFound,
      make_class(m, "NotFoundError", PyExc_FileNotFoundError,
                 "A missing file or folder, a file pattern matching nothing, or an unknown name "
                 "(also a LookupError).",
                 PyExc_LookupError));
  PyObject* run = make_class(m, "RunError", PyExc_RuntimeError,
                             "A candidate, kernel or tuning run that failed.");
  for (StatusCode c : {StatusCode::kWrongResult, StatusCode::kRuntimeError,
                       StatusCode::kCompileError, StatusCode::kTimeout, StatusCode::kInternal}) {
    set(c, run);
  }
  g_dtype_error = make_class(m, "DTypeError", PyExc_TypeError,
                             "An operand of a type or dtype tunekit does not take.");
  nb::register_exception_translator(&translate);
}

}  // namespace tunekit::python
