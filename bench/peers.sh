# peers.sh - sourced by the run_*.sh scripts that time libslub-malloc.so
# against each peer by LD_PRELOAD.  Sets preload[] and names[] (libslub,
# glibc, then the peers installed) and declares best[].
#   keep_best KEY SECONDS   best[KEY] = the lower of the two
#   ratio_row LABEL PREFIX  one table row: best[PREFIX/name] for each name,
#                           then libslub's to the best peer's
lib=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
declare -A preload=([libslub]=$(realpath "$build/libslub-malloc.so") [glibc]=
                    [jemalloc]=$lib/libjemalloc.so.2 [tcmalloc]=$lib/libtcmalloc_minimal.so.4
                    [mimalloc]=$lib/libmimalloc.so.2)
names=(libslub glibc)
for p in jemalloc tcmalloc mimalloc; do [ -e "${preload[$p]}" ] && names+=("$p"); done
declare -A best

keep_best() {
  if [ -z "${best[$1]:-}" ] || awk -v a="$2" -v b="${best[$1]}" 'BEGIN{exit !(a<b)}'; then
    best[$1]=$2
  fi
}

ratio_row() {
  local n bestpeer=
  printf "$row_format" "$1"
  for n in "${names[@]}"; do
    printf " $col_format" "${best[$2/$n]}"
    if [ "$n" != libslub ] && { [ -z "$bestpeer" ] ||
         awk -v a="${best[$2/$n]}" -v b="$bestpeer" 'BEGIN{exit !(a<b)}'; }; then
      bestpeer=${best[$2/$n]}
    fi
  done
  awk -v a="${best[$2/libslub]}" -v b="$bestpeer" -v f=" $ratio_format\n" 'BEGIN{printf f, (b > 0 ? a / b : 0)}'
}
