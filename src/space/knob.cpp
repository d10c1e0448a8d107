// Entity enumeration of split, reorder and annotate knobs (AutoTVM policies).
// Includes an emulation of CPython 3.11 set iteration order for the "verbose" split policy.
#include "tunekit/space/knob.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tunekit {

std::string_view knob_tag(KnobKind kind) noexcept {
  switch (kind) {
    case KnobKind::kSplit:
      return "sp";
    case KnobKind::kReorder:
      return "re";
    case KnobKind::kAnnotate:
      return "an";
    case KnobKind::kOther:
      return "ot";
  }
  return "ot";
}

std::optional<KnobKind> knob_kind_from_tag(std::string_view tag) noexcept {
  if (tag == "sp") return KnobKind::kSplit;
  if (tag == "re") return KnobKind::kReorder;
  if (tag == "an") return KnobKind::kAnnotate;
  if (tag == "ot") return KnobKind::kOther;
  return std::nullopt;
}

namespace {

/// CPython 3.11 set of small positive ints (hash(i) == i), enough of setobject.c to reproduce
/// the iteration order of `set(list_a) | set(list_b)`.
class PySetEmulation {
 public:
  PySetEmulation() : table_(kMinSize, 0) {}

  void add(std::int64_t key) {
    const std::size_t mask = table_.size() - 1;
    std::size_t i = static_cast<std::size_t>(key) & mask;
    std::size_t perturb = static_cast<std::size_t>(key);
    for (;;) {
      std::size_t probes = (i + kLinearProbes <= mask) ? kLinearProbes : 0;
      std::size_t j = i;
      for (;;) {
        if (table_[j] == 0) {
          table_[j] = key;
          ++fill_;
          if (fill_ * 5 >= mask * 3) resize(fill_ > 50000 ? fill_ * 2 : fill_ * 4);
          return;
        }
        if (table_[j] == key) return;
        if (probes-- == 0) break;
        ++j;
      }
      perturb >>= kPerturbShift;
      i = (i * 5 + 1 + perturb) & mask;
    }
  }

  /// `set_or(this, other)`: copy of this (set_merge into an empty set), then merge other.
  PySetEmulation union_with(const PySetEmulation& other) const {
    PySetEmulation result;
    result.merge(*this);
    result.merge(other);
    return result;
  }

  std::vector<std::int64_t> items() const {
    std::vector<std::int64_t> out;
    for (auto k : table_) {
      if (k != 0) out.push_back(k);
    }
    return out;
  }

 private:
  static constexpr std::size_t kMinSize = 8;
  static constexpr std::size_t kLinearProbes = 9;
  static constexpr int kPerturbShift = 5;

  static void insert_clean(std::vector<std::int64_t>& table, std::int64_t key) {
    const std::size_t mask = table.size() - 1;
    std::size_t i = static_cast<std::size_t>(key) & mask;
    std::size_t perturb = static_cast<std::size_t>(key);
    for (;;) {
      if (table[i] == 0) {
        table[i] = key;
        return;
      }
      if (i + kLinearProbes <= mask) {
        for (std::size_t j = 1; j <= kLinearProbes; ++j) {
          if (table[i + j] == 0) {
            table[i + j] = key;
            return;
          }
        }
      }
      perturb >>= kPerturbShift;
      i = (i * 5 + 1 + perturb) & mask;
    }
  }

  void resize(std::size_t minused) {
    std::size_t size = kMinSize;
    while (size <= minused) size <<= 1;
    std::vector<std::int64_t> fresh(size, 0);
    for (auto k : table_) {
      if (k != 0) insert_clean(fresh, k);
    }
    table_ = std::move(fresh);
  }

  void merge(const PySetEmulation& other) {
    if (other.fill_ == 0) return;
    const std::size_t mask = table_.size() - 1;
    if ((fill_ + other.fill_) * 5 >= mask * 3) resize((fill_ + other.fill_) * 2);
    if (fill_ == 0 && table_.size() == other.table_.size()) {
      table_ = other.table_;
      fill_ = other.fill_;
      return;
    }
    if (fill_ == 0) {
      for (auto k : other.table_) {
        if (k != 0) insert_clean(table_, k);
      }
      fill_ = other.fill_;
      return;
    }
    for (auto k : other.table_) {
      if (k != 0) add(k);
    }
  }

  std::vector<std::int64_t> table_;
  std::size_t fill_ = 0;
};

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> out;
  const std::int64_t step = (n % 2) ? 2 : 1;
  const auto root = static_cast<std::int64_t>(std::sqrt(static_cast<double>(n)));
  for (std::int64_t i = 1; i <= root + 1; i += step) {
    if (i * i > n) break;
    if (n % i == 0) {
      out.push_back(i);
      out.push_back(n / i);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::int64_t> powers_of_two(std::int64_t n) {
  std::vector<std::int64_t> out;
  for (std::int64_t p = 1; p <= n; p *= 2) out.push_back(p);
  return out;
}

Status invalid_split(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}

}  // namespace

Expected<std::vector<std::int64_t>> split_factor_list(std::int64_t length, std::string_view policy,
                                                      bool cpython_set_order) {
  if (length < 1)
    return invalid_split(fmt::format("split: axis length must be >= 1, got {}", length));
  if (policy == "factors") return divisors(length);
  if (policy == "power2") return powers_of_two(length);
  if (policy == "verbose") {
    const auto d = divisors(length);
    const auto p = powers_of_two(length);
    if (cpython_set_order) {
      PySetEmulation a, b;
      for (auto x : d) a.add(x);
      for (auto x : p) b.add(x);
      return a.union_with(b).items();
    }
    std::vector<std::int64_t> all(d);
    all.insert(all.end(), p.begin(), p.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return all;
  }
  return invalid_split(
      fmt::format("split: unknown policy '{}' (factors, power2, verbose, candidate)", policy));
}

Expected<std::vector<std::vector<std::int64_t>>> enumerate_split(std::int64_t length,
                                                                 const SplitOptions& options) {
  if (options.num_outputs < 1) {
    return invalid_split(
        fmt::format("split: num_outputs must be >= 1, got {}", options.num_outputs));
  }
  if (length < 1)
    return invalid_split(fmt::format("split: axis length must be >= 1, got {}", length));
  std::vector<std::vector<std::int64_t>> out;
  if (options.policy == "candidate") {
    for (const auto& c : options.candidates) {
      if (static_cast<int>(c.size()) != options.num_outputs) {
        return invalid_split(fmt::format("split: candidate of length {} for num_outputs {}",
                                         c.size(), options.num_outputs));
      }
      out.push_back(c);
    }
  } else {
    auto factors = split_factor_list(length, options.policy, options.cpython_set_order);
    if (!factors) return factors.status();
    std::vector<std::int64_t> list;
    for (auto f : *factors) {
      if (f <= options.max_factor) list.push_back(f);
    }
    const bool no_tail = options.no_tail.value_or(options.policy == "factors");
    const int slots = options.num_outputs - 1;
    std::vector<std::int64_t> stack;
    // Iterative DFS over `slots` positions, slot 0 outermost.
    std::vector<std::size_t> pos(static_cast<std::size_t>(slots), 0);
    if (slots == 0) {
      out.push_back({-1});
    } else if (!list.empty()) {
      for (;;) {
        std::int64_t prod = 1;
        bool overflow = false;
        for (int s = 0; s < slots; ++s) {
          const std::int64_t f = list[pos[static_cast<std::size_t>(s)]];
          if (prod > length / f + 1) {
            overflow = true;
            break;
          }
          prod *= f;
        }
        if (!overflow && prod <= length && (length % prod == 0 || (!no_tail && prod < length))) {
          std::vector<std::int64_t> e;
          e.reserve(static_cast<std::size_t>(options.num_outputs));
          e.push_back(-1);
          for (int s = slots - 1; s >= 0; --s) e.push_back(list[pos[static_cast<std::size_t>(s)]]);
          out.push_back(std::move(e));
        }
        // Advance the innermost slot (the last one) fastest.
        int s = slots - 1;
        while (s >= 0) {
          auto& p = pos[static_cast<std::size_t>(s)];
          if (++p < list.size()) break;
          p = 0;
          --s;
        }
        if (s < 0) break;
      }
    }
  }
  if (options.filter) {
    std::erase_if(out, [&](const std::vector<std::int64_t>& e) { return !options.filter(e); });
  }
  if (out.empty()) {
    return invalid_split(fmt::format("split of length {} ({}, num_outputs {}) has no entity left",
                                     length, options.policy, options.num_outputs));
  }
  return out;
}

Expected<std::vector<std::int64_t>> fallback_split(std::int64_t length,
                                                   std::span<const std::int64_t> max_sizes) {
  if (max_sizes.empty()) return invalid_split("fallback_split: empty max_sizes");
  if (length < 1)
    return invalid_split(fmt::format("fallback_split: axis length must be >= 1, got {}", length));
  std::vector<std::int64_t> out(max_sizes.size(), 1);
  std::int64_t remaining = length;
  for (std::size_t i = max_sizes.size() - 1; i >= 1; --i) {
    const std::int64_t limit = max_sizes[i] < 0 ? remaining : max_sizes[i];
    std::int64_t best = 0;
    for (std::int64_t d : divisors(remaining)) {
      if (d <= limit) best = d;
    }
    if (best < 1) {
      return invalid_split(fmt::format("fallback_split: no divisor of {} is <= {} (output {})",
                                       remaining, limit, i));
    }
    out[i] = best;
    remaining /= best;
  }
  out[0] = remaining;
  return out;
}

Expected<std::vector<std::vector<int>>> enumerate_reorder(int num_axes,
                                                          const ReorderOptions& options) {
  if (num_axes < 1) return invalid_split(fmt::format("reorder: need >= 1 axis, got {}", num_axes));
  std::vector<int> identity(static_cast<std::size_t>(num_axes));
  std::iota(identity.begin(), identity.end(), 0);
  std::vector<std::vector<int>> out;
  if (options.policy == "identity") {
    out.push_back(identity);
  } else if (options.policy == "all") {
    std::vector<int> p = identity;
    do {
      out.push_back(p);
    } while (std::next_permutation(p.begin(), p.end()));
  } else if (options.policy == "interval_all" || options.policy == "interval") {
    const auto [b, e] = options.interval;
    if (b < 0 || e > num_axes || b >= e) {
      return invalid_split(
          fmt::format("reorder: bad interval [{}, {}) for {} axes", b, e, num_axes));
    }
    std::vector<int> p = identity;
    do {
      out.push_back(p);
    } while (std::next_permutation(p.begin() + b, p.begin() + e));
  } else if (options.policy == "candidate") {
    for (const auto& c : options.candidates) {
      std::vector<int> sorted = c;
      std::sort(sorted.begin(), sorted.end());
      if (sorted != identity)
        return invalid_split("reorder: a candidate is not a permutation of the axes");
      out.push_back(c);
    }
    if (out.empty()) return invalid_split("reorder: empty candidate list");
  } else {
    return invalid_split(fmt::format(
        "reorder: unknown policy '{}' (identity, all, interval_all, candidate)", options.policy));
  }
  return out;
}

Expected<std::vector<nlohmann::json>> enumerate_annotate(int num_axes,
                                                         const AnnotateOptions& options) {
  if (num_axes < 1) return invalid_split(fmt::format("annotate: need >= 1 axis, got {}", num_axes));
  std::vector<nlohmann::json> out;
  if (options.policy == "locate_cache") {
    const int k = options.num_anchor;
    if (k < 0 || k > num_axes)
      return invalid_split("annotate: locate_cache num_anchor out of range");
    std::vector<int> comb(static_cast<std::size_t>(k));
    std::iota(comb.begin(), comb.end(), 0);
    for (;;) {
      out.push_back(nlohmann::json(comb));
      int i = k - 1;
      while (i >= 0 && comb[static_cast<std::size_t>(i)] == num_axes - k + i) --i;
      if (i < 0) break;
      ++comb[static_cast<std::size_t>(i)];
      for (int j = i + 1; j < k; ++j)
        comb[static_cast<std::size_t>(j)] = comb[static_cast<std::size_t>(j - 1)] + 1;
    }
    return out;
  }
  if (options.policy.starts_with("bind_gpu")) {
    return invalid_split("annotate: policy '" + options.policy +
                         "' binds IR axes to GPU threads and has no meaning without a schedule");
  }
  std::vector<std::string> words;
  std::size_t start = 0;
  const std::string& p = options.policy;
  while (start <= p.size()) {
    const std::size_t end = std::min(p.find('_', start), p.size());
    std::string w = p.substr(start, end - start);
    if (w == "try") w = "none";
    if (w.empty()) return invalid_split("annotate: bad policy '" + p + "'");
    words.push_back(std::move(w));
    start = end + 1;
  }
  std::vector<std::size_t> digit(static_cast<std::size_t>(num_axes), 0);
  for (;;) {
    int vec_count = 0;
    nlohmann::json e = nlohmann::json::array();
    for (auto d : digit) {
      e.push_back(words[d]);
      vec_count += words[d] == "vec";
    }
    if (vec_count <= 1) out.push_back(std::move(e));
    int i = num_axes - 1;  // the last axis is the fastest digit
    while (i >= 0) {
      auto& d = digit[static_cast<std::size_t>(i)];
      if (++d < words.size()) break;
      d = 0;
      --i;
    }
    if (i < 0) break;
  }
  return out;
}

}  // namespace tunekit
