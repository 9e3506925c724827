#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_programs.sh [BUILD_DIR] - real programs from Debian on libslub
# (libslub-malloc.so preloaded) and on glibc, jemalloc, tcmalloc and
# mimalloc: wall time and peak RSS (bench/runstat: wait4's ru_maxrss, the
# largest process of the command), ROUNDS interleaved rounds (default 3),
# the best time and the highest peak of each.  Ends with the ratios of
# libslub to the best peer of each program and their geometric means, and
# the same ratios for glibc run a second time as if it were a contender:
# the best of several noisy peers beats any one contender by chance, and that
# line says by how much on this machine today.  Last, libslub paired with
# glibc: the median of their per-round ratios (glibc is the best peer of
# most rows).  Each round starts with the next allocator in turn.
# The contenders are bench/peers.sh's; libslub is the library as shipped
# (malloc on sheaves where rseq runs).  UNQUEUED=1 runs it a second time on
# the seeds' unqueued cpu slabs, slub-unqueued (slub_malloc_sheaves=0), and
# ends with slub-unqueued over libslub per program and their geometric mean;
# BEFORE=PATH does the same for another build's library (slub-before).
# SUITE_RAW=FILE (bench/suite.sh) also appends each run's wall and CPU
# seconds and peak RSS there, in suite_lib.sh's row format.
set -euo pipefail
build=$(cd "${1:-build-bench}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
rounds=${ROUNDS:-3}
runstat=$build/bench/runstat
[ -x "$runstat" ] && [ -e "$build/libslub-malloc.so" ] || { echo "run_programs.sh: build first ($build)" >&2; exit 1; }
python=/usr/bin/python3
[ -x "$python" ] || python=python3
. "$src/bench/peers.sh"
ask_variants 0
preload[glibc-again]=
peers=("${names[@]:1}")
contenders=(libslub glibc-again)	# each against the best of the peers

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
awk 'BEGIN { srand(42); for (i = 0; i < 2000000; i++) printf "%d %08x line-%d\n", int(rand() * 1e9), i * 2654435761 % 4294967296, i }' >big.txt
head -300000 big.txt >part.txt
cat >q.sql <<'EOF'
create table t (a integer primary key, b text, c real);
with recursive n(x) as (select 1 union all select x + 1 from n where x < 300000)
insert into t select x, printf('row-%d-%x', x, x * 2654435761 % 4294967296), x / 7.0 from n;
create index tb on t(b);
select count(*), sum(a), max(b), round(avg(c), 3) from t;
select a % 10, count(*) from t group by a % 10 order by 1;
EOF
cat >repo.sh <<'EOF'
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
rm -rf repo && git init -q repo && cd repo
for i in $(seq 1 60); do
  awk -v i="$i" 'BEGIN { for (j = 0; j < 5000; j++) print j * i % 997, "file", i }' >"f$((i % 9)).txt"
  git add -A && git commit -qm "commit $i"
done
git gc -q && git log --stat >/dev/null && git diff HEAD~50 HEAD >/dev/null
EOF

declare -A cmds=(
  [python]="$python $src/tests/programs/workload.py"
  # Python's own small-object allocator off: every object is a malloc.
  [python-malloc]="PYTHONMALLOC=malloc $python $src/tests/programs/workload.py"
  [sort]="sort big.txt"
  [sort-parallel]="sort --parallel=2 -S 64M -k1,1n -k2 big.txt"
  [gzip]="gzip -6 -c big.txt"
  [xz-threads]="xz -T2 -2 --block-size=1MiB -c part.txt"
  [git]="bash repo.sh"
  [sqlite]="sqlite3 :memory: <q.sql"
  # Threaded interpreters: objects allocated in one thread, freed in another.
  [perl-threads]="perl $src/bench/threads_workload.pl"
  [python-threads]="$python $src/bench/threads_workload.py"
)
programs=(python python-malloc sort sort-parallel gzip xz-threads git gcc sqlite perl-threads
          python-threads)
# PROGRAMS="a b ..." runs only those.
if [ -n "${PROGRAMS:-}" ]; then read -r -a programs <<<"$PROGRAMS"; fi
# gcc: five of our own files, one by one (-o needs one input).  The paths
# follow src/'s layers: a file moved must be moved here too, or the run stops
# at gcc with its error (below).
cmds[gcc]="for f in slab/core/slub page/page_alloc slab/core/kmalloc malloc/malloc slab/core/slab_common; do gcc -O2 -I$src/include -I$build/include -I$src/src -c $src/src/\$f.c -o /dev/null || exit 1; done"

declare -A best_t peak_r round_t round_r
order=("${names[@]}" glibc-again "${variants[@]}")
for r in $(seq "$rounds"); do
  for prog in "${programs[@]}"; do
    # Each round starts with another allocator: no one always runs first.
    for i in "${!order[@]}"; do
      a=${order[$(((i + r - 1) % ${#order[@]}))]}
      # A program that fails stops the run, loudly: its figures would mean nothing.
      if ! line=$(preloaded "$a" "$runstat" bash -c "${cmds[$prog]}" 2>&1 >/dev/null | tail -3); then
        echo "run_programs.sh: $prog failed under $a: $line" >&2
        exit 1
      fi
      line=$(tail -1 <<<"$line")
      read -r t rss cpu <<<"$line"
      if [ -n "${SUITE_RAW:-}" ]; then
        printf 'programs\t%s\t-\t%s\tlow\t%s\t%s\t%s\n' "$prog" wall-s "$a" "$r" "$t" \
          "$prog" cpu-s "$a" "$r" "$cpu" "$prog" peak-MiB "$a" "$r" "$(awk -v k="$rss" 'BEGIN{printf "%.1f", k/1024}')" \
          >>"$SUITE_RAW"
      fi
      k="$prog/$a"
      round_t[$k/$r]=$t round_r[$k/$r]=$rss
      if [ -z "${best_t[$k]:-}" ] || awk -v a="$t" -v b="${best_t[$k]}" 'BEGIN{exit !(a<b)}'; then
        best_t[$k]=$t
      fi
      if [ -z "${peak_r[$k]:-}" ] || [ "$rss" -gt "${peak_r[$k]}" ]; then peak_r[$k]=$rss; fi
    done
  done
  echo "round $r of $rounds done" >&2
done

echo "== real programs: best wall time (s) and highest peak RSS (MiB) of $rounds interleaved rounds"
printf '%-14s' program
for a in "${names[@]}"; do printf ' %19s' "$a"; done
printf '   %-24s %-24s %s\n' "time: libslub/best peer" "RSS: libslub/best peer" \
  "glibc again/best: time RSS"
declare -A tlog rlog
n=0
for prog in "${programs[@]}"; do
  printf '%-14s' "$prog"
  bt="" bta="" br="" bra=""
  for a in "${names[@]}"; do
    t=${best_t[$prog/$a]} rss=${peak_r[$prog/$a]}
    printf ' %9.2fs %7.1fM' "$t" "$(awk -v k="$rss" 'BEGIN{print k/1024}')"
  done
  for a in "${peers[@]}"; do
    t=${best_t[$prog/$a]} rss=${peak_r[$prog/$a]}
    if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN{exit !(a<b)}'; then bt=$t bta=$a; fi
    if [ -z "$br" ] || [ "$rss" -lt "$br" ]; then br=$rss bra=$a; fi
  done
  for c in "${contenders[@]}"; do
    tr=$(awk -v a="${best_t[$prog/$c]}" -v b="$bt" 'BEGIN{printf "%.3f", a/b}')
    rr=$(awk -v a="${peak_r[$prog/$c]}" -v b="$br" 'BEGIN{printf "%.3f", a/b}')
    if [ "$c" = libslub ]; then
      printf '   %6s (%-9s)        %6s (%-9s)' "$tr" "$bta" "$rr" "$bra"
    else
      printf '   %6s %6s\n' "$tr" "$rr"
    fi
    tlog[$c]=$(awk -v s="${tlog[$c]:-0}" -v x="$tr" 'BEGIN{print s + log(x)}')
    rlog[$c]=$(awk -v s="${rlog[$c]:-0}" -v x="$rr" 'BEGIN{print s + log(x)}')
  done
  n=$((n + 1))
done
awk -v t="${tlog[libslub]}" -v r="${rlog[libslub]}" -v n="$n" \
  'BEGIN{printf "geometric mean: time %.3f, peak RSS %.3f (libslub / best peer of each program; below 1: libslub wins)\n", exp(t/n), exp(r/n)}'
awk -v t="${tlog[glibc-again]}" -v r="${rlog[glibc-again]}" -v n="$n" \
  'BEGIN{printf "calibration: glibc run again as a contender scores time %.3f, peak RSS %.3f (the noise floor of this method)\n", exp(t/n), exp(r/n)}'
for v in "${variants[@]}"; do
  for prog in "${programs[@]}"; do
    echo "$prog ${best_t[$prog/$v]} ${best_t[$prog/libslub]} ${peak_r[$prog/$v]} ${peak_r[$prog/libslub]}"
  done | awk -v v="$v" -v o="$(slub_options "$v")" '{t += log($2 / $3); r += log($4 / $5); k++
      printf "  %-12s time %.3f, peak RSS %.3f\n", $1, $2 / $3, $4 / $5}
    END {printf "%s (%s) over libslub: geometric mean time %.3f, peak RSS %.3f\n", v, o, exp(t / k), exp(r / k)}'
done
# Paired: libslub against glibc run next to it in the same round, the
# median over rounds per program, then the geometric mean; drift between
# rounds cancels, and no best-of-several-peers favours the peers.
pt=0 pr=0
for prog in "${programs[@]}"; do
  mt=$(for r in $(seq "$rounds"); do
         awk -v a="${round_t[$prog/libslub/$r]}" -v b="${round_t[$prog/glibc/$r]}" 'BEGIN{print a/b}'
       done | sort -g | awk '{v[NR]=$1} END{print NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}')
  mr=$(for r in $(seq "$rounds"); do
         awk -v a="${round_r[$prog/libslub/$r]}" -v b="${round_r[$prog/glibc/$r]}" 'BEGIN{print a/b}'
       done | sort -g | awk '{v[NR]=$1} END{print NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}')
  pt=$(awk -v s="$pt" -v x="$mt" 'BEGIN{print s + log(x)}')
  pr=$(awk -v s="$pr" -v x="$mr" 'BEGIN{print s + log(x)}')
done
awk -v t="$pt" -v r="$pr" -v n="$n" \
  'BEGIN{printf "paired with glibc (median of the per-round ratios): time %.3f, peak RSS %.3f\n", exp(t/n), exp(r/n)}'
# The machine: what a page fault costs decides what each touched page costs
# a short process in time as well as in memory (machine_faults.c).
if [ -x "$build/bench/machine_faults" ]; then
  echo "== this machine"
  "$build/bench/machine_faults"
fi
