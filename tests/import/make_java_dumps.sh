#!/usr/bin/env bash
# Builds tests/import/java/GcvmHeapFixture.java into OUT and dumps its heap with jcmd
# twice: OUT/live.hprof (GC.heap_dump: live objects only, after a full GC) and
# OUT/all.hprof (GC.heap_dump -all: unreachable objects too). Exit 77 (ctest: skipped)
# when javac, java or jcmd is missing.
set -euo pipefail
src_dir=$(cd "$(dirname "$0")" && pwd)/java
out=$1
for tool in javac java jcmd; do
  command -v "$tool" >/dev/null || { echo "make_java_dumps: $tool not found; skipping the real HPROF test"; exit 77; }
done
rm -rf "$out" && mkdir -p "$out/classes"
javac -d "$out/classes" "$src_dir/GcvmHeapFixture.java"
fifo="$out/stdin.fifo"
mkfifo "$fifo"
# Small heap, serial GC: quick start, and no young collection before the -all dump.
java -Xmx64m -Xms64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$out/classes" GcvmHeapFixture <"$fifo" >"$out/java.out" &
pid=$!
exec 3>"$fifo"  # keeps the program's stdin open until we are done
trap 'exec 3>&-; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do
  grep -q READY "$out/java.out" 2>/dev/null && break
  kill -0 $pid 2>/dev/null || { echo "make_java_dumps: the Java program exited early"; exit 1; }
  sleep 0.05
done
grep -q READY "$out/java.out" || { echo "make_java_dumps: the Java program did not get ready"; exit 1; }
jcmd $pid GC.heap_dump -all "$out/all.hprof" >"$out/jcmd-all.out"
jcmd $pid GC.heap_dump "$out/live.hprof" >"$out/jcmd-live.out"
echo done >&3
ls -l "$out"/*.hprof
