#!/usr/bin/env bash
# The real Java heaps of the warm-replay benchmark (bench/bench_replay_warm.sh), made
# on a machine with a JDK 17, in the form that travels to the GPU machine (no Java
# there, at most 64 MiB of files per call):
#   javac.hprof          dump_javac.sh: javac compiling java.base, mid-compile
#   jshell.hprof         dump_jshell.sh: JShell with jshell_session.jsh's state
#   order-service.hprof  dump_order_service.sh: a shop back end's in-memory state
# Each dump is converted into a gcvm trace (`gcvm replay X.hprof --record-trace`) and
# gzip-compressed (gzip -9 for the trace; -6 for the dump, as -9 takes ten times as long
# there for 6% less); the figures of `gcvm analyze` go to X.shape.json; a table
# of sizes and heap figures is printed last. Existing dumps are kept (delete them to
# dump again).
# Usage: bench/import/make_heaps.sh GCVM_BINARY OUT_DIR   (e.g. build/release/gcvm heaps)
# Exit 77 when the JDK (or its sources, for javac) is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
gcvm=$(readlink -f "$1")
out=$2
mkdir -p "$out"
for heap in javac jshell order-service; do
  [ -f "$out/$heap.hprof" ] || bash "$here/dump_${heap//-/_}.sh" "$out"
done
printf '%-14s %9s %9s %10s %10s %6s %11s %11s %11s %11s\n' heap objects reachable references reach-refs depth \
  hprof hprof.gz trace trace.gz >"$out/sizes.txt"
for heap in javac jshell order-service; do
  dump="$out/$heap.hprof"
  "$gcvm" analyze "$dump" --plots=none --stats=json >"$out/$heap.shape.json"
  "$gcvm" replay "$dump" --record-trace="$out/$heap.gcvmtrace" --stats=json >"$out/$heap.replay.json"
  gzip -6 -c "$dump" >"$dump.gz"
  gzip -9 -c "$out/$heap.gcvmtrace" >"$out/$heap.gcvmtrace.gz"
  python3 - "$heap" "$out" >>"$out/sizes.txt" <<'PY'
import json, os, sys
heap, out = sys.argv[1], sys.argv[2]
shape = json.load(open(f"{out}/{heap}.shape.json"))
size = lambda suffix: os.path.getsize(f"{out}/{heap}{suffix}")
print(f"{heap:<14} {shape['objects']:>9} {shape['reachable_objects']:>9} {shape['references']:>10} "
      f"{shape['reachable_references']:>10} {shape['depth']['uncapped']:>6} {size('.hprof'):>11} {size('.hprof.gz'):>11} "
      f"{size('.gcvmtrace'):>11} {size('.gcvmtrace.gz'):>11}")
PY
done
cat "$out/sizes.txt"
