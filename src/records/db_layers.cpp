// System and user tuning databases. See include/tunekit/records/db_layers.hpp.
#include "tunekit/records/db_layers.hpp"

#include <filesystem>
#include <set>
#include <utility>

#include "tunekit/core/env.hpp"

#ifndef TUNEKIT_SYSTEM_DB_PATH
#define TUNEKIT_SYSTEM_DB_PATH "/usr/local/share/tunekit/tunekit.db"
#endif

namespace tunekit {
namespace {

bool is_off(const std::string& value) { return value.empty() || value == "off"; }

}  // namespace

std::string default_user_db_path() {
  if (auto set = env::get_string("TUNEKIT_DB")) return is_off(*set) ? std::string() : *set;
  if (auto xdg = env::get_string("XDG_DATA_HOME"); xdg && !xdg->empty()) {
    return *xdg + "/tunekit/tunekit.db";
  }
  if (auto home = env::get_string("HOME"); home && !home->empty()) {
    return *home + "/.local/share/tunekit/tunekit.db";
  }
  return {};
}

std::string default_system_db_path() {
  if (auto set = env::get_string("TUNEKIT_SYSTEM_DB")) return is_off(*set) ? std::string() : *set;
  return TUNEKIT_SYSTEM_DB_PATH;
}

DbPaths default_db_paths() { return DbPaths{default_user_db_path(), default_system_db_path()}; }

void DbLayers::set_paths(DbPaths paths) {
  std::lock_guard lock(mutex_);
  paths_ = std::move(paths);
  user_.reset();
  system_.reset();
}

DbPaths DbLayers::paths() const {
  std::lock_guard lock(mutex_);
  return paths_;
}

Expected<std::shared_ptr<TuningDb>> DbLayers::open_locked(bool user, bool create) {
  std::shared_ptr<TuningDb>& held = user ? user_ : system_;
  const std::string& path = user ? paths_.user : paths_.system;
  if (held || path.empty()) return held;
  std::error_code ec;
  if (!create && !std::filesystem::exists(path, ec)) return held;  // nothing stored yet
  auto db = TuningDb::open(
      path, user && create ? TuningDb::Access::kReadWrite : TuningDb::Access::kReadOnly);
  if (!db) return db.status();
  held = std::move(*db);
  return held;
}

Expected<std::shared_ptr<TuningDb>> DbLayers::user_for_writing() {
  std::lock_guard lock(mutex_);
  if (user_ && user_->read_only()) user_.reset();  // opened for reading before it existed
  return open_locked(true, true);
}

std::vector<LayeredResult> DbLayers::dispatch_results(const DbEnvironment& environment,
                                                      std::vector<Status>* problems) {
  std::lock_guard lock(mutex_);
  std::vector<LayeredResult> out;
  std::set<std::pair<std::string, std::string>> seen;
  for (const bool user : {true, false}) {
    auto db = open_locked(user, false);
    if (!db || !*db) {
      if (!db && problems != nullptr) problems->push_back(db.status());
      continue;
    }
    auto environments = (*db)->environments();
    if (!environments) {
      if (problems != nullptr) problems->push_back(environments.status());
      continue;
    }
    for (const DbStoredEnvironment& e : *environments) {
      if (!same_environment(e.validators, environment)) continue;
      DbResultQuery query;
      query.environment = e.id;
      auto rows = (*db)->best_results(query);
      if (!rows) {
        if (problems != nullptr) problems->push_back(rows.status());
        continue;
      }
      for (DbStoredResult& r : *rows) {
        if (!seen.emplace(r.result.op_signature, r.result.params_signature).second) continue;
        out.push_back(LayeredResult{std::move(r.result), !user});
      }
    }
  }
  return out;
}

}  // namespace tunekit
