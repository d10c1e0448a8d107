// ForestModel (random-forest regression with binned histogram splits, bootstrap per tree and
// random feature subsets) and BoostedTreesModel (gradient-boosted regression trees with
// XGBoost's regularised gain). See include/tunekit/search/forest_model.hpp.
#include "tunekit/search/forest_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tunekit {

namespace {

/// Features binned for histogram splits: per feature, the cut points (midpoints between
/// consecutive distinct values, quantised to at most `max_bins` bins) and every row's bin,
/// column-major (bins[f * rows + r]).
struct BinnedFeatures {
  std::vector<std::vector<float>> cuts;
  std::vector<std::uint16_t> bins;
  /// Bins every row of `x` (max_bins is clamped to [2, 65535]).
  static BinnedFeatures of(const FeatureMatrix& x, std::size_t max_bins);
};

/// Sums of two per-row statistics over rows[begin, end) of a tree node.
std::pair<double, double> node_sums(const std::vector<std::uint32_t>& rows, std::size_t begin,
                                    std::size_t end, std::span<const double> a,
                                    std::span<const double> b) {
  double sa = 0.0, sb = 0.0;
  for (std::size_t i = begin; i < end; ++i) {
    sa += a[rows[i]];
    sb += b[rows[i]];
  }
  return {sa, sb};
}

/// Per-bin sums of two per-row statistics over rows[begin, end) of one feature's bin column:
/// the first `bins` entries of `ha` and `hb` are overwritten.
void bin_sums(const std::uint16_t* column, const std::vector<std::uint32_t>& rows,
              std::size_t begin, std::size_t end, std::span<const double> a,
              std::span<const double> b, std::size_t bins, std::vector<double>& ha,
              std::vector<double>& hb) {
  std::fill_n(ha.begin(), bins, 0.0);
  std::fill_n(hb.begin(), bins, 0.0);
  for (std::size_t i = begin; i < end; ++i) {
    const std::uint32_t r = rows[i];
    ha[column[r]] += a[r];
    hb[column[r]] += b[r];
  }
}

/// Reorders rows[begin, end) so that those whose bin in `column` is <= `bin` come first;
/// returns where the others start.
std::size_t partition_rows(const std::uint16_t* column, std::vector<std::uint32_t>& rows,
                           std::size_t begin, std::size_t end, std::size_t bin) {
  auto mid = std::partition(rows.begin() + static_cast<std::ptrdiff_t>(begin),
                            rows.begin() + static_cast<std::ptrdiff_t>(end),
                            [&](std::uint32_t r) { return column[r] <= bin; });
  return static_cast<std::size_t>(mid - rows.begin());
}

struct TreeBuilder {
  const std::vector<std::uint16_t>& bins;       // column-major: bins[f * rows + r]
  const std::vector<std::vector<float>>& cuts;  // per feature: thresholds between bins
  std::span<const double> y;
  std::span<const double> w;
  std::span<const double> wy;  // w * y per row
  std::size_t n_rows;
  const ForestSettings& s;
  Rng& rng;
  std::vector<std::size_t> features;  // features with at least one cut
  std::vector<double> hist_sum, hist_w;

  template <class Tree>
  std::int32_t build(Tree& tree, std::vector<std::uint32_t>& rows, std::size_t begin,
                     std::size_t end, std::size_t depth) {
    const auto [sw, sy] = node_sums(rows, begin, end, w, wy);
    const auto id = static_cast<std::int32_t>(tree.size());
    tree.emplace_back();
    tree[static_cast<std::size_t>(id)].value = sw > 0 ? sy / sw : 0.0;
    const std::size_t n = end - begin;
    if (n < s.min_samples_split || depth >= s.max_depth || features.empty()) return id;
    bool constant = true;
    for (std::size_t i = begin + 1; i < end && constant; ++i)
      constant = y[rows[i]] == y[rows[begin]];
    if (constant) return id;

    // Random feature subset (partial Fisher-Yates).
    const std::size_t mtry = std::max<std::size_t>(
        1, static_cast<std::size_t>(
               std::ceil(s.feature_fraction * static_cast<double>(features.size()))));
    for (std::size_t k = 0; k < mtry; ++k) {
      const std::size_t j = k + static_cast<std::size_t>(rng.uniform(features.size() - k));
      std::swap(features[k], features[j]);
    }
    double best_gain = 0.0;
    std::size_t best_f = 0, best_b = 0;
    const double base = sw > 0 ? sy * sy / sw : 0.0;
    for (std::size_t k = 0; k < mtry; ++k) {
      const std::size_t f = features[k];
      const std::size_t nb = cuts[f].size() + 1;
      bin_sums(bins.data() + f * n_rows, rows, begin, end, wy, w, nb, hist_sum, hist_w);
      double lw = 0.0, ls = 0.0;
      for (std::size_t b = 0; b + 1 < nb; ++b) {
        lw += hist_w[b];
        ls += hist_sum[b];
        const double rw = sw - lw, rs = sy - ls;
        if (lw < static_cast<double>(s.min_samples_leaf) ||
            rw < static_cast<double>(s.min_samples_leaf))
          continue;
        const double gain = ls * ls / lw + rs * rs / rw - base;
        if (gain > best_gain + 1e-12) {
          best_gain = gain;
          best_f = f;
          best_b = b;
        }
      }
    }
    if (best_gain <= 0.0) return id;
    const std::size_t split =
        partition_rows(bins.data() + best_f * n_rows, rows, begin, end, best_b);
    if (split == begin || split == end) return id;
    const std::int32_t left = build(tree, rows, begin, split, depth + 1);
    const std::int32_t right = build(tree, rows, split, end, depth + 1);
    auto& node = tree[static_cast<std::size_t>(id)];
    node.feature = static_cast<std::int32_t>(best_f);
    node.threshold = cuts[best_f][best_b];
    node.left = left;
    node.right = right;
    return id;
  }
};

}  // namespace

BinnedFeatures BinnedFeatures::of(const FeatureMatrix& x, std::size_t max_bins) {
  // Distinct values per feature (quantised beyond max_bins), cut points at midpoints.
  const std::size_t n = x.rows, cols = x.cols;
  BinnedFeatures out;
  out.cuts.resize(cols);
  out.bins.resize(n * cols);
  max_bins = std::clamp<std::size_t>(max_bins, 2, 65535);
  std::vector<float> v(n);
  for (std::size_t f = 0; f < cols; ++f) {
    for (std::size_t r = 0; r < n; ++r) v[r] = x.data[r * cols + f];
    std::sort(v.begin(), v.end());
    const auto distinct = static_cast<std::size_t>(std::unique(v.begin(), v.end()) - v.begin());
    std::vector<float> uniq;
    if (distinct <= max_bins) {
      uniq.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(distinct));
    } else {
      for (std::size_t b = 0; b < max_bins; ++b)
        uniq.push_back(v[(b * (distinct - 1)) / (max_bins - 1)]);
      uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
    }
    auto& cuts = out.cuts[f];
    for (std::size_t b = 0; b + 1 < uniq.size(); ++b)
      cuts.push_back(0.5f * (uniq[b] + uniq[b + 1]));
    for (std::size_t r = 0; r < n; ++r) {
      const float value = x.data[r * cols + f];
      out.bins[f * n + r] = static_cast<std::uint16_t>(
          std::lower_bound(cuts.begin(), cuts.end(), value) - cuts.begin());
    }
  }
  return out;
}

Status ForestModel::fit(const FeatureMatrix& x, std::span<const double> y,
                        std::span<const double> base_margin, std::span<const double> weights) {
  trees_.assign(settings_.trees, Tree{});
  next_tree_ = 0;
  Status st = build(x, y, base_margin, weights, 0, settings_.trees);
  // A failed fit leaves no model: empty trees must not pass for fitted ones in predict().
  if (!st) trees_.clear();
  return st;
}

Status ForestModel::refresh(const FeatureMatrix& x, std::span<const double> y, std::size_t count) {
  if (trees_.size() != settings_.trees || x.cols != cols_) return fit(x, y);
  count = std::clamp<std::size_t>(count, 1, trees_.size());
  const std::size_t first = next_tree_;
  next_tree_ = (next_tree_ + count) % trees_.size();
  return build(x, y, {}, {}, first, count);
}

Status ForestModel::build(const FeatureMatrix& x, std::span<const double> y,
                          std::span<const double> base_margin, std::span<const double> weights,
                          std::size_t first, std::size_t count) {
  if (x.rows == 0 || x.rows != y.size() || x.data.size() != x.rows * x.cols ||
      (!base_margin.empty() && base_margin.size() != x.rows) ||
      (!weights.empty() && weights.size() != x.rows)) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("forest fit: {} rows, {} labels, {} margins, {} weights", x.rows,
                              y.size(), base_margin.size(), weights.size()));
  }
  if (settings_.trees == 0)
    return Status(StatusCode::kInvalidArgument, "forest: trees must be >= 1");
  // The split's feature subset holds ceil(fraction * features) of them: more than there are
  // (or a negative count) would draw features out of range.
  if (!(settings_.feature_fraction > 0.0 && settings_.feature_fraction <= 1.0)) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("forest: feature_fraction must be in (0, 1], got {}",
                              settings_.feature_fraction));
  }
  if (settings_.min_samples_leaf == 0)
    return Status(StatusCode::kInvalidArgument, "forest: min_samples_leaf must be >= 1");
  const std::size_t n = x.rows, cols = x.cols;
  std::vector<double> target(y.begin(), y.end());
  for (std::size_t i = 0; i < base_margin.size(); ++i) target[i] -= base_margin[i];
  std::vector<double> w(n, 1.0);
  if (!weights.empty()) w.assign(weights.begin(), weights.end());

  auto binned = BinnedFeatures::of(x, settings_.max_bins);
  const auto& cuts = binned.cuts;
  const auto& bins = binned.bins;
  Rng rng(settings_.seed * 0x9E3779B97F4A7C15ULL + ++fit_count_);
  std::vector<double> wy(n);
  for (std::size_t r = 0; r < n; ++r) wy[r] = w[r] * target[r];
  TreeBuilder b{bins, cuts, target, w, wy, n, settings_, rng, {}, {}, {}};
  std::size_t widest = 1;
  for (std::size_t f = 0; f < cols; ++f) {
    if (!cuts[f].empty()) b.features.push_back(f);
    widest = std::max(widest, cuts[f].size() + 1);
  }
  b.hist_sum.resize(widest);
  b.hist_w.resize(widest);
  std::vector<std::uint32_t> rows;
  for (std::size_t t = 0; t < count; ++t) {
    Tree& tree = trees_[(first + t) % trees_.size()];
    tree.clear();
    rows.clear();
    for (std::size_t i = 0; i < n; ++i)
      rows.push_back(static_cast<std::uint32_t>(rng.uniform(n)));  // bootstrap
    tree.reserve(2 * n);
    b.build(tree, rows, 0, rows.size(), 0);
  }
  cols_ = cols;
  return Status::ok();
}

double ForestModel::predict_tree(const Tree& tree, const float* row) const noexcept {
  std::size_t i = 0;
  while (tree[i].feature >= 0) {
    const Node& node = tree[i];
    i = static_cast<std::size_t>(row[node.feature] <= node.threshold ? node.left : node.right);
  }
  return tree[i].value;
}

Expected<std::vector<double>> ForestModel::predict(const FeatureMatrix& x,
                                                   std::span<const double> base_margin) const {
  std::vector<double> mean, sd;
  Status st = predict_spread(x, mean, sd);
  if (!st) return st;
  for (std::size_t i = 0; i < base_margin.size() && i < mean.size(); ++i) mean[i] += base_margin[i];
  return mean;
}

Status ForestModel::predict_spread(const FeatureMatrix& x, std::vector<double>& mean,
                                   std::vector<double>& stddev) const {
  if (trees_.empty()) return Status(StatusCode::kInvalidArgument, "forest: predict before fit");
  if (x.rows > 0 && x.cols != cols_) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("forest: {} features per row, trained on {}", x.cols, cols_));
  }
  mean.assign(x.rows, 0.0);
  stddev.assign(x.rows, 0.0);
  const double k = static_cast<double>(trees_.size());
  for (std::size_t r = 0; r < x.rows; ++r) {
    const float* row = x.data.data() + r * x.cols;
    double s = 0.0, s2 = 0.0;
    for (const auto& t : trees_) {
      const double v = predict_tree(t, row);
      s += v;
      s2 += v * v;
    }
    mean[r] = s / k;
    stddev[r] = std::sqrt(std::max(0.0, s2 / k - mean[r] * mean[r]));
  }
  return Status::ok();
}

Status ForestModel::predict_sample(const FeatureMatrix& x, std::size_t k, Rng& rng,
                                   std::vector<double>& out) const {
  if (trees_.empty()) return Status(StatusCode::kInvalidArgument, "forest: predict before fit");
  if (x.rows > 0 && x.cols != cols_) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("forest: {} features per row, trained on {}", x.cols, cols_));
  }
  k = std::clamp<std::size_t>(k, 1, trees_.size());
  std::vector<std::size_t> pick(trees_.size());
  std::iota(pick.begin(), pick.end(), 0);
  for (std::size_t i = 0; i < k; ++i)
    std::swap(pick[i], pick[i + static_cast<std::size_t>(rng.uniform(pick.size() - i))]);
  out.assign(x.rows, 0.0);
  for (std::size_t r = 0; r < x.rows; ++r) {
    const float* row = x.data.data() + r * x.cols;
    double s = 0.0;
    for (std::size_t i = 0; i < k; ++i) s += predict_tree(trees_[pick[i]], row);
    out[r] = s / static_cast<double>(k);
  }
  return Status::ok();
}

namespace {

/// Depth-first builder of one boosted tree on gradients g and hessians h.
struct BoostBuilder {
  const BinnedFeatures& binned;
  std::size_t n_rows;
  const BoostedTreesSettings& s;
  std::span<const double> g, h;
  std::span<double> pred;  // training predictions, updated at the leaves
  std::vector<RegressionTreeNode>& nodes;
  std::vector<std::size_t> features;  // features with at least one cut
  std::vector<double> hist_g, hist_h;

  static double score(double gs, double hs, double lambda) { return gs * gs / (hs + lambda); }

  std::int32_t build(std::vector<std::uint32_t>& rows, std::size_t begin, std::size_t end,
                     std::size_t depth) {
    const auto [gs, hs] = node_sums(rows, begin, end, g, h);
    const auto id = static_cast<std::int32_t>(nodes.size());
    nodes.emplace_back();
    double best_gain = s.gamma;
    std::size_t best_f = 0, best_b = 0;
    bool found = false;
    if (depth < s.max_depth && end - begin >= 2) {
      const double parent = score(gs, hs, s.lambda);
      for (std::size_t f : features) {
        const std::size_t nb = binned.cuts[f].size() + 1;
        bin_sums(binned.bins.data() + f * n_rows, rows, begin, end, g, h, nb, hist_g, hist_h);
        double gl = 0.0, hl = 0.0;
        for (std::size_t b = 0; b + 1 < nb; ++b) {
          gl += hist_g[b];
          hl += hist_h[b];
          const double hr = hs - hl;
          if (hl < s.min_child_weight || hr < s.min_child_weight) continue;
          const double gain = score(gl, hl, s.lambda) + score(gs - gl, hr, s.lambda) - parent;
          if (gain > best_gain) {
            best_gain = gain;
            best_f = f;
            best_b = b;
            found = true;
          }
        }
      }
    }
    if (found) {
      const std::size_t split =
          partition_rows(binned.bins.data() + best_f * n_rows, rows, begin, end, best_b);
      const std::int32_t left = build(rows, begin, split, depth + 1);
      const std::int32_t right = build(rows, split, end, depth + 1);
      auto& node = nodes[static_cast<std::size_t>(id)];
      node.feature = static_cast<std::int32_t>(best_f);
      node.threshold = binned.cuts[best_f][best_b];
      node.left = left;
      node.right = right;
      return id;
    }
    const double value = -s.eta * gs / (hs + s.lambda);
    nodes[static_cast<std::size_t>(id)].value = value;
    for (std::size_t i = begin; i < end; ++i) pred[rows[i]] += value;
    return id;
  }
};

}  // namespace

Status BoostedTreesModel::fit(const FeatureMatrix& x, std::span<const double> y,
                              std::span<const double> base_margin,
                              std::span<const double> weights) {
  if (x.rows == 0 || x.rows != y.size() || x.data.size() != x.rows * x.cols ||
      (!base_margin.empty() && base_margin.size() != x.rows) ||
      (!weights.empty() && weights.size() != x.rows)) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("boosted trees fit: {} rows, {} labels, {} margins, {} weights",
                              x.rows, y.size(), base_margin.size(), weights.size()));
  }
  if (settings_.rounds == 0 || settings_.max_depth == 0 || settings_.max_depth > 12 ||
      !(settings_.lambda >= 0.0) || !(settings_.gamma >= 0.0) ||
      !(settings_.min_child_weight >= 0.0) || !(settings_.eta > 0.0)) {
    return Status(
        StatusCode::kInvalidArgument,
        "boosted trees: need rounds >= 1, 1 <= max_depth <= 12, eta > 0, lambda >= 0, gamma >= 0, "
        "min_child_weight >= 0");
  }
  const std::size_t n = x.rows;
  std::vector<double> target(y.begin(), y.end());
  for (std::size_t i = 0; i < base_margin.size(); ++i) target[i] -= base_margin[i];
  std::vector<double> w(n, 1.0);
  if (!weights.empty()) w.assign(weights.begin(), weights.end());
  std::vector<std::uint32_t> active;
  double sw = 0.0, swt = 0.0;
  for (std::size_t r = 0; r < n; ++r) {
    if (!(w[r] > 0.0)) continue;
    active.push_back(static_cast<std::uint32_t>(r));
    sw += w[r];
    swt += w[r] * target[r];
  }
  if (active.empty())
    return Status(StatusCode::kInvalidArgument, "boosted trees fit: no row has a positive weight");

  const BinnedFeatures binned = BinnedFeatures::of(x, settings_.max_bins);
  base_ = swt / sw;
  const std::size_t depth = settings_.max_depth;
  const std::size_t internal = (std::size_t{1} << depth) - 1, leaves = internal + 1;
  feature_.assign(settings_.rounds * internal, 0);
  threshold_.assign(settings_.rounds * internal, std::numeric_limits<float>::infinity());
  leaf_.assign(settings_.rounds * leaves, 0.0);
  fitted_ = false;
  std::vector<double> pred(n, base_), g(n, 0.0), h(n, 0.0);
  std::vector<RegressionTreeNode> nodes;
  BoostBuilder b{binned, n, settings_, g, h, pred, nodes, {}, {}, {}};
  std::size_t widest = 1;
  for (std::size_t f = 0; f < x.cols; ++f) {
    if (!binned.cuts[f].empty()) b.features.push_back(f);
    widest = std::max(widest, binned.cuts[f].size() + 1);
  }
  b.hist_g.resize(widest);
  b.hist_h.resize(widest);
  std::vector<std::uint32_t> rows;
  for (std::size_t t = 0; t < settings_.rounds; ++t) {
    for (auto r : active) {
      g[r] = w[r] * (pred[r] - target[r]);
      h[r] = w[r];
    }
    rows = active;
    nodes.clear();
    b.build(rows, 0, rows.size(), 0);
    // Lay the tree out complete: node at position pos has children 2 pos + 1 and 2 pos + 2.
    std::int32_t* feature = feature_.data() + t * internal;
    float* threshold = threshold_.data() + t * internal;
    double* leaf = leaf_.data() + t * leaves;
    auto place = [&](auto&& self, std::size_t id, std::size_t pos) -> void {
      const auto& node = nodes[id];
      if (pos >= internal) {
        leaf[pos - internal] = node.value;
        return;
      }
      if (node.feature >= 0) {
        feature[pos] = node.feature;
        threshold[pos] = node.threshold;
        self(self, static_cast<std::size_t>(node.left), 2 * pos + 1);
        self(self, static_cast<std::size_t>(node.right), 2 * pos + 2);
      } else {  // a leaf above max_depth: every row goes left, to copies of it
        self(self, id, 2 * pos + 1);
        self(self, id, 2 * pos + 2);
      }
    };
    place(place, 0, 0);
  }
  cols_ = x.cols;
  fitted_ = true;
  return Status::ok();
}

Expected<std::vector<double>> BoostedTreesModel::predict(
    const FeatureMatrix& x, std::span<const double> base_margin) const {
  if (!fitted_) return Status(StatusCode::kInvalidArgument, "boosted trees: predict before fit");
  if (!base_margin.empty() && base_margin.size() != x.rows) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("boosted trees: {} margins for {} rows", base_margin.size(), x.rows));
  }
  if (x.rows > 0 && x.cols != cols_) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("boosted trees: {} features per row, trained on {}", x.cols, cols_));
  }
  const std::size_t depth = settings_.max_depth;
  const std::size_t internal = (std::size_t{1} << depth) - 1, leaves = internal + 1;
  std::vector<double> out(x.rows, base_);
  for (std::size_t r = 0; r < x.rows; ++r) {
    const float* row = x.data.data() + r * x.cols;
    double sum = base_;
    for (std::size_t t = 0; t < settings_.rounds; ++t) {
      const std::int32_t* feature = feature_.data() + t * internal;
      const float* threshold = threshold_.data() + t * internal;
      std::size_t pos = cols_ == 0 ? internal : 0;  // no features: every tree is one leaf
      for (std::size_t d = 0; d < depth && pos < internal; ++d)
        pos = 2 * pos + 1 + static_cast<std::size_t>(row[feature[pos]] > threshold[pos]);
      sum += leaf_[t * leaves + pos - internal];
    }
    out[r] = sum + (base_margin.empty() ? 0.0 : base_margin[r]);
  }
  return out;
}

}  // namespace tunekit
