// SPDX-License-Identifier: MIT
/*
 * test_image.c - what the built libraries cost every process that loads
 * them, read from their ELF files (argv: libslub.so, libslub-malloc.so):
 *   - the image (every PT_LOAD, bss included) spans less than 2 MiB.  From
 *     2 MiB the kernel places the image on a 2 MiB boundary, and the
 *     libraries the loader maps next to it (libc) then sit at one fixed
 *     offset instead of a random one; how many of libc's pages fault-around
 *     maps depends on that offset.
 *   - no thread-local variable is reached through __tls_get_addr (a
 *     DTPMOD64 relocation): the fast paths without rseq read one per call.
 *   - no call or address of a function the library defines goes through
 *     the PLT or GOT (a relocation naming a defined symbol): realloc's own
 *     malloc and free would be seen, and counted, by whoever is loaded
 *     before us.
 *   - the largest variable of the bss (pcp_sets: 384 KiB, of which each
 *     process touches the first CPUs' entries) comes last in it, so that
 *     the small variables, which every process touches, share pages.
 *   - with --hot LIST (cmake/hot_text.txt, the build's SLUB_HOT_TEXT): the
 *     functions it names lie together, with no other function between
 *     them, and most of them exist (a list gone stale lays out nothing).
 *   - with --window too (an optimised build whose segments are aligned to
 *     64 KiB): the hot text ends in the first 64 KiB of the text segment,
 *     the fault-around window that .init and .plt fault in anyway.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "check.h"

#define TWO_MIB (2UL << 20)

static void check_bss_order(const char *path, const unsigned char *file, const Elf64_Ehdr *eh)
{
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(file + eh->e_shoff);
	const char *shnames = (const char *)(file + sh[eh->e_shstrndx].sh_offset);
	int bss = -1, symtab = -1;
	for (int i = 0; i < eh->e_shnum; i++) {
		if (!strcmp(shnames + sh[i].sh_name, ".bss"))
			bss = i;
		if (sh[i].sh_type == SHT_SYMTAB)
			symtab = i;
	}
	CHECK(bss >= 0);
	if (bss < 0 || symtab < 0) {
		fprintf(stderr, "   %s: no symbol table (stripped?): bss order not checked\n", path);
		return;
	}
	const Elf64_Sym *sym = (const Elf64_Sym *)(file + sh[symtab].sh_offset);
	const char *names = (const char *)(file + sh[sh[symtab].sh_link].sh_offset);
	uint64_t n = sh[symtab].sh_size / sizeof(*sym);
	const Elf64_Sym *largest = NULL, *last = NULL;
	for (uint64_t k = 0; k < n; k++) {
		if (sym[k].st_shndx != bss || ELF64_ST_TYPE(sym[k].st_info) != STT_OBJECT)
			continue;
		if (!largest || sym[k].st_size > largest->st_size)
			largest = &sym[k];
		if (!last || sym[k].st_value > last->st_value)
			last = &sym[k];
	}
	CHECK(largest != NULL);
	if (!largest)
		return;
	CHECK(largest == last);
	fprintf(stderr, "   %s: largest bss variable %s (%lu KiB), last %s\n", path,
		names + largest->st_name, (unsigned long)(largest->st_size >> 10),
		names + last->st_name);
}

static const char *hot_list;	/* --hot LIST */
static bool hot_window;		/* --window */
#define FAULT_AROUND (64UL << 10)	/* the kernel's fault_around_bytes */

/*
 * Is @name one of hot_list's functions, or the cold part of one (NAME.cold)?
 * Its entry is marked in @seen.
 */
static bool listed_hot(const char *name, char *const *hot, size_t nr, bool *seen)
{
	size_t len = strlen(name);
	if (len > 5 && !strcmp(name + len - 5, ".cold"))
		len -= 5;
	for (size_t i = 0; i < nr; i++)
		if (!strncmp(hot[i], name, len) && !hot[i][len]) {
			seen[i] = true;
			return true;
		}
	return false;
}

static void check_hot_text(const char *path, const unsigned char *file, const Elf64_Ehdr *eh)
{
	FILE *f = fopen(hot_list, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	static char *hot[4096];
	static bool seen[4096];
	size_t nr = 0;
	char line[512];
	while (nr < 4096 && fgets(line, sizeof(line), f)) {
		/* As cmake/HotText.cmake reads it: blanks around, # comments. */
		char *name = line + strspn(line, " \t");
		name[strcspn(name, " \t\r\n")] = 0;
		if (name[0] && name[0] != '#')
			hot[nr++] = strdup(name);
	}
	fclose(f);
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(file + eh->e_shoff);
	int symtab = -1;
	for (int i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB)
			symtab = i;
	if (symtab < 0) {
		fprintf(stderr, "   %s: no symbol table (stripped?): hot text not checked\n", path);
		return;
	}
	const Elf64_Sym *sym = (const Elf64_Sym *)(file + sh[symtab].sh_offset);
	const char *names = (const char *)(file + sh[sh[symtab].sh_link].sh_offset);
	uint64_t n = sh[symtab].sh_size / sizeof(*sym);
	/* The listed functions' span, then any other function inside it. */
	static uint64_t at[8192];	/* the listed functions' addresses: their aliases are theirs */
	uint64_t lo = UINT64_MAX, hi = 0, bytes = 0;
	size_t found = 0;
	for (uint64_t k = 0; k < n; k++) {
		if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_size ||
		    !listed_hot(names + sym[k].st_name, hot, nr, seen))
			continue;
		if (found < 8192)
			at[found] = sym[k].st_value;
		found++;
		bytes += sym[k].st_size;
		if (sym[k].st_value < lo)
			lo = sym[k].st_value;
		if (sym[k].st_value + sym[k].st_size > hi)
			hi = sym[k].st_value + sym[k].st_size;
	}
	unsigned between = 0;
	for (uint64_t k = 0; k < n; k++) {
		if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_size ||
		    sym[k].st_value < lo || sym[k].st_value >= hi ||
		    listed_hot(names + sym[k].st_name, hot, nr, seen))
			continue;
		bool alias = false;
		for (size_t i = 0; i < found && i < 8192; i++)
			alias = alias || at[i] == sym[k].st_value;
		if (alias)
			continue;
		if (between++ < 5)
			fprintf(stderr, "   %s: %s lies among the hot functions\n", path,
				names + sym[k].st_name);
	}
	size_t listed = 0;	/* entries found, each once (static copies, .cold parts) */
	for (size_t i = 0; i < nr; i++) {
		listed += seen[i];
		seen[i] = false;
	}
	fprintf(stderr, "   %s: %zu of %zu hot functions found, %lu KiB in a span of %lu KiB\n",
		path, listed, nr, (unsigned long)(bytes >> 10), (unsigned long)((hi - lo) >> 10));
	CHECK(listed * 2 >= nr);
	CHECK_EQ(between, 0);
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(file + eh->e_phoff);
	uint64_t text = 0;
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X))
			text = ph[i].p_vaddr;
	if (found && hi > text)
		fprintf(stderr, "   %s: the hot text ends %lu KiB into the text segment "
			"(a fault-around window: %lu KiB)\n", path,
			(unsigned long)((hi - text) >> 10), FAULT_AROUND >> 10);
	if (hot_window) {
		CHECK(text % FAULT_AROUND == 0);
		CHECK(hi - text <= FAULT_AROUND);
	}
	for (size_t i = 0; i < nr; i++)
		free(hot[i]);
}

static void check_image(const char *path)
{
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	struct stat st;
	CHECK_EQ(fstat(fd, &st), 0);
	const unsigned char *file = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	CHECK(file != MAP_FAILED);
	if (file == MAP_FAILED)
		return;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)file;
	CHECK(memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64);

	uint64_t lo = UINT64_MAX, hi = 0;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(file + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (ph[i].p_vaddr < lo)
			lo = ph[i].p_vaddr;
		if (ph[i].p_vaddr + ph[i].p_memsz > hi)
			hi = ph[i].p_vaddr + ph[i].p_memsz;
	}
	CHECK(hi > lo);
	CHECK(hi - lo < TWO_MIB);

	unsigned dtpmod = 0, self_bound = 0;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(file + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_RELA)
			continue;
		const Elf64_Rela *rela = (const Elf64_Rela *)(file + sh[i].sh_offset);
		const Elf64_Sym *syms = sh[i].sh_link ?
			(const Elf64_Sym *)(file + sh[sh[i].sh_link].sh_offset) : NULL;
		const char *names = sh[i].sh_link ?
			(const char *)(file + sh[sh[sh[i].sh_link].sh_link].sh_offset) : NULL;
		for (uint64_t k = 0; k < sh[i].sh_size / sizeof(*rela); k++) {
			unsigned type = (unsigned)ELF64_R_TYPE(rela[k].r_info);
			const Elf64_Sym *sym = ELF64_R_SYM(rela[k].r_info) && syms ?
				&syms[ELF64_R_SYM(rela[k].r_info)] : NULL;
#if defined(__x86_64__)
			dtpmod += type == R_X86_64_DTPMOD64;
			bool call = type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT;
#elif defined(__aarch64__)
			dtpmod += type == R_AARCH64_TLSDESC;
			bool call = type == R_AARCH64_JUMP_SLOT || type == R_AARCH64_GLOB_DAT;
#else
			bool call = false;
#endif
			if (call && sym && sym->st_shndx != SHN_UNDEF &&
			    ELF64_ST_TYPE(sym->st_info) == STT_FUNC) {
				fprintf(stderr, "   %s: %s is called through the PLT\n", path,
					names + sym->st_name);
				self_bound++;
			}
		}
	}
	CHECK_EQ(dtpmod, 0);
	CHECK_EQ(self_bound, 0);
	check_bss_order(path, file, eh);
	if (hot_list)
		check_hot_text(path, file, eh);
	fprintf(stderr, "   %s: image %lu KiB, %u dynamic TLS relocations, "
		"%u own functions through the PLT\n", path,
		(unsigned long)((hi - lo) >> 10), dtpmod, self_bound);
	munmap((void *)file, (size_t)st.st_size);
}

int main(int argc, char **argv)
{
	int libs = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--hot") && i + 1 < argc) {
			hot_list = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "--window")) {
			hot_window = true;
			continue;
		}
		check_image(argv[i]);
		libs++;
	}
	CHECK(libs > 0);
	return check_done();
}
