#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# suite_machine.sh - the machine.md of a bench/suite.sh run: what the
# figures were measured on (CPU, cores, kernel, C library, the peers'
# package versions, the commit).  Prints Markdown.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "not installed"; }
commit=$(git -C "$src" rev-parse --short HEAD)
dirty=$(git -C "$src" status --porcelain --untracked-files=no | head -1)
cat <<EOM
# Machine

| what | value |
|---|---|
| date | $(date -u '+%Y-%m-%d %H:%M UTC') |
| commit | $commit${dirty:+ (with uncommitted changes)} |
| CPU | $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo) |
| CPUs online | $(nproc) |
| memory | $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) |
| kernel | $(uname -sr) |
| distribution | $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") |
| glibc | $(ldd --version 2>/dev/null | head -1 | awk '{print $NF}') |
| jemalloc | libjemalloc2 $(version libjemalloc2) |
| tcmalloc | libtcmalloc-minimal4 $(version libtcmalloc-minimal4) |
| mimalloc | libmimalloc2.0 $(version libmimalloc2.0) |
| compiler | $(gcc --version | head -1) |
| valgrind | $(valgrind --version 2>/dev/null || echo "not installed") |
| load when the run began | $(cut -d' ' -f1-3 /proc/loadavg) |
EOM
