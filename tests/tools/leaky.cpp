// SPDX-License-Identifier: MIT
/*
 * leaky.cpp - a C++ program that leaks as valgrind's memcheck counts it:
 * a dropped list (its head "definitely lost", the rest and their strings
 * "indirectly lost"), dropped arrays, and blocks still reachable or freed.
 * test_leak_valgrind.sh runs it under both and compares the counts.
 */
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct node {
	node *next;
	std::string name;
};

static node *make_list(int n)
{
	node *head = nullptr;
	for (int i = 0; i < n; i++)
		head = new node{head, "node-" + std::to_string(i) + "-with-a-long-enough-name"};	/* list */
	return head;
}

static std::map<int, std::string> *kept;	// reachable at exit
static int *volatile sink;			// only the last array stays reachable

int main()
{
	kept = new std::map<int, std::string>;
	for (int i = 0; i < 100; i++)
		(*kept)[i] = std::string(40, 'k');
	make_list(10);						/* dropped */
	for (int i = 0; i < 5; i++)
		sink = new int[8];				/* arrays */
	auto owned = std::make_unique<std::vector<int>>(1000);	// freed
	std::vector<std::string> v(50, std::string(64, 'v'));	// freed
	std::printf("%zu %zu\n", owned->size(), v.size());
	return 0;
}
