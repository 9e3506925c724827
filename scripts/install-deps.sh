#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# install-deps.sh [build|run|test|ci|bench|fuzz] - install the Debian packages a job
# needs, only those missing.  Needs root (or sudo) when something is missing.
set -euo pipefail

profile=${1:-test}
# libdw-dev: slub-symbolize, which gives report frames their file:line.
# liburcu-dev: RCU (kfree_rcu, SLAB_TYPESAFE_BY_RCU) builds against its headers; tests link it.
# valgrind: its headers (memcheck's client requests, slab_kasan.c); the tool for tests and counts.
pkgs=(build-essential cmake pkg-config libdw-dev liburcu-dev valgrind)
# The real programs the tests run under libslub (tests/programs).
programs=(python3 sqlite3 git xz-utils gzip redis-server redis-tools)
# slubfs and its tests (a live process's tree mounted through FUSE).
fuse=(fuse3 libfuse3-dev)
# clang and its runtimes: libclang-rt-14-dev has libFuzzer, ASan and UBSan
# (CI's clang and sanitizer builds, make fuzz).
fuzzing=(clang libclang-rt-14-dev)
case "$profile" in
  build) ;;
  run)   pkgs+=(python3 "${fuse[@]}") ;;	# make run: the demonstration, Python under slubrun, its live tree
  test)  pkgs+=("${programs[@]}" "${fuse[@]}") ;;
  ci)    pkgs+=("${programs[@]}" "${fuse[@]}" "${fuzzing[@]}" valgrind) ;;
  fuzz)  pkgs+=("${fuzzing[@]}") ;;	# make fuzz
  # gnuplot-nox: the suite's PNG plots, without X.
  bench) pkgs+=("${programs[@]}" valgrind libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 gnuplot-nox) ;;
  *) echo "install-deps.sh: unknown profile '$profile' (build, run, test, ci, bench, fuzz)" >&2; exit 2 ;;
esac

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps.sh: installing ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps.sh: need root to install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
