// One TunableOp setting as the API and its TUNEKIT_* variable give it: the variable (or a value
// pinned by a command line) wins over the API; reads are relaxed atomic loads (dispatch path).
#pragma once

#include <atomic>
#include <optional>

namespace tunekit::detail {

/// A setting with an API value, an environment value that wins when present, and a pinned value
/// that takes the environment's place and is kept by set_env() until reset().
template <class T>
class EnvSetting {
 public:
  /// A setting whose API value starts (and resets) at `def`.
  explicit EnvSetting(T def) : def_(def), api_(def) {}
  /// The effective value: pinned, else the environment's, else the API's.
  T get() const noexcept {
    return has_env_.load(std::memory_order_acquire) ? env_.load(std::memory_order_relaxed)
                                                    : api_.load(std::memory_order_relaxed);
  }
  /// Sets the API value.
  void set(T v) noexcept { api_.store(v, std::memory_order_relaxed); }
  /// Sets (or, with nullopt, clears) the environment's value; ignored while pinned.
  void set_env(std::optional<T> v) noexcept {
    if (pinned_.load(std::memory_order_relaxed)) return;
    if (v) env_.store(*v, std::memory_order_relaxed);
    has_env_.store(v.has_value(), std::memory_order_release);
  }
  /// Pins `v`: it takes the environment's place (dispatch reads it the same way).
  void pin(T v) noexcept {
    pinned_.store(true, std::memory_order_relaxed);
    env_.store(v, std::memory_order_relaxed);
    has_env_.store(true, std::memory_order_release);
  }
  /// Whether the API value is overridden (by the environment or a pin).
  bool overridden() const noexcept { return has_env_.load(std::memory_order_acquire); }
  /// Restores the API default and drops a pin (the environment is re-read by the owner).
  void reset() noexcept {
    api_.store(def_, std::memory_order_relaxed);
    if (pinned_.exchange(false, std::memory_order_relaxed)) {
      has_env_.store(false, std::memory_order_release);
    }
  }

 private:
  T def_;
  std::atomic<T> api_;
  std::atomic<T> env_{};
  std::atomic<bool> has_env_{false};
  std::atomic<bool> pinned_{false};
};

}  // namespace tunekit::detail
