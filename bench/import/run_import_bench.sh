#!/usr/bin/env bash
# Import benchmark: dumps a large Java heap (BigHeap.java, N nodes; N=35000000 gives
# a dump of about 2 GB) with jcmd and runs `gcvm analyze` on it under /usr/bin/time,
# reporting wall time and peak memory (maximum resident set size).
# Usage: bench/import/run_import_bench.sh GCVM_BINARY WORKDIR [N]
set -euo pipefail
gcvm=$1
work=$2
n=${3:-35000000}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work/classes"
javac -d "$work/classes" "$here/BigHeap.java"
rm -f "$work/stdin.fifo" "$work/big.hprof"
mkfifo "$work/stdin.fifo"
java -Xms6g -Xmx6g -XX:+UseParallelGC -cp "$work/classes" BigHeap "$n" <"$work/stdin.fifo" >"$work/java.out" &
pid=$!
exec 3>"$work/stdin.fifo"
trap 'exec 3>&-; wait $pid 2>/dev/null || true' EXIT
until grep -q READY "$work/java.out" 2>/dev/null; do
  kill -0 $pid 2>/dev/null || { echo "BigHeap exited early"; exit 1; }
  sleep 0.5
done
start=$(date +%s.%N)
jcmd $pid GC.heap_dump "$work/big.hprof" >/dev/null
echo "jcmd GC.heap_dump: $(echo "$(date +%s.%N) - $start" | bc) s"
echo done >&3
ls -l "$work/big.hprof"
/usr/bin/time -f "gcvm analyze: %e s wall, %M KiB max resident" "$gcvm" analyze "$work/big.hprof" --plots=none --out="$work/shape"
