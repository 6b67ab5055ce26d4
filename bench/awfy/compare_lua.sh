#!/usr/bin/env bash
# Times each Tern AWFY benchmark (workloads/awfy) against the suite's own Lua version
# on lua5.4 and, when `node` is installed, its JavaScript version on node: same
# iterations and inner iterations, one run each, side by side. Prints a markdown table
# with each ratio (gcvm / Lua, gcvm / node) and their geometric means.
#
# AWFY's sources are fetched at bench time (never committed), at the pinned commit
# below: from $AWFY_DIR if set (a checkout of are-we-fast-yet holding
# benchmarks/Lua and benchmarks/JavaScript), else by a git clone of
# https://github.com/smarr/are-we-fast-yet into a temporary directory.
#
# Usage: bench/awfy/compare_lua.sh [ITERATIONS [SCALE]]
#   ITERATIONS: outer iterations (default 10); SCALE: divides each benchmark's inner
#   iterations (default 1) for a quicker run. Mandelbrot, NBody, Havlak and CD keep
#   their inner counts, which AWFY verifies only at fixed sizes. gcvm at build/release
#   ($GCVM overrides).
set -euo pipefail
cd "$(dirname "$0")/../.."
iterations=${1:-10}
scale=${2:-1}
gcvm=${GCVM:-build/release/gcvm}
lua=${LUA:-lua5.4}
node=${NODE:-node}
awfy_commit=50e34b17e5fced7b8fe7afd14dc04b0ebd84a75a
if [[ -z "${AWFY_DIR:-}" ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  git clone -q https://github.com/smarr/are-we-fast-yet "$tmp/awfy"
  git -C "$tmp/awfy" checkout -q "$awfy_commit"
  AWFY_DIR=$tmp/awfy
fi
have_node=0
if command -v "$node" >/dev/null 2>&1; then have_node=1; fi

# name, Tern file, inner iterations (AWFY's rebench.conf sizes, NBody, Mandelbrot and
# DeltaBlue smaller), whether SCALE may divide it
benchmarks=(
  "Bounce bounce 1500 1" "List list 1500 1" "Mandelbrot mandelbrot 500 0" "NBody nbody 250000 0"
  "Permute permute 1000 1" "Queens queens 1000 1" "Sieve sieve 3000 1" "Storage storage 1000 1"
  "Towers towers 600 1" "Richards richards 100 1" "DeltaBlue deltablue 1000 1" "Json json 100 1"
  "Havlak havlak 1 0" "CD cd 250 0"
)

average_us() { sed -n 's/.*average: \([0-9.]*\)us.*/\1/p' | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
add_log() { awk -v s="$1" -v r="$2" 'BEGIN { print s + log(r) }'; }

header="| benchmark | inner | gcvm (us/iter) | lua5.4 (us/iter) | gcvm / lua |"
rule="|---|---:|---:|---:|---:|"
if ((have_node)); then
  header+=" node (us/iter) | gcvm / node |"
  rule+="---:|---:|"
fi
echo "$header"
echo "$rule"
lua_logs=0
node_logs=0
count=0
for entry in "${benchmarks[@]}"; do
  read -r name file inner scalable <<<"$entry"
  if ((scalable)); then inner=$(((inner + scale - 1) / scale)); fi
  ours=$("$gcvm" run "workloads/awfy/$file.tern" --heap=1G --stats=none -- "$iterations" "$inner" 1 | average_us)
  theirs=$(cd "$AWFY_DIR/benchmarks/Lua" && "$lua" harness.lua "$name" "$iterations" "$inner" | average_us)
  lua_ratio=$(ratio "$ours" "$theirs")
  lua_logs=$(add_log "$lua_logs" "$lua_ratio")
  row="| $name | $inner | $ours | $theirs | $lua_ratio |"
  if ((have_node)); then
    js=$(cd "$AWFY_DIR/benchmarks/JavaScript" && "$node" harness.js "$name" "$iterations" "$inner" | average_us)
    node_ratio=$(ratio "$ours" "$js")
    node_logs=$(add_log "$node_logs" "$node_ratio")
    row+=" $js | $node_ratio |"
  fi
  count=$((count + 1))
  echo "$row"
done
footer=$(awk -v s="$lua_logs" -v n="$count" 'BEGIN { printf "| geometric mean | | | | %.2f |", exp(s / n) }')
if ((have_node)); then
  footer+=$(awk -v s="$node_logs" -v n="$count" 'BEGIN { printf " | %.2f |", exp(s / n) }')
fi
echo "$footer"
