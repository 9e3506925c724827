#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The soak (issue 34): tests/soak/run.sh BUILD_DIR
# SOAK_SECONDS (default 7200) split across the modes (SOAK_MODES, default
# all five); each runs build's slub_soak with the agent on, the malloc part
# preloaded and slabinfo -p reading it.  One summary line per mode at the
# end; the exit status is non-zero if any mode failed.  SOAK_LOG_DIR keeps
# each mode's output (default BUILD_DIR/soak-logs).
set -u
build=${1:?usage: run.sh BUILD_DIR}
total=${SOAK_SECONDS:-7200}
modes=${SOAK_MODES:-rseq cmpxchg16b sheaves unqueued fzpu}
threads=${SOAK_THREADS:-4}
logs=${SOAK_LOG_DIR:-$build/soak-logs}
soak=$build/tests/soak/slub_soak
helper=$build/tests/soak/slub_soak_malloc
lib=$build/libslub-malloc.so
slabinfo=$build/tools/slabinfo
for f in "$soak" "$helper" "$lib" "$slabinfo"; do
	[ -e "$f" ] || { echo "soak: $f is missing (build it first)" >&2; exit 2; }
done
set -- $modes
per=$((total / $#))
[ "$per" -ge 5 ] || per=5
interval=10
[ "$per" -ge 60 ] || interval=$(( per / 4 > 1 ? per / 4 : 1 ))
mkdir -p "$logs"

summary=()
fails=0
for m in $modes; do
	factor=4
	case $m in
	rseq)       opts="" ;;
	cmpxchg16b) opts="slub_rseq=0" ;;
	sheaves)    opts="slub_sheaves=16" ;;
	unqueued)   opts="slub_malloc_sheaves=0" ;;
	fzpu)       opts="slub_debug=FZPU"; factor=8 ;;  # metadata: 32 bytes take 128
	*) echo "soak: no mode '$m' (rseq cmpxchg16b sheaves unqueued fzpu)" >&2; exit 2 ;;
	esac
	opts="${opts:+$opts }slub_agent=1 ${SOAK_EXTRA_OPTIONS:-}"
	echo "== soak $m: $per s, SLUB_OPTIONS='$opts'"
	SLUB_OPTIONS="$opts" timeout -k 10 $((per + 300)) \
		"$soak" --mode "$m" --seconds "$per" --interval "$interval" --threads "$threads" \
		--rss-factor "$factor" --malloc-lib "$(realpath "$lib")" --malloc-helper "$helper" \
		--slabinfo "$slabinfo" 2>&1 | tee "$logs/$m.log"
	rc=${PIPESTATUS[0]}
	last=$(grep -E "^soak $m: ([0-9]+ seconds|FAIL)" "$logs/$m.log" | tail -1)
	if [ "$rc" -ne 0 ]; then
		fails=$((fails + 1))
		summary+=("FAIL $m (exit $rc): ${last:-no final line; see $logs/$m.log}")
	else
		summary+=("ok   $last")
	fi
done
echo
echo "== soak summary ($total s over: $modes)"
printf '%s\n' "${summary[@]}"
echo "$((${#summary[@]} - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
