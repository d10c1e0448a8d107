// _tunekit.autotvm.HistoryBest: AutoTVM's ApplyHistoryBest (records/dispatch.hpp) behind
// tunekit.apply_history_best (python/tunekit/dispatch.py).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autotvm.hpp"
#include "errors.hpp"
#include "tunekit/records/dispatch.hpp"
#include "tunekit/records/record.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

/// AutoTVM ApplyHistoryBest over log files and record lines; current in the creating thread
/// from open() to close() (Python's `with` block).
class HistoryHandle {
 public:
  void open(const std::vector<std::string>& paths, const std::string& text) {
    std::vector<Record> records;
    for (const std::string& p : paths) {
      auto loaded = load_records(p);
      if (!loaded) raise(loaded.status());
      records.insert(records.end(), loaded->begin(), loaded->end());
    }
    if (!text.empty()) {
      auto parsed = parse_records(text, "records");
      if (!parsed) raise(parsed.status());
      records.insert(records.end(), parsed->begin(), parsed->end());
    }
    context_ = std::make_unique<ApplyHistoryBest>(records);
  }
  void close() { context_.reset(); }

  /// The best record's line for (target, task name, args), or None.
  std::optional<std::string> query(const std::string& target, const std::string& name,
                                   const std::string& args) {
    if (!context_) raise_value_error("apply_history_best is not entered");
    nlohmann::ordered_json ordered;
    try {
      ordered = nlohmann::ordered_json::parse(args);
    } catch (const nlohmann::json::exception&) {
      raise_value_error("task arguments are not JSON: " + args);
    }
    QueryResult hit = context_->query(target, name, ordered);
    if (!hit.hit()) return std::nullopt;
    return encode_record(*hit.record);
  }
  std::size_t size() const { return context_ ? context_->size() : 0; }

 private:
  std::unique_ptr<ApplyHistoryBest> context_;
};

}  // namespace

void bind_dispatch(nb::module_& m) {
  nb::class_<HistoryHandle>(m, "HistoryBest")
      .def(nb::init<>())
      .def("open", &HistoryHandle::open)
      .def("close", &HistoryHandle::close)
      .def("query", &HistoryHandle::query)
      .def_prop_ro("size", &HistoryHandle::size);
}

}  // namespace tunekit::python
