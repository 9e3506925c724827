# SPDX-License-Identifier: MIT
# agent_lib.sh - sourced by the live-tree tests: a private XDG_RUNTIME_DIR,
# agent_target (tests/tools/agent_target.c) started and spoken to, its
# socket waited for.  The caller sets name and target first.
work=$(mktemp -d)
export XDG_RUNTIME_DIR=$work
cd "$work"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  if [ -n "${on_exit:-}" ]; then eval "$on_exit" || true; fi
  # An auto_unmount may still be finishing (rmdir of the mount point: EISDIR, EBUSY).
  for _ in 1 2 3 4 5 6 7 8 9 10; do rm -rf "$work" 2>/dev/null && return 0; sleep 0.2; done
  echo "$name: note: could not remove $work" >&2
}
trap cleanup EXIT
fail() { echo "$name: $*" >&2; exit 1; }

# start [OPTIONS]: the target on fds 3 (to it) and 4 (from it); sets pid.
start() {
  rm -f "$work/in" "$work/out"; mkfifo "$work/in" "$work/out"
  SLUB_OPTIONS=${1-slub_agent} "$target" <"$work/in" >"$work/out" &
  pids+=($!)
  exec 3>"$work/in" 4<"$work/out"
  read -r -u 4 word pid || fail "target did not start"
  [ "$word" = ready ] || fail "target said '$word'"
}
# api CACHE ATTR: the attribute as the process reads it ('|' for newlines).
api() { echo "attr $1 $2" >&3; read -r -u 4 line; echo "$line"; }
cmd() { echo "$1" >&3; read -r -u 4 line; [ "$line" = ok ] || fail "$1: $line"; }
quit() { echo quit >&3; exec 3>&- 4<&-; }
# Up to 30 s: the machine may be busy.
wait_socket() {
  for _ in $(seq 3000); do [ -S "$work/slub/$1.sock" ] && return 0; sleep 0.01; done
  fail "no socket for pid $1 in $work/slub"
}
# wait_until SECONDS COMMAND...: true once COMMAND is.
wait_until() {
  local n=$(($1 * 20)); shift
  for _ in $(seq "$n"); do "$@" && return 0; sleep 0.05; done
  return 1
}
num() { echo "${1%% *}" | tr -d '|'; }
