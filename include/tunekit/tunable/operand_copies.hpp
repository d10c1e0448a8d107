// OperandCopies: the rotating operand copies find_fastest times candidates on, plus the
// numerics reference and check copies, the shared rotation offset and the cache flush.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/cache_flush.hpp"
#include "tunekit/measure/timing.hpp"
#include "tunekit/tunable/params_traits.hpp"

namespace tunekit {

/// Operand copies of one problem for timing.
/// Layout: copies 0 .. rotating()-1 rotate; with the numerical check, copy rotating() holds
/// Default's reference output and copy rotating()+1 a candidate's output under check.
/// Source: PyTorch TunableOp rotating buffers: copies = floor(R / P) + 1 with P = output + input
/// bytes and R the rotating-buffer size (1 copy when R == 0).
template <TunableParams Params>
class OperandCopies {
 public:
  using Traits = ParamsTraits<Params>;

  /// Allocates the copies for `params` (see the class comment).
  /// Errors: the workspace's error (kResourceExhausted when the memory guard refuses).
  static Expected<OperandCopies> create(const Params& params, std::size_t rotating_bytes,
                                        std::size_t max_copies, bool with_check_copies,
                                        bool flush) {
    const std::size_t copies = measure::rotating_copies(
        rotating_bytes, Traits::output_bytes(params), Traits::input_bytes(params), max_copies);
    auto ws = Traits::make_workspace(params, copies + (with_check_copies ? 2 : 0));
    if (!ws) return ws.status();
    return OperandCopies(std::move(*ws), copies, flush);
  }

  /// Copies that rotate (>= 1).
  std::size_t rotating() const noexcept { return bound_.size(); }

  /// Moves to the next rotating copy and flushes its operands from the data cache when the
  /// flush is on. Call before every timed or untimed call, outside the timed region.
  void advance() {
    current_ = offset_++ % bound_.size();
    if (flush_) measure::flush_data_cache(ranges_[current_]);
  }
  /// The copy the next call runs on (set by advance()).
  const Params& current() const noexcept { return bound_[current_]; }

  /// Default's output copy for the numerical check, its output reset to the initial content.
  Params fresh_reference() {
    Traits::reset_output(*ws_, rotating());
    return Traits::bind(*ws_, rotating());
  }
  /// The reference copy as Default left it.
  Params reference() const { return Traits::bind(*ws_, rotating()); }
  /// The check copy with its output reset.
  Params fresh_check() {
    Traits::reset_output(*ws_, rotating() + 1);
    return Traits::bind(*ws_, rotating() + 1);
  }

 private:
  using Workspace = typename Traits::Workspace;

  OperandCopies(std::unique_ptr<Workspace> ws, std::size_t copies, bool flush)
      : ws_(std::move(ws)), flush_(flush) {
    bound_.reserve(copies);
    for (std::size_t i = 0; i < copies; ++i) bound_.push_back(Traits::bind(*ws_, i));
    if (flush_) {
      ranges_.reserve(copies);
      for (const Params& p : bound_) ranges_.push_back(Traits::operand_ranges(p));
    }
  }

  std::unique_ptr<Workspace> ws_;
  std::vector<Params> bound_;
  std::vector<std::vector<measure::MemoryRange>> ranges_;
  bool flush_ = false;
  std::size_t offset_ = 0;
  std::size_t current_ = 0;
};

}  // namespace tunekit
