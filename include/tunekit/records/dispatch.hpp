// Dispatch contexts: ApplyHistoryBest (a scoped context answering "which config for this target
// and workload?" from tuning records, with upstream's lookup order) and the root fallback.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/records/record.hpp"

namespace tunekit {

/// Which lookup answered a query (autotvm.md §4.1, in order of precedence).
enum class HitKind : std::uint8_t {
  kUserModel,  ///< a config set by update() for the target's model
  kModel,      ///< the best record for the target's model
  kUserKey,    ///< a config set by update() for one of the target's keys
  kKey,        ///< the best record for one of the target's keys
  kMiss,       ///< no record: the fallback configuration is used
};

/// "user-model", "model", "user-key", "key", "miss".
std::string_view to_string(HitKind kind) noexcept;

/// The answer to a dispatch query.
struct QueryResult {
  HitKind kind = HitKind::kMiss;
  /// The model or key that matched ("titanx", "cuda", ...); empty on a miss.
  std::string matched;
  /// The record dispatched; null on a miss.
  std::shared_ptr<const Record> record;
  /// The context that answered (for nested contexts); null on a miss.
  const void* context = nullptr;
  /// True unless the query missed.
  bool hit() const noexcept { return kind != HitKind::kMiss; }
};

/// One query made in a context, for `queries()`: which target/workload asked, and what hit.
struct QueryLogEntry {
  std::string target;
  std::string workload_key;
  QueryResult result;
};

/// Base of dispatch contexts. Contexts nest per thread: constructing a scoped context makes it
/// current, destroying it restores its parent; a query the current context cannot answer is
/// passed to the parent, ending at the process-wide root, which answers kMiss.
class DispatchContext {
 public:
  /// Becomes the current context of this thread (its parent is the previous one).
  DispatchContext();
  /// Restores the parent as the current context.
  virtual ~DispatchContext();
  DispatchContext(const DispatchContext&) = delete;
  DispatchContext& operator=(const DispatchContext&) = delete;

  /// The innermost context of this thread (the root when none is active).
  static DispatchContext& current();

  /// Looks up (target, workload) here, then in the parents. Errors: throws Error
  /// (kInvalidArgument) for an empty target: "Need a target context to find the history best".
  QueryResult query(std::string_view target, const std::string& task_name,
                    const nlohmann::ordered_json& args);

  /// Queries, then instantiates the answer in `space`: the record's entity list (validated
  /// against the space, autotvm.md §12.7), or on a miss or an unusable record the fallback
  /// config (entity 0 of every knob; the first valid index if that violates a constraint),
  /// warning once per distinct (target, workload): "Cannot find config for target=<t>,
  /// workload=<w>. A fallback configuration is used, which may bring great performance
  /// regression."
  /// Returns the config and the query result (kMiss when the fallback was used).
  std::pair<Config, QueryResult> apply(std::string_view target, const std::string& task_name,
                                       const nlohmann::ordered_json& args,
                                       const ConfigSpace& space);

  /// Every query made through this context (including misses), in order.
  std::vector<QueryLogEntry> queries() const;

 protected:
  /// This context's own answer, or nullopt to ask the parent.
  virtual std::optional<QueryResult> lookup(const Target& target,
                                            const std::string& workload_key) = 0;

 private:
  DispatchContext* parent_ = nullptr;
  mutable std::mutex log_mutex_;
  std::vector<QueryLogEntry> log_;
  friend class RootContext;
};

/// AutoTVM ApplyHistoryBest: dispatches the best successful record per workload.
///
/// Loading keeps, per workload, the record with the smallest mean cost for each key of its
/// target, and for its target's model when the model is not "unknown" (PR #2671). Only records
/// of one config-space definition per workload compete, as in pick_best: that of the workload's
/// last record loaded (current_definition_records); a later load() whose last record of a
/// workload has another space_hash drops what earlier loads kept for it, with a warning. Query
/// order: user configs by model, best by model, then for each key of the *query* target in order:
/// user configs by key, best by key; else the parent context. So a record tuned for "llvm
/// -mcpu=skylake-avx512" serves any llvm target through key "cpu" when no model matches.
class ApplyHistoryBest : public DispatchContext {
 public:
  /// Scoped: becomes the current context of this thread until destroyed.
  explicit ApplyHistoryBest(std::span<const Record> records);
  /// Loads and merges log files. Errors: throws Error (kIoError, kParseError) from load_records.
  explicit ApplyHistoryBest(const std::vector<std::string>& paths);

  /// Adds more records (merged with those loaded before; see the class comment for records of
  /// another config-space definition).
  void load(std::span<const Record> records);
  /// AutoTVM update(): the given entity becomes the answer for (target's model and every key,
  /// workload), with cost 0, ahead of the loaded records.
  void update(std::string_view target, const std::string& task_name,
              const nlohmann::ordered_json& args, const nlohmann::ordered_json& entity);
  /// Number of (model or key, workload) entries loaded.
  std::size_t size() const noexcept { return best_by_model_.size() + best_by_key_.size(); }

 protected:
  /// The lookup order of the class comment; nullopt passes the query to the parent.
  std::optional<QueryResult> lookup(const Target& target, const std::string& workload_key) override;

 private:
  using Table = std::unordered_map<std::string, std::shared_ptr<const Record>>;  // "key|workload"
  Table best_by_model_, best_by_key_, user_by_model_, user_by_key_;
  /// Workload key -> space_hash of the last record loaded for it.
  std::unordered_map<std::string, std::string> space_of_;
};

}  // namespace tunekit
