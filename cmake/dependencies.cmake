# Finds every system dependency (all from Debian packages; see scripts/install-deps.sh).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 2.1 REQUIRED CONFIG)
find_package(SQLite3 REQUIRED)
find_package(ZLIB REQUIRED)
find_package(simdjson 3.0 REQUIRED CONFIG)
# OpenSSL libcrypto: SHA-256 keys of the kernel artefact cache (measure layer).
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
# libffi calls C/C++ kernels with arguments known only at run time (measure/cpp_backend.cpp).
pkg_check_modules(LIBFFI REQUIRED IMPORTED_TARGET libffi)
# oneDNN: Debian's CMake config drags in OpenCL; the plain library and header are enough.
find_library(TUNEKIT_DNNL_LIB NAMES dnnl REQUIRED)
find_path(TUNEKIT_DNNL_INCLUDE oneapi/dnnl/dnnl.h REQUIRED)
if(NOT TARGET DNNL::dnnl)
  add_library(DNNL::dnnl UNKNOWN IMPORTED)
  set_target_properties(DNNL::dnnl PROPERTIES IMPORTED_LOCATION ${TUNEKIT_DNNL_LIB})
endif()
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
# xgboost: Debian's CMake export is broken (missing files), so use the library directly.

# OpenBLAS (OpenMP build, so it shares libgomp's thread pool with oneDNN and Eigen): the Default
# candidate. Linked directly; BLIS is loaded at run time into its own namespaces instead.
set(TUNEKIT_OPENBLAS_DIR /usr/lib/x86_64-linux-gnu/openblas-openmp CACHE PATH "OpenBLAS build to link")
find_library(TUNEKIT_OPENBLAS_LIB NAMES openblas PATHS ${TUNEKIT_OPENBLAS_DIR} NO_DEFAULT_PATH REQUIRED)
find_path(TUNEKIT_OPENBLAS_INCLUDE cblas.h
  PATHS /usr/include/x86_64-linux-gnu/openblas-openmp /usr/include/x86_64-linux-gnu/openblas-pthread
  NO_DEFAULT_PATH REQUIRED)

# BLIS: only its path is needed at build time (dlmopen'ed per architecture at run time).
set(TUNEKIT_BLIS_LIBRARY /usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4 CACHE FILEPATH
  "BLIS shared library loaded per sub-architecture")
find_path(TUNEKIT_BLIS_INCLUDE blis.h PATHS /usr/include/x86_64-linux-gnu/blis-openmp NO_DEFAULT_PATH)

# libxsmm (static only in Debian).
find_library(TUNEKIT_XSMM_LIB NAMES xsmm PATHS /usr/lib REQUIRED)
find_library(TUNEKIT_XSMM_NOBLAS_LIB NAMES xsmmnoblas PATHS /usr/lib REQUIRED)

if(NOT TARGET xgboost::xgboost)
  find_library(TUNEKIT_XGBOOST_LIB NAMES xgboost REQUIRED)
  find_path(TUNEKIT_XGBOOST_INCLUDE xgboost/c_api.h REQUIRED)
  add_library(xgboost::xgboost UNKNOWN IMPORTED)
  set_target_properties(xgboost::xgboost PROPERTIES IMPORTED_LOCATION ${TUNEKIT_XGBOOST_LIB}
    INTERFACE_INCLUDE_DIRECTORIES ${TUNEKIT_XGBOOST_INCLUDE})
endif()

if(TUNEKIT_WITH_MPI)
  find_package(MPI COMPONENTS C)
endif()
