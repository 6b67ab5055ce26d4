# shellcheck shell=bash
# Sourced by the benchmarks that take --collectors=LIST.
# pick_collectors SCRIPT LIST CONFIG...: sets `configs` to the CONFIG entries
# (LABEL|FLAGS) that LIST (comma-separated names) names, in LIST's order. A name
# stands for the label equal to it, or for LABEL-<number> (parallel for parallel-16).
# A name no entry has is an error naming the choices: exit 2.
pick_collectors() {
  local script=$1 list=$2
  shift 2
  local wanted w c label found choices=()
  for c in "$@"; do
    label=${c%%|*}
    [[ $label =~ ^(.*)-[0-9]+$ ]] && label=${BASH_REMATCH[1]}
    choices+=("$label")
  done
  configs=()
  IFS=, read -ra wanted <<<"$list"
  for w in "${wanted[@]}"; do
    found=
    for c in "$@"; do
      label=${c%%|*}
      [[ $label == "$w" || $label =~ ^"$w"-[0-9]+$ ]] && { configs+=("$c"); found=1; }
    done
    [ -n "$found" ] || {
      local named
      named=$(printf ', %s' "${choices[@]}")
      echo "$script: no collector '$w' (${named:2})" >&2
      exit 2
    }
  done
}
