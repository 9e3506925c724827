# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2034,SC2059,SC2154  # sourced: the tables are the caller's, and the formats
# peers.sh - the one table of contenders, sourced by every bench script
# that runs libslub-malloc.so against the other mallocs by LD_PRELOAD.
# Needs $build (where libslub-malloc.so is).  Sets:
#   preload[NAME]        the library LD_PRELOAD'ed for NAME (glibc: none)
#   alloc_options[NAME]  SLUB_OPTIONS of a libslub variant, added after the
#                        caller's own SLUB_OPTIONS (the later option wins)
#   names[]              libslub, glibc, then the peers installed (jemalloc,
#                        tcmalloc, mimalloc): "${names[@]:1}" are the peers
#   variants[]           empty; `ask_variants` fills it (below)
# The contenders:
#   libslub        libslub-malloc.so as shipped: its malloc caches on sheaves
#                  of 32 where the fast paths run on rseq (slub_malloc_sheaves)
#   slub-unqueued  the same library on the seeds' unqueued cpu slabs
#                  (slub_malloc_sheaves=0): a variant, never a peer
#   glibc, jemalloc, tcmalloc, mimalloc
# Functions:
#   ask_variants DEFAULT       variants=(slub-unqueued) if UNQUEUED (default
#                              DEFAULT) is 1, else none; and slub-before if
#                              BEFORE=PATH names another build's
#                              libslub-malloc.so (a before/after in one run)
#   slub_options NAME          the SLUB_OPTIONS NAME runs with
#   preloaded NAME CMD...      CMD with NAME's library and options
#   keep_best KEY VALUE [max]  best[KEY] = the lower of the two (with max:
#                              the higher: rates, peaks)
#   ratio_header LABEL         the header of ratio_row's table
#   ratio_row LABEL PREFIX [max]
#                              one table row: best[PREFIX/name] for each
#                              name and variant, then libslub's to the best
#                              peer's (the lowest, or with max the highest),
#                              then each variant's to libslub's
# (row_format, col_format and ratio_format: the caller's printf formats)
lib=/usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
declare -A preload=([libslub]=$(realpath "$build/libslub-malloc.so") [glibc]=
                    [jemalloc]=$lib/libjemalloc.so.2 [tcmalloc]=$lib/libtcmalloc_minimal.so.4
                    [mimalloc]=$lib/libmimalloc.so.2)
declare -A alloc_options=([slub-unqueued]=slub_malloc_sheaves=0)
preload[slub-unqueued]=${preload[libslub]}
names=(libslub glibc)
for p in jemalloc tcmalloc mimalloc; do [ -e "${preload[$p]}" ] && names+=("$p"); done
variants=()
declare -A best

ask_variants() {
  if [ -n "${SHEAVES:-}" ]; then
    echo "${0##*/}: SHEAVES is not read: libslub's malloc is on sheaves by default;" \
      "UNQUEUED=1 runs it on unqueued cpu slabs too (slub-unqueued)" >&2
  fi
  variants=()
  if [ "${UNQUEUED:-$1}" = 1 ]; then variants=(slub-unqueued); fi
  if [ -n "${BEFORE:-}" ]; then
    preload[slub-before]=$(realpath "$BEFORE")
    variants+=(slub-before)
  fi
}

slub_options() {
  local o=${SLUB_OPTIONS:-}
  if [ -n "${alloc_options[$1]:-}" ]; then o="${o:+$o }${alloc_options[$1]}"; fi
  echo "$o"
}

preloaded() {
  local a=$1
  shift
  SLUB_OPTIONS=$(slub_options "$a") LD_PRELOAD=${preload[$a]} "$@"
}

better() {	# better A B [max]: is A below B (above it, with max)?
  awk -v a="$1" -v b="$2" -v max="${3:-}" 'BEGIN{exit !(max ? a > b : a < b)}'
}

keep_best() {
  if [ -z "${best[$1]:-}" ] || better "$2" "${best[$1]}" "${3:-}"; then
    best[$1]=$2
  fi
}

ratio_header() {
  local v w=${ratio_format%%.*}
  w=${w#%}
  printf "$row_format" "$1"
  printf " $col_format" "${names[@]}" "${variants[@]}"
  printf " %${w}s" "libslub/best peer"
  for v in "${variants[@]}"; do printf " %${w}s" "${v#slub-}/libslub"; done
  echo
}

ratio_row() {
  local n bestpeer=
  printf "$row_format" "$1"
  for n in "${names[@]}" "${variants[@]}"; do printf " $col_format" "${best[$2/$n]:--}"; done
  for n in "${names[@]:1}"; do
    [ -n "${best[$2/$n]:-}" ] || continue
    if [ -z "$bestpeer" ] || better "${best[$2/$n]}" "$bestpeer" "${3:-}"; then
      bestpeer=${best[$2/$n]}
    fi
  done
  awk -v a="${best[$2/libslub]:-0}" -v b="$bestpeer" -v f=" $ratio_format" 'BEGIN{printf f, (b > 0 ? a / b : 0)}'
  for n in "${variants[@]}"; do
    awk -v a="${best[$2/$n]:-0}" -v b="${best[$2/libslub]:-0}" -v f=" $ratio_format" 'BEGIN{printf f, (b > 0 ? a / b : 0)}'
  done
  echo
}
