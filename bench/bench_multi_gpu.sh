#!/usr/bin/env bash
# One heap on one device against the same heap spread over several (not a test; figures
# go to docs/PERFORMANCE.md): for each SPEC, `gcvm mark` with gpu-bfs on one device
# (--single) and with gpu-bfs on the device list (--devices) once per exchange
# (--exchanges), REPS times each, every run doing C collections (the first syncs the
# whole heap to the devices: the cold pause; the others re-mark the survivors: warm).
# Before the timed runs, one run per SPEC on the device list checks its marks with
# --verify (--no-verify skips it: on 10^9 objects it runs the serial marker and a
# checker on the host, minutes). Every run's mark digests must equal the one-device run's (the same marks);
# a failure or a mismatch is printed and the script exits 1. The table comes last:
# per SPEC and configuration, medians over the runs (warm figures: over collections
# 2..C) of the cold and warm pause, the mark, the kernel (the slowest partition), the
# exchange (host time, MB moved, bytes per reference into another partition, its
# share of the mark), load imbalance (most references read by one partition over the
# mean), rounds, and the speed-ups over one device of kernel + exchange and of the warm
# pause.
#
# Usage: bench/bench_multi_gpu.sh [--build=DIR] [--reps=R] [--collections=C] [--seed=S]
#          [--single=DEVICE] [--devices=LIST] [--exchanges=nccl,host] [--no-verify] [SPEC...]
#   defaults: --build=build/gpu if it holds gcvm, else build/release; --reps=2
#   --collections=4 --seed=42 --single=cuda:0 --devices=cuda:all --exchanges=nccl,host;
#   SPECs rmat:26 rmat:27 bulk:1000000000:2 (docs/multi-gpu.md says what each needs)
#   On PoCL: --single=opencl:0 --devices=opencl:0,0 --exchanges=host rmat:14
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
[ -x build/gpu/gcvm ] && build=build/gpu
reps=2
collections=4
seed=42
single=cuda:0
devices=cuda:all
exchanges=nccl,host
verify=1
specs=()
usage="usage: $0 [--build=DIR] [--reps=R] [--collections=C] [--seed=S] [--single=DEVICE] [--devices=LIST] [--exchanges=nccl,host] [--no-verify] [SPEC...]"
for a in "$@"; do
  case "$a" in
    --build=*) build="${a#--build=}" ;;
    --reps=*) reps="${a#--reps=}" ;;
    --collections=*) collections="${a#--collections=}" ;;
    --seed=*) seed="${a#--seed=}" ;;
    --single=*) single="${a#--single=}" ;;
    --devices=*) devices="${a#--devices=}" ;;
    --exchanges=*) exchanges="${a#--exchanges=}" ;;
    --no-verify) verify=0 ;;
    -*) echo "$usage" >&2; exit 2 ;;
    *) specs+=("$a") ;;
  esac
done
[[ $reps =~ ^[1-9][0-9]*$ && $collections =~ ^[1-9][0-9]*$ ]] || { echo "$usage" >&2; exit 2; }
((${#specs[@]} > 0)) || specs=(rmat:26 rmat:27 bulk:1000000000:2)
gcvm="$build/gcvm"
[ -x "$gcvm" ] || { echo "bench_multi_gpu: $gcvm not found (build first, or --build=DIR)" >&2; exit 2; }
configs=("1 device|--gc=gpu-bfs --device=$single")
for exchange in ${exchanges//,/ }; do
  configs+=("$devices $exchange|--gc=gpu-bfs --device=$devices --gc-opt exchange=$exchange")
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for s in "${!specs[@]}"; do
  spec=${specs[$s]}
  # shellcheck disable=SC2086
  if ((verify)) && ! "$gcvm" mark --graph="$spec" --seed="$seed" ${configs[1]#*|} --verify >"$tmp/verify.$s.log" 2>&1; then
    echo "bench_multi_gpu: $spec on $devices failed --verify: $(tail -2 "$tmp/verify.$s.log" | tr '\n' ' ')"
    status=1
  fi
  for ((r = 1; r <= reps; ++r)); do
    for i in "${!configs[@]}"; do
      flags=${configs[$i]#*|}
      # shellcheck disable=SC2086
      if ! "$gcvm" mark --graph="$spec" --seed="$seed" --collections="$collections" $flags --stats=json \
           >"$tmp/$s.$i.$r.json" 2>"$tmp/$s.$i.$r.err"; then
        echo "bench_multi_gpu: $spec under ${configs[$i]%%|*} failed: $(tail -1 "$tmp/$s.$i.$r.err")"
        rm -f "$tmp/$s.$i.$r.json"
        status=1
      fi
    done
  done
done
labels=()
for c in "${configs[@]}"; do labels+=("${c%%|*}"); done
python3 - "$tmp" "$reps" "${labels[@]}" -- "${specs[@]}" <<'PY' || status=1
import json, statistics, sys
tmp, reps = sys.argv[1], int(sys.argv[2])
split = sys.argv.index("--")
labels, specs = sys.argv[3:split], sys.argv[split + 1:]
mismatch = False

def detail(c, key):
    return c.get("mark_details", {}).get(key, 0.0)

def figures(runs):
    """Medians over the runs: cold = first collection, warm = the others (or the first alone)."""
    def med(f, warm=True):
        values = []
        for run in runs:
            cs = run["collections"]
            pick = cs[1:] if warm and len(cs) > 1 else cs[:1]
            values.append(statistics.median(f(c) for c in pick))
        return statistics.median(values)
    return {
        "cold": med(lambda c: c["pause_ms"], warm=False),
        "pause": med(lambda c: c["pause_ms"]),
        "mark": med(lambda c: c["mark_ms"]),
        "kernel": med(lambda c: detail(c, "kernel_ms")),
        "exchange": med(lambda c: detail(c, "exchange_ms")),
        "mb": med(lambda c: detail(c, "exchange_bytes")) / 1e6,
        "per_ref": med(lambda c: detail(c, "exchange_bytes_per_remote_reference")),
        "share": med(lambda c: detail(c, "exchange_fraction")) * 100,
        "imbalance": med(lambda c: detail(c, "load_imbalance") or 1.0),
        "rounds": med(lambda c: detail(c, "exchange_rounds")),
        "partitions": med(lambda c: detail(c, "partitions") or 1),
    }

print(f"{'spec':<20} {'configuration':<20} {'K':>2} {'cold ms':>9} {'pause ms':>9} {'mark ms':>9} {'kernel ms':>9} "
      f"{'exch ms':>8} {'exch MB':>8} {'B/remote':>8} {'exch %':>6} {'imbal':>5} {'rounds':>6} "
      f"{'x kern+ex':>9} {'x pause':>7}")
for s, spec in enumerate(specs):
    rows, digests = [], {}
    for i, label in enumerate(labels):
        runs = []
        for r in range(1, reps + 1):
            try:
                runs.append(json.load(open(f"{tmp}/{s}.{i}.{r}.json")))
            except (OSError, ValueError):
                continue
            digests.setdefault(i, []).append([c.get("mark_digest") for c in runs[-1]["collections"]])
        rows.append((label, figures(runs) if runs else None))
    reference = next(iter(digests.values()))[0] if digests else None
    for i, lists in digests.items():
        if any(d != reference for d in lists):
            print(f"bench_multi_gpu: {spec} under {labels[i]} marked other objects than on one device")
            mismatch = True
    one = rows[0][1]
    for label, f in rows:
        if f is None:
            print(f"{spec:<20} {label:<20} failed")
            continue
        work = f["kernel"] + f["exchange"]
        speedup = f"{one['kernel'] / work:.2f}x" if one and work > 0 else ""
        pause = f"{one['pause'] / f['pause']:.2f}x" if one and f["pause"] > 0 else ""
        print(f"{spec:<20} {label:<20} {f['partitions']:>2.0f} {f['cold']:>9.1f} {f['pause']:>9.2f} {f['mark']:>9.2f} "
              f"{f['kernel']:>9.2f} {f['exchange']:>8.2f} {f['mb']:>8.1f} {f['per_ref']:>8.3f} {f['share']:>6.1f} "
              f"{f['imbalance']:>5.2f} {f['rounds']:>6.0f} {speedup:>9} {pause:>7}")
sys.exit(1 if mismatch else 0)
PY
exit $status
