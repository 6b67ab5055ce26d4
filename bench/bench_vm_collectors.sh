#!/usr/bin/env bash
# Guest runs under gcvm's CPU collectors and under libgc, side by side in one session
# (issue 6; not a test, figures go to docs/PERFORMANCE.md): GCBench and binary-trees
# (workloads/*.gasm at benchmark sizes) under
#   --gc=serial, --gc=parallel --gc-threads=1,2,all, --gc=boehm --gc-threads=1,2,all
# ("all" = every core of the machine, `nproc`). For each: collections, total GC pause,
# max pause, mark time, wall time of the run and CPU time (user + sys), medians of REPS
# runs (default 3), the configurations interleaved within each repetition so that load
# drifts hit them alike. Every run's guest output must equal the serial run's.
#
# What differs between the heaps, so read the columns with it in mind: the SOA heap
# collects when its limit (--heap) is full; libgc collects when its own heuristic says
# (GC_free_space_divisor), growing its heap up to the same limit, so it collects more
# often in a smaller heap. libgc objects take a header word and 16-byte granules. After
# each libgc collection gcvm walks libgc's heap to count what was marked (the census
# behind --gc-log and --stats); that walk is not part of any pause but is part of the
# run's wall time, so it is shown ("census") and subtracted ("wall - census").
#
# Usage: bench/bench_vm_collectors.sh [--quick] [--reps=N] [--heap=SIZE] [--gcbench=S] [--trees=N] [--build=DIR]
#   --quick: GCBench S=2 and binary-trees N=14 (seconds instead of minutes)
#   defaults: GCBench S=0 (Boehm's full sizes), binary-trees N=16, --heap=64M
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
reps=3
heap=64M
gcbench=0
trees=16
for a in "$@"; do
  case "$a" in
    --quick) gcbench=2 trees=14 ;;
    --gcbench=*) gcbench="${a#--gcbench=}" ;;
    --trees=*) trees="${a#--trees=}" ;;
    --reps=*) reps="${a#--reps=}" ;;
    --heap=*) heap="${a#--heap=}" ;;
    --build=*) build="${a#--build=}" ;;
    *) echo "usage: $0 [--quick] [--reps=N] [--heap=SIZE] [--gcbench=S] [--trees=N] [--build=DIR]" >&2; exit 2 ;;
  esac
done
gcvm="$build/gcvm"
[[ -x "$gcvm" ]] || { echo "bench_vm_collectors: $gcvm not built" >&2; exit 2; }
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "bench_vm_collectors: --reps=$reps is not a positive count" >&2; exit 2; }
cores=$(nproc)
have_boehm=1
"$gcvm" run workloads/micro_single.gasm --gc=boehm --stats=none >/dev/null 2>&1 || have_boehm=0

for n in "$gcbench" "$trees"; do
  [[ "$n" =~ ^[0-9]+$ ]] || { echo "bench_vm_collectors: '$n' is not a size (a non-negative integer)" >&2; exit 2; }
done
programs=("gcbench $gcbench" "binary_trees $trees")
threads=(1 2 "$cores")
[[ "$cores" -le 2 ]] && threads=(1 2)
configs=(serial)
for t in "${threads[@]}"; do configs+=("parallel $t"); done
if ((have_boehm)); then
  for t in "${threads[@]}"; do configs+=("boehm $t"); done
fi

stats_file=$(mktemp)
time_file=$(mktemp)
out_file=$(mktemp)
reference=$(mktemp)
trap 'rm -f "$stats_file" "$time_file" "$out_file" "$reference"' EXIT

# shellcheck source=bench/vm_bench_lib.sh
source bench/vm_bench_lib.sh
census_ms() { grep -o '"census_ms":[0-9.e+-]*' "$stats_file" | cut -d: -f2 | awk '{s += $1} END {printf "%.1f", s}'; }

# One run; prints "collections total_pause max_pause mark wall_s cpu_s census_ms".
one_run() {
  local program=$1 arg=$2 gc=$3 t=${4:-}
  local flags=(--gc="$gc" --heap="$heap" --stats=json)
  [[ -n "$t" ]] && flags+=(--gc-threads="$t")
  /usr/bin/time -f "%e %U %S" -o "$time_file" "$gcvm" run "workloads/$program.gasm" "${flags[@]}" -- "$arg" \
    >"$out_file" 2>"$stats_file" || { echo "bench_vm_collectors: $program under $gc $t failed:" >&2; cat "$stats_file" >&2; exit 1; }
  # Every collector must print what the first run (serial) printed.
  if [[ ! -s "$reference" ]]; then
    cp "$out_file" "$reference"
  elif ! cmp -s "$out_file" "$reference"; then
    echo "bench_vm_collectors: $program $arg under $gc $t printed other output than under serial" >&2
    exit 1
  fi
  local count
  count=$(grep -o '"collection_count":[0-9]*' "$stats_file" | head -1 | cut -d: -f2)
  echo "$count $(json_last total_pause_ms) $(json_last max_pause_ms) $(json_last mark_ms)" \
    "$(awk '{printf "%.2f %.2f", $1, $2 + $3}' "$time_file") $(census_ms)"
}

echo "# gcvm guest runs: SOA-heap collectors vs libgc, $(date -u '+%Y-%m-%d %H:%M UTC'), $cores cores," \
  "load $(cut -d' ' -f1-3 /proc/loadavg), --heap=$heap, median of $reps"
((have_boehm)) || echo "(this gcvm was built without libgc: no --gc=boehm rows)"
echo
echo "| program | collector | threads | collections | GC pause total ms | max pause ms | mark ms | wall s | census ms | wall - census s | CPU s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for p in "${programs[@]}"; do
  read -r program arg <<<"$p"
  declare -A runs=()
  : >"$reference"
  for ((r = 0; r < reps; ++r)); do
    for c in "${configs[@]}"; do
      read -r gc t <<<"$c"
      runs["$c"]+="$(one_run "$program" "$arg" "$gc" "${t:-}")"$'\n'
    done
  done
  for c in "${configs[@]}"; do
    read -r gc t <<<"$c"
    read -r -a cols <<<"$(column_medians "${runs[$c]}")"
    label="${t:--}"
    [[ -n "$t" && "$t" == "$cores" ]] && label="$t (all)"
    net=$(awk -v w="${cols[4]}" -v c="${cols[6]}" 'BEGIN {printf "%.2f", w - c / 1000}')
    printf '| %s %s | %s | %s | %s | %.1f | %.1f | %.1f | %s | %s | %s | %s |\n' "$program" "$arg" "$gc" "$label" \
      "${cols[0]}" "${cols[1]}" "${cols[2]}" "${cols[3]}" "${cols[4]}" "${cols[6]}" "$net" "${cols[5]}"
  done
  unset runs
done
