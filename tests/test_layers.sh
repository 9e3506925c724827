#!/bin/bash
# SPDX-License-Identifier: MIT
# Includes go one way, down the layers: base <- stack <- page <- slab <-
# agent <- malloc (agent/: the live tree's socket, above the slab API it
# answers; nothing below knows it); src/init.c (slub_setup(), the threads
# started at load) is above every layer.  stack/ is the call-stack
# machinery (unwinder, capture, depot, naming) that needs no slab.  A file
# includes its own layer's headers and lower ones' only.  Calls:
# test_layer_calls.sh.
# Inside slab/, core (the engine and the cache API), sheaf and debug call
# each other; view (attributes, counters as attributes, tables, slabinfo)
# reads them all and is included by nothing of theirs.
set -u
src=${1:-$(dirname "$0")/../src}
rank() { case $1 in base) echo 0;; stack) echo 1;; page) echo 2;; slab) echo 3;; agent) echo 4;; malloc) echo 5;; *) echo 9;; esac; }
bad=0 checked=0
while IFS= read -r f; do
	rel=${f#"$src"/}
	layer=${rel%%/*}
	mine=$(rank "$layer")
	if [ "$mine" = 9 ]; then
		echo "FAIL: $f is in no known layer"; bad=$((bad + 1)); continue
	fi
	while IFS= read -r inc; do
		checked=$((checked + 1))
		to=${inc%%/*}
		if [ "$to" = "$inc" ]; then
			echo "FAIL: $f includes \"$inc\" without its layer"; bad=$((bad + 1))
		elif [ "$(rank "$to")" -gt "$mine" ]; then
			echo "FAIL: $f ($layer) includes \"$inc\" of a higher layer"; bad=$((bad + 1))
		elif [ "$layer" = slab ] && [[ $inc == slab/view/* ]] && [[ $rel != slab/view/* ]]; then
			echo "FAIL: $f includes \"$inc\": only slab/view/ reads its own headers"; bad=$((bad + 1))
		elif [ ! -f "$src/$inc" ]; then
			echo "FAIL: $f includes \"$inc\", which is not in $src"; bad=$((bad + 1))
		fi
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done < <(find "$src" -mindepth 2 -name '*.[ch]' | sort)
echo "$checked includes checked, $bad against the layers"
[ "$checked" -gt 0 ] && [ "$bad" = 0 ]
