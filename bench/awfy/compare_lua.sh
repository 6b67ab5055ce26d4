#!/usr/bin/env bash
# Times each Tern AWFY benchmark (workloads/awfy) against the suite's own Lua version
# on lua5.4, same iterations and inner iterations, one run each, side by side, and
# prints a markdown table with each ratio (gcvm / Lua) and the geometric mean.
#
# AWFY's Lua sources are fetched at bench time (never committed): from $AWFY_LUA_DIR
# if set (a checkout's benchmarks/Lua), else by a shallow git clone of
# https://github.com/smarr/are-we-fast-yet into a temporary directory.
#
# Usage: bench/awfy/compare_lua.sh [ITERATIONS]   (default 10; gcvm at build/release)
set -euo pipefail
cd "$(dirname "$0")/../.."
iterations=${1:-10}
gcvm=${GCVM:-build/release/gcvm}
lua=${LUA:-lua5.4}
if [[ -z "${AWFY_LUA_DIR:-}" ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  git clone -q --depth 1 https://github.com/smarr/are-we-fast-yet "$tmp/awfy"
  AWFY_LUA_DIR=$tmp/awfy/benchmarks/Lua
fi

# name, Tern file, inner iterations (AWFY's rebench.conf sizes, NBody and Mandelbrot smaller)
benchmarks=(
  "Bounce bounce 1500" "List list 1500" "Mandelbrot mandelbrot 500" "NBody nbody 250000"
  "Permute permute 1000" "Queens queens 1000" "Sieve sieve 3000" "Storage storage 1000" "Towers towers 600"
)

average_us() { sed -n 's/.*average: \([0-9.]*\)us.*/\1/p' | tail -1; }

echo "| benchmark | inner | gcvm (us/iter) | lua5.4 (us/iter) | gcvm / lua |"
echo "|---|---:|---:|---:|---:|"
log_sum=0
count=0
for entry in "${benchmarks[@]}"; do
  read -r name file inner <<<"$entry"
  ours=$("$gcvm" run "workloads/awfy/$file.tern" --heap=1G --stats=none -- "$iterations" "$inner" 1 | average_us)
  theirs=$(cd "$AWFY_LUA_DIR" && "$lua" harness.lua "$name" "$iterations" "$inner" | average_us)
  ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f", a / b }')
  log_sum=$(awk -v s="$log_sum" -v r="$ratio" 'BEGIN { print s + log(r) }')
  count=$((count + 1))
  echo "| $name | $inner | $ours | $theirs | $ratio |"
done
awk -v s="$log_sum" -v n="$count" 'BEGIN { printf "| geometric mean | | | | %.2f |\n", exp(s / n) }'
