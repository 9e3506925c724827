// SPDX-License-Identifier: MIT
/*
 * cxx_mismatch.cpp - C++ allocation mismatches that change the pointer the
 * allocator gets, for test_cxx_mismatch.sh: an array from new[] of a type
 * with a destructor given to delete (free() gets a pointer 8 bytes into the
 * block, past the array's count).  Each case commits the bug, then goes on.
 *   cxx_mismatch CASE SIZE      CASE: array_delete, clean
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>

struct Counted {
	long value;
	~Counted() { value = -1; }
};

// The compiler must not see that the pointer came from new[].
template <typename T> static T *opaque(T *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	size_t n = strtoul(argv[2], nullptr, 0);
	if (!strcmp(argv[1], "array_delete")) {
		Counted *a = new Counted[n];
		delete opaque(a);	// the bug: delete[] was due
	} else if (!strcmp(argv[1], "clean")) {
		Counted *a = new Counted[n];
		delete[] opaque(a);
		Counted *o = new Counted;
		delete opaque(o);
	} else {
		return 2;
	}
	// The heap still works after the report.
	char *p = new char[n * 8 + 1];
	memset(p, 'x', n * 8 + 1);
	delete[] p;
	puts("-- the program went on --");
	return 0;
}
