/* bugs.c - one heap bug of each kind: slubrun --debug --leak-check ./bugs */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile keep;	/* the compiler sees every pointer escape */

static void overflow_by_1(void)
{
	char *p = malloc(24);			/* overflow 1: allocated */
	p[24] = 'x';
	free(p);				/* overflow 1: found */
}

static void overflow_by_16(void)
{
	char *p = malloc(32);			/* overflow 16: allocated */
	memset(p + 32, 'x', 16);
	free(p);				/* overflow 16: found */
}

static void underflow(void)
{
	char *p = malloc(40);			/* underflow: allocated */
	p[-1] = 'x';
	free(p);				/* underflow: found */
}

static void use_after_free(void)
{
	char *p = malloc(600);			/* use after free: allocated */
	free(p);				/* use after free: freed */
	keep = p;
	((char *)keep)[8] = 'x';		/* nothing frees it again: found at exit */
}

static void double_free(void)
{
	char *p = malloc(56);			/* double free: allocated */
	free(p);				/* double free: freed */
	free(p);				/* double free: found */
}

static void interleaved_double_free(void)
{
	char *a = malloc(72), *b = malloc(72);	/* interleaved: allocated */
	free(a);				/* interleaved: freed */
	free(b);
	free(a);				/* interleaved: found */
}

static void free_stack_address(void)
{
	char local[16];
	keep = local;
	free(keep);				/* stack address: found */
}

static void free_interior_pointer(void)
{
	char *p = malloc(88);			/* interior: allocated */
	free(p + 8);				/* interior: found */
	free(p);
}

static void realloc_freed(void)
{
	char *p = malloc(104);			/* realloc freed: allocated */
	free(p);				/* realloc freed: freed */
	keep = realloc(p, 200);			/* realloc freed: found */
}

static void leak(void)
{
	keep = malloc(120);			/* leak: allocated */
	keep = NULL;
}

int main(void)
{
	leak();		/* first: the calls after it overwrite the stack it passed through */
	overflow_by_1();
	overflow_by_16();
	underflow();
	use_after_free();
	double_free();
	interleaved_double_free();
	free_stack_address();
	free_interior_pointer();
	realloc_freed();
	printf("bugs: done\n");
	return 0;
}
