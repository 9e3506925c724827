// SPDX-License-Identifier: MIT
/*
 * numa.c - the nodes at start-up: the machine's from sysfs, or the
 * option's fake ones (numa=fake=<N>), and the CPU-to-node map.
 */
#define _GNU_SOURCE
#include "base/numa.h"

#include <string.h>

#include "base/options.h"

unsigned int nr_node_ids = 1;
uint8_t numa_cpu_node[SLUB_MAX_CPUS];

static unsigned int fake_nodes;		/* 0: the machine's nodes */
static unsigned int phys_nodes = 1;	/* the machine's, for the fake nodes' binding */

bool numa_fake(void)
{
	return fake_nodes != 0;
}

/* Fake nodes take the real ones' memory in order, as the kernel's emulation. */
int numa_phys_node(int nid)
{
	return fake_nodes ? (int)((unsigned int)nid * phys_nodes / fake_nodes) : nid;
}

/* "fake=<N>" -> N; "off" -> 1; 0 if malformed. */
static unsigned int parse_value(const char *value)
{
	if (!strcmp(value, "off"))
		return 1;
	if (strncmp(value, "fake=", 5))
		return 0;
	unsigned long n = 0;
	const char *p = value + 5;
	if (!*p)
		return 0;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || (n = n * 10 + (unsigned long)(*p - '0')) > MAX_NUMNODES)
			return 0;
	}
	return (unsigned int)n;
}

const char *numa_option_check(const char *value)
{
	return parse_value(value) ? NULL : "expected fake=<N> (1 to MAX_NUMNODES nodes) or off";
}

static void set_node(unsigned int lo, unsigned int hi, void *arg)
{
	unsigned int nid = *(unsigned int *)arg;
	for (unsigned int cpu = lo; cpu <= hi && cpu < SLUB_MAX_CPUS; cpu++)
		numa_cpu_node[cpu] = (uint8_t)nid;
}

static void note_end(unsigned int lo, unsigned int hi, void *arg)
{
	(void)lo;
	unsigned int *end = arg;
	if (hi + 1 > *end)
		*end = hi + 1;
}

/*
 * The machine's nodes: node/possible, then each node's cpulist (a node
 * with memory and no CPU has an empty one).  Node ids past MAX_NUMNODES
 * are not used: their CPUs count as node 0's.
 */
static unsigned int read_sys_nodes(void)
{
	static const char dir[] = "/sys/devices/system/node/node";
	char buf[1024], path[sizeof(dir) + 16];
	unsigned int end = 0;
	if (os_read_small_file("/sys/devices/system/node/possible", buf, sizeof(buf)) <= 0 ||
	    os_cpu_list_parse(buf, note_end, &end) || end <= 1)
		return 1;
	if (end > MAX_NUMNODES)
		end = MAX_NUMNODES;
	for (unsigned int nid = 0; nid < end; nid++) {
		/* No snprintf: stdio's text would be faulted in by every process. */
		char *p = path + sizeof(dir) - 1;
		memcpy(path, dir, sizeof(dir) - 1);
		if (nid >= 10)
			*p++ = (char)('0' + nid / 10);
		*p++ = (char)('0' + nid % 10);
		memcpy(p, "/cpulist", sizeof("/cpulist"));
		if (os_read_small_file(path, buf, sizeof(buf)) >= 0)
			os_cpu_list_parse(buf, set_node, &nid);
	}
	return end;
}

/* Fake nodes: the CPUs in N blocks of consecutive numbers, as siblings stay together. */
static void spread_cpus(unsigned int nodes)
{
	unsigned int cpus = os_possible_cpus();
	for (unsigned int cpu = 0; cpu < SLUB_MAX_CPUS; cpu++)
		numa_cpu_node[cpu] = (uint8_t)(cpu < cpus ? cpu * nodes / cpus : 0);
}

void numa_init(void)
{
	const char *opt = slub_opt_str(numa);
	unsigned int asked = *opt ? parse_value(opt) : 0;
	phys_nodes = read_sys_nodes();
	if (asked == 1) {
		memset(numa_cpu_node, 0, sizeof(numa_cpu_node));
		phys_nodes = 1;
		nr_node_ids = 1;
		return;
	}
	if (asked) {
		fake_nodes = asked;
		spread_cpus(asked);
		nr_node_ids = asked;
		return;
	}
	nr_node_ids = phys_nodes;
}
