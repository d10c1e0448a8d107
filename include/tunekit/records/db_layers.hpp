// The layers of tuning databases, as MIOpen's: a read-only system database installed with tunekit
// and a user database that wins on conflicts and takes every write.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/records/tuning_db.hpp"

namespace tunekit {

/// Where the two databases are; an empty path is no database.
struct DbPaths {
  std::string user;    ///< read and written (created on the first write)
  std::string system;  ///< read only (installed with tunekit; may be missing)
};

/// The user database: TUNEKIT_DB when set ("" or "off": none), else
/// $XDG_DATA_HOME/tunekit/tunekit.db, else $HOME/.local/share/tunekit/tunekit.db ("" without
/// HOME).
std::string default_user_db_path();
/// The system database: TUNEKIT_SYSTEM_DB when set ("" or "off": none), else
/// <prefix>/share/tunekit/tunekit.db of the installation.
std::string default_system_db_path();
/// Both defaults.
DbPaths default_db_paths();

/// One entry for dispatch, with the layer it came from.
struct LayeredResult {
  DbResult result;
  bool from_system = false;  ///< false: the user database
};

/// The two databases of a process, opened on first use. Thread-safe.
class DbLayers {
 public:
  /// Layers at `paths` (nothing is opened yet).
  explicit DbLayers(DbPaths paths = {}) : paths_(std::move(paths)) {}
  /// Replaces the paths (closing what was open).
  void set_paths(DbPaths paths);
  /// The paths.
  DbPaths paths() const;

  /// The results dispatch may use under `environment` (the same validators, in any order; rows
  /// of other machines or library versions are never returned): the user database's
  /// (TuningDb::best_results per problem), then the system database's for problems the user
  /// database does not hold. A database that is missing is skipped; one that cannot be read is
  /// skipped with its error added to `problems` (when given).
  std::vector<LayeredResult> dispatch_results(const DbEnvironment& environment,
                                              std::vector<Status>* problems = nullptr);

  /// The user database, opened (created with its folder) for writing; null without one.
  /// Errors: those of TuningDb::open.
  Expected<std::shared_ptr<TuningDb>> user_for_writing();

 private:
  Expected<std::shared_ptr<TuningDb>> open_locked(bool user, bool create);

  mutable std::mutex mutex_;
  DbPaths paths_;
  std::shared_ptr<TuningDb> user_, system_;
};

}  // namespace tunekit
