// SPDX-License-Identifier: MIT
/*
 * bench_frag.c - memory a fragmented heap holds: allocate OBJECTS objects
 * of mixed sizes (mostly 16..256 bytes, one in 16 up to 4 KiB, one in 256
 * up to 64 KiB), free 90% of them at random, then allocate half as many
 * again in sizes shifted up (so the holes left do not all fit), and last
 * free everything and call malloc_trim(0) where the allocator has it.
 *
 *   bench_frag OBJECTS   prints "peak_kib final_kib trimmed_kib live_kib has_trim"
 *
 * All in KiB of resident memory net of the process before the first
 * allocation (the pointer array included in that baseline): peak (VmHWM),
 * final (VmRSS with the survivors and the second wave live), trimmed
 * (VmRSS after the frees and the trim), live (the bytes the final heap
 * asked for: what a perfect allocator would hold), has_trim (1 if the
 * allocator had a malloc_trim of its own to call).
 */
#include "bench_util.h"

#include <sys/mman.h>

static size_t mixed_size(uint64_t *seed, size_t shift)
{
	uint64_t r = bench_rand(seed);
	size_t n;
	if (r % 256 == 0)
		n = 4096 + (r >> 8) % 61440;
	else if (r % 16 == 0)
		n = 256 + (r >> 8) % 3840;
	else
		n = 16 + (r >> 8) % 241;
	return n + n * shift / 4;	/* the second wave asks for 25% more */
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_frag OBJECTS\n");
		return 2;
	}
	size_t objects = strtoul(argv[1], NULL, 10), total = objects + objects / 2;
	/* mmap, not malloc: the array is the same for every allocator. */
	void **obj = mmap(NULL, total * sizeof(*obj), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t *len = mmap(NULL, total * sizeof(*len), PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!objects || obj == MAP_FAILED || len == MAP_FAILED)
		return 2;
	memset(obj, 0, total * sizeof(*obj));
	memset(len, 0, total * sizeof(*len));
	long base = bench_status_kib("VmRSS");
	uint64_t seed = 0x853c49e6748fea9bULL;
	for (size_t i = 0; i < objects; i++) {
		len[i] = mixed_size(&seed, 0);
		obj[i] = malloc(len[i]);
		memset(obj[i], 1, len[i]);	/* resident, as a program's data is */
	}
	for (size_t i = 0; i < objects; i++)
		if (bench_rand(&seed) % 10) {
			free(obj[i]);
			obj[i] = NULL;
			len[i] = 0;
		}
	for (size_t i = objects; i < total; i++) {
		len[i] = mixed_size(&seed, 1);
		obj[i] = malloc(len[i]);
		memset(obj[i], 2, len[i]);
	}
	size_t live = 0;
	for (size_t i = 0; i < total; i++)
		live += len[i];
	long peak = bench_status_kib("VmHWM"), final = bench_status_kib("VmRSS");
	for (size_t i = 0; i < total; i++)
		free(obj[i]);
	int has_trim = bench_trim();
	long trimmed = bench_status_kib("VmRSS");
	printf("%ld %ld %ld %zu %d\n", peak - base, final - base, trimmed - base, live / 1024, has_trim);
	return 0;
}
