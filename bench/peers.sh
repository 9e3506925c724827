# SPDX-License-Identifier: MIT
# peers.sh - sourced by the run_*.sh scripts that time libslub-malloc.so
# against each peer by LD_PRELOAD.  Sets preload[] and names[] (libslub,
# glibc, then the peers installed) and declares best[].
#   keep_best KEY VALUE [max]   best[KEY] = the lower of the two (with max:
#                               the higher: rates, peaks)
#   ratio_row LABEL PREFIX [max]
#                               one table row: best[PREFIX/name] for each
#                               name, then libslub's to the best peer's (the
#                               lowest, or with max the highest)
lib=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
declare -A preload=([libslub]=$(realpath "$build/libslub-malloc.so") [glibc]=
                    [jemalloc]=$lib/libjemalloc.so.2 [tcmalloc]=$lib/libtcmalloc_minimal.so.4
                    [mimalloc]=$lib/libmimalloc.so.2)
names=(libslub glibc)
for p in jemalloc tcmalloc mimalloc; do [ -e "${preload[$p]}" ] && names+=("$p"); done
declare -A best

better() {	# better A B [max]: is A below B (above it, with max)?
  awk -v a="$1" -v b="$2" -v max="${3:-}" 'BEGIN{exit !(max ? a > b : a < b)}'
}

keep_best() {
  if [ -z "${best[$1]:-}" ] || better "$2" "${best[$1]}" "${3:-}"; then
    best[$1]=$2
  fi
}

ratio_row() {
  local n bestpeer=
  printf "$row_format" "$1"
  for n in "${names[@]}"; do
    printf " $col_format" "${best[$2/$n]}"
    if [ "$n" != libslub ] && { [ -z "$bestpeer" ] || better "${best[$2/$n]}" "$bestpeer" "${3:-}"; }; then
      bestpeer=${best[$2/$n]}
    fi
  done
  awk -v a="${best[$2/libslub]}" -v b="$bestpeer" -v f=" $ratio_format\n" 'BEGIN{printf f, (b > 0 ? a / b : 0)}'
}
