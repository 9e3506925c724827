#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_small_rss.sh RUNSTAT [NAME=LIB ...] - peak RSS (KiB, median of ROUNDS
# runs, default 5) of small, short programs, where what an allocator pins at
# start-up shows: gzip, ls, git, sqlite3, python3 (PYTHONMALLOC=malloc).
# glibc runs first, then each NAME with LIB preloaded; rounds interleave.
# SLUB_OPTIONS from the environment reaches every libslub run.
#   bench/run_small_rss.sh build-rel/bench/runstat main=old/libslub-malloc.so \
#       new=build-rel/libslub-malloc.so
set -euo pipefail
runstat=$(realpath "$1"); shift
rounds=${ROUNDS:-5}
names=(glibc); libs=("")
for a in "$@"; do names+=("${a%%=*}"); libs+=("$(realpath "${a#*=}")"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
seq 1 200000 >nums.txt
git init -q repo && (cd repo && seq 1 5000 >f && git add f && git -c user.name=a -c user.email=a@b commit -qm x)
progs=(gzip ls git sqlite3 python3)
run_prog() {
	case $1 in
	gzip) exec gzip -c nums.txt >/dev/null ;;
	ls) exec ls -la /usr/bin >/dev/null ;;
	git) exec git -C repo log --stat >/dev/null ;;
	sqlite3) exec sqlite3 :memory: 'create table t(a); insert into t select value from generate_series(1,20000); select count(*) from t;' >/dev/null ;;
	python3) PYTHONMALLOC=malloc exec python3 -c 'import json; json.dumps(list(range(20000)))' ;;
	esac
}
export -f run_prog
declare -A rss
for ((r = 0; r < rounds; r++)); do
	for i in "${!names[@]}"; do
		for p in "${progs[@]}"; do
			out=$(LD_PRELOAD=${libs[$i]} "$runstat" bash -c "run_prog $p" 2>&1 >/dev/null | tail -1)
			rss[$i,$p]+="$(echo "$out" | awk '{print $2}') "
		done
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-10s' program; for n in "${names[@]}"; do printf ' %10s' "$n"; done; echo
for p in "${progs[@]}"; do
	printf '%-10s' "$p"
	for i in "${!names[@]}"; do printf ' %10s' "$(echo "${rss[$i,$p]}" | median)"; done
	echo
done
