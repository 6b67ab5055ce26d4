#!/usr/bin/env bash
# The bytecode VM's benchmarks (not a test; figures go to docs/PERFORMANCE.md):
#  1. binary-trees N=16..18, gcvm (workloads/binary_trees.gasm) against Lua 5.4
#     (bench/lua/binary_trees.lua, the same algorithm), run alternately in one session;
#  2. allocation-heavy and barrier-heavy microbenchmarks (bench/gasm/) with
#     --refgraph=barrier and --refgraph=rebuild, mutator time = run - GC pause.
# Medians of REPS runs (default 3) of wall time and of CPU time (user + sys, the
# fairer figure on a shared machine). Usage:
#   bench/bench_vm.sh [--quick] [--reps=N] [--build=DIR]
# --quick runs binary-trees at N=14..16 and the microbenchmarks at a fifth of their size.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
reps=3
quick=0
for a in "$@"; do
  case "$a" in
    --quick) quick=1 ;;
    --reps=*) reps="${a#--reps=}" ;;
    --build=*) build="${a#--build=}" ;;
    *) echo "usage: $0 [--quick] [--reps=N] [--build=DIR]" >&2; exit 2 ;;
  esac
done
gcvm="$build/gcvm"
lua=$(command -v lua5.4 || true)
[[ -x "$gcvm" ]] || { echo "bench_vm: $gcvm not built" >&2; exit 2; }

# "WALL CPU" seconds of one run of "$@" (stdout discarded, stderr to $stats_file).
stats_file=$(mktemp)
time_file=$(mktemp)
trap 'rm -f "$stats_file" "$time_file"' EXIT
seconds() {
  /usr/bin/time -f "%e %U %S" -o "$time_file" "$@" >/dev/null 2>"$stats_file"
  awk '{printf "%.2f %.2f\n", $1, $2 + $3}' "$time_file"
}
# shellcheck source=bench/vm_bench_lib.sh
source bench/vm_bench_lib.sh
json_field() { grep -o "\"$1\":[0-9.e+-]*" "$stats_file" | head -1 | cut -d: -f2; }

echo "# gcvm bytecode VM benchmarks, $(date -u +%Y-%m-%d), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "## binary-trees: gcvm vs Lua 5.4 (seconds, median of $reps)"
echo
echo "| N | gcvm wall | lua5.4 wall | lua / gcvm (wall) | gcvm CPU | lua5.4 CPU | lua / gcvm (CPU) |"
echo "|---|---|---|---|---|---|---|"
ns="16 17 18"
((quick)) && ns="14 15 16"
for n in $ns; do
  gw=() gc=() lw=() lc=()
  for ((r = 0; r < reps; ++r)); do
    read -r w c < <(seconds "$gcvm" run workloads/binary_trees.gasm --stats=none -- "$n")
    gw+=("$w") gc+=("$c")
    if [[ -n "$lua" ]]; then
      read -r w c < <(seconds "$lua" bench/lua/binary_trees.lua "$n")
      lw+=("$w") lc+=("$c")
    fi
  done
  gwm=$(median "${gw[@]}") gcm=$(median "${gc[@]}")
  if [[ -n "$lua" ]]; then
    lwm=$(median "${lw[@]}") lcm=$(median "${lc[@]}")
    echo "| $n | $gwm | $lwm | $(echo "scale=2; $lwm / $gwm" | bc) | $gcm | $lcm | $(echo "scale=2; $lcm / $gcm" | bc) |"
  else
    echo "| $n | $gwm | (lua5.4 not installed) | | $gcm | | |"
  fi
done

echo
echo "## write barrier vs rebuild (median of $reps; ms)"
echo
echo "| benchmark | refgraph | run | GC pause | mutator (run - pause) | collections |"
echo "|---|---|---|---|---|---|"
alloc_n=20000000 store_n=50000000
((quick)) && alloc_n=4000000 store_n=10000000
for bench in "alloc_heavy $alloc_n" "barrier_heavy $store_n"; do
  set -- $bench
  for mode in barrier rebuild; do
    runs=() pauses=() muts=()
    for ((r = 0; r < reps; ++r)); do
      seconds "$gcvm" run "bench/gasm/$1.gasm" --refgraph="$mode" --stats=json -- "$2" >/dev/null
      run=$(json_field run_ms) pause=$(json_field total_pause_ms)
      runs+=("$run") pauses+=("$pause") muts+=("$(echo "$run - $pause" | bc)")
      count=$(json_field collection_count)
    done
    printf '| %s (%s) | %s | %.0f | %.1f | %.0f | %s |\n' "$1" "$2" "$mode" "$(median "${runs[@]}")" \
      "$(median "${pauses[@]}")" "$(median "${muts[@]}")" "$count"
  done
done
