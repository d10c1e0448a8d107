// The tuning Task of a kernel spec (name, workload arguments, target, FLOPs, space).
#include "tunekit/kernel/kernel_task.hpp"

#include <cstdint>

#include "tunekit/records/record.hpp"

namespace tunekit {

std::string kernel_target(const KernelSpec& spec) {
  switch (spec.source.language) {
    case KernelLanguage::kOpenCL:
      return "opencl";
    case KernelLanguage::kCuda:
      return "cuda";
    case KernelLanguage::kCpp:
      break;
  }
  return "c -march=" + spec.build.march;
}

namespace {

nlohmann::json argument_json(const KernelArgument& arg) {
  if (!arg.is_scalar) {
    return nlohmann::json::array({"TENSOR", {arg.size}, std::string(to_string(arg.dtype))});
  }
  if (arg.dtype == ArgDtype::kInt32 || arg.dtype == ArgDtype::kInt64) {
    return static_cast<std::int64_t>(arg.scalar_value);
  }
  return arg.scalar_value;
}

}  // namespace

std::shared_ptr<const Task> make_kernel_task(const KernelSpec& spec) {
  auto task = std::make_shared<Task>();
  task->name = spec.source.name;
  for (const KernelArgument& arg : spec.problem.arguments) task->args.push_back(argument_json(arg));
  task->target = kernel_target(spec);
  task->flop = spec.flop;
  task->space = spec.space;
  return task;
}

std::string kernel_workload_key(const Task& task) {
  Record r;
  r.task_name = task.name;
  r.args = nlohmann::ordered_json::parse(task.args.dump());
  return r.workload_key();
}

}  // namespace tunekit
