// load_best: the best record of a kernel spec's task in a log, rebuilt through the artefact
// cache and opened with dlopen.
#include "tunekit/kernel/load_best.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include "tunekit/kernel/kernel_task.hpp"
#include "tunekit/measure/kernel_build.hpp"
#include "tunekit/records/record_store.hpp"

namespace tunekit {

namespace {

/// The best successful record of `task` in the log; errors name the log and the task.
Expected<Record> best_record(const std::string& log_path, const Task& task) {
  auto records = load_records(log_path);
  if (!records) return records.status();
  const std::string key = kernel_workload_key(task);
  std::vector<Record> mine;
  for (Record& r : *records) {
    if (r.workload_key() == key) mine.push_back(std::move(r));
  }
  std::vector<Record> top = top_k(mine, key, 1);
  if (top.empty()) {
    return Status(StatusCode::kNotFound,
                  fmt::format("{}: no successful record of task '{}' with these arguments ({} "
                              "record(s) of it, none successful)",
                              log_path, task.name, mine.size()));
  }
  return std::move(top.front());
}

/// dlopen + dlsym of `symbol` in `artifact`.
Expected<std::pair<std::shared_ptr<void>, void*>> open_entry(const std::string& artifact,
                                                             const std::string& symbol) {
  void* raw = ::dlopen(artifact.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (raw == nullptr) {
    const char* why = ::dlerror();
    return Status(StatusCode::kRuntimeError,
                  fmt::format("cannot load {}: {}", artifact, why ? why : "dlopen failed"));
  }
  std::shared_ptr<void> handle(raw, [](void* h) { ::dlclose(h); });
  ::dlerror();
  void* entry = ::dlsym(raw, symbol.c_str());
  if (entry == nullptr) {
    return Status(StatusCode::kRuntimeError,
                  fmt::format("{} has no entry '{}' (declare it extern \"C\")", artifact, symbol));
  }
  return std::pair{std::move(handle), entry};
}

}  // namespace

Expected<KernelFunction> load_best(const std::string& log_path, const KernelSpec& spec) {
  const auto task = make_kernel_task(spec);
  const auto fail = [&](const Status& s) {
    return Status(s.code(), fmt::format("{} (task '{}'): {}", log_path, task->name, s.message()));
  };
  if (spec.source.language != KernelLanguage::kCpp) {
    return fail(Status(StatusCode::kUnsupported,
                       fmt::format("only C/C++ kernels can be loaded and called, not {}",
                                   to_string(spec.source.language))));
  }
  auto record = best_record(log_path, *task);
  if (!record) return record.status();
  TUNEKIT_RETURN_IF_ERROR(check_resumable(std::span(&*record, 1), *spec.space, log_path));
  auto config = spec.space->from_entity_json(nlohmann::json::parse(record->entity().dump()));
  if (!config) return fail(Status(StatusCode::kInvalidArgument, config.status().message()));
  auto builder = make_kernel_builder(spec.source, spec.build);
  if (!builder) return fail(builder.status());
  const MeasureInput input{task, *config};
  const std::vector<BuildResult> built = (*builder)->build(std::span(&input, 1));
  if (built.empty() || built[0].error_no != MeasureErrorNo::kNoError) {
    return fail(Status(StatusCode::kCompileError,
                       fmt::format("the best configuration {} does not build: {}",
                                   config->to_string(), built.empty() ? "" : built[0].error_msg)));
  }
  auto entry = open_entry(built[0].artifact, spec.source.entry);
  if (!entry) return fail(entry.status());
  return KernelFunction(std::move(entry->first), entry->second, spec.source.entry,
                        built[0].artifact, config->to_string(), record->mean_cost_s());
}

}  // namespace tunekit
