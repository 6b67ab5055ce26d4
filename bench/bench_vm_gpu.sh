#!/usr/bin/env bash
# Whole guest runs under the CPU and GPU collectors, side by side in one session (not a
# test; figures go to docs/performance-gpu.md): each WORKLOAD (workloads/NAME.gasm with its
# arguments and heap size) under serial, parallel (--gc-threads=T), gpu-bfs (async and
# levels) and gpu-dfs (--device=D), interleaved within each of REPS repetitions. Per
# workload and collector, medians over the repetitions of the run's totals:
# collections, whole pause (sync, roots, kernel, download, sweep), max pause, mark,
# sweep, and for GPU markers the sync (milliseconds, bytes the mutator changed, bytes
# sent) and kernel time; then the warm pause (the median pause of the collections after
# the first, the cold one with the device's and the pools' first touches; median over
# the repetitions), and both pauses against the parallel collector's. Every run's guest
# output must equal the first collector's; a mismatch is printed and the script exits 1.
# The table comes last.
#
# Usage: bench/bench_vm_gpu.sh [--build=DIR] [--reps=R] [--threads=T] [--device=D]
#          [--collectors=LIST] [WORKLOAD...]
#   WORKLOAD = NAME:HEAP[:ARG,ARG...], e.g. gcbench:64M:0 binary_trees:64M:16
#   LIST = some of serial,parallel,gpu-bfs,gpu-bfs-levels,gpu-dfs (comma-separated)
#   defaults: --build=build/gpu if it holds gcvm, else build/release; --reps=3
#   --threads=16 --device=cuda, every collector; GCBench at full size (S=0), binary-trees
#   at N=16 (the size the tables before used; the Benchmarks Game runs N=21, whose long-
#   lived tree of 4 M objects takes binary_trees:2G:21, half a minute a run on the H100 hosts), and
#   churn_array at full size when workloads/churn_array.gasm exists
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
[ -x build/gpu/gcvm ] && build=build/gpu
reps=3
threads=16
device=cuda
collectors=serial,parallel,gpu-bfs,gpu-bfs-levels,gpu-dfs
workloads=()
for a in "$@"; do
  case "$a" in
    --build=*) build="${a#--build=}" ;;
    --reps=*) reps="${a#--reps=}" ;;
    --threads=*) threads="${a#--threads=}" ;;
    --device=*) device="${a#--device=}" ;;
    --collectors=*) collectors="${a#--collectors=}" ;;
    -*) echo "usage: $0 [--build=DIR] [--reps=R] [--threads=T] [--device=D] [--collectors=LIST] [NAME:HEAP[:ARGS]...]" >&2
        exit 2 ;;
    *) workloads+=("$a") ;;
  esac
done
if ((${#workloads[@]} == 0)); then
  workloads=(gcbench:64M:0 binary_trees:64M:16)
  [ -f workloads/churn_array.gasm ] && workloads+=(churn_array:512M)
fi
gcvm="$build/gcvm"
all_configs=("serial|--gc=serial" "parallel|--gc=parallel --gc-threads=$threads"
             "gpu-bfs|--gc=gpu-bfs --device=$device" "gpu-bfs-levels|--gc=gpu-bfs --device=$device --gc-opt queue=levels"
             "gpu-dfs|--gc=gpu-dfs --device=$device")
# shellcheck source=bench/collector_choice.sh
. bench/collector_choice.sh
pick_collectors bench_vm_gpu "$collectors" "${all_configs[@]}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for k in "${!workloads[@]}"; do
  IFS=: read -r name heap args <<<"${workloads[$k]}"
  program="workloads/$name.gasm"
  [ -f "$program" ] || { echo "bench_vm_gpu: $program not found" >&2; exit 2; }
  for ((r = 1; r <= reps; ++r)); do
    for i in "${!configs[@]}"; do
      flags=${configs[$i]#*|}
      # shellcheck disable=SC2086
      if ! "$gcvm" run "$program" --heap="$heap" $flags --stats=json -- ${args//,/ } \
           >"$tmp/$k.$i.$r.out" 2>"$tmp/$k.$i.$r.json"; then
        echo "bench_vm_gpu: $name under ${configs[$i]%%|*} failed: $(tail -1 "$tmp/$k.$i.$r.json")"
        status=1
      elif ! cmp -s "$tmp/$k.0.$r.out" "$tmp/$k.$i.$r.out"; then
        echo "bench_vm_gpu: $name under ${configs[$i]%%|*} printed other output than ${configs[0]%%|*}"
        status=1
      fi
    done
  done
done
labels=()
for c in "${configs[@]}"; do labels+=("${c%%|*}"); done
python3 - "$tmp" "$reps" "${labels[@]}" -- "${workloads[@]}" <<'PY'
import json, statistics, sys
tmp, reps = sys.argv[1], int(sys.argv[2])
split = sys.argv.index("--")
labels, workloads = sys.argv[3:split], sys.argv[split + 1:]
def total(run, key):
    return sum(c.get("mark_details", {}).get(key, 0) for c in run["collections"])
def warm(run):
    pauses = [c["pause_ms"] for c in run["collections"] if c["index"] > 1] or [c["pause_ms"] for c in run["collections"]]
    return statistics.median(pauses) if pauses else 0.0
print(f"{'workload':<22} {'collector':<15} {'gcs':>4} {'pause ms':>10} {'max ms':>8} {'mark ms':>9} {'sweep ms':>9} "
      f"{'sync ms':>8} {'changed MB':>10} {'sent MB':>8} {'kernel ms':>9} {'vs parallel':>11} {'warm ms':>8} {'warm vs par':>11}")
for k, w in enumerate(workloads):
    rows = []
    for i, label in enumerate(labels):
        runs = []
        for r in range(1, reps + 1):
            try:
                runs.append(json.load(open(f"{tmp}/{k}.{i}.{r}.json")))
            except (OSError, ValueError):
                pass
        if not runs:
            rows.append((label, None))
            continue
        med = lambda f: statistics.median(f(run) for run in runs)
        rows.append((label, [med(lambda j: j["collection_count"]), med(lambda j: j["total_pause_ms"]),
                             med(lambda j: j["max_pause_ms"]), med(lambda j: j["mark_ms"]), med(lambda j: j["sweep_ms"]),
                             med(lambda j: total(j, "sync_ms")), med(lambda j: total(j, "sync_changed_bytes")) / 1e6,
                             med(lambda j: total(j, "sync_bytes")) / 1e6, med(lambda j: total(j, "kernel_ms")),
                             med(warm)]))
    parallel = dict(rows).get("parallel")
    for label, f in rows:
        if f is None:
            print(f"{w:<22} {label:<15} failed")
            continue
        ratio = f"{f[1] / parallel[1]:.2f}x" if parallel and parallel[1] > 0 else ""
        warm_ratio = f"{f[9] / parallel[9]:.2f}x" if parallel and parallel[9] > 0 else ""
        print(f"{w:<22} {label:<15} {f[0]:>4.0f} {f[1]:>10.2f} {f[2]:>8.2f} {f[3]:>9.2f} {f[4]:>9.2f} {f[5]:>8.2f} "
              f"{f[6]:>10.1f} {f[7]:>8.1f} {f[8]:>9.2f} {ratio:>11} {f[9]:>8.3f} {warm_ratio:>11}")
PY
exit $status
