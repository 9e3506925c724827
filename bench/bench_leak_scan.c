// SPDX-License-Identifier: MIT
/*
 * bench_leak_scan - a large heap for the leak scan (run_leak_scan.sh): N
 * 64-byte blocks (default 1M), each pointing at the one before, and a
 * table of them all; one table slot in 1000 is cleared, so every block
 * stays reachable (through the next one) and the scan must follow the
 * chain as well as read the table.  Plain malloc: the allocator comes in
 * by LD_PRELOAD, or valgrind's.
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	void ***table = malloc((size_t)n * sizeof(*table));
	if (!table)
		return 1;
	for (long i = 0; i < n; i++) {
		table[i] = malloc(64);
		if (!table[i])
			return 1;
		table[i][0] = i ? table[i - 1] : NULL;
	}
	for (long i = 0; i < n; i += 1000)
		table[i] = NULL;
	printf("%ld blocks\n", n);
	return 0;
}
