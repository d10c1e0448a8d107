// Deduplicated, locked appends of untuned problems.
// See include/tunekit/tunable/untuned.hpp.
#include "tunekit/tunable/untuned.hpp"

#include "tunekit/tunable/results_file.hpp"

namespace tunekit {

Expected<bool> UntunedRecorder::record(std::string_view op_signature,
                                       std::string_view params_signature, std::string_view extra,
                                       const std::string& path) {
  std::string key;
  key.reserve(op_signature.size() + params_signature.size() + 1);
  key.append(op_signature).append(",").append(params_signature);
  std::lock_guard lock(mutex_);
  if (recorded_.count(key) != 0) return false;
  std::string line = key;
  if (!extra.empty()) line.append(",").append(extra);
  if (path.empty()) {
    return Status(StatusCode::kInvalidArgument, "record-untuned is on but no untuned file is set");
  }
  TUNEKIT_RETURN_IF_ERROR(append_line_locked(path, {}, line));
  recorded_.insert(std::move(key));
  return true;
}

void UntunedRecorder::clear() {
  std::lock_guard lock(mutex_);
  recorded_.clear();
}

std::size_t UntunedRecorder::size() const {
  std::lock_guard lock(mutex_);
  return recorded_.size();
}

}  // namespace tunekit
