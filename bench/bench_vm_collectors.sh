#!/usr/bin/env bash
# Guest runs under gcvm's CPU collectors and under libgc, side by side (not a test;
# figures go to docs/PERFORMANCE.md): GCBench and binary-trees (workloads/*.gasm at
# benchmark sizes) under
#   --gc=serial, --gc=parallel --gc-threads=1,2,all, --gc=boehm --gc-threads=1,2,all
# ("all" = every core of the machine, `nproc`), one `gcvm compare` per program: runs
# interleaved, every run's guest output checked against the first, medians of REPS
# runs with one warm-up, a Markdown table per program (docs/comparing-collectors.md).
#
# What differs between the heaps, so read the columns with it in mind: the SOA heap
# collects when its limit (--heap) is full; libgc collects when its own heuristic says
# (GC_free_space_divisor), growing its heap up to the same limit, so it collects more
# often in a smaller heap. libgc objects take a header word and 16-byte granules. After
# each libgc collection gcvm walks libgc's heap to count what was marked (the census
# behind --gc-log and --stats); that walk is in no pause but in the run time.
#
# Usage: bench/bench_vm_collectors.sh [--quick] [--reps=N] [--heap=SIZE] [--gcbench=S] [--trees=N] [--build=DIR] [--out=DIR]
#   --quick: GCBench S=2 and binary-trees N=14 (seconds instead of minutes)
#   defaults: GCBench S=0 (Boehm's full sizes), binary-trees N=16, --heap=64M
#   --out=DIR: each program's summary, runs and plots in DIR/<program>
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
reps=3
heap=64M
gcbench=0
trees=16
out=
for a in "$@"; do
  case "$a" in
    --quick) gcbench=2 trees=14 ;;
    --gcbench=*) gcbench="${a#--gcbench=}" ;;
    --trees=*) trees="${a#--trees=}" ;;
    --reps=*) reps="${a#--reps=}" ;;
    --heap=*) heap="${a#--heap=}" ;;
    --build=*) build="${a#--build=}" ;;
    --out=*) out="${a#--out=}" ;;
    *) echo "usage: $0 [--quick] [--reps=N] [--heap=SIZE] [--gcbench=S] [--trees=N] [--build=DIR] [--out=DIR]" >&2; exit 2 ;;
  esac
done
gcvm="$build/gcvm"
[[ -x "$gcvm" ]] || { echo "bench_vm_collectors: $gcvm not built" >&2; exit 2; }
cores=$(nproc)
threads=(1 2)
((cores > 2)) && threads+=("$cores")
configs=(--config "gc=serial")
for t in "${threads[@]}"; do configs+=(--config "gc=parallel threads=$t"); done
if "$gcvm" run workloads/micro_single.gasm --gc=boehm --stats=none >/dev/null 2>&1; then
  for t in "${threads[@]}"; do configs+=(--config "gc=boehm threads=$t"); done
else
  echo "(this gcvm was built without libgc: no --gc=boehm rows)"
fi

echo "# gcvm guest runs: SOA-heap collectors vs libgc, --heap=$heap, median of $reps (gcvm compare)"
status=0
for p in "gcbench $gcbench" "binary_trees $trees"; do
  read -r program arg <<<"$p"
  echo
  echo "## $program $arg"
  echo
  "$gcvm" compare "workloads/$program.gasm" --heap="$heap" --reps="$reps" --warmup=1 --format=markdown \
    --metrics=collections,pause_total_ms,pause_max_ms,pause_p90_ms,mark_ms,wall_ms,cpu_ms,peak_rss_mib \
    ${out:+--out="$out/$program"} "${configs[@]}" -- "$arg" || status=1
done
exit "$status"
