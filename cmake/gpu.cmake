# Optional GPU kernel toolchains: OpenCL (headers + ICD loader) and the CUDA toolkit (NVRTC and the
# driver header cuda.h). The CUDA driver itself is loaded at run time (dlopen "libcuda.so.1"),
# never linked, so libtunekit loads on machines without a GPU driver.
set(TUNEKIT_HAVE_OPENCL OFF)
if(TUNEKIT_WITH_OPENCL)
  find_package(OpenCL QUIET)
  if(OpenCL_FOUND)
    set(TUNEKIT_HAVE_OPENCL ON)
  endif()
endif()

set(TUNEKIT_HAVE_CUDA OFF)
if(TUNEKIT_WITH_CUDA)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::nvrtc AND EXISTS "${CUDAToolkit_INCLUDE_DIRS}/cuda.h")
    set(TUNEKIT_HAVE_CUDA ON)
    # NVRTC alone: CMake's CUDA::nvrtc also links CUDA::cuda_driver (the stub libcuda.so), which
    # would make libtunekit need libcuda.so.1 at load time.
    add_library(tunekit_nvrtc INTERFACE)
    target_link_libraries(tunekit_nvrtc INTERFACE ${CUDA_nvrtc_LIBRARY})
    target_include_directories(tunekit_nvrtc SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
  endif()
endif()

set(_opencl_state "off")
if(TUNEKIT_HAVE_OPENCL)
  set(_opencl_state "on (OpenCL ${OpenCL_VERSION_STRING})")
elseif(TUNEKIT_WITH_OPENCL)
  set(_opencl_state "off (not found)")
endif()
set(_cuda_state "off")
if(TUNEKIT_HAVE_CUDA)
  set(_cuda_state "on (toolkit ${CUDAToolkit_VERSION}, NVRTC, default arch ${TUNEKIT_CUDA_ARCH})")
elseif(TUNEKIT_WITH_CUDA)
  set(_cuda_state "off (toolkit, NVRTC or cuda.h not found)")
endif()
message(STATUS "tunekit GPU kernels: OpenCL ${_opencl_state}; CUDA ${_cuda_state}")
