# The Python module (src/python + python/tunekit) needs Python 3.9+ with its development files,
# nanobind and NumPy's headers, all for one interpreter: Python_EXECUTABLE when given (pip /
# scikit-build-core give theirs), else the first `python3` on PATH (a virtual environment, pyenv),
# the interpreter scripts/install-deps.sh installs nanobind, NumPy and pytest into.
# Sets TUNEKIT_HAVE_PYTHON, and TUNEKIT_NUMPY_INCLUDE; without a piece the module is skipped
# with a message (an error when TUNEKIT_PYTHON_REQUIRED, as under pip).
set(TUNEKIT_HAVE_PYTHON OFF)
if(NOT TUNEKIT_PYTHON)
  return()
endif()

function(tunekit_python_skip reason)
  if(TUNEKIT_PYTHON_REQUIRED)
    message(FATAL_ERROR "tunekit: the Python module cannot be built: ${reason}")
  endif()
  message(STATUS "tunekit: Python module skipped: ${reason} (see docs/python.md)")
endfunction()

if(NOT Python_EXECUTABLE)
  find_program(TUNEKIT_PYTHON3_ON_PATH python3)
  if(TUNEKIT_PYTHON3_ON_PATH)
    # Resolve shims (pyenv) to the interpreter itself.
    execute_process(COMMAND ${TUNEKIT_PYTHON3_ON_PATH} -c "import sys; print(sys.executable)"
      OUTPUT_VARIABLE _py OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
    if(_rc EQUAL 0 AND EXISTS "${_py}")
      set(Python_EXECUTABLE "${_py}" CACHE FILEPATH "Interpreter the Python module is built for")
    endif()
  endif()
endif()
find_package(Python 3.9 COMPONENTS Interpreter Development.Module)
if(NOT Python_FOUND)
  tunekit_python_skip("no Python 3.9+ with development files (python3-dev)")
  return()
endif()
execute_process(COMMAND ${Python_EXECUTABLE} -m nanobind --cmake_dir
  OUTPUT_VARIABLE _nb_dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc ERROR_QUIET)
if(NOT _rc EQUAL 0)
  tunekit_python_skip("nanobind is not installed for ${Python_EXECUTABLE} (pip install nanobind)")
  return()
endif()
find_package(nanobind CONFIG PATHS ${_nb_dir} NO_DEFAULT_PATH)
if(NOT nanobind_FOUND)
  tunekit_python_skip("nanobind's CMake files not found in ${_nb_dir}")
  return()
endif()
execute_process(COMMAND ${Python_EXECUTABLE} -c "import numpy; print(numpy.get_include())"
  OUTPUT_VARIABLE TUNEKIT_NUMPY_INCLUDE OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc
  ERROR_QUIET)
if(NOT _rc EQUAL 0 OR NOT EXISTS "${TUNEKIT_NUMPY_INCLUDE}/numpy/arrayobject.h")
  tunekit_python_skip("NumPy (with its C headers) is not installed for ${Python_EXECUTABLE}")
  return()
endif()
message(STATUS "tunekit: Python module for ${Python_EXECUTABLE} (Python ${Python_VERSION}, "
  "nanobind ${nanobind_VERSION})")
set(TUNEKIT_HAVE_PYTHON ON)
