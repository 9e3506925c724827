// SPDX-License-Identifier: MIT
/*
 * test_dlopen.c - a library loaded with dlopen() allocates and frees, and
 * dlclose() leaves the process running: the libraries are linked
 * -z nodelete (CMakeLists.txt), since each thread's rseq area still names
 * a critical section in their text, which the kernel reads at the next
 * return to user space, and their memory outlives any dlclose().
 * argv: the libraries to try (libslub.so, libslub-malloc.so).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>

#include "check.h"

static void load_use_close(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CHECK(h != NULL);
	if (!h) {
		fprintf(stderr, "   dlopen %s: %s\n", path, dlerror());
		return;
	}
	void *(*kmalloc_fn)(size_t, unsigned int) = (void *(*)(size_t, unsigned int))dlsym(h, "kmalloc");
	void (*kfree_fn)(const void *) = (void (*)(const void *))dlsym(h, "kfree");
	CHECK(kmalloc_fn && kfree_fn);
	if (kmalloc_fn && kfree_fn) {
		for (int i = 0; i < 1000; i++) {
			char *p = kmalloc_fn(16 + i, 0);	/* GFP flags 0: fine for a slab */
			CHECK(p != NULL);
			if (p)
				p[0] = 1;
			kfree_fn(p);
		}
	}
	CHECK_EQ(dlclose(h), 0);
	/* System calls after the close: each returns to user space past the kernel's rseq look. */
	for (int i = 0; i < 100; i++)
		CHECK(getppid() > 0);
	usleep(1000);
	fprintf(stderr, "   %s: loaded, used, closed\n", path);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		load_use_close(argv[i]);
	CHECK(argc > 1);
	return check_done();
}
