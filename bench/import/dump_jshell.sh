#!/usr/bin/env bash
# An interactive tool's heap: JShell (--execution local, so the tool, its in-process
# compiler and the user's state share one JVM) after running jshell_session.jsh, a
# session exploring the JDK's class library; dumped with jcmd GC.heap_dump once the
# session prints READY.
# Usage: bench/import/dump_jshell.sh OUT_DIR   ->  OUT_DIR/jshell.hprof
# Needs jshell and jcmd; exit 77 without them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/import/java_dump_lib.sh
source "$here/java_dump_lib.sh"
require_jdk_tools jshell jcmd bc
out=$1
mkdir -p "$out"
out=$(cd "$out" && pwd)
work="$out/jshell-work"
rm -rf "$work" && mkdir -p "$work"
mkfifo "$work/stdin.fifo"
jshell --execution local -J-Xmx4g -J-XX:+UseParallelGC "$here/jshell_session.jsh" <"$work/stdin.fifo" >"$work/jshell.out" 2>&1 &
pid=$!
exec 3>"$work/stdin.fifo"
trap 'exec 3>&-; wait $pid 2>/dev/null || true' EXIT
wait_for $pid "$work/jshell.out" 1 'READY'
if grep -qE '^(Error:|Exception )' "$work/jshell.out"; then
  echo "dump_jshell.sh: the session failed (see $work/jshell.out)"
  exit 1
fi
dump_heap $pid "$out/jshell.hprof"
echo /exit >&3
