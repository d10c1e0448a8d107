// ForestModel: random-forest regression with binned histogram splits (variance reduction),
// bootstrap per tree and random feature subsets. See include/tunekit/search/forest_model.hpp.
#include "tunekit/search/forest_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tunekit {

namespace {

struct Builder {
  const std::vector<std::uint16_t>& bins;  // column-major: bins[f * rows + r]
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
  std::int32_t build(Tree& tree, std::vector<std::uint32_t>& rows, std::size_t begin, std::size_t end, std::size_t depth) {
    double sw = 0.0, sy = 0.0;
    for (std::size_t i = begin; i < end; ++i) {
      sw += w[rows[i]];
      sy += wy[rows[i]];
    }
    const auto id = static_cast<std::int32_t>(tree.size());
    tree.emplace_back();
    tree[static_cast<std::size_t>(id)].value = sw > 0 ? sy / sw : 0.0;
    const std::size_t n = end - begin;
    if (n < s.min_samples_split || depth >= s.max_depth || features.empty()) return id;
    bool constant = true;
    for (std::size_t i = begin + 1; i < end && constant; ++i) constant = y[rows[i]] == y[rows[begin]];
    if (constant) return id;

    // Random feature subset (partial Fisher-Yates).
    const std::size_t mtry =
        std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(s.feature_fraction * static_cast<double>(features.size()))));
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
      std::fill_n(hist_sum.begin(), nb, 0.0);
      std::fill_n(hist_w.begin(), nb, 0.0);
      const std::uint16_t* column = bins.data() + f * n_rows;
      for (std::size_t i = begin; i < end; ++i) {
        const std::uint32_t r = rows[i];
        const std::uint16_t b = column[r];
        hist_sum[b] += wy[r];
        hist_w[b] += w[r];
      }
      double lw = 0.0, ls = 0.0;
      for (std::size_t b = 0; b + 1 < nb; ++b) {
        lw += hist_w[b];
        ls += hist_sum[b];
        const double rw = sw - lw, rs = sy - ls;
        if (lw < static_cast<double>(s.min_samples_leaf) || rw < static_cast<double>(s.min_samples_leaf)) continue;
        const double gain = ls * ls / lw + rs * rs / rw - base;
        if (gain > best_gain + 1e-12) {
          best_gain = gain;
          best_f = f;
          best_b = b;
        }
      }
    }
    if (best_gain <= 0.0) return id;
    auto mid = std::partition(rows.begin() + static_cast<std::ptrdiff_t>(begin), rows.begin() + static_cast<std::ptrdiff_t>(end),
                              [&](std::uint32_t r) { return bins[best_f * n_rows + r] <= best_b; });
    const auto split = static_cast<std::size_t>(mid - rows.begin());
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

Status ForestModel::fit(const FeatureMatrix& x, std::span<const double> y, std::span<const double> base_margin,
                        std::span<const double> weights) {
  trees_.assign(settings_.trees, Tree{});
  next_tree_ = 0;
  return build(x, y, base_margin, weights, 0, settings_.trees);
}

Status ForestModel::refresh(const FeatureMatrix& x, std::span<const double> y, std::size_t count) {
  if (trees_.size() != settings_.trees || x.cols != cols_) return fit(x, y);
  count = std::clamp<std::size_t>(count, 1, trees_.size());
  const std::size_t first = next_tree_;
  next_tree_ = (next_tree_ + count) % trees_.size();
  return build(x, y, {}, {}, first, count);
}

Status ForestModel::build(const FeatureMatrix& x, std::span<const double> y, std::span<const double> base_margin,
                          std::span<const double> weights, std::size_t first, std::size_t count) {
  if (x.rows == 0 || x.rows != y.size() || x.data.size() != x.rows * x.cols ||
      (!base_margin.empty() && base_margin.size() != x.rows) || (!weights.empty() && weights.size() != x.rows)) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("forest fit: {} rows, {} labels, {} margins, {} weights", x.rows, y.size(),
                              base_margin.size(), weights.size()));
  }
  if (settings_.trees == 0) return Status(StatusCode::kInvalidArgument, "forest: trees must be >= 1");
  const std::size_t n = x.rows, cols = x.cols;
  std::vector<double> target(y.begin(), y.end());
  for (std::size_t i = 0; i < base_margin.size(); ++i) target[i] -= base_margin[i];
  std::vector<double> w(n, 1.0);
  if (!weights.empty()) w.assign(weights.begin(), weights.end());

  // Bins: distinct values per feature (quantised beyond max_bins), cut points at midpoints.
  std::vector<std::vector<float>> cuts(cols);
  std::vector<std::vector<float>> edges(cols);
  std::vector<std::uint16_t> bins(n * cols);
  const std::size_t max_bins = std::clamp<std::size_t>(settings_.max_bins, 2, 65535);
  for (std::size_t f = 0; f < cols; ++f) {
    std::vector<float> v(n);
    for (std::size_t r = 0; r < n; ++r) v[r] = x.data[r * cols + f];
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    std::vector<float> uniq;
    if (v.size() <= max_bins) {
      uniq = std::move(v);
    } else {
      for (std::size_t b = 0; b < max_bins; ++b) uniq.push_back(v[(b * (v.size() - 1)) / (max_bins - 1)]);
      uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
    }
    for (std::size_t b = 0; b + 1 < uniq.size(); ++b) cuts[f].push_back(0.5f * (uniq[b] + uniq[b + 1]));
    for (std::size_t r = 0; r < n; ++r) {
      const float value = x.data[r * cols + f];
      bins[f * n + r] =
          static_cast<std::uint16_t>(std::lower_bound(cuts[f].begin(), cuts[f].end(), value) - cuts[f].begin());
    }
  }
  Rng rng(settings_.seed * 0x9E3779B97F4A7C15ULL + ++fit_count_);
  std::vector<double> wy(n);
  for (std::size_t r = 0; r < n; ++r) wy[r] = w[r] * target[r];
  Builder b{bins, cuts, target, w, wy, n, settings_, rng, {}, {}, {}};
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
    for (std::size_t i = 0; i < n; ++i) rows.push_back(static_cast<std::uint32_t>(rng.uniform(n)));  // bootstrap
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

Expected<std::vector<double>> ForestModel::predict(const FeatureMatrix& x, std::span<const double> base_margin) const {
  std::vector<double> mean, sd;
  Status st = predict_spread(x, mean, sd);
  if (!st) return st;
  for (std::size_t i = 0; i < base_margin.size() && i < mean.size(); ++i) mean[i] += base_margin[i];
  return mean;
}

Status ForestModel::predict_spread(const FeatureMatrix& x, std::vector<double>& mean, std::vector<double>& stddev) const {
  if (trees_.empty()) return Status(StatusCode::kInvalidArgument, "forest: predict before fit");
  if (x.rows > 0 && x.cols != cols_) {
    return Status(StatusCode::kInvalidArgument, fmt::format("forest: {} features per row, trained on {}", x.cols, cols_));
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

Status ForestModel::predict_sample(const FeatureMatrix& x, std::size_t k, Rng& rng, std::vector<double>& out) const {
  if (trees_.empty()) return Status(StatusCode::kInvalidArgument, "forest: predict before fit");
  if (x.rows > 0 && x.cols != cols_) {
    return Status(StatusCode::kInvalidArgument, fmt::format("forest: {} features per row, trained on {}", x.cols, cols_));
  }
  k = std::clamp<std::size_t>(k, 1, trees_.size());
  std::vector<std::size_t> pick(trees_.size());
  std::iota(pick.begin(), pick.end(), 0);
  for (std::size_t i = 0; i < k; ++i) std::swap(pick[i], pick[i + static_cast<std::size_t>(rng.uniform(pick.size() - i))]);
  out.assign(x.rows, 0.0);
  for (std::size_t r = 0; r < x.rows; ++r) {
    const float* row = x.data.data() + r * x.cols;
    double s = 0.0;
    for (std::size_t i = 0; i < k; ++i) s += predict_tree(trees_[pick[i]], row);
    out[r] = s / static_cast<double>(k);
  }
  return Status::ok();
}

}  // namespace tunekit
