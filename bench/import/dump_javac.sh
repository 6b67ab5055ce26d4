#!/usr/bin/env bash
# A real compiler heap: javac compiling a module of the JDK's own sources (java.base by
# default: 3,102 files), dumped with jcmd GC.heap_dump mid-compile, once javac has
# written COUNT class files (-verbose's "[wrote" lines; by then every file is parsed
# and entered and about half the classes attributed and generated).
# Usage: bench/import/dump_javac.sh OUT_DIR [MODULE] [COUNT]   ->  OUT_DIR/javac.hprof
# Needs javac, jcmd and the JDK sources (openjdk-17-source); exit 77 without them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/import/java_dump_lib.sh
source "$here/java_dump_lib.sh"
require_jdk_tools javac jcmd bc
out=$1
module=${2:-java.base}
count=${3:-2500}
zip=$(jdk_src_zip)
mkdir -p "$out"
out=$(cd "$out" && pwd)
work="$out/javac-work"
if [ ! -d "$work/src/$module" ]; then
  mkdir -p "$work/src"
  (cd "$work/src" && unzip -q -o "$zip" "$module/*")
fi
find "$work/src/$module" -name '*.java' >"$work/files.txt"
rm -rf "$work/classes" && mkdir -p "$work/classes"
patch=()
[ "$module" = java.base ] && patch=(--patch-module "java.base=$work/src/java.base")
javac -J-Xmx6g -J-XX:+UseParallelGC -verbose -nowarn -Xmaxerrs 1 "${patch[@]}" -d "$work/classes" \
  @"$work/files.txt" >"$work/javac.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
wait_for $pid "$work/javac.log" "$count" '^\[wrote '
dump_heap $pid "$out/javac.hprof"
