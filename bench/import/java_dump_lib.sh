# shellcheck shell=bash
# Shared by the bench/import/dump_*.sh scripts (sourced, not run): checks for the JDK
# tools, waits for a Java process to reach a point, dumps its heap with jcmd.

# Exits 77 (skipped) with one line when a JDK tool is missing.
require_jdk_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$(basename "$0"): $tool not found (needs a JDK 17: apt-get install openjdk-17-jdk); skipped"; exit 77; }
  done
}

# The JDK's src.zip, or exit 77 when the JDK sources are not installed.
jdk_src_zip() {
  local home
  home=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
  local zip="$home/lib/src.zip"
  [ -r "$zip" ] || { echo "$(basename "$0"): $zip is missing (apt-get install openjdk-17-source); skipped" >&2; exit 77; }
  echo "$zip"
}

# wait_for PID FILE COUNT PATTERN: waits until FILE has COUNT lines matching PATTERN
# (grep -E); fails when PID exits first.
wait_for() {
  local pid=$1 file=$2 count=$3 pattern=$4
  until [ "$(grep -cE "$pattern" "$file" 2>/dev/null || true)" -ge "$count" ]; do
    kill -0 "$pid" 2>/dev/null || { echo "$(basename "$0"): process $pid exited before $count lines matching '$pattern' in $file"; return 1; }
    sleep 0.2
  done
}

# dump_heap PID OUT.hprof: a live-objects dump (jcmd runs a full GC first), timed.
dump_heap() {
  local start end
  rm -f "$2"
  start=$(date +%s.%N)
  jcmd "$1" GC.heap_dump "$2" >/dev/null
  end=$(date +%s.%N)
  echo "$(basename "$0"): jcmd GC.heap_dump $2: $(echo "$end - $start" | bc) s, $(stat -c %s "$2") bytes"
}
