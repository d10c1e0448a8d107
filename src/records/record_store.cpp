// JSON-lines store (flock'd appends), LockedLog rewrites, log_to_file, best-record queries (one
// space definition per workload) and pick_best. See include/tunekit/records/record_store.hpp.
#include "tunekit/records/record_store.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "records/log_text.hpp"
#include "tunekit/core/file_io.hpp"
#include "tunekit/core/log.hpp"

namespace tunekit {

Status RecordStore::append(std::span<const Record> records) {
  for (const auto& r : records) TUNEKIT_RETURN_IF_ERROR(append(r));
  return Status::ok();
}

Status JsonLinesStore::append(const Record& record) {
  return append(std::span<const Record>(&record, 1));
}

namespace {

Status io_error(std::string_view what, const std::string& path, int err) {
  return Status(StatusCode::kIoError,
                fmt::format("cannot {} '{}': {}", what, path, std::strerror(err)));
}

/// A descriptor of `path` holding flock `op`, and whether opening created the file.
struct LockedFd {
  int fd = -1;
  bool created = false;
};

/// Opens the regular file `path` with `flags` and flocks it with `op`, until the locked file is
/// still the one at the path: a LockedLog may have renamed another file over it, or removed it,
/// while we waited.
Expected<LockedFd> open_locked(const std::string& path, int flags, int op) {
  for (;;) {
    LockedFd l;
    auto file = files::open_regular(path, flags, "tuning log", &l.created);
    if (!file) return file.status();
    l.fd = file->release();
    while (::flock(l.fd, op) != 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(l.fd);
      return io_error("lock tuning log", path, err);
    }
    struct stat held {
    }, now{};
    if (::fstat(l.fd, &held) != 0) {
      const int err = errno;
      ::close(l.fd);
      return io_error("open tuning log", path, err);
    }
    if (::stat(path.c_str(), &now) == 0 && now.st_dev == held.st_dev && now.st_ino == held.st_ino)
      return l;
    ::close(l.fd);  // replaced or removed while we waited: lock the file now at the path
  }
}

/// Removes a last line without its '\n' from the locked log `fd` of `size` bytes: it was not
/// completely written, and a record appended after it would be glued to it. Returns the new size.
Expected<off_t> remove_incomplete_last_line(int fd, off_t size, const std::string& path) {
  char last = '\n';
  if (size == 0 || (::pread(fd, &last, 1, size - 1) == 1 && last == '\n')) return size;
  auto text = files::read_all(fd, path, "tuning log");
  if (!text) return text.status();
  const std::size_t nl = text->rfind('\n');
  const off_t start = nl == std::string::npos ? 0 : static_cast<off_t>(nl + 1);
  if (::ftruncate(fd, start) != 0) return io_error("truncate", path, errno);
  log::warn(
      fmt::format("{}:{}: removed the incomplete last line (no line end: an interrupted "
                  "write)",
                  path, 1 + std::count(text->begin(), text->begin() + start, '\n')));
  return start;
}

std::string encode_lines(std::span<const Record> records) {
  std::string text;
  for (const auto& r : records) {
    text += encode_record(r);
    text += '\n';
  }
  return text;
}

}  // namespace

Status JsonLinesStore::append(std::span<const Record> records) {
  if (records.empty()) return Status::ok();
  const std::string text = encode_lines(records);
  auto l = open_locked(path_, O_RDWR | O_APPEND | O_CREAT, LOCK_EX);
  if (!l) return l.status();
  const files::Fd held(l->fd);  // closing it releases the lock
  const off_t end = ::lseek(l->fd, 0, SEEK_END);
  if (end < 0) return io_error("open tuning log", path_, errno);
  auto size = remove_incomplete_last_line(l->fd, end, path_);
  if (!size) return size.status();
  return files::append_all_or_nothing(l->fd, *size, text, path_, "tuning log");
}

Expected<std::vector<Record>> JsonLinesStore::load() const {
  auto l = open_locked(path_, O_RDONLY, LOCK_SH);
  if (!l) return l.status();
  auto text = read_log_text(l->fd, path_);
  ::close(l->fd);
  if (!text) return text.status();
  return parse_records(*text, path_);
}

Expected<LockedLog> LockedLog::acquire(const std::string& path) {
  // Read-only is enough to lock, and lets a read-only file in a writable directory be replaced.
  auto l = open_locked(path, O_RDONLY | O_CREAT, LOCK_EX);
  if (!l) return l.status();
  return LockedLog(path, l->fd, l->created);
}

LockedLog::LockedLog(LockedLog&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      created_(other.created_),
      replaced_(other.replaced_) {}

LockedLog& LockedLog::operator=(LockedLog&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    created_ = other.created_;
    replaced_ = other.replaced_;
  }
  return *this;
}

LockedLog::~LockedLog() { release(); }

void LockedLog::release() noexcept {
  if (fd_ < 0) return;
  struct stat st {};
  // A file made only to hold the lock goes again (waiting appenders then make a fresh one).
  if (created_ && !replaced_ && ::fstat(fd_, &st) == 0 && st.st_size == 0) ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

Expected<std::vector<Record>> LockedLog::load(const LoadOptions& options) const {
  auto text = read_log_text(fd_, path_);
  if (!text) return text.status();
  return parse_records(*text, path_, options);
}

Status LockedLog::replace(std::span<const Record> records) {
  const std::string text = encode_lines(records);
  std::string tmp = path_ + ".tmp.XXXXXX";
  const int tfd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (tfd < 0) return io_error("create", tmp, errno);
  auto fail = [&](Status st) {
    ::close(tfd);
    ::unlink(tmp.c_str());
    return st;
  };
  struct stat old {};
  if (::fstat(fd_, &old) == 0 && ::fchmod(tfd, old.st_mode & 07777) != 0) {
    return fail(io_error("set the mode of", tmp, errno));
  }
  if (Status st = files::append_all_or_nothing(tfd, 0, text, tmp, "tuning log"); !st) {
    return fail(st);
  }
  if (::fsync(tfd) != 0) return fail(io_error("flush", tmp, errno));
  // Lock the new file before it appears at the path, so the hold moves to it without a gap.
  if (::flock(tfd, LOCK_EX) != 0) return fail(io_error("lock", tmp, errno));
  if (::rename(tmp.c_str(), path_.c_str()) != 0) return fail(io_error("replace", path_, errno));
  ::close(fd_);  // appenders waiting on the old file see that it was replaced and reopen the path
  fd_ = tfd;
  replaced_ = true;
  return Status::ok();
}

TuneCallback log_to_file(const std::string& path, std::shared_ptr<UnsavedRecords> unsaved) {
  auto store = std::make_shared<JsonLinesStore>(path);
  auto warned = std::make_shared<bool>(false);
  return [store, warned, unsaved](const Tuner&, std::span<const MeasureInput> inputs,
                                  std::span<const MeasureResult> results) {
    std::vector<Record> records;
    records.reserve(inputs.size());
    for (std::size_t i = 0; i < inputs.size() && i < results.size(); ++i)
      records.push_back(make_record(inputs[i], results[i]));
    Status st = store->append(records);
    if (st.is_ok()) return;
    if (unsaved) {
      unsaved->count += records.size();
      unsaved->last = st;
    }
    if (!*warned) {
      *warned = true;
      log::warn(st.message() + " (tuning goes on; later records may be lost too)");
    }
  };
}

Status unsaved_records_status(const UnsavedRecords& unsaved) {
  if (unsaved.count == 0) return Status::ok();
  return Status(StatusCode::kIoError,
                fmt::format("{}: {} record(s) of this run are not in the log and are lost; fix "
                            "the cause and run again",
                            unsaved.last.message(), unsaved.count));
}

std::vector<Record> current_definition_records(std::span<const Record> records) {
  std::vector<std::string> workload(records.size());
  std::unordered_map<std::string, std::string>
      last_hash;  // workload -> space hash of its last record
  for (std::size_t i = 0; i < records.size(); ++i) {
    workload[i] = records[i].workload_key();
    last_hash[workload[i]] = records[i].space_hash;
  }
  struct Counts {
    std::size_t kept = 0, skipped = 0;
  };
  std::unordered_map<std::string, Counts> counts;
  std::vector<std::string> mixed;  // workloads with skipped records, in first-seen order
  std::vector<Record> out;
  out.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    Counts& c = counts[workload[i]];
    if (records[i].space_hash == last_hash[workload[i]]) {
      ++c.kept;
      out.push_back(records[i]);
    } else if (c.skipped++ == 0) {
      mixed.push_back(workload[i]);
    }
  }
  for (const auto& w : mixed) {
    const std::string& h = last_hash[w];
    log::warn(fmt::format(
        "{}: {} record(s) of another config space definition skipped; the {} record(s) of {} "
        "(that of its last record) compete",
        w, counts[w].skipped, counts[w].kept, h.empty() ? "no space hash" : "space hash " + h));
  }
  return out;
}

std::vector<Record> best_records(std::span<const Record> all) {
  const std::vector<Record> records = current_definition_records(all);
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

std::vector<Record> top_k(std::span<const Record> records, const std::string& workload_key,
                          std::size_t k) {
  std::vector<Record> out;
  for (const auto& r : current_definition_records(records)) {
    if (r.ok() && r.workload_key() == workload_key) out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(), [](const Record& a, const Record& b) {
    return a.mean_cost_s() < b.mean_cost_s();
  });
  if (out.size() > k) out.resize(k);
  return out;
}

std::vector<Record> pick_best(std::span<const Record> all) {
  const std::vector<Record> records = current_definition_records(all);
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
    if (wanted.count(i) && written.insert(records[i].measure_key()).second)
      out.push_back(records[i]);
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
  auto lock = LockedLog::acquire(path);
  if (!lock) return lock.status();
  return lock->replace(records);
}

}  // namespace tunekit
