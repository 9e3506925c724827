#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# real_programs.sh BUILD_DIR CASE - run a real program from Debian on glibc's
# malloc and then under slubrun (libslub-malloc.so preloaded), and require
# the same output, the same exit status, and no report from libslub.
# CASE: python, threads, sort, gzip, xz, git, gcc, sqlite, redis, shell.
# MODE (optional third argument): debug - under slubrun --debug (slub_debug
# FZPU on every cache and on malloc-large), where the outputs must still be
# the same and no BUG report may come.
set -euo pipefail
build=$(cd "$1" && pwd) case=$2 mode=${3:-release}
slubrun_opts=()
[ "$mode" = debug ] && slubrun_opts=(--debug)
here=$(cd "$(dirname "$0")" && pwd)
slubrun=$build/tools/slubrun
# The work dir is removed by a parent that signals nothing.  An EXIT trap
# here would make bash catch SIGTERM, and a job the shell case kills
# between fork and exec would run that trap as if it were the script:
# the dir vanished under the test, or the job exited 0.
if [ -z "${REAL_PROGRAMS_WORK:-}" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  st=0; REAL_PROGRAMS_WORK=$work "$BASH" "$0" "$@" || st=$?
  exit "$st"
fi
work=$REAL_PROGRAMS_WORK
cd "$work"

# Debian's python3 (install-deps.sh installs it), not a user's shim.
python=/usr/bin/python3
[ -x "$python" ] || python=python3

fail() { echo "real_programs[$case]: $*" >&2; exit 1; }

# same OUT_NAME COMMAND...: run on glibc, then on libslub; compare.
same() {
  local name=$1; shift
  local st_glibc=0 st_slub=0
  "$@" >"$name.glibc" 2>"$name.glibc.err" || st_glibc=$?
  "$slubrun" "${slubrun_opts[@]}" -- "$@" >"$name.slub" 2>"$name.slub.err" || st_slub=$?
  [ "$st_glibc" = "$st_slub" ] || fail "$name: exit status $st_slub on libslub, $st_glibc on glibc"
  cmp -s "$name.glibc" "$name.slub" || fail "$name: output differs:
$(diff "$name.glibc" "$name.slub" | head -20)"
  if grep -qE '^(slub: |BUG |FIX )' "$name.slub.err"; then
    fail "$name: libslub reported:
$(grep -E '^(slub: |BUG |FIX |INFO: )' "$name.slub.err" | head -12)"
  fi
  echo "real_programs[$case]: $name: same output ($(wc -c <"$name.glibc") bytes), status $st_glibc${slubrun_opts[*]:+ (${slubrun_opts[*]})}"
}

# A large text file: 2 million numbered lines in a fixed shuffled order.
lines() {
  awk 'BEGIN { srand(42); for (i = 0; i < 2000000; i++) printf "%d %08x line-%d\n", int(rand() * 1e9), i * 2654435761 % 4294967296, i }'
}

case $case in
python)
  same workload "$python" "$here/workload.py"
  ;;
threads)	# multi-threaded C programs
  lines >big.txt
  same sort-parallel sort --parallel=2 -S 64M -k1,1n -k2 big.txt
  head -300000 big.txt >part.txt
  same xz-threads sh -c 'xz -T2 -2 --block-size=1MiB -c part.txt | xz -d | md5sum'
  ;;
sort)
  lines >big.txt
  same sort sort big.txt
  same sort-unique sh -c 'cut -d" " -f2 big.txt | sort -u | wc -l'
  ;;
gzip)
  lines >big.txt
  same gzip sh -c 'gzip -9 -c big.txt | md5sum'
  same gunzip sh -c 'gzip -c big.txt | gzip -dc | md5sum'
  ;;
git)
  export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t \
         GIT_COMMITTER_EMAIL=t@example.com GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" \
         GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
  make_repo() {	# the whole history under the allocator being tested
    rm -rf repo && git init -q repo && cd repo
    for i in $(seq 1 40); do
      awk -v i="$i" 'BEGIN { for (j = 0; j < 2000; j++) print j * i % 997, "file", i }' >"f$((i % 7)).txt"
      git add -A && git commit -qm "commit $i"
    done
    git gc -q && git fsck -q && git log --stat --format='%H %s' | md5sum
    git diff HEAD~30 HEAD | md5sum
    cd ..
  }
  export -f make_repo
  same git bash -c make_repo
  ;;
gcc)
  cat >prog.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct node { struct node *next; char name[32]; int value; };
static int cmp(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }
int main(void) {
	struct node *head = NULL;
	for (int i = 0; i < 1000; i++) {
		struct node *n = malloc(sizeof(*n));
		snprintf(n->name, sizeof(n->name), "node-%d", i);
		n->value = (i * 7919) % 1000;
		n->next = head;
		head = n;
	}
	int values[1000], k = 0;
	for (struct node *n = head; n; n = n->next) values[k++] = n->value;
	qsort(values, 1000, sizeof(int), cmp);
	printf("%d %d %d %s\n", values[0], values[500], values[999], head->name);
	return 0;
}
EOF
  same gcc-compile sh -c 'gcc -O2 -Wall -o prog prog.c && ./prog && gcc -O0 -g -S -o - prog.c | grep -c call'
  ;;
sqlite)
  cat >q.sql <<'EOF'
create table t (a integer primary key, b text, c real);
with recursive n(x) as (select 1 union all select x + 1 from n where x < 200000)
insert into t select x, printf('row-%d-%x', x, x * 2654435761 % 4294967296), x / 7.0 from n;
create index tb on t(b);
select count(*), sum(a), max(b), round(avg(c), 3) from t;
select b from t where b like 'row-1234%' order by b limit 5;
select a % 10, count(*) from t group by a % 10 order by 1;
delete from t where a % 3 = 0;
vacuum;
select count(*) from t;
EOF
  same sqlite sh -c 'sqlite3 db.sqlite <q.sql; rm -f db.sqlite'
  ;;
redis)	# a server: I/O and background threads, fork (BGSAVE), malloc_usable_size
  # Debian's redis-server brings jemalloc; its own run is the reference.
  # Deterministic commands (RESP for redis-cli --pipe): strings that grow
  # by APPEND and SETRANGE (realloc, up to extents of 6 MB), lists, hashes,
  # sets, sorted sets, deletes.
  awk -v N=200000 'function cmd(n, a,   i, s) { s = "*" n "\r\n"; for (i = 1; i <= n; i++) s = s "$" length(a[i]) "\r\n" a[i] "\r\n"; printf "%s", s }
  BEGIN { srand(7); for (i = 0; i < N; i++) { k = int(rand() * N / 2); r = rand()
    if (r < 0.3) { a[1] = "SET"; a[2] = "k:" k; a[3] = sprintf("%0*d", 1 + int(rand() * 300), i); cmd(3, a) }
    else if (r < 0.4) { a[1] = "APPEND"; a[2] = "s:" (k % 500); a[3] = sprintf("%0*d", 1 + int(rand() * 2000), i); cmd(3, a) }
    else if (r < 0.55) { a[1] = "RPUSH"; a[2] = "l:" (k % 300); a[3] = "v" i; cmd(3, a) }
    else if (r < 0.6) { a[1] = "LPOP"; a[2] = "l:" (k % 300); cmd(2, a) }
    else if (r < 0.72) { a[1] = "HSET"; a[2] = "h:" (k % 1000); a[3] = "f" (i % 97); a[4] = sprintf("%0*d", 1 + int(rand() * 60), i); cmd(4, a) }
    else if (r < 0.82) { a[1] = "SADD"; a[2] = "set:" (k % 200); a[3] = "m" (k % 5000); cmd(3, a) }
    else if (r < 0.92) { a[1] = "ZADD"; a[2] = "z:" (k % 100); a[3] = int(rand() * 100000); a[4] = "e" k; cmd(4, a) }
    else if (r < 0.97) { a[1] = "DEL"; a[2] = "k:" k; cmd(2, a) }
    else if (r < 0.9702) { a[1] = "SETRANGE"; a[2] = "big:" (k % 8); a[3] = int(rand() * 6000000); a[4] = "x" i; cmd(4, a) }
    else { a[1] = "INCRBY"; a[2] = "n:" (k % 50); a[3] = k; cmd(3, a) } } }' >cmds.resp
  # serve PREFIX...: the server on a socket of its own; the dataset's
  # digest after the commands, after a load by redis-benchmark, an async
  # flush (freed by a background thread while the commands run again) and
  # a BGSAVE (fork with threads running), and after a restart from that RDB.
  serve() {
    rm -rf data && mkdir data
    start() {
      "$@" redis-server --port 0 --unixsocket "$PWD/data/sock" --dir "$PWD/data" --save "" \
        --appendonly no --enable-debug-command yes --io-threads 2 --io-threads-do-reads yes \
        --lazyfree-lazy-user-flush yes >>data/log 2>>data/err &
      pid=$!
      # Ready is PONG: redis-cli exits 0 on an error reply too, and a
      # restarted server answers -LOADING while it reads the RDB.
      local deadline=$((SECONDS + 120))
      while [ $SECONDS -lt $deadline ]; do
        [ "$(redis-cli -s data/sock ping 2>/dev/null)" = PONG ] && return
        kill -0 $pid 2>/dev/null || break
        sleep 0.05
      done
      fail "redis-server did not start: $(tail -n 3 data/log data/err)"
    }
    cli() { redis-cli -s data/sock "$@"; }
    start "$@"
    # --pipe gives up after 30 s without a reply; a loaded machine is no error.
    cli --pipe --pipe-timeout 0 <cmds.resp | tail -1 | sed 's/.*errors: \([0-9]*\).*/errors: \1/'
    cli dbsize; cli debug digest
    redis-benchmark -s data/sock -q -n 100000 -c 20 -P 8 -d 200 -r 50000 -t set,get,lpush,lpop,hset,sadd >/dev/null
    cli flushdb async >/dev/null
    cli --pipe --pipe-timeout 0 <cmds.resp >/dev/null
    cli bgsave >/dev/null
    # The restart loads this RDB: a save still running would be lost.
    local deadline=$((SECONDS + 300))
    until [ "$(cli info persistence | tr -d '\r' | awk -F: '/^rdb_bgsave_in_progress/ { print $2 }')" = 0 ]; do
      [ $SECONDS -lt $deadline ] || fail "BGSAVE still running after 300 s ($*)"
      sleep 0.05
    done
    cli info persistence | tr -d '\r' | grep '^rdb_last_bgsave_status'
    cli debug digest
    cli shutdown nosave >/dev/null 2>&1 || true
    wait $pid || fail "redis-server exited $? ($*)"
    start "$@"
    cli dbsize; cli debug digest
    cli shutdown nosave >/dev/null 2>&1 || true
    wait $pid || fail "redis-server exited $? after the restart ($*)"
  }
  serve >redis.native
  serve "$slubrun" -- >redis.slub
  cmp -s redis.native redis.slub || fail "redis: another dataset on libslub:
$(diff redis.native redis.slub | head -20)"
  grep -q '^rdb_last_bgsave_status:ok' redis.slub || fail "redis: BGSAVE failed on libslub"
  if grep -q '^slub: ' data/err; then
    fail "redis: libslub reported:
$(grep '^slub: ' data/err | head -5)"
  fi
  echo "real_programs[$case]: redis: same dataset digests ($(sed -n 3p redis.slub)), BGSAVE and restart ok"
  ;;
shell)	# fork and exec all the time, exit codes, signals
  same shell bash -c 'for i in $(seq 1 200); do echo $((i * i)) | tr 0-9 a-j; done | sort | uniq -c | wc -l; (exit 7); echo $?'
  st=0; "$slubrun" -- sh -c 'kill -TERM $$' || st=$?
  [ "$st" = 143 ] || fail "a program killed by SIGTERM: slubrun exited $st, not 143"
  st=0; "$slubrun" -- sh -c 'exit 5' || st=$?
  [ "$st" = 5 ] || fail "exit status 5 came back as $st"
  st=0; "$slubrun" -- /nonexistent/program 2>/dev/null || st=$?
  [ "$st" = 127 ] || fail "a missing program: slubrun exited $st, not 127"
  # --options reach the program's library (ls mallocs: it starts and lists
  # them); a bad one is refused by the library before anything runs.
  "$slubrun" --options 'slub_decay_ms=7 help' -- ls / >/dev/null 2>err.txt
  grep -q '^slub_decay_ms=7 ' err.txt || fail "--options did not reach the library: $(head -3 err.txt)"
  st=0; "$slubrun" --options 'no_such_option=1' -- ls / >/dev/null 2>err.txt || st=$?
  [ "$st" = 2 ] && grep -q "unknown option 'no_such_option'" err.txt ||
    fail "a bad --options: status $st, $(cat err.txt)"
  "$slubrun" --stats -- "$python" -c 'x = [str(i) for i in range(100000)]' 2>stats.txt
  grep -q '^kmalloc-64 ' stats.txt || fail "--stats printed no table: $(head -3 stats.txt)"
  # A supervisor's SIGTERM reaches the program, with or without --stats,
  # also while slubrun --stats is still starting it (the signal is held).
  # The nap is this run's own (pid): another program_shell may run beside.
  nap=29.$$
  for delay in 0.3 $(for i in 1 2 3 4 5; do echo 0 0.001 0.003 0.01; done); do
    for opt in "" --stats; do
      "$slubrun" $opt -- sleep $nap 2>/dev/null &
      sp=$!
      sleep $delay
      kill -TERM $sp
      st=0; wait $sp || st=$?
      [ "$st" = 143 ] || fail "slubrun $opt killed by SIGTERM after ${delay}s exited $st, not 143"
    done
  done
  sleep 0.2
  ! pgrep -fx "sleep $nap" >/dev/null || fail "SIGTERM to slubrun left the program running"
  # A signal the caller ignores (nohup) stays ignored by slubrun and the program.
  out=$(bash -c 'trap "" HUP; "$1" --stats -- sh -c "sleep 0.5; echo survived" 2>/dev/null & sleep 0.2; kill -HUP $!; wait $!' _ "$slubrun") ||
    fail "an ignored SIGHUP ended slubrun --stats (status $?)"
  [ "$out" = survived ] || fail "an ignored SIGHUP reached the program: '$out'"
  # Under a limit on address space a real program runs in not much more
  # than it needs: python building a million-element list (glibc: 60 MB;
  # libslub needed 160 MB while every block took a 64 MiB slot).
  out=$(ulimit -v 100000; "$slubrun" -- "$python" -c 'print(len(list(range(10**6))))' 2>&1) ||
    fail "under ulimit -v 100000 python failed: $out"
  [ "$out" = 1000000 ] || fail "under ulimit -v 100000 python said: $out"
  # No address space for the section table (8 MiB) and a first section's
  # start (4.5 MiB) beside ls (8 MiB): every allocation fails, cleanly.
  # (At 60 MB, which once failed, ls now runs: sections under a limit map
  # their slot as they use it.)
  st=0; (ulimit -v 12000; "$slubrun" -- ls / >/dev/null 2>err.txt) || st=$?
  [ "$st" -lt 128 ] || fail "with no address space, ls died of signal $((st - 128))"
  grep -q 'cannot set up' err.txt || fail "with no address space: no report ($(head -2 err.txt))"
  echo "real_programs[$case]: exit codes, signals, --options, --stats and a failed start-up ok"
  ;;
*)
  fail "unknown case"
  ;;
esac
