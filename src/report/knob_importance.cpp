// Main-effect variance share (correlation ratio) of each knob in log(time); see
// include/tunekit/report/knob_importance.hpp.
#include "tunekit/report/knob_importance.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace tunekit::report {
namespace {

struct Moments {
  double sum = 0.0;
  std::size_t count = 0;
};

/// Between-value sum of squares of knob `k` around `mean`.
double between_sum_of_squares(std::size_t k, const std::vector<KnobSample>& samples,
                              const std::vector<double>& y, double mean, std::size_t* values) {
  std::map<std::string, Moments> groups;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    Moments& m = groups[samples[i].values[k]];
    m.sum += y[i];
    ++m.count;
  }
  *values = groups.size();
  double ss = 0.0;
  for (const auto& [value, m] : groups) {
    const double d = m.sum / static_cast<double>(m.count) - mean;
    ss += static_cast<double>(m.count) * d * d;
  }
  return ss;
}

}  // namespace

std::vector<KnobImportance> knob_importance(const std::vector<std::string>& knobs,
                                            const std::vector<KnobSample>& samples) {
  std::vector<KnobSample> used;
  std::vector<double> y;
  for (const KnobSample& s : samples) {
    if (s.values.size() != knobs.size() || !(s.cost_s > 0) || !std::isfinite(s.cost_s)) continue;
    used.push_back(s);
    y.push_back(std::log(s.cost_s));
  }
  double mean = 0.0;
  for (double v : y) mean += v;
  mean /= std::max<std::size_t>(1, y.size());
  double total = 0.0;
  for (double v : y) total += (v - mean) * (v - mean);
  std::vector<KnobImportance> out;
  for (std::size_t k = 0; k < knobs.size(); ++k) {
    KnobImportance ki{knobs[k], 0.0, 0};
    const double between = between_sum_of_squares(k, used, y, mean, &ki.values);
    if (used.size() >= 3 && total > 0) ki.share = std::clamp(between / total, 0.0, 1.0);
    out.push_back(std::move(ki));
  }
  std::stable_sort(out.begin(), out.end(), [](const KnobImportance& a, const KnobImportance& b) {
    return a.share > b.share;
  });
  return out;
}

}  // namespace tunekit::report
