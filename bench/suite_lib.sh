# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2154  # sourced by suite.sh, which sets raw, rounds, build...
# suite_lib.sh - sourced by bench/suite.sh: how a measurement is taken and
# kept (what each contender runs with: bench/peers.sh's `preloaded`).
# Every measurement is one process; its numbers go to $raw, one row each:
#   group bench case metric better alloc round value
# (better: "low" for costs, "high" for rates).  suite_table.awk and
# suite_plot.sh read nothing else.

record() {	# record GROUP BENCH CASE "METRIC..." BETTER ALLOC ROUND VALUE...
  local group=$1 bench=$2 case=$3 better=$5 alloc=$6 round=$7 m
  read -r -a ms <<<"$4"
  shift 7
  for m in "${ms[@]}"; do
    [ $# -gt 0 ] || break
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$group" "$bench" "$case" "$m" "$better" \
      "$alloc" "$round" "$1" >>"$raw"
    shift
  done
}

# interleave GROUP BENCH BETTER "METRIC..." ALLOC...
# For ROUNDS rounds, each case of ${cases[@]} under each ALLOC, one process
# each (`run_one ALLOC CASE` prints a number per METRIC); each round starts
# with the next allocator, so none always runs first or on a warm machine.
# A failed run is reported and skipped: a benchmark never fails the suite.
interleave() {
  local group=$1 bench=$2 better=$3 metrics=$4 r c i a out
  shift 4
  local allocs=("$@")
  for r in $(seq "$rounds"); do
    for c in "${cases[@]}"; do
      for i in "${!allocs[@]}"; do
        a=${allocs[$(((i + r - 1) % ${#allocs[@]}))]}
        if out=$(run_one "$a" "$c" 2>>"$out_dir/errors.log") && [ -n "$out" ]; then
          # shellcheck disable=SC2086
          record "$group" "$bench" "$c" "$metrics" "$better" "$a" "$r" $out
        else
          echo "suite: $group/$bench '$c' under $a failed (errors.log)" >&2
        fi
      done
    done
    echo "  $group/$bench: round $r of $rounds" >&2
  done
}
