# Finds the OpenCL ICD loader and headers when GCVM_ENABLE_OPENCL is on. Sets
# GCVM_HAVE_OPENCL. Without them the build has no OpenCL backend (gpu-bfs with
# --device=auto then marks on the CPU).
set(GCVM_HAVE_OPENCL OFF)
if(GCVM_ENABLE_OPENCL)
  find_package(OpenCL)
  if(OpenCL_FOUND)
    set(GCVM_HAVE_OPENCL ON)
    message(STATUS "gcvm: OpenCL ${OpenCL_VERSION_STRING} found, building the OpenCL backend")
  else()
    message(STATUS "gcvm: OpenCL not found, OpenCL backend not built")
  endif()
endif()
