// SPDX-License-Identifier: MIT
/* A program that uses libslub as an outside user would: <slub.h> only. */
#include <slub.h>

int main(void)
{
	unsigned long a = __get_free_pages(GFP_KERNEL, 2);
	if (!a || page_address(virt_to_page((void *)a)) != (void *)a)
		return 1;
	free_pages(a, 2);
	return slub_errors() == 0 ? 0 : 2;
}
