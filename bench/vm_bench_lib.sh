# shellcheck shell=bash
# Shell helpers shared by the guest-run benchmarks (bench_vm.sh, bench_vm_collectors.sh,
# bench_vm_generational.sh); source it, do not run it.

# The median of the numbers given as arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

# The last value of the numeric key $1 in the --stats=json object saved in $stats_file.
# Its keys are sorted, so a top-level figure comes after the `collections` array and
# its last occurrence is the top-level one.
# shellcheck disable=SC2154  # stats_file is the sourcing script's
json_last() { grep -o "\"$1\":[0-9.e+-]*" "$stats_file" | tail -1 | cut -d: -f2; }

# $1 holds one run per line, whitespace-separated figures; prints the median of each
# column, on one line.
column_medians() {
  local rows=$1 columns i
  columns=$(printf '%s' "$rows" | awk 'NF {print NF; exit}')
  for ((i = 1; i <= columns; ++i)); do
    # shellcheck disable=SC2046
    printf '%s ' "$(median $(printf '%s' "$rows" | awk -v i="$i" 'NF {print $i}'))"
  done
  echo
}
