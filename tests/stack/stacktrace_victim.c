// SPDX-License-Identifier: MIT
/*
 * stacktrace_victim.c - a small shared object for test_stacktrace: it loads
 * a copy, names a function in it, and rewrites the copy in place meanwhile.
 */
int victim_function(int x);

int victim_function(int x)
{
	return x * 3 + 1;
}
