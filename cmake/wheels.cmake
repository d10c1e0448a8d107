# GEMM libraries from PyPI wheels, newer than Debian's (scripts/install-deps.sh installs them for
# the first python3 on PATH, or TUNEKIT_WHEEL_PYTHON): MKL (`mkl`), oneDNN 3 (`onednn`, headers in
# `onednn-devel`) and OpenBLAS (`scipy-openblas32`). Nothing is linked: the candidates load the
# libraries at run time (src/ops/wheel_library.hpp) from the directories found here, or from the
# TUNEKIT_*_LIBRARY variables. Sets TUNEKIT_WHEEL_LIBRARY_DIRS (colon-separated) and, when the
# oneDNN 3 headers are there, TUNEKIT_ONEDNN3_INCLUDE; a missing wheel only leaves its candidates
# out, with the reason in `tunekit candidates`.
set(TUNEKIT_WHEEL_PYTHON "" CACHE FILEPATH
  "Interpreter whose environment holds the GEMM library wheels (default: python3 on PATH)")
set(TUNEKIT_WHEEL_LIBRARY_DIRS "")
set(TUNEKIT_ONEDNN3_INCLUDE "")

set(_wheel_python "${TUNEKIT_WHEEL_PYTHON}")
if(NOT _wheel_python)
  find_program(TUNEKIT_WHEEL_PYTHON3 python3)
  set(_wheel_python "${TUNEKIT_WHEEL_PYTHON3}")
endif()
if(_wheel_python)
  execute_process(COMMAND ${_wheel_python} -c [=[
import sys
print(sys.prefix)
try:
    import scipy_openblas32
    print(scipy_openblas32.get_lib_dir())
except Exception:
    print("")
]=]
    OUTPUT_VARIABLE _wheel_out RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_rc EQUAL 0)
    string(REPLACE "\n" ";" _wheel_lines "${_wheel_out}")
    list(GET _wheel_lines 0 _wheel_prefix)
    set(_dirs "${_wheel_prefix}/lib")
    list(LENGTH _wheel_lines _n)
    if(_n GREATER 1)
      list(GET _wheel_lines 1 _openblas_dir)
      if(_openblas_dir)
        list(APPEND _dirs "${_openblas_dir}")
      endif()
    endif()
    string(REPLACE ";" ":" TUNEKIT_WHEEL_LIBRARY_DIRS "${_dirs}")
    set(_dnnl_version "${_wheel_prefix}/include/oneapi/dnnl/dnnl_version.h")
    if(EXISTS "${_dnnl_version}")
      file(STRINGS "${_dnnl_version}" _major REGEX "#define DNNL_VERSION_MAJOR 3")
      if(_major)
        set(TUNEKIT_ONEDNN3_INCLUDE "${_wheel_prefix}/include")
      endif()
    endif()
  endif()
endif()
if(TUNEKIT_ONEDNN3_INCLUDE)
  message(STATUS "tunekit: GEMM wheels searched in ${TUNEKIT_WHEEL_LIBRARY_DIRS}; oneDNN 3 headers in ${TUNEKIT_ONEDNN3_INCLUDE}")
else()
  message(STATUS "tunekit: GEMM wheels searched in '${TUNEKIT_WHEEL_LIBRARY_DIRS}'; no oneDNN 3 headers (pip install onednn-devel): onednn3 candidates left out")
endif()
