// Which knobs of a search matter: the main-effect share of each knob in the variance of the
// measured log times (first-order variance decomposition over the sampled configurations).
#pragma once

#include <string>
#include <vector>

namespace tunekit::report {

/// One measured configuration: its knob values (as text, in the space's knob order) and time.
struct KnobSample {
  std::vector<std::string> values;  ///< one value per knob, same order in every sample
  double cost_s = 0.0;              ///< measured time in seconds (> 0)
};

/// How much of the variance of log(time) one knob explains on its own.
struct KnobImportance {
  std::string knob;
  double share = 0.0;      ///< in [0, 1]: between-value sum of squares / total sum of squares
  std::size_t values = 0;  ///< distinct values of the knob among the samples
};

/// The main-effect variance share of every knob, largest first:
///   share(k) = sum_v n_v (mean_v - mean)^2 / sum_i (y_i - mean)^2,  y = log(time),
/// the correlation ratio eta^2 of y on knob k (Pearson), which is the first-order term of the
/// functional ANOVA decomposition that fANOVA estimates from a fitted forest (Hutter, Hoos and
/// Leyton-Brown, "An Efficient Approach for Assessing Hyperparameter Importance", ICML 2014).
/// Here it is taken from the samples themselves, so a search that sampled some values far more
/// than others (every guided strategy does) weighs those more: read it as "explains the measured
/// spread", not as a property of the whole space.
/// `knobs` names the positions of KnobSample::values. Samples with a non-positive or non-finite
/// time are skipped; with fewer than 3 samples or no spread every share is 0.
std::vector<KnobImportance> knob_importance(const std::vector<std::string>& knobs,
                                            const std::vector<KnobSample>& samples);

}  // namespace tunekit::report
