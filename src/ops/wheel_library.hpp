// Libraries installed from PyPI wheels (MKL, oneDNN 3.x, scipy-openblas32): where they are, and
// opening one in the main namespace with its own symbols first, so it cannot collide with
// Debian's OpenBLAS or oneDNN 2.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"

namespace tunekit::ops::detail {

/// A shared library that a PyPI wheel installs.
struct WheelLibrary {
  std::string_view name;  ///< what tunekit calls it, e.g. "MKL"
  std::string_view file;  ///< file name, e.g. "libmkl_rt.so.3"
  std::string_view env;   ///< variable holding its path, e.g. "TUNEKIT_MKL_LIBRARY"
  std::string_view pip;   ///< what to install, e.g. "pip install mkl"
};

/// The wheel libraries tunekit's candidates load.
inline constexpr WheelLibrary kMklLibrary{"MKL", "libmkl_rt.so.3", "TUNEKIT_MKL_LIBRARY",
                                          "pip install mkl"};
inline constexpr WheelLibrary kOnednn3Library{"oneDNN 3", "libdnnl.so.3", "TUNEKIT_ONEDNN3_LIBRARY",
                                              "pip install onednn"};
inline constexpr WheelLibrary kScipyOpenblasLibrary{"scipy-openblas32", "libscipy_openblas.so",
                                                    "TUNEKIT_SCIPY_OPENBLAS_LIBRARY",
                                                    "pip install scipy-openblas32"};

/// The path of `lib`: the file its variable names when set (it must exist), else the first
/// directory of `search_dirs` holding `lib.file`. `search_dirs` defaults to the directories
/// CMake found the wheels in (TUNEKIT_WHEEL_LIBRARY_DIRS, colon-separated: the build's Python
/// prefix's lib/ and scipy_openblas32's lib/).
/// Errors: kNotFound naming the file, where it was looked for and what installs it.
Expected<std::string> locate_wheel_library(const WheelLibrary& lib);
Expected<std::string> locate_wheel_library(const WheelLibrary& lib,
                                           const std::vector<std::string>& search_dirs);

/// Why `lib` cannot be used in this process, without loading it: locate_wheel_library()'s
/// error, a file that is no shared library, or that RTLD_DEEPBIND does not work under
/// AddressSanitizer; empty when it can.
std::string wheel_missing(const WheelLibrary& lib);

/// The directories CMake found the wheels' libraries in (may be empty).
std::vector<std::string> wheel_library_dirs();

/// Whether `path` names a regular file (following links).
bool is_regular_file(const std::string& path);
/// The directory part of `path` ("." when it has none).
std::string directory_of(const std::string& path);

/// The DT_NEEDED entries (sonames) of the ELF shared object at `path`, in file order.
/// Errors: kIoError when the file cannot be read, kParseError when it is not a 64-bit ELF
/// shared object with a dynamic section.
Expected<std::vector<std::string>> elf_needed(const std::string& path);

/// Opens the library at `path` with dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND): its own
/// definitions (and its dependencies') come before the program's, so a libmkl_rt's cblas_sgemm
/// calls stay in MKL while the program's OpenBLAS keeps its own. Its dependencies that lie in the
/// same directory and are not loaded yet (libtbb, the Intel runtimes beside libdnnl.so.3, which
/// carries no RUNPATH) are opened first, depth first, so the loader finds them by soname.
/// `environment` entries ("NAME=value") replace or extend the process environment while the
/// library's initialisers run (OpenBLAS reads its settings there); the process environment is
/// not modified. Libraries are never closed.
/// Errors: kUnsupported under AddressSanitizer (RTLD_DEEPBIND bypasses its interceptors) or
/// when dlopen fails (dlerror's message).
Expected<void*> open_wheel_library(const std::string& path,
                                   const std::vector<std::string>& environment = {});

}  // namespace tunekit::ops::detail
