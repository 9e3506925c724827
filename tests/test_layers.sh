#!/bin/bash
# SPDX-License-Identifier: MIT
# Includes go one way, down the layers: base <- debug <- page <- slab <-
# agent <- malloc (agent/: the live tree's socket, above the slab API it
# answers; nothing below knows it); src/init.c, the start-up of them all, is above every layer.
# debug/ is the heap debugging machinery that needs no slab (stacks,
# dumps).  A file includes its own layer's headers and lower ones' only.
set -u
src=${1:-$(dirname "$0")/../src}
rank() { case $1 in base) echo 0;; debug) echo 1;; page) echo 2;; slab) echo 3;; agent) echo 4;; malloc) echo 5;; *) echo 9;; esac; }
bad=0 checked=0
for f in "$src"/*/*.[ch]; do
	layer=$(basename "$(dirname "$f")")
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
		fi
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done
echo "$checked includes checked, $bad against the layers"
[ "$checked" -gt 0 ] && [ "$bad" = 0 ]
