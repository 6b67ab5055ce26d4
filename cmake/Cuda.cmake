# Finds nvcc (also at /usr/local/cuda when it is not on PATH) and enables CUDA for
# sm_90 when GCVM_ENABLE_CUDA is on. Sets GCVM_HAVE_CUDA. Device code arrives with
# the GPU markers; without nvcc the build is CPU-only.
set(GCVM_HAVE_CUDA OFF)
if(GCVM_ENABLE_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 does not know nvcc 13's C++20 flag; kernels need 17
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(GCVM_HAVE_CUDA ON)
    message(STATUS "gcvm: CUDA ${CMAKE_CUDA_COMPILER_VERSION} found, building for sm_${CMAKE_CUDA_ARCHITECTURES}")
  else()
    message(STATUS "gcvm: nvcc not found, CUDA backend not built")
  endif()
endif()
