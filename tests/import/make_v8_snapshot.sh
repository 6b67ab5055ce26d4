#!/usr/bin/env bash
# Writes OUT/node.heapsnapshot with tests/import/node/make_v8_snapshot.js. Exit 77
# (ctest: skipped) when node is missing.
set -euo pipefail
out=$1
command -v node >/dev/null || { echo "make_v8_snapshot: node not found; skipping the real V8 test"; exit 77; }
rm -rf "$out" && mkdir -p "$out"
node "$(cd "$(dirname "$0")" && pwd)/node/make_v8_snapshot.js" "$out/node.heapsnapshot"
