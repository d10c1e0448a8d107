#include "tunekit/search/pairwise_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tunekit {

PairwiseBayesModel::PairwiseBayesModel(std::span<const std::uint64_t> sizes,
                                       PairwiseBayesSettings settings)
    : settings_(settings), sizes_(sizes.begin(), sizes.end()) {
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] > 1) knobs_.push_back(k);
  }
  for (std::size_t a = 0; a < knobs_.size(); ++a) {
    first_offset_.push_back(first_terms_);
    first_terms_ += sizes_[knobs_[a]];
  }
  terms_ = first_terms_;
  for (std::size_t a = 0; a < knobs_.size(); ++a) {
    for (std::size_t b = a + 1; b < knobs_.size(); ++b) {
      pair_offset_.push_back(terms_);
      terms_ += static_cast<std::size_t>(sizes_[knobs_[a]]) * sizes_[knobs_[b]];
    }
  }
  noises_ = settings_.noise_grid.empty() ? std::vector<double>{settings_.noise_variance}
                                         : settings_.noise_grid;
  factors_.resize(noises_.size());
  const double k = static_cast<double>(knobs_.size());
  s1_ = k > 0 ? settings_.first_order_variance / k : 0.0;
  s2_ = k > 1 ? settings_.pairwise_variance / (k * (k - 1) / 2) : 0.0;
}

template <class F>
void PairwiseBayesModel::for_each_term(std::span<const std::uint32_t> c, F&& f) const {
  std::size_t p = 0;
  for (std::size_t a = 0; a < knobs_.size(); ++a) {
    f(first_offset_[a] + c[knobs_[a]], s1_);
    for (std::size_t b = a + 1; b < knobs_.size(); ++b, ++p)
      f(pair_offset_[p] + static_cast<std::size_t>(c[knobs_[a]]) * sizes_[knobs_[b]] + c[knobs_[b]],
        s2_);
  }
}

double PairwiseBayesModel::normal(Rng& rng) const {
  // Box-Muller; 1 - u keeps the logarithm finite.
  const double u = 1.0 - rng.uniform01();
  const double v = rng.uniform01();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v);
}

Status PairwiseBayesModel::fit(std::span<const std::vector<std::uint32_t>> rows,
                               std::span<const double> y, Rng& rng) {
  const std::size_t n = rows.size();
  if (n == 0 || y.size() != n)
    return Status(StatusCode::kInvalidArgument,
                  "pairwise model: need one target per row, >= 1 row");
  for (double v : y) {
    if (!std::isfinite(v))
      return Status(StatusCode::kInvalidArgument, "pairwise model: a target is not finite");
  }
  for (const auto& r : rows) {
    if (r.size() != sizes_.size())
      return Status(StatusCode::kInvalidArgument, "pairwise model: row of the wrong length");
    for (std::size_t k = 0; k < r.size(); ++k) {
      if (r[k] >= sizes_[k])
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("pairwise model: knob {} position {} out of range", k, r[k]));
    }
  }
  // Standardise the target.
  double mean = 0.0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(n);
  double var = 0.0;
  for (double v : y) var += (v - mean) * (v - mean);
  var /= static_cast<double>(n);
  const double scale = var > 1e-300 ? std::sqrt(var) : 1.0;

  // Rows to condition on: all of them, or beyond max_rows the best half and a random half
  // of the rest (the Cholesky factor is then rebuilt for that subset).
  std::vector<std::size_t> use(n);
  std::iota(use.begin(), use.end(), 0);
  if (n > settings_.max_rows) {
    // Best first, ties by row; the rest back in row order, so the random half does not depend
    // on how the standard library's partial_sort leaves it.
    const auto half = use.begin() + static_cast<std::ptrdiff_t>(settings_.max_rows / 2);
    std::partial_sort(use.begin(), half, use.end(),
                      [&](auto a, auto b) { return y[a] > y[b] || (y[a] == y[b] && a < b); });
    std::sort(half, use.end());
    for (std::size_t i = settings_.max_rows / 2; i < settings_.max_rows; ++i)
      std::swap(use[i], use[i + rng.uniform(n - i)]);
    use.resize(settings_.max_rows);
    factor_rows_.clear();
  } else if (factor_rows_.size() > n ||
             !std::equal(factor_rows_.begin(), factor_rows_.end(), rows.begin())) {
    factor_rows_.clear();
  }
  if (factor_rows_.empty()) {
    for (auto& f : factors_) f.clear();
  }
  const std::size_t m = use.size();
  // Extend the Cholesky factor L of K = s0 + s1 s + s2 s(s-1)/2 + noise I (s = knobs two rows
  // share; s0 the bias prior), one factor per candidate noise, row by row: O(i^2) for row i.
  const double s0 = 1.0;
  std::vector<double> krow;
  for (std::size_t i = factors_[0].size(); i < m; ++i) {
    const auto& ri = rows[use[i]];
    krow.assign(i + 1, 0.0);
    for (std::size_t j = 0; j <= i; ++j) {
      const auto& rj = rows[use[j]];
      double same = 0.0;
      for (auto k : knobs_) same += ri[k] == rj[k] ? 1.0 : 0.0;
      krow[j] = s0 + s1_ * same + s2_ * same * (same - 1.0) / 2.0;
    }
    for (std::size_t g = 0; g < factors_.size(); ++g) {
      auto& chol = factors_[g];
      std::vector<double> l = krow;
      l[i] += noises_[g];
      for (std::size_t j = 0; j < i; ++j) {
        double v = l[j];
        const auto& lj = chol[j];
        for (std::size_t k = 0; k < j; ++k) v -= l[k] * lj[k];
        l[j] = v / lj[j];
      }
      double d = l[i];
      for (std::size_t k = 0; k < i; ++k) d -= l[k] * l[k];
      if (!(d > 0.0)) {
        for (auto& f : factors_) f.clear();
        factor_rows_.clear();
        return Status(StatusCode::kInternal, "pairwise model: kernel matrix not positive definite");
      }
      l[i] = std::sqrt(d);
      chol.push_back(std::move(l));
    }
    if (n <= settings_.max_rows) factor_rows_.push_back(ri);
  }
  auto forward = [&](const std::vector<std::vector<double>>& chol, std::vector<double>& r) {
    for (std::size_t i = 0; i < m; ++i) {
      const auto& li = chol[i];
      double v = r[i];
      for (std::size_t k = 0; k < i; ++k) v -= li[k] * r[k];
      r[i] = v / li[i];
    }
  };
  // The noise of the largest marginal likelihood, -|L^-1 y|^2 / 2 - sum log L_ii (type-II
  // maximum likelihood over the candidates).
  std::size_t g = 0;
  if (factors_.size() > 1) {
    double best = -std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < factors_.size(); ++c) {
      std::vector<double> z(m);
      for (std::size_t i = 0; i < m; ++i) z[i] = (y[use[i]] - mean) / scale;
      forward(factors_[c], z);
      double ll = 0.0;
      for (std::size_t i = 0; i < m; ++i) ll -= 0.5 * z[i] * z[i] + std::log(factors_[c][i][i]);
      if (ll > best) {
        best = ll;
        g = c;
      }
    }
  }
  const auto& chol = factors_[g];
  noise_ = noises_[g];
  // Prior draw w0, b0; residual r = y - X w0 - b0 - e. Dense: one weight per term. Sparse (more
  // than kDenseTerms terms): the prior weight of term t is a normal drawn from its own stream
  // seeded by (draw seed, t), evaluated where needed, and the data part lives in a hash map.
  const double sd1 = std::sqrt(s1_), sd2 = std::sqrt(s2_);
  if (dense()) {
    w_.assign(terms_, 0.0);
    for (std::size_t t = 0; t < terms_; ++t) w_[t] = normal(rng) * (t < first_terms_ ? sd1 : sd2);
  } else {
    w_.clear();
    sparse_.clear();
    draw_seed_ = rng.next();
  }
  bias_ = normal(rng) * std::sqrt(s0);
  mean_ = mean;
  scale_ = scale;
  const double noise_sd = std::sqrt(noise_);
  std::vector<double> r(m);
  for (std::size_t i = 0; i < m; ++i) {
    double f = bias_;
    for_each_term(rows[use[i]], [&](std::size_t t, double) { f += prior_or_weight(t); });
    r[i] = (y[use[i]] - mean_) / scale_ - f - normal(rng) * noise_sd;
  }
  // alpha = K^-1 r = L^-T L^-1 r.
  forward(chol, r);
  for (std::size_t i = m; i-- > 0;) {
    const auto& li = chol[i];
    r[i] /= li[i];
    for (std::size_t k = 0; k < i; ++k) r[k] -= li[k] * r[i];
  }
  // w = w0 + S X^T alpha.
  for (std::size_t i = 0; i < m; ++i) {
    bias_ += s0 * r[i];
    if (dense())
      for_each_term(rows[use[i]], [&](std::size_t t, double s) { w_[t] += s * r[i]; });
    else
      for_each_term(rows[use[i]], [&](std::size_t t, double s) { sparse_[t] += s * r[i]; });
  }
  fitted_ = true;
  return Status::ok();
}

double PairwiseBayesModel::predict(std::span<const std::uint32_t> knobs) const {
  TUNEKIT_CHECK(fitted() && knobs.size() == sizes_.size());
  double f = bias_;
  if (dense()) {
    for_each_term(knobs, [&](std::size_t t, double) { f += w_[t]; });
  } else {
    for_each_term(knobs, [&](std::size_t t, double) {
      f += prior_or_weight(t);
      const auto it = sparse_.find(t);
      if (it != sparse_.end()) f += it->second;
    });
  }
  return mean_ + scale_ * f;
}

double PairwiseBayesModel::prior_or_weight(std::size_t t) const {
  if (dense()) return w_[t];
  Rng stream(draw_seed_ + 0x9E3779B97F4A7C15ULL * (t + 1));
  return normal(stream) * std::sqrt(t < first_terms_ ? s1_ : s2_);
}

}  // namespace tunekit
