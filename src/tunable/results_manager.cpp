// String-keyed results store with validated reads, per-line appends and full dumps.
// See include/tunekit/tunable/results_manager.hpp.
#include "tunekit/tunable/results_manager.hpp"

#include "tunekit/core/log.hpp"

namespace tunekit {
namespace {

// The validator check of a parsed file, with a clearer message for a file without any header.
Status validate_content(const ValidatorRegistry& validators, const ResultsFileContent& content,
                        const std::string& path) {
  if (content.validators.empty() && content.first_result_line != 0) {
    return Status(StatusCode::kValidatorMismatch,
                  path + ":" + std::to_string(content.first_result_line) + ": key=\"" +
                      std::string(kVersionValidator) +
                      "\" is not provided for validation: the file has no validator header (a "
                      "results file starts with Validator lines, this one with a result: an "
                      "untuned or hand-made file?); it is neither loaded nor appended to");
  }
  return validators.validate(content.validators, path);
}

}  // namespace

std::optional<ResultEntry> ResultsManager::lookup(std::string_view op_signature,
                                                  std::string_view params_signature) const {
  std::shared_lock lock(mutex_);
  auto op = ops_.find(op_signature);
  if (op == ops_.end()) return std::nullopt;
  auto it = op->second.by_params.find(params_signature);
  if (it == op->second.by_params.end()) return std::nullopt;
  return it->second;
}

std::optional<ResultLine> ResultsManager::lookup_wildcard(std::string_view op_signature,
                                                          std::string_view params_signature) const {
  std::shared_lock lock(mutex_);
  auto op = ops_.find(op_signature);
  if (op == ops_.end()) return std::nullopt;
  const std::string* best = nullptr;
  WildcardSpecificity best_rank{};
  for (const std::string& pattern : op->second.wildcards) {  // file (insertion) order
    if (!wildcard_match(pattern, params_signature)) continue;
    const WildcardSpecificity rank = wildcard_specificity(pattern);
    if (best == nullptr || rank < best_rank) {
      best = &pattern;
      best_rank = rank;
    }
  }
  if (best == nullptr) return std::nullopt;
  const ResultEntry& e = op->second.by_params.find(*best)->second;
  return ResultLine{std::string(op_signature), *best, e.solution, e.time_ms, e.extra};
}

bool ResultsManager::add_locked(ResultLine&& line) {
  OpBucket& bucket = ops_[line.op_signature];
  auto [it, inserted] = bucket.by_params.try_emplace(
      line.params_signature,
      ResultEntry{std::move(line.solution), line.time_ms, std::move(line.extra)});
  if (!inserted) return false;
  if (is_wildcard_signature(it->first)) bucket.wildcards.push_back(it->first);
  ++size_;
  return true;
}

bool ResultsManager::add(ResultLine line) {
  bool added = false;
  {
    std::unique_lock lock(mutex_);
    added = add_locked(std::move(line));
  }
  if (added) touch();
  return added;
}

Status ResultsManager::check_append_target(const std::string& path, std::string_view existing) {
  auto content = parse_results(existing, path);
  Status verdict = content ? validate_content(validators_, *content, path) : content.status();
  if (!verdict.is_ok()) {
    rejected_[path] = verdict.message();
    return verdict;
  }
  validated_.insert(path);
  return Status::ok();
}

Expected<bool> ResultsManager::add_and_persist(ResultLine line, const std::string& path,
                                               Status* not_saved) {
  const std::string text = format_result_line(line);
  if (!add(std::move(line))) return false;
  if (path.empty()) return true;

  std::lock_guard file_lock(file_mutex_);
  if (rejected_.count(path) == 0) {
    std::function<Status(std::string_view)> check;
    if (validated_.count(path) == 0) {
      check = [this, &path](std::string_view existing) {
        return check_append_target(path, existing);
      };
    }
    Status s = append_line_locked(path, format_header(validators_.values()), text, check);
    if (s.is_ok()) {
      validated_.insert(path);
      return true;
    }
    if (rejected_.count(path) == 0) {  // an I/O error, not a rejection
      ++unsaved_.count;
      unsaved_.last = s;
      if (not_saved != nullptr) *not_saved = s;
      return s;
    }
  }
  ++unsaved_.count;
  unsaved_.last = Status(StatusCode::kValidatorMismatch,
                         "results file '" + path + "' was rejected (" + rejected_[path] + ")");
  if (not_saved != nullptr) *not_saved = unsaved_.last;
  if (warned_.insert(path).second) {
    log::warn("not appending to results file '" + path + "', which was rejected (" +
              rejected_[path] + "); new results are kept in memory only");
  }
  return true;
}

void ResultsManager::note_unsaved(Status reason) {
  std::lock_guard file_lock(file_mutex_);
  ++unsaved_.count;
  unsaved_.last = std::move(reason);
}

ResultsManager::Unsaved ResultsManager::unsaved() const {
  std::lock_guard file_lock(file_mutex_);
  return unsaved_;
}

Status ResultsManager::read_file(const std::string& path) {
  auto content = read_results_file(path);
  if (content && content->validators.empty() && content->results.empty()) {
    // An empty (or blank) file holds nothing to validate; the first append writes the header.
    return Status::ok();
  }
  Status verdict = content ? validate_content(validators_, *content, path) : content.status();
  if (!verdict.is_ok()) {
    if (verdict.code() == StatusCode::kParseError ||
        verdict.code() == StatusCode::kValidatorMismatch) {
      std::lock_guard file_lock(file_mutex_);
      rejected_[path] = verdict.message();
      validated_.erase(path);
      log::info(1, "results validator check failed for '{}': {}", path, verdict.message());
    }
    return verdict;
  }
  for (const std::string& note : content->duplicates) log::info(1, "{}", note);
  for (const std::string& warning : content->warnings) log::warn(warning);
  {
    std::unique_lock lock(mutex_);
    for (ResultLine& r : content->results) {
      auto op = ops_.find(r.op_signature);
      if (op != ops_.end()) {
        auto it = op->second.by_params.find(r.params_signature);
        if (it != op->second.by_params.end()) {
          if (it->second.solution != r.solution) {
            log::info(1, "{}: keeping {},{} -> {} already loaded; ignoring {} from the file", path,
                      r.op_signature, r.params_signature, it->second.solution, r.solution);
          }
          continue;
        }
      }
      add_locked(std::move(r));
    }
  }
  {
    std::lock_guard file_lock(file_mutex_);
    rejected_.erase(path);
    warned_.erase(path);
    validated_.insert(path);
  }
  touch();
  return Status::ok();
}

Status ResultsManager::write_file(const std::string& path) {
  if (path.empty()) {
    return Status(StatusCode::kInvalidArgument, "write_file: empty file name");
  }
  std::string content = format_header(validators_.values());
  for (const ResultLine& r : results()) content.append(format_result_line(r)).push_back('\n');
  std::lock_guard file_lock(file_mutex_);
  if (auto it = rejected_.find(path); it != rejected_.end()) {
    return Status(StatusCode::kValidatorMismatch, "refusing to overwrite results file '" + path +
                                                      "', which was rejected (" + it->second +
                                                      "); write to another file name");
  }
  TUNEKIT_RETURN_IF_ERROR(write_file_locked(path, content));
  validated_.insert(path);
  return Status::ok();
}

std::vector<ResultLine> ResultsManager::results() const {
  std::shared_lock lock(mutex_);
  std::vector<ResultLine> out;
  out.reserve(size_);
  for (const auto& [op, bucket] : ops_) {
    for (const auto& [params, e] : bucket.by_params) {
      out.push_back(ResultLine{op, params, e.solution, e.time_ms, e.extra});
    }
  }
  return out;
}

std::size_t ResultsManager::size() const {
  std::shared_lock lock(mutex_);
  return size_;
}

void ResultsManager::clear() {
  {
    std::unique_lock lock(mutex_);
    ops_.clear();
    size_ = 0;
  }
  {
    std::lock_guard file_lock(file_mutex_);
    validated_.clear();
    rejected_.clear();
    warned_.clear();
  }
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  touch();
}

bool ResultsManager::is_rejected(const std::string& path) const {
  std::lock_guard file_lock(file_mutex_);
  return rejected_.count(path) != 0;
}

}  // namespace tunekit
