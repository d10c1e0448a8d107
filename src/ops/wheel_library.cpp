// Locating the libraries of PyPI wheels and opening them with RTLD_DEEPBIND after their
// neighbouring dependencies. See src/ops/wheel_library.hpp.
#include "ops/wheel_library.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <vector>

#include "ops/gemm_internal.hpp"
#include "tunekit/core/log.hpp"

#ifndef TUNEKIT_WHEEL_LIBRARY_DIRS
#define TUNEKIT_WHEEL_LIBRARY_DIRS ""
#endif

extern "C" char** environ;  // NOLINT: POSIX

namespace tunekit::ops::detail {
namespace {

// `size` bytes of `in` at `offset`, or an empty string when the file is shorter.
std::string read_at(std::ifstream& in, std::uint64_t offset, std::uint64_t size) {
  std::string bytes(static_cast<std::size_t>(size), '\0');
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) return {};
  return bytes;
}

// The program headers of the ELF file `in` with header `eh`.
std::vector<Elf64_Phdr> program_headers(std::ifstream& in, const Elf64_Ehdr& eh) {
  const std::string table =
      read_at(in, eh.e_phoff, static_cast<std::uint64_t>(eh.e_phnum) * sizeof(Elf64_Phdr));
  std::vector<Elf64_Phdr> out(table.size() / sizeof(Elf64_Phdr));
  if (!out.empty()) std::memcpy(out.data(), table.data(), out.size() * sizeof(Elf64_Phdr));
  return out;
}

// Maps a virtual address of the ELF image to its file offset through the PT_LOAD headers.
bool file_offset(const std::vector<Elf64_Phdr>& phdrs, Elf64_Addr addr, std::uint64_t& out) {
  for (const Elf64_Phdr& ph : phdrs) {
    if (ph.p_type == PT_LOAD && addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_filesz) {
      out = addr - ph.p_vaddr + ph.p_offset;
      return true;
    }
  }
  return false;
}

// The PT_DYNAMIC segment's entries, up to DT_NULL.
std::vector<Elf64_Dyn> dynamic_entries(std::ifstream& in, const std::vector<Elf64_Phdr>& phdrs) {
  std::vector<Elf64_Dyn> out;
  for (const Elf64_Phdr& ph : phdrs) {
    if (ph.p_type != PT_DYNAMIC) continue;
    const std::string bytes = read_at(in, ph.p_offset, ph.p_filesz);
    for (std::size_t off = 0; off + sizeof(Elf64_Dyn) <= bytes.size(); off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d{};
      std::memcpy(&d, bytes.data() + off, sizeof d);
      if (d.d_tag == DT_NULL) break;
      out.push_back(d);
    }
  }
  return out;
}

// Opens the not yet loaded dependencies of `path` that lie in `dir`, depth first.
void open_neighbours(const std::string& path, const std::string& dir,
                     std::vector<std::string>& visited) {
  Expected<std::vector<std::string>> needed = elf_needed(path);
  if (!needed) return;  // dlopen of `path` will report what is wrong
  for (const std::string& soname : *needed) {
    const std::string dep = dir + "/" + soname;
    if (std::find(visited.begin(), visited.end(), soname) != visited.end()) continue;
    visited.push_back(soname);
    if (!is_regular_file(dep)) continue;  // a system library: the loader finds it
    if (void* loaded = dlopen(soname.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
      dlclose(loaded);  // already there (drops only the reference NOLOAD took)
      continue;
    }
    open_neighbours(dep, dir, visited);
    if (dlopen(dep.c_str(), RTLD_NOW | RTLD_LOCAL) == nullptr) {
      const char* error = dlerror();
      log::info(1, "ops: cannot preload {}: {}", dep, error != nullptr ? error : "?");
    }
  }
}

}  // namespace

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::vector<std::string> wheel_library_dirs() {
  std::vector<std::string> dirs;
  std::string_view text = TUNEKIT_WHEEL_LIBRARY_DIRS;
  while (!text.empty()) {
    const std::size_t colon = text.find(':');
    if (colon != 0) dirs.emplace_back(text.substr(0, colon));
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  return dirs;
}

Expected<std::string> locate_wheel_library(const WheelLibrary& lib) {
  return locate_wheel_library(lib, wheel_library_dirs());
}

Expected<std::string> locate_wheel_library(const WheelLibrary& lib,
                                           const std::vector<std::string>& search_dirs) {
  const std::string env(lib.env);
  if (const char* path = std::getenv(env.c_str()); path != nullptr && *path != '\0') {
    if (is_regular_file(path)) return std::string(path);
    return Status(StatusCode::kNotFound,
                  fmt::format("{}={}: no such file ({})", lib.env, path, lib.name));
  }
  for (const std::string& dir : search_dirs) {
    const std::string path = fmt::format("{}/{}", dir, lib.file);
    if (is_regular_file(path)) return path;
  }
  return Status(
      StatusCode::kNotFound,
      fmt::format("{} not found ({} not in {}; {} and reconfigure, or set {})", lib.name, lib.file,
                  search_dirs.empty() ? std::string("any directory CMake found")
                                      : fmt::format("{}", fmt::join(search_dirs, ", ")),
                  lib.pip, lib.env));
}

std::string wheel_missing(const WheelLibrary& lib) {
  if (TUNEKIT_OPS_ASAN) return "RTLD_DEEPBIND does not work under AddressSanitizer";
  Expected<std::string> path = locate_wheel_library(lib);
  if (!path) return path.status().message();
  Expected<std::vector<std::string>> elf = elf_needed(*path);
  if (!elf) return fmt::format("{} is not a shared library ({})", *path, elf.status().message());
  return {};
}

Expected<std::vector<std::string>> elf_needed(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kIoError, fmt::format("{}: cannot open", path));
  Elf64_Ehdr eh{};
  const std::string header = read_at(in, 0, sizeof eh);
  if (header.empty()) return Status(StatusCode::kParseError, path + ": not an ELF file");
  std::memcpy(&eh, header.data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr)) {
    return Status(StatusCode::kParseError, path + ": not a 64-bit ELF file");
  }
  const std::vector<Elf64_Phdr> phdrs = program_headers(in, eh);
  const std::vector<Elf64_Dyn> dyn = dynamic_entries(in, phdrs);
  Elf64_Addr strtab = 0;
  std::uint64_t strtab_size = 0;
  for (const Elf64_Dyn& d : dyn) {
    if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
    if (d.d_tag == DT_STRSZ) strtab_size = d.d_un.d_val;
  }
  std::uint64_t strtab_off = 0;
  if (dyn.empty() || strtab_size == 0 || !file_offset(phdrs, strtab, strtab_off)) {
    return Status(StatusCode::kParseError, path + ": no dynamic section");
  }
  const std::string strings = read_at(in, strtab_off, strtab_size);
  if (strings.empty()) return Status(StatusCode::kParseError, path + ": truncated string table");
  std::vector<std::string> needed;
  for (const Elf64_Dyn& d : dyn) {
    if (d.d_tag != DT_NEEDED) continue;
    if (d.d_un.d_val >= strings.size()) {
      return Status(StatusCode::kParseError, path + ": bad DT_NEEDED");
    }
    needed.emplace_back(strings.c_str() + d.d_un.d_val);
  }
  return needed;
}

Expected<void*> open_wheel_library(const std::string& path,
                                   const std::vector<std::string>& environment) {
  if (TUNEKIT_OPS_ASAN) {
    return Status(StatusCode::kUnsupported,
                  fmt::format("{}: RTLD_DEEPBIND does not work under AddressSanitizer", path));
  }
  static std::mutex mutex;  // one load (and one swap of `environ`) at a time
  std::lock_guard lock(mutex);
  std::vector<std::string> visited;
  open_neighbours(path, directory_of(path), visited);
  // The library's initialisers read their settings while dlopen runs. The strings stay for the
  // life of the process: a library may keep pointers getenv() gave it.
  char** saved = environ;
  if (!environment.empty()) {
    auto* strings = new std::vector<std::string>(environment_with(environment));
    auto* env = new std::vector<char*>();
    for (std::string& s : *strings) env->push_back(s.data());
    env->push_back(nullptr);
    environ = env->data();
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  environ = saved;
  if (handle == nullptr) {
    const char* error = dlerror();
    return Status(StatusCode::kUnsupported,
                  fmt::format("cannot load {}: {}", path, error != nullptr ? error : "dlopen"));
  }
  log::info(2, "ops: loaded {} (RTLD_DEEPBIND)", path);
  return handle;
}

}  // namespace tunekit::ops::detail
