// XGBoostCostModel over libxgboost's C API: training with a-recall@N early stopping, prediction.
// Also FeatureMatrix helpers and the a-recall metric. See include/tunekit/search/cost_model.hpp.
#include <fmt/format.h>
#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <numeric>

#include "tunekit/search/cost_model.hpp"
#include "tunekit/space/random.hpp"

namespace tunekit {

void FeatureMatrix::add_row(std::span<const float> row) {
  if (rows == 0 && cols == 0) cols = row.size();
  TUNEKIT_CHECK(row.size() == cols);
  data.insert(data.end(), row.begin(), row.end());
  ++rows;
}

FeatureMatrix FeatureMatrix::of(const ConfigSpace& space, std::span<const KnobVector> configs) {
  FeatureMatrix m;
  m.cols = space.feature_length();
  m.data.reserve(configs.size() * m.cols);
  for (const auto& k : configs) {
    const auto f = space.flatten_feature(k);
    m.data.insert(m.data.end(), f.begin(), f.end());
    ++m.rows;
  }
  return m;
}

double average_recall_at(std::span<const double> predictions, std::span<const double> labels,
                         std::size_t n) {
  const std::size_t rows = std::min(predictions.size(), labels.size());
  if (rows == 0) return 0.0;
  n = std::min(n, rows);
  std::vector<std::size_t> by_pred(rows), by_label(rows), label_rank(rows);
  std::iota(by_pred.begin(), by_pred.end(), 0);
  std::iota(by_label.begin(), by_label.end(), 0);
  std::stable_sort(by_pred.begin(), by_pred.end(),
                   [&](auto a, auto b) { return predictions[a] > predictions[b]; });
  std::stable_sort(by_label.begin(), by_label.end(),
                   [&](auto a, auto b) { return labels[a] > labels[b]; });
  for (std::size_t r = 0; r < rows; ++r) label_rank[by_label[r]] = r;
  double sum = 0.0;
  std::size_t hits = 0;
  // hits_i = |{j <= i : rank(order[j]) <= i}|, updated incrementally.
  std::vector<bool> seen_pred(rows, false), seen_rank(rows, false);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t p = by_pred[i];
    seen_pred[p] = true;
    if (label_rank[p] <= i) ++hits;
    // The item of true rank i becomes countable if it was predicted earlier.
    const std::size_t q = by_label[i];
    if (q != p && seen_pred[q]) ++hits;
    sum += static_cast<double>(hits) / static_cast<double>(i + 1);
  }
  return sum / static_cast<double>(n);
}

namespace {

Status xgb_error(const char* what) {
  return Status(StatusCode::kInternal, fmt::format("xgboost {}: {}", what, XGBGetLastError()));
}

#define TK_XGB(call, what)                   \
  do {                                       \
    if ((call) != 0) return xgb_error(what); \
  } while (0)

void quiet_xgboost() {
  static std::once_flag once;
  std::call_once(once, [] { (void)XGBSetGlobalConfig("{\"verbosity\": 0}"); });
}

struct DMatrix {
  DMatrixHandle h = nullptr;
  ~DMatrix() {
    if (h != nullptr) XGDMatrixFree(h);
  }
};

}  // namespace

XGBoostCostModel::XGBoostCostModel(XGBoostSettings settings) : settings_(std::move(settings)) {
  quiet_xgboost();
}

XGBoostCostModel::~XGBoostCostModel() { release(); }

void XGBoostCostModel::release() noexcept {
  if (booster_ != nullptr) XGBoosterFree(static_cast<BoosterHandle>(booster_));
  booster_ = nullptr;
  best_rounds_ = 0;
}

Status XGBoostCostModel::fit(const FeatureMatrix& x, std::span<const double> y,
                             std::span<const double> base_margin, std::span<const double> weights) {
  if (x.rows == 0 || x.rows != y.size() || x.data.size() != x.rows * x.cols ||
      (!base_margin.empty() && base_margin.size() != x.rows) ||
      (!weights.empty() && weights.size() != x.rows)) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("cost model fit: {} rows, {} labels, {} margins", x.rows, y.size(),
                              base_margin.size()));
  }
  if (settings_.loss != "reg" && settings_.loss != "rank" && settings_.loss != "rank-binary") {
    return Status(
        StatusCode::kInvalidArgument,
        "cost model: loss must be reg, rank or rank-binary, got '" + settings_.loss + "'");
  }
  release();
  // Random row permutation (upstream shuffles the training rows).
  std::vector<std::size_t> perm(x.rows);
  std::iota(perm.begin(), perm.end(), 0);
  Rng rng(settings_.seed * 0x9E3779B97F4A7C15ULL + ++fit_count_);
  rng.shuffle(perm);
  std::vector<float> data(x.data.size());
  std::vector<float> labels(x.rows), margins, row_weights;
  std::vector<double> labels_d(x.rows);
  for (std::size_t r = 0; r < x.rows; ++r) {
    std::copy_n(x.data.begin() + static_cast<std::ptrdiff_t>(perm[r] * x.cols), x.cols,
                data.begin() + static_cast<std::ptrdiff_t>(r * x.cols));
    labels[r] = static_cast<float>(y[perm[r]]);
    labels_d[r] = y[perm[r]];
    if (!base_margin.empty()) margins.push_back(static_cast<float>(base_margin[perm[r]]));
    if (!weights.empty()) row_weights.push_back(static_cast<float>(weights[perm[r]]));
  }
  DMatrix d;
  TK_XGB(XGDMatrixCreateFromMat(data.data(), x.rows, x.cols, std::nanf(""), &d.h), "DMatrix");
  TK_XGB(XGDMatrixSetFloatInfo(d.h, "label", labels.data(), x.rows), "labels");
  if (!margins.empty())
    TK_XGB(XGDMatrixSetFloatInfo(d.h, "base_margin", margins.data(), x.rows), "base margin");
  if (!row_weights.empty())
    TK_XGB(XGDMatrixSetFloatInfo(d.h, "weight", row_weights.data(), x.rows), "weights");
  const bool rank = settings_.loss != "reg";
  if (rank) {
    const unsigned group = static_cast<unsigned>(x.rows);
    TK_XGB(XGDMatrixSetUIntInfo(d.h, "group", &group, 1), "group");
  }
  BoosterHandle b = nullptr;
  TK_XGB(XGBoosterCreate(&d.h, 1, &b), "booster");
  booster_ = b;
  const std::pair<const char*, std::string> params[] = {
      {"objective", rank ? "rank:pairwise" : "reg:squarederror"},
      {"max_depth", std::to_string(settings_.max_depth)},
      {"eta", fmt::format("{}", settings_.eta)},
      {"gamma", fmt::format("{}", settings_.gamma)},
      {"min_child_weight", fmt::format("{}", settings_.min_child_weight)},
      {"subsample", fmt::format("{}", settings_.subsample)},
      {"lambda", fmt::format("{}", settings_.lambda)},
      {"alpha", fmt::format("{}", settings_.alpha)},
      {"nthread", std::to_string(std::max(1, settings_.num_threads))},
      {"seed", std::to_string(settings_.seed % 2147483647ULL)},
      {"tree_method", settings_.tree_method},
      {"verbosity", "0"},
  };
  for (const auto& [k, v] : params) {
    if (XGBoosterSetParam(b, k, v.c_str()) != 0) {
      Status st = xgb_error("parameter");
      release();
      return st;
    }
  }
  double best = -1.0;
  int best_round = 0;
  std::vector<double> pred(x.rows);
  const int n = static_cast<int>(x.rows);
  for (int round = 0; round < settings_.max_rounds; ++round) {
    if (XGBoosterUpdateOneIter(b, round, d.h) != 0) {
      Status st = xgb_error("training");
      release();
      return st;
    }
    if (round % 2 != 0 || settings_.early_stopping_rounds >= settings_.max_rounds) continue;
    bst_ulong len = 0;
    const float* out = nullptr;
    if (XGBoosterPredict(b, d.h, 0, 0, 0, &len, &out) != 0) {
      Status st = xgb_error("evaluation");
      release();
      return st;
    }
    for (int r = 0; r < n; ++r) pred[static_cast<std::size_t>(r)] = out[r];
    const double score =
        average_recall_at(pred, labels_d, static_cast<std::size_t>(settings_.eval_top_n));
    if (score > best) {
      best = score;
      best_round = round + 1;
    } else if (round + 1 - best_round >= settings_.early_stopping_rounds) {
      break;
    }
  }
  if (settings_.early_stopping_rounds >= settings_.max_rounds) best_round = settings_.max_rounds;
  best_rounds_ = std::max(1, best_round);
  cols_ = x.cols;
  return Status::ok();
}

Expected<std::vector<double>> XGBoostCostModel::predict(const FeatureMatrix& x,
                                                        std::span<const double> base_margin) const {
  if (booster_ == nullptr)
    return Status(StatusCode::kInvalidArgument, "cost model: predict before fit");
  if (x.cols != cols_ && x.rows > 0) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("cost model: {} features per row, trained on {}", x.cols, cols_));
  }
  if (x.rows == 0) return std::vector<double>{};
  DMatrix d;
  TK_XGB(XGDMatrixCreateFromMat(x.data.data(), x.rows, x.cols, std::nanf(""), &d.h), "DMatrix");
  std::vector<float> margins;
  if (!base_margin.empty()) {
    if (base_margin.size() != x.rows)
      return Status(StatusCode::kInvalidArgument, "cost model: margin count");
    margins.assign(base_margin.begin(), base_margin.end());
    TK_XGB(XGDMatrixSetFloatInfo(d.h, "base_margin", margins.data(), x.rows), "base margin");
  }
  bst_ulong len = 0;
  const float* out = nullptr;
  TK_XGB(XGBoosterPredict(static_cast<BoosterHandle>(booster_), d.h, 0,
                          static_cast<unsigned>(best_rounds_), 0, &len, &out),
         "prediction");
  return std::vector<double>(out, out + len);
}

}  // namespace tunekit
