// ConfigSpace: knob definitions, mixed-radix index mapping, lazy constraint checks, sampling,
// neighbours, features, entity JSON and the definition hash.
#include "tunekit/space/config_space.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace tunekit {

namespace {

Status invalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}

std::size_t knob_feature_length(const Knob& k) {
  if (k.entities.empty()) return 0;
  const auto& e = k.entities.front();
  switch (k.kind) {
    case KnobKind::kSplit:
    case KnobKind::kReorder:
      return e.size();
    case KnobKind::kAnnotate:
      return (!e.empty() && e.front().is_string()) ? 11 * e.size() : e.size();
    case KnobKind::kOther:
      return 1;
  }
  return 0;
}

int annotation_slot(const std::string& a) {
  static constexpr std::string_view kNames[] = {
      "none",        "vec",         "unroll",      "blockIdx.x", "blockIdx.y", "blockIdx.z",
      "threadIdx.x", "threadIdx.y", "threadIdx.z", "vthread",    "fuse"};
  for (int i = 0; i < 11; ++i) {
    if (a == kNames[i]) return i;
  }
  return -1;
}

std::uint64_t fnv1a64(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

double number_of(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

// ---------------- Config / ConfigView ----------------

const nlohmann::json& Config::operator[](std::string_view name) const {
  TUNEKIT_CHECK(space_ != nullptr);
  auto k = space_->find_knob(name);
  if (!k) throw Error(StatusCode::kNotFound, fmt::format("config has no knob '{}'", name));
  return space_->knob(*k).entities[knobs_[*k]];
}

double Config::number(std::string_view name) const { return number_of((*this)[name]); }

std::vector<std::int64_t> Config::split(std::string_view name) const {
  const auto& v = (*this)[name];
  if (!v.is_array()) {
    throw Error(StatusCode::kInvalidArgument, fmt::format("knob '{}' is not a split", name));
  }
  return v.get<std::vector<std::int64_t>>();
}

nlohmann::json Config::to_json() const {
  TUNEKIT_CHECK(space_ != nullptr);
  nlohmann::json entity = nlohmann::json::array();
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    const Knob& knob = space_->knob(k);
    entity.push_back(nlohmann::json::array(
        {knob.name, std::string(knob_tag(knob.kind)), knob.entities[knobs_[k]]}));
  }
  return nlohmann::json{{"index", index_}, {"code_hash", nullptr}, {"entity", std::move(entity)}};
}

std::string Config::to_string() const {
  TUNEKIT_CHECK(space_ != nullptr);
  std::string out;
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    const Knob& knob = space_->knob(k);
    const auto& v = knob.entities[knobs_[k]];
    if (k) out += ',';
    out += knob.name;
    out += '=';
    out += v.is_string() ? v.get<std::string>() : v.dump();
  }
  return out;
}

const nlohmann::json& ConfigView::operator[](std::string_view name) const {
  auto k = space_.find_knob(name);
  if (!k) throw Error(StatusCode::kNotFound, fmt::format("config has no knob '{}'", name));
  return space_.knob(*k).entities[knobs_[*k]];
}

double ConfigView::number(std::string_view name) const { return number_of((*this)[name]); }

const ExprValue& ConfigView::value(std::size_t k) const noexcept {
  return space_.knob(k).values[knobs_[k]];
}

// ---------------- definition ----------------

Status ConfigSpace::add_knob(Knob knob, std::string_view what) {
  if (knob.name.empty()) return invalid(fmt::format("{}: empty knob name", what));
  if (find_knob(knob.name))
    return invalid(fmt::format("{}: knob '{}' is already defined", what, knob.name));
  if (knob.entities.empty())
    return invalid(fmt::format("{}: knob '{}' has no entity", what, knob.name));
  if (knob.entities.size() > std::numeric_limits<std::uint32_t>::max()) {
    return invalid(fmt::format("{}: knob '{}' has too many entities", what, knob.name));
  }
  const std::uint64_t n = knob.entities.size();
  if (range_length_ > (std::uint64_t{1} << 62) / n) {
    return invalid(
        fmt::format("{}: knob '{}' makes the space larger than 2^62 points", what, knob.name));
  }
  // Expression values (strings kept in shared, stable storage).
  auto strings = std::make_shared<std::vector<std::string>>();
  for (const auto& e : knob.entities) {
    if (knob.kind == KnobKind::kOther && e.is_string()) strings->push_back(e.get<std::string>());
  }
  knob.values.clear();
  std::size_t s = 0;
  for (std::size_t i = 0; i < knob.entities.size(); ++i) {
    const auto& e = knob.entities[i];
    if (knob.kind != KnobKind::kOther) {
      knob.values.push_back(ExprValue::of(static_cast<double>(i)));
    } else if (e.is_string()) {
      knob.values.push_back(ExprValue::of(std::string_view((*strings)[s++])));
    } else if (e.is_boolean() || e.is_number()) {
      knob.values.push_back(ExprValue::of(number_of(e)));
    } else {
      return invalid(fmt::format("{}: knob '{}' value {} is not a number, boolean or string", what,
                                 knob.name, e.dump()));
    }
  }
  knob.value_strings = std::move(strings);
  strides_.push_back(range_length_);
  range_length_ *= n;
  feature_length_ += knob_feature_length(knob);
  knobs_.push_back(std::move(knob));
  rebuild_checks();
  return Status::ok();
}

void ConfigSpace::rebuild_checks() {
  const std::size_t n = knobs_.size();
  checks_at_.assign(n, {});
  sample_order_.clear();
  sample_checks_.assign(n, {});
  std::vector<std::size_t> position(n, n);
  auto place = [&](std::size_t k) {
    if (position[k] == n) {
      position[k] = sample_order_.size();
      sample_order_.push_back(k);
    }
  };
  for (const auto& c : constraints_) {
    for (auto k : c.knobs) place(k);
  }
  for (std::size_t k = 0; k < n; ++k) place(k);
  for (std::size_t c = 0; c < constraints_.size() && n > 0; ++c) {
    const auto& ks = constraints_[c].knobs;
    const std::size_t last = ks.empty() ? n - 1 : *std::max_element(ks.begin(), ks.end());
    checks_at_[last].push_back(c);
    std::size_t at = n - 1;
    if (!ks.empty()) {
      at = 0;
      for (auto k : ks) at = std::max(at, position[k]);
    }
    sample_checks_[at].push_back(c);
  }
  valid_count_.reset();
}

Status ConfigSpace::define_split(const std::string& name, std::int64_t length,
                                 const SplitOptions& options) {
  auto entities = enumerate_split(length, options);
  if (!entities) {
    return Status(entities.status().code(),
                  "define_split '" + name + "': " + entities.status().message());
  }
  Knob k;
  k.name = name;
  k.kind = KnobKind::kSplit;
  for (auto& e : *entities) k.entities.emplace_back(e);
  k.definition = {{"policy", options.policy},
                  {"length", length},
                  {"num_outputs", options.num_outputs},
                  {"max_factor", options.max_factor},
                  {"no_tail", options.no_tail.value_or(options.policy == "factors")},
                  {"filter", options.filter ? options.filter_name : std::string()},
                  {"cpython_set_order", options.cpython_set_order}};
  return add_knob(std::move(k), "define_split");
}

Status ConfigSpace::define_reorder(const std::string& name, int num_axes,
                                   const ReorderOptions& options) {
  auto perms = enumerate_reorder(num_axes, options);
  if (!perms)
    return Status(perms.status().code(),
                  "define_reorder '" + name + "': " + perms.status().message());
  Knob k;
  k.name = name;
  k.kind = KnobKind::kReorder;
  for (auto& p : *perms) k.entities.emplace_back(p);
  k.definition = {{"policy", options.policy},
                  {"num_axes", num_axes},
                  {"interval", {options.interval.first, options.interval.second}}};
  return add_knob(std::move(k), "define_reorder");
}

Status ConfigSpace::define_annotate(const std::string& name, int num_axes,
                                    const AnnotateOptions& options) {
  auto anns = enumerate_annotate(num_axes, options);
  if (!anns)
    return Status(anns.status().code(),
                  "define_annotate '" + name + "': " + anns.status().message());
  Knob k;
  k.name = name;
  k.kind = KnobKind::kAnnotate;
  k.entities = std::move(*anns);
  k.definition = {
      {"policy", options.policy}, {"num_axes", num_axes}, {"num_anchor", options.num_anchor}};
  return add_knob(std::move(k), "define_annotate");
}

Status ConfigSpace::define_knob(const std::string& name, std::vector<nlohmann::json> values) {
  Knob k;
  k.name = name;
  k.kind = KnobKind::kOther;
  k.entities = std::move(values);
  k.definition = {{"policy", "candidate"}};
  return add_knob(std::move(k), "define_knob");
}

Status ConfigSpace::define_range(const std::string& name, std::int64_t begin, std::int64_t end,
                                 std::int64_t step) {
  if (step == 0) return invalid("define_range '" + name + "': step must not be 0");
  std::vector<nlohmann::json> values;
  for (std::int64_t v = begin; step > 0 ? v < end : v > end; v += step) {
    values.emplace_back(v);
    if (values.size() > (1u << 26)) return invalid("define_range '" + name + "': too many values");
  }
  return define_knob(name, std::move(values));
}

Status ConfigSpace::define_power2(const std::string& name, std::int64_t min_value,
                                  std::int64_t max_value) {
  if (min_value < 1) return invalid("define_power2 '" + name + "': min_value must be >= 1");
  std::vector<nlohmann::json> values;
  for (std::int64_t v = 1; v <= max_value && v > 0; v *= 2) {
    if (v >= min_value) values.emplace_back(v);
    if (v > std::numeric_limits<std::int64_t>::max() / 2) break;
  }
  return define_knob(name, std::move(values));
}

Status ConfigSpace::add_constraint(std::string description,
                                   const std::vector<std::string>& knob_names,
                                   std::function<bool(const ConfigView&)> predicate) {
  Constraint c;
  c.description = std::move(description);
  for (const auto& n : knob_names) {
    auto k = find_knob(n);
    if (!k) {
      return Status(StatusCode::kNotFound,
                    fmt::format("constraint '{}': unknown knob '{}'", c.description, n));
    }
    c.knobs.push_back(*k);
  }
  std::sort(c.knobs.begin(), c.knobs.end());
  c.knobs.erase(std::unique(c.knobs.begin(), c.knobs.end()), c.knobs.end());
  c.predicate = std::move(predicate);
  constraints_.push_back(std::move(c));
  rebuild_checks();
  return Status::ok();
}

Status ConfigSpace::add_restriction(std::string_view expression) {
  auto expr = Expression::parse(expression);
  if (!expr) return expr.status();
  std::vector<std::size_t> slots;
  std::vector<std::string> names;
  for (const auto& v : expr->variables()) {
    auto k = find_knob(v);
    if (!k) {
      std::string known;
      for (const auto& kn : knobs_) known += (known.empty() ? "" : ", ") + kn.name;
      return Status(StatusCode::kNotFound,
                    fmt::format("restriction '{}': unknown parameter '{}' (parameters: {})",
                                expression, v, known));
    }
    slots.push_back(*k);
    names.push_back(v);
  }
  auto predicate = [e = std::move(*expr), slots](const ConfigView& view) {
    std::array<ExprValue, 16> small;
    std::vector<ExprValue> large;
    std::span<ExprValue> values;
    if (slots.size() <= small.size()) {
      values = std::span<ExprValue>(small.data(), slots.size());
    } else {
      large.resize(slots.size());
      values = large;
    }
    for (std::size_t i = 0; i < slots.size(); ++i) values[i] = view.value(slots[i]);
    return e.test(values);
  };
  return add_constraint(std::string(expression), names, std::move(predicate));
}

// ---------------- shape and index mapping ----------------

std::optional<std::size_t> ConfigSpace::find_knob(std::string_view name) const noexcept {
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    if (knobs_[k].name == name) return k;
  }
  return std::nullopt;
}

std::vector<std::uint64_t> ConfigSpace::dims() const {
  std::vector<std::uint64_t> d;
  d.reserve(knobs_.size());
  for (const auto& k : knobs_) d.push_back(k.size());
  return d;
}

KnobVector ConfigSpace::index_to_knobs(std::uint64_t index) const {
  KnobVector out(knobs_.size());
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    const std::uint64_t d = knobs_[k].size();
    out[k] = static_cast<std::uint32_t>(index % d);
    index /= d;
  }
  return out;
}

std::uint64_t ConfigSpace::knobs_to_index(std::span<const std::uint32_t> knobs) const noexcept {
  std::uint64_t index = 0;
  for (std::size_t k = 0; k < knobs.size() && k < strides_.size(); ++k)
    index += knobs[k] * strides_[k];
  return index;
}

Expected<Config> ConfigSpace::get(std::uint64_t index) const {
  if (index >= range_length_) {
    return Status(StatusCode::kNotFound,
                  fmt::format("index {} out of range (range length {})", index, range_length_));
  }
  Config c = config_at(index);
  if (!is_valid(c.knobs())) {
    return Status(StatusCode::kNotFound, fmt::format("index {} violates a constraint", index));
  }
  return c;
}

// ---------------- validity ----------------

bool ConfigSpace::constraints_hold(std::span<const std::uint32_t> knobs, std::size_t k) const {
  if (k >= checks_at_.size()) return true;
  const ConfigView view(*this, knobs);
  for (auto c : checks_at_[k]) {
    if (!constraints_[c].predicate(view)) return false;
  }
  return true;
}

bool ConfigSpace::contains(std::span<const std::uint32_t> knobs) const noexcept {
  if (knobs.size() != knobs_.size()) return false;
  for (std::size_t k = 0; k < knobs.size(); ++k) {
    if (knobs[k] >= knobs_[k].size()) return false;
  }
  return true;
}

bool ConfigSpace::is_valid(std::span<const std::uint32_t> knobs) const {
  if (!contains(knobs)) return false;
  const ConfigView view(*this, knobs);
  for (const auto& c : constraints_) {
    if (!c.predicate(view)) return false;
  }
  return true;
}

bool ConfigSpace::is_valid(std::uint64_t index) const {
  if (index >= range_length_) return false;
  if (constraints_.empty()) return true;
  return is_valid(index_to_knobs(index));
}

std::uint64_t ConfigSpace::dfs_count(KnobVector& knobs, std::size_t depth) const {
  if (depth == knobs_.size()) return 1;
  std::uint64_t n = 0;
  const auto size = static_cast<std::uint32_t>(knobs_[depth].size());
  for (std::uint32_t e = 0; e < size; ++e) {
    knobs[depth] = e;
    if (constraints_hold(knobs, depth)) n += dfs_count(knobs, depth + 1);
  }
  return n;
}

std::uint64_t ConfigSpace::valid_count() const {
  if (!valid_count_) {
    if (constraints_.empty() || knobs_.empty()) {
      valid_count_ = knobs_.empty() ? (constraints_.empty() ? 1 : 0) : range_length_;
    } else {
      KnobVector knobs(knobs_.size(), 0);
      valid_count_ = dfs_count(knobs, 0);
    }
  }
  return *valid_count_;
}

std::uint64_t ConfigSpace::subrange_length(std::uint64_t begin, std::uint64_t end) const {
  end = std::min(end, range_length_);
  std::uint64_t n = 0;
  for (std::uint64_t i = begin; i < end; ++i) n += is_valid(i);
  return n;
}

std::optional<std::uint64_t> ConfigSpace::get_next_index(std::uint64_t index, std::int64_t n,
                                                         std::uint64_t begin,
                                                         std::optional<std::uint64_t> end) const {
  const std::uint64_t stop = std::min(end.value_or(range_length_), range_length_);
  if (n == 0) return index;
  std::int64_t remaining = n > 0 ? n : -n;
  std::uint64_t i = index;
  while (remaining > 0) {
    if (n > 0) {
      if (i + 1 >= stop) return std::nullopt;
      ++i;
    } else {
      if (i <= begin) return std::nullopt;
      --i;
    }
    if (i >= begin && is_valid(i)) --remaining;
  }
  return i;
}

// ---------------- random access ----------------

bool ConfigSpace::dfs_any(KnobVector& knobs, std::size_t depth, Rng* rng) const {
  if (depth == knobs_.size()) return true;
  const std::uint64_t size = knobs_[depth].size();
  const std::uint64_t start = rng ? rng->uniform(size) : 0;
  for (std::uint64_t j = 0; j < size; ++j) {
    knobs[depth] = static_cast<std::uint32_t>((start + j) % size);
    if (constraints_hold(knobs, depth) && dfs_any(knobs, depth + 1, rng)) return true;
  }
  return false;
}

Expected<Config> ConfigSpace::random_valid(Rng& rng, std::uint64_t max_attempts) const {
  KnobVector knobs(knobs_.size(), 0);
  for (std::uint64_t attempt = 0; attempt < max_attempts; ++attempt) {
    bool ok = true;
    for (std::size_t i = 0; i < sample_order_.size() && ok; ++i) {
      const std::size_t k = sample_order_[i];
      knobs[k] = static_cast<std::uint32_t>(rng.uniform(knobs_[k].size()));
      if (!sample_checks_[i].empty()) {
        const ConfigView view(*this, knobs);
        for (auto c : sample_checks_[i]) {
          if (!constraints_[c].predicate(view)) {
            ok = false;
            break;
          }
        }
      }
    }
    if (ok && (!knobs_.empty() || constraints_.empty())) return config_of(std::move(knobs));
    if (knobs_.empty()) break;
  }
  if (!knobs_.empty() && dfs_any(knobs, 0, &rng)) return config_of(std::move(knobs));
  return Status(StatusCode::kNotFound, "the config space has no valid point");
}

Expected<std::uint64_t> ConfigSpace::random_valid_index(
    Rng& rng, std::uint64_t begin, std::uint64_t end,
    const std::function<bool(std::uint64_t)>& exclude, std::uint64_t max_attempts) const {
  end = std::min(end, range_length_);
  if (begin >= end) return Status(StatusCode::kNotFound, "empty index range");
  for (std::uint64_t attempt = 0; attempt < max_attempts; ++attempt) {
    const std::uint64_t i = begin + rng.uniform(end - begin);
    if ((!exclude || !exclude(i)) && is_valid(i)) return i;
  }
  return Status(
      StatusCode::kNotFound,
      fmt::format("no valid index found in [{}, {}) after {} draws", begin, end, max_attempts));
}

std::vector<Config> ConfigSpace::sample_valid(std::size_t m, Rng& rng) const {
  std::vector<Config> out;
  std::unordered_set<std::uint64_t> seen;
  std::size_t misses = 0;
  const std::size_t max_misses = 64 * m + 10000;
  while (out.size() < m && misses < max_misses) {
    auto c = random_valid(rng, 100000);
    if (!c) break;
    if (seen.insert(c->index()).second) {
      out.push_back(std::move(*c));
      misses = 0;
    } else {
      ++misses;
    }
  }
  if (out.size() < m && range_length_ <= (std::uint64_t{1} << 24)) {
    // Nearly exhausted small space: enumerate the remaining valid indices.
    std::vector<std::uint64_t> rest;
    for (std::uint64_t i = 0; i < range_length_; ++i) {
      if (!seen.count(i) && is_valid(i)) rest.push_back(i);
    }
    rng.shuffle(rest);
    for (std::size_t i = 0; i < rest.size() && out.size() < m; ++i)
      out.push_back(config_at(rest[i]));
  }
  return out;
}

Config ConfigSpace::random_walk(const Config& config, Rng& rng, int max_attempts) const {
  std::vector<std::size_t> movable;
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    if (knobs_[k].size() > 1) movable.push_back(k);
  }
  if (movable.empty()) return config;
  KnobVector knobs = config.knobs();
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    const std::size_t k = movable[rng.uniform(movable.size())];
    const auto old = knobs[k];
    auto v = static_cast<std::uint32_t>(rng.uniform(knobs_[k].size() - 1));
    if (v >= old) ++v;
    knobs[k] = v;
    if (is_valid(knobs)) return config_of(std::move(knobs));
    knobs[k] = old;
  }
  return config;
}

std::vector<Config> ConfigSpace::neighbours(const Config& config, NeighbourKind kind) const {
  std::vector<Config> out;
  KnobVector knobs = config.knobs();
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    const auto old = knobs[k];
    const auto size = static_cast<std::uint32_t>(knobs_[k].size());
    auto try_value = [&](std::uint32_t v) {
      knobs[k] = v;
      if (is_valid(knobs)) out.push_back(config_of(knobs));
    };
    if (kind == NeighbourKind::kHamming) {
      for (std::uint32_t v = 0; v < size; ++v) {
        if (v != old) try_value(v);
      }
    } else {
      if (old > 0) try_value(old - 1);
      if (old + 1 < size) try_value(old + 1);
    }
    knobs[k] = old;
  }
  return out;
}

Status ConfigSpace::fallback_split(KnobVector& knobs, std::string_view name,
                                   std::span<const std::int64_t> max_sizes) const {
  auto k = find_knob(name);
  if (!k || knobs_[*k].kind != KnobKind::kSplit) {
    return Status(StatusCode::kNotFound, fmt::format("fallback_split: no split knob '{}'", name));
  }
  const Knob& knob = knobs_[*k];
  const auto length = knob.definition.value("length", std::int64_t{0});
  auto sizes = tunekit::fallback_split(length, max_sizes);
  if (!sizes) return sizes.status();
  for (std::uint32_t e = 0; e < knob.entities.size(); ++e) {
    const auto& ent = knob.entities[e];
    if (ent.size() != sizes->size()) continue;
    bool same = true;
    for (std::size_t i = 1; i < sizes->size() && same; ++i)
      same = ent[i].get<std::int64_t>() == (*sizes)[i];
    if (same) {
      if (knobs.size() != knobs_.size()) knobs.assign(knobs_.size(), 0);
      knobs[*k] = e;
      return Status::ok();
    }
  }
  return Status(StatusCode::kNotFound,
                fmt::format("fallback_split: sizes {} are not an entity of split '{}'",
                            nlohmann::json(*sizes).dump(), name));
}

// ---------------- features, JSON, hash ----------------

std::vector<float> ConfigSpace::flatten_feature(std::span<const std::uint32_t> knobs) const {
  std::vector<float> f;
  f.reserve(feature_length_);
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    const Knob& knob = knobs_[k];
    const auto& e = knob.entities[knobs[k]];
    switch (knob.kind) {
      case KnobKind::kSplit:
      case KnobKind::kReorder:
        for (const auto& x : e) f.push_back(static_cast<float>(x.get<double>()));
        break;
      case KnobKind::kAnnotate:
        if (!e.empty() && e.front().is_string()) {
          for (const auto& a : e) {
            const int slot = annotation_slot(a.get<std::string>());
            for (int i = 0; i < 11; ++i) f.push_back(i == slot ? 1.0f : 0.0f);
          }
        } else {
          for (const auto& x : e) f.push_back(static_cast<float>(x.get<double>()));
        }
        break;
      case KnobKind::kOther: {
        const ExprValue& v = knob.values[knobs[k]];
        f.push_back(v.is_number() ? static_cast<float>(v.number) : static_cast<float>(knobs[k]));
        break;
      }
    }
  }
  return f;
}

Expected<Config> ConfigSpace::from_entity_json(const nlohmann::json& entity) const {
  if (!entity.is_array()) return Status(StatusCode::kParseError, "config entity is not a list");
  KnobVector knobs(knobs_.size(), 0);
  std::vector<bool> seen(knobs_.size(), false);
  for (const auto& item : entity) {
    if (!item.is_array() || item.size() != 3 || !item[0].is_string() || !item[1].is_string()) {
      return Status(StatusCode::kParseError,
                    "config entity item is not [name, tag, payload]: " + item.dump());
    }
    const auto name = item[0].get<std::string>();
    auto k = find_knob(name);
    if (!k) {
      return Status(StatusCode::kNotFound,
                    fmt::format("record knob '{}' is not in this config space (a log from another "
                                "template version?)",
                                name));
    }
    const Knob& knob = knobs_[*k];
    if (item[1].get<std::string>() != knob_tag(knob.kind)) {
      return Status(StatusCode::kNotFound,
                    fmt::format("record knob '{}' has tag '{}', the space has '{}'", name,
                                item[1].get<std::string>(), knob_tag(knob.kind)));
    }
    const auto& payload = item[2];
    std::optional<std::uint32_t> pos;
    for (std::uint32_t e = 0; e < knob.entities.size() && !pos; ++e) {
      const auto& cand = knob.entities[e];
      if (knob.kind == KnobKind::kSplit && payload.is_array() && cand.size() == payload.size() &&
          !payload.empty()) {
        if (std::equal(cand.begin() + 1, cand.end(), payload.begin() + 1)) pos = e;
      } else if (cand == payload) {
        pos = e;
      }
    }
    if (!pos) {
      return Status(StatusCode::kNotFound,
                    fmt::format("record value {} of knob '{}' is not in this config space",
                                payload.dump(), name));
    }
    knobs[*k] = *pos;
    seen[*k] = true;
  }
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    if (!seen[k]) {
      return Status(StatusCode::kNotFound,
                    fmt::format("record has no value for knob '{}'", knobs_[k].name));
    }
  }
  return config_of(std::move(knobs));
}

nlohmann::json ConfigSpace::definition_json() const {
  nlohmann::json knobs = nlohmann::json::array();
  for (const auto& k : knobs_) {
    knobs.push_back({{"name", k.name},
                     {"kind", std::string(knob_tag(k.kind))},
                     {"definition", k.definition},
                     {"entities", k.entities}});
  }
  nlohmann::json constraints = nlohmann::json::array();
  for (const auto& c : constraints_) constraints.push_back(c.description);
  return {{"knobs", std::move(knobs)}, {"constraints", std::move(constraints)}};
}

std::string ConfigSpace::hash() const {
  return fmt::format("{:016x}", fnv1a64(definition_json().dump()));
}

}  // namespace tunekit
