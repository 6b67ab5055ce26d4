#!/usr/bin/env bash
# The bytecode VM's benchmarks (not a test; figures go to docs/performance-vm.md):
#  1. binary-trees N=16..18, gcvm (workloads/binary_trees.gasm) against Lua 5.4
#     (bench/lua/binary_trees.lua, the same algorithm), run alternately in one session;
#     medians of REPS runs of wall time and of CPU time (user + sys, the fairer figure
#     on a shared machine);
#  2. allocation-heavy and barrier-heavy microbenchmarks (bench/gasm/) with
#     --refgraph=barrier and --refgraph=rebuild, one `gcvm compare` each (mutator time
#     = run time - GC pause; docs/comparing-collectors.md).
# Usage:
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
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "bench_vm: --reps=$reps is not a positive count" >&2; exit 2; }

# "WALL CPU" seconds of one run of "$@" (output discarded).
time_file=$(mktemp)
trap 'rm -f "$time_file"' EXIT
seconds() {
  /usr/bin/time -f "%e %U %S" -o "$time_file" "$@" >/dev/null 2>&1
  awk '{printf "%.2f %.2f\n", $1, $2 + $3}' "$time_file"
}
# The median of the numbers given as arguments (the lower middle of an even count).
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

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

alloc_n=20000000 store_n=50000000
((quick)) && alloc_n=4000000 store_n=10000000
status=0
for bench in "alloc_heavy $alloc_n" "barrier_heavy $store_n"; do
  read -r program n <<<"$bench"
  echo
  echo "## write barrier vs rebuild: $program ($n), median of $reps (gcvm compare)"
  echo
  "$gcvm" compare "bench/gasm/$program.gasm" --reps="$reps" --warmup=0 --format=markdown \
    --metrics=collections,wall_ms,pause_total_ms,mutator_ms \
    --config "refgraph=barrier" --config "refgraph=rebuild" -- "$n" || status=1
done
exit "$status"
