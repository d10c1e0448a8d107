// A fake tunable problem for the tunable-layer tests: c = a + b over n floats, with candidates
// that spin for known times and can be wrong, produce NaN, fail, throw or be unsupported.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "../test_files.hpp"
#include "tunekit/core/clock.hpp"
#include "tunekit/core/status.hpp"
#include "tunekit/measure/cache_flush.hpp"
#include "tunekit/measure/cpu_wait.hpp"
#include "tunekit/tunable/candidate.hpp"
#include "tunekit/tunable/tolerance.hpp"

extern char** environ;

namespace tunekit::testing {

class AddWorkspace;

/// Identity of an add problem.
struct AddKey {
  std::int64_t n = 0;
  int tag = 0;
  friend bool operator==(const AddKey&, const AddKey&) = default;
};

/// c[i] = a[i] + b[i] for i < n. `tag` distinguishes problems of equal size.
struct AddParams {
  std::int64_t n = 0;
  int tag = 0;
  bool dynamic_n = false;  ///< n is a dynamic dimension (wildcard signature "n_*_t_<tag>")
  bool invalid = false;    ///< validate() refuses the problem (not part of the key)
  const float* a = nullptr;
  const float* b = nullptr;
  float* c = nullptr;

  using Key = AddKey;
  using Workspace = AddWorkspace;

  std::string op_signature() const { return "AddTunableOp_float"; }
  std::string signature() const { return "n_" + std::to_string(n) + "_t_" + std::to_string(tag); }
  Key key() const noexcept { return Key{n, tag}; }
  static std::uint64_t hash(const Key& key) noexcept {
    return static_cast<std::uint64_t>(key.n) * 1000003u + static_cast<std::uint64_t>(key.tag);
  }
  double flops() const noexcept { return static_cast<double>(n); }
  /// kInvalidArgument "fake: invalid problem" when `invalid` is set.
  Status validate() const {
    if (invalid) return Status(StatusCode::kInvalidArgument, "fake: invalid problem");
    return Status::ok();
  }
  std::size_t output_bytes() const { return static_cast<std::size_t>(n) * sizeof(float); }
  std::size_t input_bytes() const { return 2 * static_cast<std::size_t>(n) * sizeof(float); }
  std::vector<measure::MemoryRange> operand_ranges() const {
    return {{a, static_cast<std::size_t>(n) * 4},
            {b, static_cast<std::size_t>(n) * 4},
            {c, static_cast<std::size_t>(n) * 4}};
  }
  Status compare_output(const AddParams& reference, double atol, double rtol) const {
    for (std::int64_t i = 0; i < n; ++i) {
      const double ref = reference.c[i];
      const double got = c[i];
      if (std::isnan(got) || std::fabs(got - ref) > atol + rtol * std::fabs(ref)) {
        return Status(StatusCode::kWrongResult, "element " + std::to_string(i) + ": got " +
                                                    std::to_string(got) + ", expected " +
                                                    std::to_string(ref));
      }
    }
    return Status::ok();
  }
  Tolerance default_tolerance() const { return dtype_tolerance("float"); }
  std::string dynamic_signature() const {
    return dynamic_n ? "n_*_t_" + std::to_string(tag) : signature();
  }
  std::string blas_signature() const { return "- { function: add, N: " + std::to_string(n) + " }"; }
  /// The problem of a signature "n_<n>_t_<tag>" (no operands); kParseError otherwise.
  static Expected<AddParams> from_signature(std::string_view op, std::string_view signature) {
    AddParams p;
    int used = 0;
    const std::string text(signature);
    long long n = 0;
    if (op != "AddTunableOp_float" ||
        std::sscanf(text.c_str(), "n_%lld_t_%d%n", &n, &p.tag, &used) != 2 ||
        used != static_cast<int>(text.size())) {
      return Status(StatusCode::kParseError, "not an add signature: " + text);
    }
    p.n = n;
    return p;
  }
};

/// Operand copies for AddParams.
class AddWorkspace {
 public:
  AddWorkspace() { live().fetch_add(1); }
  ~AddWorkspace() { live().fetch_sub(1); }
  AddWorkspace(const AddWorkspace&) = delete;
  AddWorkspace& operator=(const AddWorkspace&) = delete;
  /// Workspaces alive now (to check that tuning frees its copies).
  static std::atomic<int>& live() {
    static std::atomic<int> count{0};
    return count;
  }

  static Expected<std::unique_ptr<AddWorkspace>> create(const AddParams& p, std::size_t copies) {
    if (p.n <= 0) return Status(StatusCode::kInvalidArgument, "n must be positive");
    auto ws = std::make_unique<AddWorkspace>();
    ws->base_ = p;
    const auto n = static_cast<std::size_t>(p.n);
    ws->c_initial_.assign(p.c, p.c + n);
    for (std::size_t i = 0; i < copies; ++i) {
      ws->a_.emplace_back(p.a, p.a + n);
      ws->b_.emplace_back(p.b, p.b + n);
      ws->c_.emplace_back(p.c, p.c + n);
    }
    return ws;
  }
  AddParams bind(std::size_t i) const {
    AddParams p = base_;
    p.a = a_[i].data();
    p.b = b_[i].data();
    p.c = const_cast<float*>(c_[i].data());
    return p;
  }
  void reset_output(std::size_t i) { c_[i] = c_initial_; }

 private:
  AddParams base_;
  std::vector<std::vector<float>> a_, b_, c_;
  std::vector<float> c_initial_;
};

/// Owns the operands of one problem.
struct AddProblem {
  explicit AddProblem(std::int64_t n, int tag = 0)
      : a(static_cast<std::size_t>(n)),
        b(static_cast<std::size_t>(n)),
        c(static_cast<std::size_t>(n), 0.0f),
        tag_(tag) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<float>(i % 17) * 0.25f;
      b[i] = 1.0f - static_cast<float>(i % 5) * 0.125f;
    }
  }
  AddParams params() {
    AddParams p;
    p.n = static_cast<std::int64_t>(a.size());
    p.tag = tag_;
    p.a = a.data();
    p.b = b.data();
    p.c = c.data();
    return p;
  }
  bool correct() const {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (c[i] != a[i] + b[i]) return false;
    }
    return true;
  }
  std::vector<float> a, b, c;
  int tag_ = 0;
};

/// Virtual time for deterministic rankings: when `g_virtual_time` is set, candidates advance
/// `g_virtual_ns` by their nominal run time instead of spinning, and contexts measure with
/// virtual_now_ns (TuningHooks::set_clock).
inline std::atomic<bool> g_virtual_time{false};
inline std::atomic<std::int64_t> g_virtual_ns{0};
inline std::int64_t virtual_now_ns() { return g_virtual_ns.load(); }

/// Virtual CPU wait (TuningHooks::set_cpu_wait_source): tests add to g_virtual_wait_ns the
/// time this process would have waited for a CPU while other work held it.
inline std::atomic<std::int64_t> g_virtual_wait_ns{0};
/// Its threads "ran" for the virtual time so far and waited g_virtual_wait_ns.
inline measure::CpuWait virtual_cpu_wait() {
  return measure::CpuWait{g_virtual_ns.load(), g_virtual_wait_ns.load(), true};
}

/// Spends `us` microseconds: virtual time when enabled, else a steady-clock busy-wait.
inline void spin_for_us(double us) {
  if (us <= 0.0) return;
  if (g_virtual_time.load()) {
    g_virtual_ns.fetch_add(static_cast<std::int64_t>(us * 1000.0));
    return;
  }
  const std::int64_t end = now_ns() + static_cast<std::int64_t>(us * 1000.0);
  while (now_ns() < end) {
  }
}

/// What a FakeCandidate does on run().
enum class Behaviour { kCorrect, kWrong, kNaN, kError, kUnsupported, kThrow };

/// A candidate whose run() adds (or misbehaves) and then spins. The spin time may depend on the
/// call number (`time_of_call`, 1-based), and the candidate can start failing after a number of
/// calls. Counts calls, prepares and the output pointers it saw.
class FakeCandidate : public Candidate<AddParams> {
 public:
  FakeCandidate(std::string name, std::string library, double spin_us,
                Behaviour behaviour = Behaviour::kCorrect)
      : name_(std::move(name)),
        library_(std::move(library)),
        spin_us_(spin_us),
        behaviour_(behaviour) {}

  const std::string& name() const override { return name_; }
  std::string_view library() const override { return library_; }
  Status supports(const AddParams&) const override {
    if (behaviour_ == Behaviour::kUnsupported) {
      return Status(StatusCode::kUnsupported, "fake: not for this problem");
    }
    return Status::ok();
  }
  Status prepare(const AddParams&) override {
    prepares_.fetch_add(1);
    return Status::ok();
  }
  Status run(const AddParams& p) override {
    const long call = calls_.fetch_add(1) + 1;
    if (record_outputs_) {
      std::lock_guard lock(mutex_);
      outputs_.insert(p.c);
    }
    if (fail_after_ > 0 && call > fail_after_) {
      return Status(refuse_ ? StatusCode::kUnsupported : StatusCode::kRuntimeError,
                    "fake: failed on call " + std::to_string(call));
    }
    switch (behaviour_) {
      case Behaviour::kError:
        return Status(StatusCode::kRuntimeError, "fake: kernel error");
      case Behaviour::kThrow:
        throw std::runtime_error("fake: exception");
      case Behaviour::kUnsupported:
        return Status(StatusCode::kUnsupported, "fake: unsupported");
      default:
        break;
    }
    for (std::int64_t i = 0; i < p.n; ++i) {
      float v = p.a[i] + p.b[i];
      if (behaviour_ == Behaviour::kWrong) v = p.a[i] - p.b[i];
      if (behaviour_ == Behaviour::kNaN && i == p.n / 2) v = std::nanf("");
      p.c[i] = v;
    }
    spin_for_us(time_of_call_ ? time_of_call_(call) : spin_us_);
    return Status::ok();
  }

  /// Counts the call, then run().
  Status run_resolved(const AddParams& p) override {
    resolved_calls_.fetch_add(1);
    return run(p);
  }

  long calls() const { return calls_.load(); }
  /// Calls that came through run_resolved() (TunableOp hits).
  long resolved_calls() const { return resolved_calls_.load(); }
  long prepares() const { return prepares_.load(); }
  /// From call `calls` + 1 on, run() fails: kUnsupported when `refuse` (a call the candidate
  /// does not take), else kRuntimeError.
  void set_fail_after(long calls, bool refuse = false) {
    fail_after_ = calls;
    refuse_ = refuse;
  }
  void set_time_of_call(std::function<double(long)> f) { time_of_call_ = std::move(f); }
  void record_outputs(bool on) { record_outputs_ = on; }
  std::size_t distinct_outputs() const {
    std::lock_guard lock(mutex_);
    return outputs_.size();
  }

 private:
  std::string name_;
  std::string library_;
  double spin_us_;
  Behaviour behaviour_;
  std::atomic<long> calls_{0};
  std::atomic<long> resolved_calls_{0};
  std::atomic<long> prepares_{0};
  long fail_after_ = 0;
  bool refuse_ = false;
  std::function<double(long)> time_of_call_;
  bool record_outputs_ = false;
  mutable std::mutex mutex_;
  std::set<const float*> outputs_;
};

/// Builds a candidate list and keeps raw pointers for inspection.
struct CandidateSet {
  CandidateList<AddParams> list;
  std::vector<FakeCandidate*> fakes;
  FakeCandidate* add(std::string name, std::string library, double spin_us,
                     Behaviour behaviour = Behaviour::kCorrect) {
    auto c =
        std::make_unique<FakeCandidate>(std::move(name), std::move(library), spin_us, behaviour);
    fakes.push_back(c.get());
    list.push_back(std::move(c));
    return fakes.back();
  }
};

/// Removes every TUNEKIT_* variable from the environment, then turns the tuning databases off.
inline void clear_tunekit_env() {
  std::vector<std::string> names;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    if (entry.rfind("TUNEKIT_", 0) == 0) names.push_back(entry.substr(0, entry.find('=')));
  }
  for (const std::string& n : names) ::unsetenv(n.c_str());
  // Never the developer's tuning databases (tests that need one name their own).
  ::setenv("TUNEKIT_DB", "off", 1);
  ::setenv("TUNEKIT_SYSTEM_DB", "off", 1);
}

/// Non-empty lines of a file.
inline std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(slurp(path));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

/// Lines of a results file that are not validator lines.
inline std::vector<std::string> result_lines_of(const std::string& path) {
  std::vector<std::string> out;
  for (std::string& l : lines_of(path)) {
    if (l.rfind("Validator,", 0) != 0) out.push_back(std::move(l));
  }
  return out;
}

}  // namespace tunekit::testing
