// Host buffers of a kernel's array arguments: 64-byte aligned (page-aligned mappings), filled
// from the problem's seed, outputs reset to their fill, outputs compared with a reference.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/cache_flush.hpp"
#include "tunekit/measure/kernel_problem.hpp"

namespace tunekit {

/// One buffer per argument of a KernelProblem (scalars get none), in call order.
/// Memory is an anonymous mapping: private to the process, or shared with the children it
/// forks (reference outputs that a trial child writes for its parent). Each array has an
/// inaccessible guard page before and after it, so that a kernel running off either end
/// faults there instead of writing into the next mapping. Move-only.
class ArgumentBuffers {
 public:
  enum class Sharing : std::uint8_t {
    kPrivate,  ///< MAP_PRIVATE: a forked child writes its own copy
    kShared,   ///< MAP_SHARED: writes of a forked child are seen by the parent
  };

  /// Maps the arrays of `problem` (zeroed, not yet filled), each between two guard pages.
  /// Errors: kInvalidArgument for an array of size 0; kIoError when the mapping fails
  ///   ("cannot map 4000000000000 bytes for argument 'x': Cannot allocate memory").
  static Expected<ArgumentBuffers> allocate(const KernelProblem& problem,
                                            Sharing sharing = Sharing::kPrivate);

  ArgumentBuffers() = default;
  ArgumentBuffers(ArgumentBuffers&& other) noexcept;
  ArgumentBuffers& operator=(ArgumentBuffers&& other) noexcept;
  ArgumentBuffers(const ArgumentBuffers&) = delete;
  ArgumentBuffers& operator=(const ArgumentBuffers&) = delete;
  /// Unmaps the arrays.
  ~ArgumentBuffers();

  /// Fills every array (outputs_only: only the outputs) from its ArgFill; random fills draw from
  /// the problem's seed and the argument's position, so equal problems give equal data.
  void fill(bool outputs_only = false);
  /// Copies the arrays of `other` (same problem) into these; outputs_only: only the outputs.
  void copy_from(const ArgumentBuffers& other, bool outputs_only = false);

  /// Makes every array read-only (PROT_READ): a write to it faults from now on, in this
  /// process only (protections are per process, also for kShared memory).
  /// Errors: kIoError when mprotect fails.
  Status make_read_only();
  /// Makes every array writable again (PROT_READ | PROT_WRITE), in this process only.
  /// Errors: kIoError when mprotect fails.
  Status make_writable();

  /// Arguments, scalars included (their data() is null).
  std::size_t size() const noexcept { return arrays_.size(); }
  /// First element of argument i (null for a scalar). Alignment: at least 64 bytes.
  void* data(std::size_t i) noexcept { return arrays_[i].data; }
  const void* data(std::size_t i) const noexcept { return arrays_[i].data; }
  /// Bytes of argument i (0 for a scalar).
  std::size_t bytes(std::size_t i) const noexcept { return arrays_[i].bytes; }
  /// The problem the buffers were allocated for.
  const KernelProblem& problem() const noexcept { return problem_; }
  /// Every array as a byte range (cache flushes).
  std::vector<measure::MemoryRange> ranges() const;

  /// Compares the outputs with those of `reference` element by element: |x - r| <= atol +
  /// rtol * |r|, and a NaN only where the reference holds one.
  /// Errors: kWrongResult naming the first bad element: "output 'C' element 17: 1.5 vs
  /// reference 2.5 (atol 1e-06, rtol 1e-05)".
  Status compare_outputs(const ArgumentBuffers& reference, double atol, double rtol) const;

 private:
  struct Array {
    void* data = nullptr;
    std::size_t bytes = 0;   ///< bytes of the elements
    std::size_t mapped = 0;  ///< bytes of the accessible pages (page multiple)
    std::size_t guard = 0;   ///< bytes of the guard before and after them (one page)
  };
  /// Maps argument i's array between its guard pages.
  Status map_array(std::size_t i, Sharing sharing);
  /// Sets the protection of every array to `prot` (PROT_* bits); `what` names it in errors.
  Status protect(int prot, const char* what);
  void release() noexcept;

  KernelProblem problem_;
  std::vector<Array> arrays_;
};

}  // namespace tunekit
