#!/usr/bin/env bash
# The concurrent plan against the stop-the-world plans on whole guest runs (not a test;
# figures go to docs/performance-gpu.md): for each WORKLOAD, one `gcvm compare` of
# mark-sweep and --plan=concurrent under serial, parallel (--gc-threads=T), gpu-bfs and
# gpu-dfs (--device=D), runs interleaved, REPS measured runs each after one warm-up,
# every run's guest output checked against the others. Rows: collections, max pause,
# pause p99, stalled cycles, the concurrent plan's initial and final pause p99/max,
# MMU at 1, 10 and 100 ms, run time (of the whole process, of the program alone, and
# outside it: start-up, device opening, exit), GC CPU time. With --out=DIR, each
# workload's pause timeline, histograms and MMU curves go to DIR/NAME (gnuplot).
# --device-exit=wait runs the GPU configurations with `--gc-opt device-exit=wait` (the
# process waits for the driver's teardown, gc/plans/device_exit.hpp); `both` adds, for
# each GPU configuration, a twin NAME-wait that does.
#
# Usage: bench/bench_vm_concurrent.sh [--build=DIR] [--reps=R] [--threads=T] [--device=D] [--out=DIR]
#                                     [--device-start=open|overlap] [--device-exit=detach|wait|both]
#                                     [--format=text|markdown|csv|json] [WORKLOAD...]
#   WORKLOAD = NAME:HEAP[:ARG,ARG...], e.g. gcbench:64M:0 binary_trees:64M:16
#   defaults: --build=build/gpu if it holds gcvm, else build/release; --reps=5
#   --threads=16 --device=cuda --device-start=open --device-exit=detach --format=markdown; GCBench,
#   binary-trees and churn_array at full size. --device-start=overlap adds, for each GPU
#   marker, a concurrent configuration whose device opens while the program runs
#   (NAME-conc-overlap; gc/plans/device_start.hpp).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
[ -x build/gpu/gcvm ] && build=build/gpu
reps=5
threads=16
device=cuda
out=
format=markdown
device_start=open
device_exit=detach
workloads=()
for a in "$@"; do
  case "$a" in
    --build=*) build="${a#--build=}" ;;
    --reps=*) reps="${a#--reps=}" ;;
    --threads=*) threads="${a#--threads=}" ;;
    --device=*) device="${a#--device=}" ;;
    --out=*) out="${a#--out=}" ;;
    --format=*) format="${a#--format=}" ;;
    --device-start=open|--device-start=overlap) device_start="${a#--device-start=}" ;;
    --device-exit=detach|--device-exit=wait|--device-exit=both) device_exit="${a#--device-exit=}" ;;
    -*) echo "usage: $0 [--build=DIR] [--reps=R] [--threads=T] [--device=D] [--out=DIR] [--device-start=open|overlap] [--device-exit=detach|wait|both] [--format=F] [NAME:HEAP[:ARGS]...]" >&2
        exit 2 ;;
    *) workloads+=("$a") ;;
  esac
done
((${#workloads[@]} > 0)) || workloads=(gcbench:64M:0 binary_trees:64M:16 churn_array:512M)
gcvm="$build/gcvm"
metrics=collections,pause_max_ms,pause_p99_ms,stalls,initial_p99_ms,initial_max_ms,final_p99_ms,final_max_ms
metrics+=,mmu_1ms,mmu_10ms,mmu_100ms,wall_ms,program_ms,outside_ms,gc_cpu_ms,device_ms
configs=()
for plan in marksweep concurrent; do
  short=${plan/marksweep/stw}
  short=${short/concurrent/conc}
  configs+=(--config "name=serial-$short gc=serial plan=$plan"
            --config "name=parallel-$short gc=parallel threads=$threads plan=$plan"
            --config "name=gpu-bfs-$short gc=gpu-bfs device=$device plan=$plan"
            --config "name=gpu-dfs-$short gc=gpu-dfs device=$device plan=$plan")
done
if [ "$device_start" = overlap ]; then
  for gc in gpu-bfs gpu-dfs; do
    configs+=(--config "name=$gc-conc-overlap gc=$gc device=$device plan=concurrent opt=device-start=overlap")
  done
fi
gpu_configs=()
for ((i = 1; i < ${#configs[@]}; i += 2)); do
  [[ ${configs[i]} == *" gc=gpu-"* ]] || continue
  case "$device_exit" in
    wait) configs[i]="${configs[i]} opt=device-exit=wait" ;;
    both) read -r first rest <<<"${configs[i]}"
          gpu_configs+=(--config "$first-wait $rest opt=device-exit=wait") ;;
  esac
done
configs+=("${gpu_configs[@]}")
status=0
for w in "${workloads[@]}"; do
  IFS=: read -r name heap args <<<"$w"
  program="workloads/$name.gasm"
  [ -f "$program" ] || { echo "bench_vm_concurrent: $program not found" >&2; exit 2; }
  echo "## $name (heap $heap, args ${args//,/ })"
  # shellcheck disable=SC2086
  "$gcvm" compare "$program" --heap="$heap" --reps="$reps" --warmup=1 --format="$format" --metrics="$metrics" \
      --baseline=parallel-stw ${out:+--out="$out/$name"} "${configs[@]}" -- ${args//,/ } || status=1
  echo
done
exit $status
