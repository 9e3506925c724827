// SPDX-License-Identifier: MIT
/*
 * A C++ program on <slub.h>: kmem_cache_create() in both of its forms,
 * which C tells apart with _Generic and C++ by overloading.
 */
#include <slub.h>

struct item {
	long key;
	char name[24];
};

int main()
{
	kmem_cache *a = kmem_cache_create("cxx-five", sizeof(item), 0, SLAB_NO_MERGE, nullptr);
	kmem_cache_args args = {};
	args.align = 64;
	kmem_cache *b = kmem_cache_create("cxx-args", sizeof(item), &args, SLAB_NO_MERGE);
	kmem_cache *c = kmem_cache_create("cxx-null", sizeof(item), nullptr, SLAB_NO_MERGE);
	if (!a || !b || !c)
		return 1;
	item *x = static_cast<item *>(kmem_cache_alloc(b, GFP_KERNEL));
	if (!x || reinterpret_cast<unsigned long>(x) % 64)
		return 2;
	kmem_cache_free(b, x);
	kmem_cache_destroy(a);
	kmem_cache_destroy(b);
	kmem_cache_destroy(c);
	return slub_errors() == 0 ? 0 : 3;
}
