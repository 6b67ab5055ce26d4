#!/usr/bin/env bash
# How long gcvm takes from its start to each AWFY benchmark's first instruction
# (`startup_ms` of `gcvm run --stats=json`: reading the program, compiling it and the
# standard-library modules it imports, setting up the heap), the median of RUNS runs
# each. The guest runs zero iterations. Prints a markdown table.
#
# Usage: bench/awfy/startup.sh [RUNS]   (default 5; gcvm at build/release, $GCVM overrides)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-5}
gcvm=${GCVM:-build/release/gcvm}

startup_ms() {
  "$gcvm" run "$1" --stats=json --heap=64M -- 0 2>&1 >/dev/null |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["startup_ms"])'
}

echo "| benchmark | lines (the file and its direct imports) | startup (ms, median of $runs) |"
echo "|---|---:|---:|"
for program in workloads/awfy/*.tern; do
  lines=$(cat "$program" $(sed -n 's/^import \(.*\);/vm\/lang\/stdlib\/\1.tern/p' "$program") | wc -l)
  times=()
  for ((i = 0; i < runs; i++)); do times+=("$(startup_ms "$program")"); done
  median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] }')
  echo "| $(basename "$program" .tern) | $lines | $median |"
done
