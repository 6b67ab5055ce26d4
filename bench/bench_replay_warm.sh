#!/usr/bin/env bash
# Warm collections of real heaps, with the synthetic mutator between them (not a test;
# figures go to docs/performance-gpu.md): for each heap and each mutation SPEC, `gcvm replay
# HEAP --collections=N --mutate=SPEC` under serial, parallel (--gc-threads=T), gpu-bfs
# (with the mirror refreshed between pauses, the default, and with refresh=off) and
# gpu-dfs (--device=D), interleaved within each of REPS repetitions. Per heap, spec and
# collector, the medians over every warm collection (the 2nd to the Nth of every
# repetition) of: the whole pause, the mark, the bytes and milliseconds of the device
# mirror's sync in the pause, the bytes refreshes sent before it, the kernel time, the
# mutator's stores per round, and, for context, the cold first collection's pause.
# Every run must mark exactly what the first collector (serial by default) marks at every
# collection (mark digests); a mismatch is printed and the script exits 1. The table comes last.
#
# HEAP: a .hprof, a V8 .heapsnapshot, a .gcvmtrace, or either of the last gzip'ed
# (.gz, unpacked into a temporary folder first). Without HEAP arguments: every
# heaps/*.gcvmtrace.gz (what bench/import/make_heaps.sh makes to be carried).
#
# Usage: bench/bench_replay_warm.sh [--build=DIR] [--collections=N] [--reps=R] [--mutate=SPEC]
#          [--seed=S] [--threads=T] [--device=D] [--out=DIR] [--collectors=LIST] [HEAP...]
#   LIST = some of serial,parallel,gpu-bfs,gpu-bfs-norefresh,gpu-dfs (comma-separated;
#   default all); marks are compared with the first one's
#   defaults: --build=build/gpu if it holds gcvm, else build/release; --collections=8
#   --reps=1 --seed=1 --threads=16, two specs: --mutate=rewire=0.0001 (pointer updates
#   only) and --mutate=rewire=0.001,replace=0.0001,garbage=64M (allocation-heavy);
#   each --mutate given replaces them (repeat it for several)
#   --device=cuda --out=a temporary folder (per-run JSON files)
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
[ -x build/gpu/gcvm ] && build=build/gpu
collections=8
reps=1
mutates=()
seed=1
threads=16
device=cuda
out=
collectors=serial,parallel,gpu-bfs,gpu-bfs-norefresh,gpu-dfs
heaps=()
for a in "$@"; do
  case "$a" in
    --build=*) build="${a#--build=}" ;;
    --collections=*) collections="${a#--collections=}" ;;
    --reps=*) reps="${a#--reps=}" ;;
    --mutate=*) mutates+=("${a#--mutate=}") ;;
    --seed=*) seed="${a#--seed=}" ;;
    --threads=*) threads="${a#--threads=}" ;;
    --device=*) device="${a#--device=}" ;;
    --out=*) out="${a#--out=}" ;;
    --collectors=*) collectors="${a#--collectors=}" ;;
    -*) echo "usage: $0 [--build=DIR] [--collections=N] [--reps=R] [--mutate=SPEC] [--seed=S] [--threads=T]" \
             "[--device=D] [--out=DIR] [--collectors=LIST] [HEAP...]" >&2
        exit 2 ;;
    *) heaps+=("$a") ;;
  esac
done
[ ${#heaps[@]} -gt 0 ] || heaps=(heaps/*.gcvmtrace.gz)
[ ${#mutates[@]} -gt 0 ] || mutates=(rewire=0.0001 "rewire=0.001,replace=0.0001,garbage=64M")
for h in "${heaps[@]}"; do [ -f "$h" ] || { echo "$0: no heap file $h" >&2; exit 2; }; done
gcvm="$build/gcvm"
[ -x "$gcvm" ] || { echo "$0: no $gcvm (build first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${out:-$tmp/runs}
mkdir -p "$out"

all_configs=("serial|--gc=serial" "parallel-$threads|--gc=parallel --gc-threads=$threads"
             "gpu-bfs|--gc=gpu-bfs --device=$device" "gpu-bfs-norefresh|--gc=gpu-bfs --gc-opt refresh=off --device=$device"
             "gpu-dfs|--gc=gpu-dfs --device=$device")
# shellcheck source=bench/collector_choice.sh
. bench/collector_choice.sh
pick_collectors bench_replay_warm "$collectors" "${all_configs[@]}"
names=()
for h in "${heaps[@]}"; do
  name=$(basename "${h%.gz}")
  file=$h
  if [[ "$h" == *.gz ]]; then
    file="$tmp/$(basename "${h%.gz}")"
    start=$SECONDS
    gzip -dc "$h" >"$file"
    echo "$name: unpacked $(stat -c %s "$h") -> $(stat -c %s "$file") bytes in $((SECONDS - start)) s"
  fi
  names+=("$name")
  for ((m = 0; m < ${#mutates[@]}; ++m)); do
    for ((rep = 1; rep <= reps; ++rep)); do
      for config in "${configs[@]}"; do
        label=${config%%|*}
        flags=${config#*|}
        json="$out/$name.$m.$label.$rep.json"
        start=$SECONDS
        # shellcheck disable=SC2086
        if ! "$gcvm" replay "$file" $flags --collections="$collections" --mutate="${mutates[m]}" --seed="$seed" \
             --stats=json >"$json" 2>"$json.err"; then
          echo "$name --mutate=${mutates[m]} $label rep $rep FAILED: $(cat "$json.err")"
          rm -f "$json"
          continue
        fi
        echo "$name --mutate=${mutates[m]} $label rep $rep: $((SECONDS - start)) s"
      done
    done
  done
  [[ "$file" == "$tmp"/* ]] && rm -f "$file"
done

python3 - "$out" "$collections" "$seed" "${names[@]}" -- "${configs[@]%%|*}" -- "${mutates[@]}" <<'PY'
import glob, json, statistics, sys
out, collections, seed = sys.argv[1:4]
rest = sys.argv[4:]
first, second = rest.index("--"), rest.index("--", rest.index("--") + 1)
names, labels, mutates = rest[:first], rest[first + 1:second], rest[second + 1:]
def med(values):
    return statistics.median(values) if values else float("nan")
rows, mismatches = [], []
for name in names:
  for m, mutate in enumerate(mutates):
    reference = None
    for label in labels:
        runs = [json.load(open(f)) for f in sorted(glob.glob(f"{out}/{name}.{m}.{label}.*.json"))]
        if not runs:
            rows.append((name, mutate, label, "failed", "", "", "", "", "", "", "", ""))
            continue
        digests = [[c["mark_digest"] for c in r["collections"]] for r in runs]
        if reference is None:
            reference = digests[0]
        for d in digests:
            if d != reference:
                mismatches.append(f"{name} --mutate={mutate} {label}: marks differ from {labels[0]}'s")
        warm = [c for r in runs for c in r["collections"][1:]]
        cold = [r["collections"][0] for r in runs]
        detail = lambda c, key: c["mark_details"].get(key)
        sync_bytes = [detail(c, "sync_bytes") for c in warm if detail(c, "sync_bytes") is not None]
        sync_ms = [detail(c, "sync_ms") for c in warm if detail(c, "sync_ms") is not None]
        refresh_bytes = [detail(c, "sync_refresh_bytes") for c in warm if detail(c, "sync_refresh_bytes") is not None]
        kernel_ms = [detail(c, "kernel_ms") for c in warm if detail(c, "kernel_ms") is not None]
        stores = [c["mutation"]["stores"] for c in warm if "mutation" in c]
        rows.append((name, mutate, label, f"{len(warm)}", f"{med([c['pause_ms'] for c in cold]):.2f}",
                     f"{med([c['pause_ms'] for c in warm]):.2f}", f"{med([c['mark_ms'] for c in warm]):.2f}",
                     f"{med(sync_bytes) / 1048576:.2f}" if sync_bytes else "-",
                     f"{med(sync_ms):.2f}" if sync_ms else "-",
                     f"{med(refresh_bytes) / 1048576:.2f}" if refresh_bytes else "-",
                     f"{med(kernel_ms):.2f}" if kernel_ms else "-", f"{med(stores):.0f}" if stores else "-"))
print()
print(f"warm collections, --seed={seed}, {collections} collections per run "
      f"(medians over collections 2..{collections} of every repetition; ms unless named)")
header = ("heap", "mutate", "collector", "warm", "cold pause", "pause", "mark", "sync MiB", "sync ms", "refresh MiB",
          "kernel ms", "stores/round")
widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
for r in [header] + rows:
    print("  ".join(str(v).rjust(w) if i > 2 else str(v).ljust(w) for i, (v, w) in enumerate(zip(r, widths))))
for m in mismatches:
    print("MISMATCH:", m)
sys.exit(1 if mismatches else 0)
PY
