# libFuzzer targets (fuzz/), off by default. They need clang (libFuzzer ships with it;
# on Debian in libclang-rt-14-dev). With the option on, every target of this build is
# compiled with coverage instrumentation and AddressSanitizer/UBSan, so configure a
# separate build tree for fuzzing:
#   cmake -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DGCVM_BUILD_FUZZERS=ON \
#         -DGCVM_ENABLE_CUDA=OFF -DGCVM_BUILD_TESTS=OFF -DGCVM_BUILD_BENCH=OFF
#   cmake --build build/fuzz --target fuzz_trace_reader
option(GCVM_BUILD_FUZZERS "Build the libFuzzer targets under fuzz/ (clang only)" OFF)
if(GCVM_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "GCVM_BUILD_FUZZERS needs clang (e.g. -DCMAKE_CXX_COMPILER=clang++-14)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=address,undefined)
endif()
