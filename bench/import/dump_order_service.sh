#!/usr/bin/env bash
# A realistic server heap: OrderService.java (a shop back end's in-memory state, worker
# threads busy on it) at SCALE (1 = 25,000 customers and 5,000 products, about 1.1 M
# objects; the default 2 gives about 2.3 M), dumped with jcmd GC.heap_dump a second
# after it reports READY.
# Usage: bench/import/dump_order_service.sh OUT_DIR [SCALE]   ->  OUT_DIR/order-service.hprof
# Needs javac, java and jcmd; exit 77 without them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/import/java_dump_lib.sh
source "$here/java_dump_lib.sh"
require_jdk_tools javac java jcmd bc
out=$1
scale=${2:-2}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work="$out/order-service-work"
rm -rf "$work" && mkdir -p "$work/classes"
javac -d "$work/classes" "$here/OrderService.java"
mkfifo "$work/stdin.fifo"
java -Xmx6g -XX:+UseParallelGC -cp "$work/classes" OrderService "$scale" <"$work/stdin.fifo" >"$work/java.out" 2>&1 &
pid=$!
exec 3>"$work/stdin.fifo"
trap 'exec 3>&-; wait $pid 2>/dev/null || true' EXIT
wait_for $pid "$work/java.out" 1 '^READY'
sleep 1
dump_heap $pid "$out/order-service.hprof"
echo stop >&3
