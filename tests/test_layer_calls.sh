#!/bin/bash
# SPDX-License-Identifier: MIT
# Calls go one way, down the layers, as includes do (test_layers.sh): read
# from the built objects, every symbol an object of layer L uses (nm -u) and
# the library defines is defined in layer L or below.  Ranks: base <- stack
# <- page <- slab <- agent <- malloc <- init.c (slab/ is one layer here:
# slab_common.c calls slab/view's slab_stats_init(), to pull the exit
# statistics into a static link).  The C library's names (malloc, free...)
# are the C library's, whoever defines them.  A lower layer reaches a higher one only through a weak hook it
# declares itself and a higher layer defines (its default, when it has
# one, a no-op); those are listed below, and any other symbol defined both
# weakly and strongly fails too.  Start-up and fork handlers are no hooks:
# layers register them with base (base/start.h).
# Usage: test_layer_calls.sh DIR... (searched for src/**/*.o, e.g. the
# build tree's CMakeFiles/slub_objects.dir and slub_malloc.dir).
set -u
# Deliberate weak hooks: the malloc library's (or the slab layer's) share
# of work a lower layer does, absent from libslub.so.
hooks=" slub_malloc_idle_tick slub_slab_idle_tick slub_malloc_pages_taken \
slub_malloc_slab_grown slub_leak_collect_extents slub_exit_validate_extents slub_malloc_library \
slub_malloc_pcp_kept "
libc=$(nm -D --defined-only "$(${CC:-cc} -print-file-name=libc.so.6)" 2>/dev/null |
	awk '{sub(/@.*/, "", $3); printf " %s", $3} END {print " "}')
[ $# -gt 0 ] || { echo "usage: $0 DIR..." >&2; exit 2; }
objs=$(find "$@" -path '*/src/*' -name '*.o' | sort)
[ -n "$objs" ] || { echo "FAIL: no objects under $*"; exit 1; }
rank() {
	case ${1#*/src/} in
	base/*) echo 0;; stack/*) echo 1;; page/*) echo 2;; slab/*) echo 3;;
	agent/*) echo 4;; malloc/*) echo 5;; init.c.o) echo 6;; *) echo 9;;
	esac
}
# One line per symbol use or definition: rank kind symbol object.
table=$(for o in $objs; do
	r=$(rank "$o")
	if [ "$r" = 9 ]; then echo "9 ? ? $o"; continue; fi
	nm -P "$o" | awk -v r="$r" -v o="${o#*/src/}" '
		$2 == "U" || $2 == "w" { print r, "use", $1, o; next }
		$2 == "W" || $2 == "V" { print r, "weak", $1, o; next }
		$2 ~ /^[TDBRCG]$/ { print r, "def", $1, o }'
done)
echo "$table" | awk -v hooks="$hooks" -v libc="$libc" '
	$1 == 9 { print "FAIL: " $4 " is in no known layer"; bad++; next }
	$2 != "use" { if (!($3 in low) || $1 < low[$3]) low[$3] = $1; defin[$3] = defin[$3] " " $4 }
	$2 == "def" { if (!($3 in def) || $1 < def[$3]) def[$3] = $1; next }
	$2 == "weak" { if (!($3 in weak) || $1 < weak[$3]) weak[$3] = $1; next }
	{ n++; use[n] = $3; user[n] = $4; urank[n] = $1 }
	END {
		for (i = 1; i <= n; i++) {
			s = use[i]
			if (!(s in low) || low[s] <= urank[i] || index(hooks, " " s " ") || index(libc, " " s " "))
				continue
			print "FAIL: " user[i] " calls up to " s " (in" defin[s] ")"; bad++
		}
		for (s in weak)
			if (s in def && def[s] > weak[s] && !index(hooks, " " s " ")) {
				print "FAIL: " s " is a weak hook (defined in" defin[s] ") not listed"; bad++
			}
		printf "%d uses checked, %d against the layers\n", n, bad
		exit !(n > 0 && bad == 0)
	}'
