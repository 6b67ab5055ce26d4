#!/usr/bin/env bash
# Generational vs mark-sweep collection of guest programs, per marker, side by side (not
# a test; figures go to docs/PERFORMANCE.md): GCBench, binary-trees and the game of
# life (the agent simulation) under
#   --plan=marksweep and --plan=generational (default nursery heap/8, promotion age 2)
# with --gc=serial, --gc=parallel (every core), and --gc=gpu-bfs / --gc=gpu-dfs on
# --device (default cuda:0; the GPU configurations are left out when it is not usable),
# one `gcvm compare` per program: runs interleaved, every run's guest output checked
# against the first, medians of REPS runs after one warm-up, a Markdown table each
# (young and full collections, pauses, run time; docs/comparing-collectors.md).
#
# Usage: bench/bench_vm_generational.sh [--quick] [--reps=N] [--heap=SIZE] [--gcbench=S] [--trees=N]
#                                       [--life=W,H,G] [--device=SPEC] [--build=DIR] [--out=DIR]
#                                       [-- configuration words for every run, e.g. nursery=4M]
#   --quick: GCBench S=2, binary-trees N=14, life 300x300x40
#   defaults: GCBench S=0 (full size), binary-trees N=16, life 400x400x50, --heap=64M
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
reps=3
heap=64M
gcbench=0
trees=16
life=400,400,50
device=cuda:0
out=
extra=
while (($#)); do
  case "$1" in
    --quick) gcbench=2 trees=14 life=300,300,40 ;;
    --gcbench=*) gcbench="${1#--gcbench=}" ;;
    --trees=*) trees="${1#--trees=}" ;;
    --life=*) life="${1#--life=}" ;;
    --reps=*) reps="${1#--reps=}" ;;
    --heap=*) heap="${1#--heap=}" ;;
    --device=*) device="${1#--device=}" ;;
    --build=*) build="${1#--build=}" ;;
    --out=*) out="${1#--out=}" ;;
    --) shift; extra="$*"; break ;;
    *) echo "usage: $0 [--quick] [--reps=N] [--heap=SIZE] [--gcbench=S] [--trees=N] [--life=W,H,G] [--device=SPEC] [--build=DIR] [--out=DIR] [-- words]" >&2
       exit 2 ;;
  esac
  shift
done
gcvm="$build/gcvm"
[[ -x "$gcvm" ]] || { echo "bench_vm_generational: $gcvm not built" >&2; exit 2; }
[[ "$life" =~ ^[0-9]+,[0-9]+,[0-9]+$ ]] || { echo "bench_vm_generational: --life=$life is not W,H,G" >&2; exit 2; }

markers=(serial parallel)
if "$gcvm" run workloads/micro_single.gasm --gc=gpu-bfs --device="$device" --stats=none >/dev/null 2>&1; then
  markers+=(gpu-bfs gpu-dfs)
else
  echo "(device $device is not usable: no GPU configurations)"
fi
configs=()
for m in "${markers[@]}"; do
  on=
  [[ "$m" == gpu-* ]] && on=" device=$device"
  for plan in marksweep generational; do
    configs+=(--config "name=$m/$plan gc=$m$on plan=$plan${extra:+ $extra}")
  done
done

echo "# gcvm generational vs mark-sweep, --heap=$heap${extra:+, $extra}, median of $reps (gcvm compare)"
status=0
for p in "gcbench $gcbench" "binary_trees $trees" "life ${life//,/ }"; do
  read -r program args <<<"$p"
  echo
  echo "## $program $args"
  echo
  # shellcheck disable=SC2086  # args: the guest's integer arguments, one word each
  "$gcvm" compare "workloads/$program.gasm" --heap="$heap" --reps="$reps" --warmup=1 --format=markdown \
    --metrics=young,full,pause_total_ms,pause_max_ms,pause_p50_ms,pause_p90_ms,wall_ms,mmu_10ms \
    ${out:+--out="$out/$program"} "${configs[@]}" -- $args || status=1
done
exit "$status"
