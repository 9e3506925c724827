#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_slabinfo_live.sh SLABINFO TARGET - slabinfo -p on a live process
# (tests/tools/agent_target.c, with slub_agent): the table, -a, --json
# give the figures the attribute API gives in the process; -s shrinks it;
# --watch shows a change and ends with the process; a SIGKILLed process's
# socket is found stale and removed, and named where it was; -v validates
# the debug caches and counts what it found; a process
# without the agent is named, and one just started is waited for.  What
# is not the process's agent gets nothing: a socket another pid listens
# on, one in a directory others may write to or own; an agent whose
# answers break the protocol is not believed.
set -euo pipefail
slabinfo=$1 target=$2 name=test_slabinfo_live
fake="python3 $(cd "$(dirname "$0")" && pwd)/fake_agent.py"
source "$(dirname "$0")/agent_lib.sh"
# Old by the time it is looked at: a process without libslub, not waited for.
sleep 300 &
plain=$!
pids+=($plain)

start
wait_socket "$pid"
objects=$(num "$(api agent_t_plain objects)")
[ "$objects" = 1000 ] || echo "test_slabinfo_live: note: objects $objects (CPU slabs count whole)"
"$slabinfo" -p "$pid" >out.txt 2>&1 || fail "-p: $(cat out.txt)"
grep -Eq "^agent_t_plain +$objects +200 " out.txt || fail "-p row: $(grep agent_t out.txt || cat out.txt)"
"$slabinfo" -p "$pid" -a >out.txt
grep -Eq '^:[0-9a-z-]+ +<- agent_t_a agent_t_b$' out.txt || fail "-a: $(cat out.txt)"
"$slabinfo" -p "$pid" --json agent_t >out.json
for a in objects slabs partial cpu_slabs total_objects; do
  want=$(api agent_t_plain $a | sed 's/|$//')
  python3 - "$a" "$want" out.json <<'PY' || fail "--json $a: not '$want'"
import json, sys
attr, want, path = sys.argv[1], sys.argv[2], sys.argv[3]
c = {c["name"]: c for c in json.load(open(path))}["agent_t_plain"]["attributes"]
got = c[attr]
sys.exit(0 if str(got) == want else 1)
PY
done
python3 -c '
import json, sys
c = {c["dir"]: c for c in json.load(open(sys.argv[1]))}
m = [v for k, v in c.items() if k.startswith(":")]
assert len(m) == 1 and sorted(m[0]["alias_names"]) == ["agent_t_a", "agent_t_b"], c.keys()
' out.json || fail "--json aliases: $(head -c 300 out.json)"

# -s writes shrink in the process: its empty slabs go.
cmd free
"$slabinfo" -p "$pid" -s agent_t_plain >/dev/null || fail "-s failed"
[ "$(num "$(api agent_t_plain slabs)")" = 0 ] || fail "-s: slabs $(api agent_t_plain slabs)"

# --watch: a refresh shows the growth, and the watch ends with the process.
"$slabinfo" -p "$pid" --watch 0.2 agent_t_plain >watch.txt 2>&1 &
watcher=$!
# A first refresh before the change, whenever a busy machine lets it come.
wait_until 30 grep -q '^slabinfo: pid' watch.txt || fail "--watch printed nothing"
cmd "alloc 5000"
wait_until 30 grep -Eq '^agent_t_plain +5000 +\+5000 .*\*$' watch.txt || fail "--watch shows no change: $(tail -5 watch.txt)"
quit
st=0; timeout 30 tail --pid=$watcher -f /dev/null || st=$?
[ "$st" = 0 ] || fail "--watch did not end with the process"
wait $watcher || fail "--watch exit status $?"
grep -q "pid $pid exited" watch.txt || fail "--watch did not say the process ended: $(tail -2 watch.txt)"
[ ! -e "$work/slub/$pid.sock" ] || fail "socket left after a normal exit"

# SIGKILL: the socket stays; slabinfo finds it stale and removes it.
start
wait_socket "$pid"
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
exec 3>&- 4<&-
[ -S "$work/slub/$pid.sock" ] || fail "a killed process left no socket (test assumption)"
st=0; "$slabinfo" -p "$pid" >out.txt 2>&1 || st=$?
[ "$st" = 1 ] && grep -qF "no such process (its stale socket $work/slub/$pid.sock is removed)" out.txt ||
  fail "-p of a killed process: status $st, $(cat out.txt)"
[ ! -e "$work/slub/$pid.sock" ] || fail "stale socket not removed"

# Without the option: no socket, and slabinfo says how to get one.
start ""
sleep 0.2
[ ! -e "$work/slub/$pid.sock" ] || fail "a socket without slub_agent"
st=0; "$slabinfo" -p "$pid" >out.txt 2>&1 || st=$?
[ "$st" = 1 ] && grep -q "has no libslub agent: run it with SLUB_OPTIONS=slub_agent" out.txt ||
  fail "-p without the agent: status $st, $(cat out.txt)"
quit

# -v under slub_debug: the debug caches validated and a corrupted red zone
# counted; kmem_cache, without debug flags, skipped rather than failed.
start "slub_agent slub_debug=FZ slub_report_file=$work/reports.txt"
wait_socket "$pid"
st=0; "$slabinfo" -p "$pid" -v >out.txt 2>&1 || st=$?
[ "$st" = 0 ] && grep -q '^Validated [0-9]* caches: no problems found$' out.txt &&
  grep -q '^Skipped 1 without debug flags (validate needs slub_debug): kmem_cache$' out.txt ||
  fail "-v under slub_debug=FZ: status $st, $(cat out.txt)"
echo corrupt >&3; read -r -u 4 said
if [ "$said" = ok ]; then
  st=0; "$slabinfo" -p "$pid" -v agent_t_plain >out.txt 2>&1 || st=$?
  [ "$st" = 0 ] && grep -Eq '^agent_t_plain: [1-9][0-9]* problems? found$' out.txt &&
    grep -Eq '^Validated 1 cache: [1-9][0-9]* problems? found, reported by the process' out.txt ||
    fail "-v on a corrupted red zone: status $st, $(cat out.txt)"
  grep -q 'BUG agent_t_plain (Not tainted): Right Redzone overwritten' reports.txt ||
    fail "-v: the process reported $(head -3 reports.txt)"
else
  echo "$name: note: the corrupted red zone not tried ($said: TSan)"
fi
quit

# --leaks: kmemleak's scan of the live process.  The first scan lists
# nothing new (a block must be found unreferenced twice, unchanged); the
# second lists the dropped objects by call site, and not the 1000 the
# program keeps.  The process runs on.  (Under TSan too: of its shadow
# mappings, terabytes, only the resident pages are read.)
start "slub_agent slub_debug=U,agent_t_plain slub_leak_min_age=0"
wait_socket "$pid"
cmd "leak 3"
st=0; "$slabinfo" -p "$pid" --leaks >out.txt 2>&1 || st=$?
[ "$st" = 0 ] && grep -q '^leak: no leaks' out.txt &&
  grep -q '^leak: 3 more unreferenced, not listed yet' out.txt ||
  fail "--leaks, first scan: status $st, $(cat out.txt)"
st=0; "$slabinfo" -p "$pid" --leaks >out.txt 2>&1 || st=$?
[ "$st" = 0 ] && grep -q '^leak: 3 blocks, 600 bytes unreferenced in live scan 2' out.txt &&
  grep -q '^leak: 3 objects, 600 bytes, allocated in leak_objects' out.txt &&
  grep -q '^leak: still reachable: 1000 blocks' out.txt ||
  fail "--leaks, second scan: status $st, $(cat out.txt)"
[ "$(api agent_t_plain objects)" != error ] || fail "the process did not run on after the scans"
quit
# kmemleak's minimum age: nothing younger is listed (10 min outlives the
# test; the default, 5 s, does not under TSan, whose scans take seconds).
start "slub_agent slub_debug=U,agent_t_plain slub_leak_min_age=600000"
wait_socket "$pid"
cmd "leak 2"
"$slabinfo" -p "$pid" --leaks >/dev/null 2>&1
st=0; "$slabinfo" -p "$pid" --leaks >out.txt 2>&1 || st=$?
[ "$st" = 0 ] && grep -q '^leak: no leaks' out.txt &&
  grep -q '^leak: 2 more unreferenced, not listed yet: younger than slub_leak_min_age (600000 ms)' out.txt ||
  fail "--leaks, young blocks: status $st, $(cat out.txt)"
quit
# Without U nothing was tracked: said so, not "no leaks".
start
wait_socket "$pid"
st=0; "$slabinfo" -p "$pid" --leaks >out.txt 2>&1 || st=$?
[ "$st" = 0 ] && grep -q '^leak: no cache tracks allocations' out.txt ||
  fail "--leaks without U: status $st, $(cat out.txt)"
quit

# The README's recipe: the process just forked, not even exec'd yet, when
# slabinfo asks; slabinfo waits for its agent.
rm -f in out; mkfifo in out
(sleep 1; exec env SLUB_OPTIONS=slub_agent "$target") <in >out &
late=$!
pids+=($late)
exec 3>in 4<out
# (--json: its caches may have no slab yet, which the table leaves out.)
st=0; "$slabinfo" -p "$late" --json >out.txt 2>&1 || st=$?
[ "$st" = 0 ] && grep -q '"kmem_cache"' out.txt || fail "-p at once after the start: status $st, $(head -c 300 out.txt)"
quit

# No libslub at all: said so (and not waited for: it is old).
st=0; "$slabinfo" -p "$plain" >out.txt 2>&1 || st=$?
[ "$st" = 1 ] && grep -q "pid $plain does not run libslub" out.txt || fail "-p of sleep: status $st, $(cat out.txt)"

# A socket for a live pid that another process listens on: not one byte.
$fake plant "$work/slub/$plain.sock" "$work/plant.log" >fake.out &
planter=$!
pids+=($planter)
wait_until 30 grep -q ready fake.out || fail "the fake server did not start"
st=0; "$slabinfo" -p "$plain" >out.txt 2>&1 || st=$?
[ "$st" = 1 ] && grep -q "pid $plain: refused, nothing sent: $work/slub/$plain.sock is served by pid" out.txt ||
  fail "-p on a planted socket: status $st, $(cat out.txt)"
wait_until 30 test -s plant.log || fail "slabinfo did not even connect (test assumption)"
[ "$(cat plant.log)" = "conn 0" ] || fail "the planted socket was sent bytes: $(cat plant.log)"
kill "$planter"; rm -f "$work/slub/$plain.sock"

# The same in a directory others may write to (or, as root, another uid's): not even a connection.
mkdir -p shared/slub
chmod 777 shared/slub
$fake plant "$work/shared/slub/$plain.sock" "$work/shared.log" >fake2.out &
pids+=($!)
wait_until 30 grep -q ready fake2.out || fail "the fake server (2) did not start"
st=0; XDG_RUNTIME_DIR=$work/shared "$slabinfo" -p "$plain" >out.txt 2>&1 || st=$?
[ "$st" = 1 ] && grep -q "refused, nothing sent: $work/shared/slub: writable by other users" out.txt ||
  fail "-p through a 0777 directory: status $st, $(cat out.txt)"
if [ "$(id -u)" = 0 ]; then
  chmod 700 shared/slub
  chown 65534 shared/slub
  st=0; XDG_RUNTIME_DIR=$work/shared "$slabinfo" -p "$plain" >out.txt 2>&1 || st=$?
  [ "$st" = 1 ] && grep -q "refused, nothing sent: $work/shared/slub: owned by another uid" out.txt ||
    fail "-p through another uid's directory: status $st, $(cat out.txt)"
else
  echo "$name: note: another uid's directory not tried (not root: cannot chown)"
fi
[ ! -e shared.log ] || fail "connected through an unsafe directory: $(cat shared.log)"

# A listener that is the process but answers outside the protocol: a
# positive status is not a length (-o prints the ops text it says it has).
$fake hostile "$work/slub" >fake3.out &
hostile=$!
pids+=($hostile)
wait_until 30 grep -q ready fake3.out || fail "the hostile agent did not start"
st=0; "$slabinfo" -p "$hostile" -o >out.txt 2>&1 || st=$?
[ "$st" = 1 ] && grep -q "its agent's answer is not the protocol's" out.txt ||
  fail "-p -o on a hostile agent: status $st, $(head -c 300 out.txt)"
# A launcher on libslub that execs the program while slabinfo reads it
# (a pyenv shim, a shell script's exec): the new image's agent is asked
# again, and the table is the program's (the launcher answered no attribute).
rm -f in out; mkfifo in out
$fake exec "$work/slub" env SLUB_OPTIONS=slub_agent "$target" <in >out &
launcher=$!
pids+=($launcher)
exec 3>in 4<out
read -r -u 4 word || fail "the launcher did not start"
st=0; "$slabinfo" -p "$launcher" >out.txt 2>&1 || st=$?
[ "$st" = 0 ] && grep -q '^kmem_cache ' out.txt ||
  fail "-p across the launcher's exec: status $st, $(head -c 300 out.txt)"
quit
echo "test_slabinfo_live: ok"
