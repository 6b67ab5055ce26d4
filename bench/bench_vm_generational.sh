#!/usr/bin/env bash
# Generational vs mark-sweep collection of guest programs, per marker, side by side in
# one session (issue 8; not a test, figures go to docs/PERFORMANCE.md): GCBench,
# binary-trees and the game of life (the agent simulation) under
#   --plan=marksweep and --plan=generational (default nursery heap/8, promotion age 2)
# with --gc=serial, --gc=parallel (every core), and --gc=gpu-bfs / --gc=gpu-dfs on
# --device (default cuda:0; the GPU rows are left out when it is not usable).
# For each: young and full collections, young per full, total GC pause, max pause, the
# young pauses' p50/p90, and the run's wall time; medians of REPS runs (default 3), the
# configurations interleaved within each repetition so that load drifts hit them alike.
# Every run's guest output must equal the first (serial mark-sweep) run's.
#
# Usage: bench/bench_vm_generational.sh [--quick] [--reps=N] [--heap=SIZE] [--gcbench=S] [--trees=N]
#                                       [--life=W,H,G] [--device=SPEC] [--build=DIR] [-- extra gcvm flags]
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
extra=()
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
    --) shift; extra=("$@"); break ;;
    *) echo "usage: $0 [--quick] [--reps=N] [--heap=SIZE] [--gcbench=S] [--trees=N] [--life=W,H,G] [--device=SPEC] [--build=DIR] [-- flags]" >&2
       exit 2 ;;
  esac
  shift
done
gcvm="$build/gcvm"
[[ -x "$gcvm" ]] || { echo "bench_vm_generational: $gcvm not built" >&2; exit 2; }
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "bench_vm_generational: --reps=$reps is not a positive count" >&2; exit 2; }
for n in "$gcbench" "$trees"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "bench_vm_generational: '$n' is not a size (a non-negative integer)" >&2; exit 2; }
done
[[ "$life" =~ ^[0-9]+,[0-9]+,[0-9]+$ ]] || { echo "bench_vm_generational: --life=$life is not W,H,G" >&2; exit 2; }

markers=(serial parallel)
if "$gcvm" run workloads/micro_single.gasm --gc=gpu-bfs --device="$device" --stats=none >/dev/null 2>&1; then
  markers+=(gpu-bfs gpu-dfs)
else
  echo "(device $device is not usable: no GPU rows)"
fi
programs=("gcbench $gcbench" "binary_trees $trees" "life ${life//,/ }")

stats_file=$(mktemp)
out_file=$(mktemp)
reference=$(mktemp)
trap 'rm -f "$stats_file" "$out_file" "$reference"' EXIT

# shellcheck source=bench/vm_bench_lib.sh
source bench/vm_bench_lib.sh
# A field of pauses.young / pauses.full (flat objects, no nested braces).
pause_field() { grep -o "\"$1\":{[^}]*}" "$stats_file" | tail -1 | grep -o "\"$2\":[0-9.e+-]*" | cut -d: -f2; }

# One run; prints "young full total_pause max_pause young_p50 young_p90 wall_ms".
one_run() {
  local program=$1 args=$2 marker=$3 plan=$4
  local flags=(--gc="$marker" --plan="$plan" --heap="$heap" --stats=json)
  [[ "$marker" == gpu-* ]] && flags+=(--device="$device")
  # shellcheck disable=SC2086
  "$gcvm" run "workloads/$program.gasm" "${flags[@]}" "${extra[@]}" -- $args >"$out_file" 2>"$stats_file" ||
    { echo "bench_vm_generational: $program under $marker $plan failed:" >&2; cat "$stats_file" >&2; exit 1; }
  if [[ ! -s "$reference" ]]; then
    cp "$out_file" "$reference"
  elif ! cmp -s "$out_file" "$reference"; then
    echo "bench_vm_generational: $program $args under $marker $plan printed other output than the first run" >&2
    exit 1
  fi
  echo "$(pause_field young count) $(pause_field full count) $(json_last total_pause_ms) $(json_last max_pause_ms)" \
    "$(pause_field young p50_ms) $(pause_field young p90_ms) $(json_last run_ms)"
}

echo "# gcvm generational vs mark-sweep, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores," \
  "load $(cut -d' ' -f1-3 /proc/loadavg), --heap=$heap ${extra[*]}, median of $reps"
echo
echo "| program | marker | plan | young | full | young per full | GC pause total ms | max pause ms | young p50 ms | young p90 ms | run ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for p in "${programs[@]}"; do
  read -r program args <<<"$p"
  declare -A runs=()
  : >"$reference"
  for ((r = 0; r < reps; ++r)); do
    for m in "${markers[@]}"; do
      for plan in marksweep generational; do
        runs["$m $plan"]+="$(one_run "$program" "$args" "$m" "$plan")"$'\n'
      done
    done
  done
  for m in "${markers[@]}"; do
    for plan in marksweep generational; do
      read -r -a cols <<<"$(column_medians "${runs[$m $plan]}")"
      ratio=$(awk -v y="${cols[0]}" -v f="${cols[1]}" 'BEGIN {if (f > 0) printf "%.1f", y / f; else print "-"}')
      printf '| %s %s | %s | %s | %s | %s | %s | %.1f | %.2f | %.3f | %.3f | %.0f |\n' "$program" "$args" "$m" "$plan" \
        "${cols[0]}" "${cols[1]}" "$ratio" "${cols[2]}" "${cols[3]}" "${cols[4]}" "${cols[5]}" "${cols[6]}"
    done
  done
  unset runs
done
