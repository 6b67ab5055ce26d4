#!/usr/bin/env bash
# The one command for the GPU machine (see ../shared/device/README.md): configure and
# build with CUDA, list devices, run the whole test suite, run the GPU marker tests
# under compute-sanitizer (memcheck and racecheck), run the GPU benchmarks, and print
# a short summary table last. Full logs go to $OUT (or ./gpu-check-logs).
#
#   STAGES="build test sanitize bench dfs-bench markers-bench huge-array-bench gen-bench sync-bench link-bench replay-bench vm-gpu-bench concurrent-bench multi-bench"
#   TEST_SUITES="test_gc test_gpu_dfs" (instead of the whole ctest: these binaries, all devices; the whole
#     ctest took longer than a device call's ten minutes with the build on the H200 machine, test_gc alone 347 s)
#   SANITIZERS="memcheck racecheck synccheck" SANITIZE_SUITES="gc dfs gen conc" (which suites go under the sanitizers)
#   SANITIZE_SECONDS=240 SANITIZE_BFS_CASES="*edge*,*mirror*" (doctest filters, no spaces)
#   SANITIZE_DFS_ARGS="-tc=*fallback*" SANITIZE_GEN_ARGS="-tc=*property*" (doctest arguments)
#   BENCH_ARGS="--quick" DFS_BENCH_ARGS="--quick" MARKERS_BENCH_ARGS="--runs 3" GEN_BENCH_ARGS="--reps=1"
#   SYNC_BENCH_ARGS="--rounds=5" (bench_mirror_sync's: the host side of a mirror sync, 1 to all threads)
#   LINK_BENCH_ARGS="--reps=25" (bench_host_link's: the link in the sync's copy patterns, a first call's cost)
#   REPLAY_BENCH_ARGS="heaps/javac.gcvmtrace.gz" (bench/bench_replay_warm.sh's arguments; carry heaps/)
#   VM_GPU_BENCH_ARGS="--reps=3" (bench/bench_vm_gpu.sh's arguments: guest runs, CPU against GPU collectors)
#   CONCURRENT_BENCH_ARGS="--reps=1 gcbench:64M:0" (bench/bench_vm_concurrent.sh's: the plans side by side)
#   MULTI_BENCH_ARGS="--reps=1 rmat:26" (bench/bench_multi_gpu.sh's: one device against cuda:all, NCCL and host)
#   bash scripts/gpu-check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-check-logs}
mkdir -p "$out"
stages=${STAGES:-build test sanitize bench}
bench_args=${BENCH_ARGS:---quick}
build=build/gpu
summary=()
note() { summary+=("$(printf '%-28s %s' "$1" "$2")"); }
has() { [[ " $stages " == *" $1 "* ]]; }
export PATH=/usr/local/cuda/bin:$PATH

if has build; then
  generator=$(command -v ninja >/dev/null && echo Ninja || echo "Unix Makefiles")
  prefix=()
  if ls .device-debs/*.deb >/dev/null 2>&1; then
    for f in .device-debs/*.deb; do dpkg -x "$f" /opt/gcdeps; done
    prefix=(-DCMAKE_PREFIX_PATH=/opt/gcdeps/usr)
    export PKG_CONFIG_SYSROOT_DIR=/opt/gcdeps PKG_CONFIG_PATH=/opt/gcdeps/usr/lib/x86_64-linux-gnu/pkgconfig
    export LD_LIBRARY_PATH=/opt/gcdeps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
  start=$SECONDS
  if cmake -S . -B "$build" -G "$generator" -DCMAKE_BUILD_TYPE=Release "${prefix[@]}" >"$out/configure.log" 2>&1 &&
     cmake --build "$build" -j "$(nproc)" >"$out/build.log" 2>&1; then
    note "build" "ok ($((SECONDS - start)) s)"
  else
    note "build" "FAILED (see build.log)"; tail -30 "$out/configure.log" "$out/build.log"; printf '%s\n' "${summary[@]}"; exit 1
  fi
fi

"$build/gcvm" devices | tee "$out/devices.log"
grep -E "GCVM_HAVE_BOEHM|bdw-gc|libgc" "$out/configure.log" | head -3

if has test && [ -n "${TEST_SUITES:-}" ]; then
  for suite in $TEST_SUITES; do
    start=$SECONDS
    "$build/tests/$suite" >"$out/$suite.log" 2>&1
    note "$suite (CUDA + OpenCL)" "rc=$? ($((SECONDS - start)) s): $(grep -E 'test cases' "$out/$suite.log" | tail -1)"
  done
elif has test; then
  start=$SECONDS
  if (cd "$build" && ctest --output-on-failure) >"$out/ctest.log" 2>&1; then
    note "ctest (all, CUDA + OpenCL)" "passed ($((SECONDS - start)) s): $(grep -E 'tests passed' "$out/ctest.log")"
  else
    note "ctest (all, CUDA + OpenCL)" "FAILED: $(grep -E 'tests passed|Failed' "$out/ctest.log" | tr '\n' ' ')"
  fi
  "$build/tests/test_gc" -tc='*gpu*' -s 2>&1 | grep -E "MESSAGE|skipped|test cases" | sort -u | head -5 >>"$out/ctest.log"
fi

if has sanitize; then
  for tool in ${SANITIZERS:-memcheck racecheck synccheck}; do
    suites=()
    for s in ${SANITIZE_SUITES:-gc dfs gen}; do
      case $s in
        gc) suites+=("test_gc -tc=${SANITIZE_BFS_CASES:-*gpu-bfs*,*mirror*} -tce=*random*") ;;
        dfs) suites+=("test_gpu_dfs ${SANITIZE_DFS_ARGS:-}") ;;
        gen) suites+=("test_generational ${SANITIZE_GEN_ARGS:-}") ;;
        conc) suites+=("test_concurrent ${SANITIZE_CONC_ARGS:-}") ;;
      esac
    done
    for suite in "${suites[@]}"; do
      start=$SECONDS
      name=${suite%% *}
      log="$out/sanitizer-$tool-$name.log"
      # shellcheck disable=SC2086
      GCVM_TEST_BACKEND=cuda timeout "${SANITIZE_SECONDS:-240}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
        "$build/tests/"$suite >"$log" 2>&1
      rc=$?
      note "sanitizer $tool $name" "$([ $rc -eq 0 ] && echo clean || echo "rc=$rc") ($((SECONDS - start)) s): $(grep -E 'ERROR SUMMARY|test cases' "$log" | tail -2 | tr '\n' ' ')"
    done
  done
fi

if has bench; then
  start=$SECONDS
  "$build/bench/bench_gpu_mark" --device=cuda $bench_args 2>&1 | tee "$out/bench_gpu_mark.log"
  note "bench_gpu_mark $bench_args" "done ($((SECONDS - start)) s)"
fi

if has dfs-bench; then
  start=$SECONDS
  "$build/bench/bench_gpu_dfs" --device=cuda ${DFS_BENCH_ARGS:-} 2>&1 | tee "$out/bench_gpu_dfs.log"
  note "bench_gpu_dfs ${DFS_BENCH_ARGS:-}" "done ($((SECONDS - start)) s)"
fi

if has markers-bench; then
  start=$SECONDS
  "$build/bench/bench_markers" ${MARKERS_BENCH_ARGS:---runs 3 --threads 1,2,4,8,16 --boehm-markers 16} 2>&1 | tee "$out/bench_markers.log"
  note "bench_markers" "done ($((SECONDS - start)) s)"
fi

if has huge-array-bench; then
  start=$SECONDS
  # shellcheck disable=SC2086
  "$build/bench/bench_huge_array" ${HUGE_ARRAY_BENCH_ARGS:-} 2>&1 | tee "$out/bench_huge_array.log"
  note "bench_huge_array ${HUGE_ARRAY_BENCH_ARGS:-}" "done ($((SECONDS - start)) s)"
fi

if has gen-bench; then
  start=$SECONDS
  # shellcheck disable=SC2086
  bash bench/bench_vm_generational.sh --build="$build" --device=cuda:0 ${GEN_BENCH_ARGS:-} 2>&1 | tee "$out/bench_vm_generational.log"
  note "bench_vm_generational ${GEN_BENCH_ARGS:-}" "done ($((SECONDS - start)) s)"
fi

if has sync-bench; then
  start=$SECONDS
  "$build/bench/bench_mirror_sync" ${SYNC_BENCH_ARGS:-} 2>&1 | tee "$out/bench_mirror_sync.log"
  note "bench_mirror_sync ${SYNC_BENCH_ARGS:-}" "done ($((SECONDS - start)) s)"
fi

if has link-bench; then
  start=$SECONDS
  # shellcheck disable=SC2086
  "$build/bench/bench_host_link" ${LINK_BENCH_ARGS:-} 2>&1 | tee "$out/bench_host_link.log"
  note "bench_host_link ${LINK_BENCH_ARGS:-}" "done ($((SECONDS - start)) s)"
fi

if has replay-bench; then
  start=$SECONDS
  # shellcheck disable=SC2086
  bash bench/bench_replay_warm.sh --build="$build" --device=cuda ${REPLAY_BENCH_ARGS:-} 2>&1 | tee "$out/bench_replay_warm.log"
  note "bench_replay_warm ${REPLAY_BENCH_ARGS:-}" "done ($((SECONDS - start)) s)"
fi

if has vm-gpu-bench; then
  start=$SECONDS
  # shellcheck disable=SC2086
  bash bench/bench_vm_gpu.sh --build="$build" --device=cuda ${VM_GPU_BENCH_ARGS:-} 2>&1 | tee "$out/bench_vm_gpu.log"
  note "bench_vm_gpu ${VM_GPU_BENCH_ARGS:-}" "done ($((SECONDS - start)) s)"
fi

if has concurrent-bench; then
  start=$SECONDS
  # shellcheck disable=SC2086
  bash bench/bench_vm_concurrent.sh --build="$build" --device=cuda ${CONCURRENT_BENCH_ARGS:-} 2>&1 |
    tee "$out/bench_vm_concurrent.log"
  note "bench_vm_concurrent ${CONCURRENT_BENCH_ARGS:-}" "done ($((SECONDS - start)) s)"
fi

if has multi-bench; then
  start=$SECONDS
  # shellcheck disable=SC2086
  bash bench/bench_multi_gpu.sh --build="$build" ${MULTI_BENCH_ARGS:-} 2>&1 | tee "$out/bench_multi_gpu.log"
  note "bench_multi_gpu ${MULTI_BENCH_ARGS:-}" "rc=${PIPESTATUS[0]} ($((SECONDS - start)) s)"
fi

if has probe && [ -d probe ]; then
  bash probe/run.sh 2>&1 | tee "$out/probe.log"
fi

echo
echo "==== gpu-check summary ($(date -u +%F) on $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)) ===="
printf '%s\n' "${summary[@]}"
