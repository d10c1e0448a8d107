// DispatchContext nesting, the root fallback context and ApplyHistoryBest.
// See include/tunekit/records/dispatch.hpp.
#include "tunekit/records/dispatch.hpp"

#include <fmt/format.h>

#include <set>

#include "tunekit/core/log.hpp"
#include "tunekit/records/record_store.hpp"

namespace tunekit {

std::string_view to_string(HitKind kind) noexcept {
  switch (kind) {
    case HitKind::kUserModel:
      return "user-model";
    case HitKind::kModel:
      return "model";
    case HitKind::kUserKey:
      return "user-key";
    case HitKind::kKey:
      return "key";
    case HitKind::kMiss:
      return "miss";
  }
  return "miss";
}

namespace {
thread_local DispatchContext* t_current = nullptr;
std::mutex g_warn_mutex;
std::set<std::string> g_warned;

void warn_once(const std::string& message) {
  std::lock_guard lock(g_warn_mutex);
  if (g_warned.insert(message).second) log::warn(message);
}
}  // namespace

/// The process-wide root: answers every query with a miss.
class RootContext final : public DispatchContext {
 public:
  RootContext() {
    // The root is never a scoped context: undo the push of the base constructor.
    t_current = parent_;
    parent_ = nullptr;
  }

 protected:
  std::optional<QueryResult> lookup(const Target&, const std::string&) override {
    return std::nullopt;
  }
};

namespace {
DispatchContext& root() {
  static RootContext r;
  return r;
}
}  // namespace

DispatchContext::DispatchContext() : parent_(t_current) { t_current = this; }

DispatchContext::~DispatchContext() {
  if (t_current == this) t_current = parent_;
}

DispatchContext& DispatchContext::current() { return t_current ? *t_current : root(); }

QueryResult DispatchContext::query(std::string_view target, const std::string& task_name,
                                   const nlohmann::ordered_json& args) {
  if (target.empty())
    throw Error(StatusCode::kInvalidArgument, "Need a target context to find the history best");
  const Target t = parse_target(target);
  const std::string wkey = encode_python_json(nlohmann::ordered_json::array({task_name, args}));
  QueryResult result;
  for (DispatchContext* ctx = this; ctx != nullptr; ctx = ctx->parent_) {
    if (auto r = ctx->lookup(t, wkey)) {
      result = std::move(*r);
      result.context = ctx;
      break;
    }
  }
  std::lock_guard lock(log_mutex_);
  log_.push_back(QueryLogEntry{std::string(target), wkey, result});
  return result;
}

std::pair<Config, QueryResult> DispatchContext::apply(std::string_view target,
                                                      const std::string& task_name,
                                                      const nlohmann::ordered_json& args,
                                                      const ConfigSpace& space) {
  QueryResult q = query(target, task_name, args);
  const std::string workload = encode_python_json(nlohmann::ordered_json::array({task_name, args}));
  if (q.hit()) {
    auto c = space.from_entity_json(nlohmann::json::parse(q.record->entity().dump()));
    if (c && space.is_valid(c->knobs())) return {std::move(*c), q};
    warn_once(
        fmt::format("The record for target={}, workload={} does not fit the config space ({}); "
                    "a fallback configuration is used.",
                    target, workload, c ? "it violates a constraint" : c.status().message()));
    q = QueryResult{};
  } else {
    warn_once(fmt::format(
        "Cannot find config for target={}, workload={}. A fallback configuration is used, "
        "which may bring great performance regression.",
        target, workload));
  }
  KnobVector zeros(space.knob_count(), 0);
  if (space.is_valid(zeros)) return {space.config_of(std::move(zeros)), q};
  if (auto first = space.get_next_index(0, 1)) return {space.config_at(*first), q};
  return {space.config_of(std::move(zeros)), q};
}

std::vector<QueryLogEntry> DispatchContext::queries() const {
  std::lock_guard lock(log_mutex_);
  return log_;
}

ApplyHistoryBest::ApplyHistoryBest(std::span<const Record> records) { load(records); }

ApplyHistoryBest::ApplyHistoryBest(const std::vector<std::string>& paths) {
  for (const auto& p : paths) {
    auto records = load_records(p);
    if (!records) throw Error(records.status());
    load(*records);
  }
}

void ApplyHistoryBest::load(std::span<const Record> records) {
  auto offer = [](Table& table, const std::string& key, const std::shared_ptr<const Record>& r) {
    auto [it, fresh] = table.emplace(key, r);
    if (!fresh && r->mean_cost_s() < it->second->mean_cost_s()) it->second = r;
  };
  // A workload whose last record here belongs to another space definition than the one kept
  // from earlier loads: the earlier entries no longer compete.
  std::unordered_map<std::string, std::string> last_hash;
  std::vector<std::string> order;
  for (const auto& rec : records) {
    const std::string w = rec.workload_key();
    if (last_hash.insert_or_assign(w, rec.space_hash).second) order.push_back(w);
  }
  for (const auto& w : order) {
    const std::string& h = last_hash[w];
    auto [it, fresh] = space_of_.emplace(w, h);
    if (fresh || it->second == h) continue;
    std::size_t dropped = 0;
    for (Table* table : {&best_by_model_, &best_by_key_}) {
      dropped += std::erase_if(
          *table, [&](const auto& entry) { return entry.second->workload_key() == w; });
    }
    if (dropped > 0) {
      log::warn(fmt::format(
          "{}: {} loaded entr{} of another config space definition dropped; records of {} "
          "(that of its last record) compete",
          w, dropped, dropped == 1 ? "y" : "ies", h.empty() ? "no space hash" : "space hash " + h));
    }
    it->second = h;
  }
  for (const auto& rec : current_definition_records(records)) {
    if (!rec.ok()) continue;  // only error_no == 0 records dispatch
    auto r = std::make_shared<const Record>(rec);
    const Target t = parse_target(r->target);
    const std::string w = r->workload_key();
    for (const auto& k : t.keys) offer(best_by_key_, k + "|" + w, r);
    if (t.model != "unknown") offer(best_by_model_, t.model + "|" + w, r);
  }
}

void ApplyHistoryBest::update(std::string_view target, const std::string& task_name,
                              const nlohmann::ordered_json& args,
                              const nlohmann::ordered_json& entity) {
  auto r = std::make_shared<Record>();
  r->target = std::string(target);
  r->task_name = task_name;
  r->args = args;
  r->config = nlohmann::ordered_json::object();
  r->config["index"] = -1;
  r->config["code_hash"] = nullptr;
  r->config["entity"] = entity;
  r->costs_s = {0.0};
  const Target t = parse_target(target);
  const std::string w = r->workload_key();
  user_by_model_[t.model + "|" + w] = r;
  for (const auto& k : t.keys) user_by_key_[k + "|" + w] = r;
}

std::optional<QueryResult> ApplyHistoryBest::lookup(const Target& target,
                                                    const std::string& workload_key) {
  auto find = [&](const Table& table, const std::string& name) -> std::shared_ptr<const Record> {
    auto it = table.find(name + "|" + workload_key);
    return it == table.end() ? nullptr : it->second;
  };
  if (auto r = find(user_by_model_, target.model))
    return QueryResult{HitKind::kUserModel, target.model, r, this};
  if (auto r = find(best_by_model_, target.model))
    return QueryResult{HitKind::kModel, target.model, r, this};
  for (const auto& k : target.keys) {
    if (auto r = find(user_by_key_, k)) return QueryResult{HitKind::kUserKey, k, r, this};
    if (auto r = find(best_by_key_, k)) return QueryResult{HitKind::kKey, k, r, this};
  }
  return std::nullopt;
}

}  // namespace tunekit
