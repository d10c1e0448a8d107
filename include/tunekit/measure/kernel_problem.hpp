// What a kernel tuning run measures: the kernel's source (language, entry, flags, launch
// geometry), the problem it is called on (arguments in call order with sizes, dtypes and fills),
// the correctness rule and the timing policy. Shared by builders, runners and the kernel layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"

namespace tunekit {

/// Language of a kernel source; decides the builder and the runner's backend.
enum class KernelLanguage : std::uint8_t {
  kCpp,     ///< C or C++ compiled by the system compiler into a shared object
  kOpenCL,  ///< OpenCL C built by the OpenCL runtime (PoCL on CPUs, any OpenCL device)
  kCuda,    ///< CUDA C++ compiled by NVRTC into a module for the CUDA driver
};

/// "c++", "opencl" or "cuda".
std::string_view to_string(KernelLanguage language) noexcept;

/// Parses "c++" (also "cpp", "c", "C"), "opencl" or "cuda".
/// Errors: kInvalidArgument listing the accepted names.
Expected<KernelLanguage> kernel_language_from_string(std::string_view text);

/// Element type of a kernel argument.
enum class ArgDtype : std::uint8_t { kFloat32, kFloat64, kInt32, kInt64 };

/// "float32", "float64", "int32" or "int64".
std::string_view to_string(ArgDtype dtype) noexcept;

/// Parses "float32" (also "float"), "float64" ("double"), "int32" ("int"), "int64".
/// Errors: kInvalidArgument listing the accepted names.
Expected<ArgDtype> arg_dtype_from_string(std::string_view text);

/// Bytes of one element: 4 or 8.
std::size_t dtype_bytes(ArgDtype dtype) noexcept;

/// How an array argument is filled before the first configuration runs.
enum class FillKind : std::uint8_t {
  kRandom,    ///< uniform in [-1, 1) for floats, [-8, 8) for integers, from the problem's seed
  kZeros,     ///< all 0
  kOnes,      ///< all 1
  kIndex,     ///< element i holds i (modulo 2^24 for float32, exact for the others)
  kConstant,  ///< every element holds `ArgFill::value`
  kFile,      ///< the raw bytes of the file `ArgFill::path` (native byte order, one element after
              ///< another: exactly size * dtype_bytes bytes; e.g. numpy's `ndarray.tofile`)
};

/// Fill of one array argument.
struct ArgFill {
  FillKind kind = FillKind::kRandom;
  double value = 0.0;  ///< kConstant only
  std::string path;  ///< kFile only: the data file (absolute, or relative to the current directory)
};

/// One argument of the kernel's entry, in call order.
/// C/C++: arrays are passed as pointers to their first element, scalars by value.
/// OpenCL/CUDA: arrays are device buffers, scalars are passed by value.
struct KernelArgument {
  std::string name;
  ArgDtype dtype = ArgDtype::kFloat32;
  bool is_scalar = false;
  /// Value of a scalar (integers exact up to 2^53).
  double scalar_value = 0.0;
  /// Elements of an array (> 0); 0 for a scalar.
  std::size_t size = 0;
  ArgFill fill;
  /// The kernel writes it: reset to its fill before every configuration runs and compared with
  /// the reference. Arrays only.
  bool is_output = false;
};

/// The arguments a kernel is called with, in call order, and the seed of random fills.
struct KernelProblem {
  std::vector<KernelArgument> arguments;
  std::uint64_t seed = 0;
  /// Total bytes of all arrays.
  std::size_t array_bytes() const noexcept;
};

/// Checks that the data file of every kFile fill of `problem` can be read and holds exactly the
/// array's bytes.
/// Errors: kIoError "cannot read data file '<path>' of argument 'x': <reason>"; kInvalidArgument
///   "data file '<path>' of argument 'x' holds 12 bytes; 1000 float32 elements need 4000".
Status check_fill_files(const KernelProblem& problem);

/// How the launch grid of an OpenCL or CUDA kernel follows from the configuration.
/// Each entry is an Expression (space/expression.hpp) over the configuration's parameter names
/// and the problem's scalar arguments; one to three dimensions. `global` is the total number of
/// work-items (OpenCL global size; CUDA grid = global / local, rounded up); `local` the work-group
/// (block) size. Unused for C/C++.
struct LaunchGeometry {
  std::vector<std::string> global;
  std::vector<std::string> local;
};

/// A kernel source and how to build and call it.
struct KernelSource {
  std::string name;  ///< task name in logs
  KernelLanguage language = KernelLanguage::kCpp;
  std::string path;  ///< file the source was read from (messages, relative includes)
  std::string text;  ///< the source itself
  /// C/C++: an `extern "C"` function taking the arguments in order; OpenCL/CUDA: the kernel
  /// (CUDA: `extern "C" __global__`).
  std::string entry;
  /// Extra compiler flags (C/C++: e.g. "-O3", "-fopenmp"; OpenCL: build options; CUDA: NVRTC
  /// options).
  std::vector<std::string> flags;
  LaunchGeometry launch;
};

/// Correctness rule of a tuning run. A configuration whose outputs differ from the reference by
/// more than atol + rtol * |reference| in any element (or holds a NaN where the reference does
/// not) is a failed trial with MeasureErrorNo::kWrongAnswer.
struct VerifyRule {
  enum class Reference : std::uint8_t {
    kNone,        ///< no check
    kFirstValid,  ///< the outputs of the first configuration that runs without error
    kConfig,      ///< the outputs of the configuration `reference_params` of the same kernel
    kKernel,      ///< the outputs of `reference_source` (same language rules, same arguments)
  };
  Reference reference = Reference::kFirstValid;
  /// kConfig: {"parameter": value, ...} naming every parameter of the space.
  nlohmann::json reference_params = nlohmann::json::object();
  /// kKernel: the reference kernel (its own entry and flags; built once without parameters).
  KernelSource reference_source;
  /// A user verification function (C/C++, whatever the kernel's language), used instead of the
  /// atol/rtol comparison when its `entry` is set; built once like a reference kernel:
  ///   extern "C" int check(int count, void* const* args, const void* const* reference,
  ///                        const long long* elements, char* why, int why_size);
  /// `args` are the kernel's arguments in order after the check call (arrays: the outputs it
  /// wrote and the pristine inputs; scalars: a pointer to the value in its dtype), `reference`
  /// the reference outputs (null for inputs, scalars, and when no reference exists yet),
  /// `elements` the element count of each array (0 for scalars). It returns 0 to accept;
  /// otherwise the trial is kWrongAnswer with the reason it wrote into `why` (why_size bytes).
  KernelSource function;
  double atol = 1e-6;
  double rtol = 1e-5;
};

/// Timing policy of a runner (AutoTVM LocalRunner's options plus warmup and cache flush).
/// One trial: reset outputs, `warmup` untimed calls, then `repeat` measurements, each the mean
/// of `number` consecutive calls (number grows until one measurement takes min_repeat_ms),
/// with `cooldown_s` of sleep between measurements and, when `flush_cache`, a data-cache flush
/// of every array before each call (then number is 1).
/// Units: seconds, milliseconds where named.
struct KernelTiming {
  int number = 4;
  int repeat = 3;
  double min_repeat_ms = 0.0;
  int warmup = 1;
  double cooldown_s = 0.0;
  bool flush_cache = false;
  /// A trial taking longer than this (build excluded) is stopped: kRunTimeout.
  double timeout_s = 10.0;
};

}  // namespace tunekit
