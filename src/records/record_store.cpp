// JSON-lines record store (append under flock, one write per batch), log_to_file, best-record
// queries, pick_best and atomic rewrites. See include/tunekit/records/record_store.hpp.
#include "tunekit/records/record_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "tunekit/core/log.hpp"

namespace tunekit {

Status RecordStore::append(std::span<const Record> records) {
  for (const auto& r : records) TUNEKIT_RETURN_IF_ERROR(append(r));
  return Status::ok();
}

Status JsonLinesStore::append(const Record& record) { return append(std::span<const Record>(&record, 1)); }

Status JsonLinesStore::append(std::span<const Record> records) {
  if (records.empty()) return Status::ok();
  std::string text;
  for (const auto& r : records) {
    text += encode_record(r);
    text += '\n';
  }
  const int fd = ::open(path_.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status(StatusCode::kIoError, fmt::format("cannot open '{}' for append: {}", path_, std::strerror(errno)));
  Status st = Status::ok();
  if (::flock(fd, LOCK_EX) != 0) {
    st = Status(StatusCode::kIoError, fmt::format("cannot lock '{}': {}", path_, std::strerror(errno)));
  } else {
    // A previous writer may have died mid-line: start on a fresh line so no record is glued to it.
    const off_t size = ::lseek(fd, 0, SEEK_END);
    char last = '\n';
    if (size > 0 && ::pread(fd, &last, 1, size - 1) == 1 && last != '\n') text.insert(text.begin(), '\n');
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        st = Status(StatusCode::kIoError, fmt::format("cannot write '{}': {}", path_, std::strerror(errno)));
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    ::flock(fd, LOCK_UN);
  }
  ::close(fd);
  return st;
}

Expected<std::vector<Record>> JsonLinesStore::load() const { return load_records(path_); }

TuneCallback log_to_file(const std::string& path) {
  auto store = std::make_shared<JsonLinesStore>(path);
  auto warned = std::make_shared<bool>(false);
  return [store, warned](const Tuner&, std::span<const MeasureInput> inputs, std::span<const MeasureResult> results) {
    std::vector<Record> records;
    records.reserve(inputs.size());
    for (std::size_t i = 0; i < inputs.size() && i < results.size(); ++i) records.push_back(make_record(inputs[i], results[i]));
    Status st = store->append(records);
    if (!st && !*warned) {
      *warned = true;
      log::warn(st.message() + " (tuning goes on; later records may be lost too)");
    }
  };
}

std::vector<Record> best_records(std::span<const Record> records) {
  std::unordered_map<std::string, std::size_t> best;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    if (!r.ok()) continue;
    const std::string key = r.target + "|" + r.workload_key();
    auto [it, fresh] = best.emplace(key, i);
    if (fresh) {
      order.push_back(key);
    } else if (r.mean_cost_s() < records[it->second].mean_cost_s()) {
      it->second = i;
    }
  }
  std::vector<Record> out;
  for (const auto& k : order) out.push_back(records[best[k]]);
  return out;
}

std::vector<Record> top_k(std::span<const Record> records, const std::string& workload_key, std::size_t k) {
  std::vector<Record> out;
  for (const auto& r : records) {
    if (r.ok() && r.workload_key() == workload_key) out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(), [](const Record& a, const Record& b) { return a.mean_cost_s() < b.mean_cost_s(); });
  if (out.size() > k) out.resize(k);
  return out;
}

std::vector<Record> pick_best(std::span<const Record> records) {
  std::unordered_map<std::string, std::size_t> best;  // "model:" / "key:" + name + "|" + workload
  auto offer = [&](const std::string& key, std::size_t i) {
    auto [it, fresh] = best.emplace(key, i);
    if (!fresh && records[i].mean_cost_s() < records[it->second].mean_cost_s()) it->second = i;
  };
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    if (!r.ok()) continue;
    const Target t = parse_target(r.target);
    const std::string w = r.workload_key();
    if (t.model != "unknown") offer("model:" + t.model + "|" + w, i);
    for (const auto& k : t.keys) offer("key:" + k + "|" + w, i);
  }
  std::unordered_set<std::size_t> wanted;
  for (const auto& [k, i] : best) wanted.insert(i);
  std::vector<Record> out;
  std::unordered_set<std::string> written;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (wanted.count(i) && written.insert(records[i].measure_key()).second) out.push_back(records[i]);
  }
  return out;
}

Expected<std::size_t> resume_from_log(Tuner& tuner, const std::string& path) {
  auto all = load_records(path);
  if (!all) return all.status();
  const auto task = tuner.task_ptr();
  const std::string key = encode_python_json(nlohmann::ordered_json::array(
      {task->name, nlohmann::ordered_json::parse(task->args.dump())}));
  std::vector<Record> mine;
  for (auto& r : *all) {
    if (r.workload_key() == key) mine.push_back(std::move(r));
  }
  TUNEKIT_RETURN_IF_ERROR(check_resumable(mine, *task->space, path));
  const auto trials = records_to_trials(mine, task);
  tuner.load_history(trials);
  return trials.size();
}

Status write_records(const std::string& path, std::span<const Record> records) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return Status(StatusCode::kIoError, fmt::format("cannot create '{}': {}", tmp, std::strerror(errno)));
    std::string text;
    for (const auto& r : records) {
      text += encode_record(r);
      text += '\n';
    }
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        ::close(fd);
        ::unlink(tmp.c_str());
        return Status(StatusCode::kIoError, fmt::format("cannot write '{}': {}", tmp, std::strerror(errno)));
      }
      done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
      ::unlink(tmp.c_str());
      return Status(StatusCode::kIoError, fmt::format("cannot flush '{}'", tmp));
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return Status(StatusCode::kIoError, fmt::format("cannot replace '{}': {}", path, std::strerror(errno)));
  }
  return Status::ok();
}

}  // namespace tunekit
