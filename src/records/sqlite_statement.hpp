// A prepared SQLite statement with RAII finalisation and typed binds and columns (internal to the
// tuning database).
#pragma once

#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace tunekit::detail {

/// One prepared statement; finalised on destruction. Binds are 1-based, columns 0-based.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql) {
    rc_ = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  /// SQLITE_OK when prepared.
  int prepared() const noexcept { return rc_; }
  Statement& bind(int i, std::string_view text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int i, std::int64_t value) {
    sqlite3_bind_int64(stmt_, i, value);
    return *this;
  }
  /// NaN binds NULL (a time that was not measured).
  Statement& bind(int i, double value) {
    if (std::isnan(value)) {
      sqlite3_bind_null(stmt_, i);
    } else {
      sqlite3_bind_double(stmt_, i, value);
    }
    return *this;
  }
  /// SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(stmt_); }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p == nullptr ? std::string()
                        : std::string(reinterpret_cast<const char*>(p),
                                      static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
  }
  std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }
  /// NULL reads NaN.
  double real(int col) const {
    return sqlite3_column_type(stmt_, col) == SQLITE_NULL ? std::nan("")
                                                          : sqlite3_column_double(stmt_, col);
  }
  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
};

}  // namespace tunekit::detail
