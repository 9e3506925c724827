# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2154  # sourced by suite.sh: it sets raw, src, build, out_dir
# suite_programs.sh - group 4, sourced by bench/suite.sh: real programs,
# by the existing scripts, whose raw figures (SUITE_RAW) make the group's
# table and whose own reports, noise-floor line included, are kept beside
# it in programs.txt.
#   run_programs.sh  python (also with PYTHONMALLOC=malloc: its own
#                    allocator off), sort, gzip, xz, git, gcc (a compiler),
#                    sqlite3 (a database): wall and CPU s, peak RSS
#   run_redis.sh     redis-server, single-threaded and with io-threads 2
#                    (a threaded server under load): kreq/s, peak RSS

# PROGRAM_ROUNDS: fewer rounds for this, the slowest group.
rounds=${PROGRAM_ROUNDS:-$rounds}
export SUITE_RAW=$raw
{
  ROUNDS=$rounds "$src/bench/run_programs.sh" "$build"
  echo
  ROUNDS=$rounds REQUESTS=$((QUICK ? 100000 : 1000000)) "$src/bench/run_redis.sh" "$build"
  echo
  ROUNDS=$rounds REQUESTS=$((QUICK ? 100000 : 1000000)) IO_THREADS=2 "$src/bench/run_redis.sh" "$build"
} >"$out_dir/programs.txt" 2>>"$out_dir/errors.log" ||
  echo "suite: a real-program script failed (errors.log)" >&2
unset SUITE_RAW
