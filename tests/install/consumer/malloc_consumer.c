// SPDX-License-Identifier: MIT
/*
 * A program linked with -lslub-malloc (pkg-config slub-malloc): its malloc
 * must be libslub's, so the block it gets has a page descriptor in
 * libslub's memory map; glibc's would not.
 */
#include <stdlib.h>
#include <slub.h>

int main(void)
{
	char *p = malloc(100);
	if (!p || !virt_to_page(p))
		return 1;
	free(p);
	return slub_errors() == 0 ? 0 : 2;
}
