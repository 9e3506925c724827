#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_install.sh BUILD_DIR SOURCE_DIR C_COMPILER - install into a scratch
# prefix and use the result as an outside project would: pkg-config,
# find_package(slub), the static library, and the exported symbol list.
set -euo pipefail
build=$1 src=$2 cc=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "test_install: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/slub.h include/slub_rcu.h lib/libslub.so lib/libslub.a lib/pkgconfig/slub.pc lib/pkgconfig/slub-malloc.pc lib/pkgconfig/slub-porter.pc \
         lib/cmake/slub/slubConfig.cmake lib/libslub-malloc.so bin/slubrun; do
  [ -e "$prefix/$f" ] || fail "missing $f"
done

# Only the public API is exported: exactly the SLUB_API names of slub.h, and
# on x86-64 with glibc 2.35 or later dlclose (passed on, after which the
# stack unwinder's rule cache is emptied: src/stack/unwind.c).
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
at_least() { [ -n "$glibc" ] && [ "$(printf '%s\n' "$1" "$glibc" | sort -V | head -1)" = "$1" ]; }
extra=
if [ "$(uname -m)" = x86_64 ] && at_least 2.35; then extra=dlclose; fi
exported=$(nm -D --defined-only "$prefix/lib/libslub.so" | awk '{print $3}' | sort)
declared=$( (grep -E '^SLUB_API' "$src/include/slub.h" | sed -E 's/.*[ *]([A-Za-z_0-9]+)\(.*/\1/'
             echo $extra) | grep . | sort)
[ "$exported" = "$declared" ] || fail "exported symbols differ from slub.h:
$(diff <(echo "$declared") <(echo "$exported") || true)"

# libslub-malloc.so: the same API plus the malloc family, glibc's aliases,
# exit (noting where the program's stack ends for the leak check, passed on:
# src/malloc/malloc_exit.c) and, on x86-64 with glibc 2.34 or later,
# __register_atfork (pthread_atfork's, passed on: src/malloc/malloc_fork.c).
malloc_names="aligned_alloc calloc cfree free free_aligned_sized free_sized mallinfo mallinfo2 malloc malloc_info malloc_stats
malloc_trim malloc_usable_size mallopt memalign posix_memalign pvalloc realloc reallocarray valloc
__libc_calloc __libc_free __libc_mallinfo __libc_malloc __libc_mallopt __libc_memalign
__libc_pvalloc __libc_realloc __libc_reallocarray __libc_valloc exit"
if [ "$(uname -m)" = x86_64 ] && at_least 2.34; then
	malloc_names="$malloc_names __register_atfork"
fi
exported_m=$(nm -D --defined-only "$prefix/lib/libslub-malloc.so" | awk '{print $3}' | sort)
declared_m=$( (echo "$declared"; tr ' ' '\n' <<<"$malloc_names" | grep .) | sort)
[ "$exported_m" = "$declared_m" ] || fail "libslub-malloc.so exports differ:
$(diff <(echo "$declared_m") <(echo "$exported_m") || true)"

# slubrun, installed, finds the installed library and keeps exit codes.
# --stats=all: sh itself makes no allocation; the table is ls's, a child's.
out=$("$prefix/bin/slubrun" --stats=all -- sh -c 'ls / >/dev/null; echo hi; exit 3' 2>"$work/stats") && st=0 || st=$?
[ "$out" = hi ] && [ "$st" = 3 ] || fail "installed slubrun: output '$out', status $st"
grep -q '^kmalloc-' "$work/stats" || fail "installed slubrun --stats printed no cache table"
# slabinfo is installed beside it.
"$prefix/bin/slabinfo" --version | grep -q '^slabinfo (libslub) ' || fail "no installed slabinfo"

# pkg-config, shared and static.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
"$cc" -o "$work/c_shared" "$src/tests/install/consumer/consumer.c" $(pkg-config --cflags --libs slub)
LD_LIBRARY_PATH=$prefix/lib "$work/c_shared" || fail "pkg-config shared consumer failed"
"$cc" -o "$work/c_static" "$src/tests/install/consumer/consumer.c" $(pkg-config --cflags slub) \
  "$prefix/lib/libslub.a" $(pkg-config --libs-only-other --static slub)
"$work/c_static" || fail "static consumer failed"
# pkg-config slub-malloc: a program linked with libslub-malloc.so gets its malloc.
"$cc" -o "$work/c_malloc" "$src/tests/install/consumer/malloc_consumer.c" $(pkg-config --cflags --libs slub-malloc)
LD_LIBRARY_PATH=$prefix/lib "$work/c_malloc" || fail "pkg-config slub-malloc consumer: malloc is not libslub's"
# liburcu is linked as needed only: a program that takes no rcu_read_lock() does not load it.
if readelf -d "$work/c_shared" | grep -q 'NEEDED.*liburcu'; then
  fail "a consumer without RCU depends on liburcu"
fi
# pkg-config slub-porter: kernel-style code that includes only <linux/*.h>, as installed.
for h in slab.h gfp.h mempool.h rcupdate.h; do
  [ -e "$prefix/include/slub-porter/linux/$h" ] || fail "missing include/slub-porter/linux/$h"
done
printf 'int session_init(void);\nvoid session_exit(void);\nint main(void) { if (session_init()) return 1; session_exit(); return 0; }\n' \
  >"$work/porter_main.c"
"$cc" -Wall -Wextra -Werror -o "$work/porter" "$src/tests/porter/kstyle.c" "$work/porter_main.c" \
  $(pkg-config --cflags --libs slub-porter)
LD_LIBRARY_PATH=$prefix/lib "$work/porter" || fail "pkg-config slub-porter consumer failed"

# A C++ consumer: slub.h's kmem_cache_create() overloads in place of C's _Generic.
case $(basename "$cc") in
  *clang*) cxx=${cc/clang/clang++} ;;
  *gcc*) cxx=${cc/gcc/g++} ;;
  *) cxx=c++ ;;
esac
if command -v "$cxx" >/dev/null; then
  "$cxx" -Wall -Wextra -Werror -o "$work/cxx" "$src/tests/install/consumer/consumer_cxx.cc" \
    $(pkg-config --cflags --libs slub)
  LD_LIBRARY_PATH=$prefix/lib "$work/cxx" || fail "C++ consumer failed"
else
  echo "test_install: no C++ compiler ($cxx): C++ consumer not built"
fi

# find_package(slub) -> slub::slub and slub::slub_static.
cmake -S "$src/tests/install/consumer" -B "$work/cm" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" >/dev/null
cmake --build "$work/cm" >/dev/null
LD_LIBRARY_PATH=$prefix/lib "$work/cm/consumer" || fail "find_package consumer failed"
"$work/cm/consumer_static" || fail "find_package static consumer failed"
echo "test_install: ok (headers, libs, pkg-config, CMake package, $(wc -w <<<"$exported") exported symbols)"
