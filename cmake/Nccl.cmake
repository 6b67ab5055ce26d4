# Finds NCCL for the multi-GPU exchange (gc/device/nccl_communicator.cpp) when CUDA is
# built and GCVM_ENABLE_NCCL is on. Sets GCVM_HAVE_NCCL, NCCL_INCLUDE_DIR and
# NCCL_LIBRARY. Looks in NCCL_ROOT (CMake or environment variable), the CUDA toolkit,
# the system paths, and the Python package nvidia-nccl-cu13/-cu12 (which ships
# include/nccl.h and lib/libnccl.so.2 without the unversioned link).
set(GCVM_HAVE_NCCL OFF)
if(GCVM_ENABLE_NCCL AND GCVM_HAVE_CUDA)
  set(nccl_hints)
  foreach(root IN ITEMS "${NCCL_ROOT}" "$ENV{NCCL_ROOT}")
    if(root)
      list(APPEND nccl_hints "${root}")
    endif()
  endforeach()
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    execute_process(COMMAND ${Python3_EXECUTABLE} -c "import nvidia.nccl as m; print(list(m.__path__)[0])"
                    OUTPUT_VARIABLE python_nccl OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE python_status)
    if(python_status EQUAL 0 AND python_nccl)
      list(APPEND nccl_hints "${python_nccl}")
    endif()
  endif()
  if(CUDAToolkit_LIBRARY_ROOT)
    list(APPEND nccl_hints "${CUDAToolkit_LIBRARY_ROOT}")
  endif()
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${nccl_hints} PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${nccl_hints} PATH_SUFFIXES lib lib64)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(GCVM_HAVE_NCCL ON)
    message(STATUS "gcvm: NCCL found (${NCCL_LIBRARY}): multi-GPU exchange through NCCL")
  else()
    message(STATUS "gcvm: NCCL not found (set NCCL_ROOT): multi-GPU exchange through host memory only")
  endif()
endif()
