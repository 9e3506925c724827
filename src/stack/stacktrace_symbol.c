// SPDX-License-Identifier: MIT
/*
 * stacktrace_symbol.c - names of stack frames, at print time only
 * (stacktrace.h), without the dynamic loader's lock and without malloc:
 *  1. /proc/self/maps gives the mapping, its file and the file offset
 *     (base/maps.h);
 *  2. the file is mapped read-only; its PT_LOAD headers turn the offset
 *     into the link-time address that the symbol tables and addr2line use
 *     (the offset itself in most PIE and shared objects, 0x400000 more in
 *     a classic non-PIE executable);
 *  3. the FUNC symbol holding that address comes from .symtab (unstripped
 *     objects), else .dynsym (what a stripped library exports).
 * The vdso is an ELF image in memory, read in place.  The last module file
 * stays mapped for the next frame (a stack's frames share a few modules).
 * Every offset taken from a file is checked against the file's size, and
 * the file must be the one mapped (same inode): it may have been replaced.
 */
#define _GNU_SOURCE
#include "stack/stacktrace.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/maps.h"
#include "base/os.h"
#include "base/report.h"

#define PATH_LEN 1024
#define NAME_LEN 384		/* a frame's name in a report line */

struct image {			/* an ELF object's bytes */
	const unsigned char *base;
	size_t size;
};

struct symbol {
	const char *name;
	uint64_t value, size;
};

/* The last module file mapped, kept for the next frame; @busy while in use. */
static struct {
	int busy;
	unsigned long inode;
	uintptr_t load;		/* start - offset of the mapping it was found by */
	char path[PATH_LEN];
	struct image img;
} last;

/* Are the @len bytes at @off inside @img? */
static bool within(const struct image *img, uint64_t off, uint64_t len)
{
	return off <= img->size && len <= img->size - off;
}

/* @count entries of @entsize at @off, whole and aligned inside @img, or NULL. */
static const void *table(const struct image *img, uint64_t off, uint64_t count, size_t entsize)
{
	if (off % 8 || count > img->size / entsize || !within(img, off, count * entsize))
		return NULL;
	return img->base + off;
}

static const Elf64_Ehdr *elf_header(const struct image *img)
{
	const Elf64_Ehdr *eh = table(img, 0, 1, sizeof(*eh));
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	return eh;
}

/* File offset @off to its link-time address, through the PT_LOAD holding it. */
static bool offset_to_vaddr(const struct image *img, const Elf64_Ehdr *eh, uint64_t off,
			    uint64_t *vaddr)
{
	const Elf64_Phdr *ph = table(img, eh->e_phoff, eh->e_phnum, sizeof(*ph));
	if (!ph || eh->e_phentsize != sizeof(*ph))
		return false;
	for (unsigned int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && off >= ph[i].p_offset &&
		    off - ph[i].p_offset < ph[i].p_filesz) {
			*vaddr = ph[i].p_vaddr + (off - ph[i].p_offset);
			return true;
		}
	return false;
}

/* The name at @at of string table @str, if it ends inside it. */
static const char *string_at(const struct image *img, const Elf64_Shdr *str, uint32_t at)
{
	if (str->sh_type != SHT_STRTAB || !within(img, str->sh_offset, str->sh_size) ||
	    at >= str->sh_size)
		return NULL;
	const char *s = (const char *)img->base + str->sh_offset + at;
	return strnlen(s, str->sh_size - at) < str->sh_size - at ? s : NULL;
}

/* Of aliases, the name a programmer calls: global, then without a leading '_'. */
static int alias_rank(const Elf64_Sym *s, const char *name)
{
	return (ELF64_ST_BIND(s->st_info) == STB_GLOBAL) * 2 + (name[0] != '_');
}

/* The function holding @vaddr in the first symbol table of @type. */
static bool find_function(const struct image *img, const Elf64_Ehdr *eh, uint32_t type,
			  uint64_t vaddr, struct symbol *out)
{
	const Elf64_Shdr *sh = table(img, eh->e_shoff, eh->e_shnum, sizeof(*sh));
	if (!sh || eh->e_shentsize != sizeof(*sh))
		return false;
	for (unsigned int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != type || sh[i].sh_link >= eh->e_shnum)
			continue;
		uint64_t count = sh[i].sh_size / sizeof(Elf64_Sym);
		const Elf64_Sym *sym = table(img, sh[i].sh_offset, count, sizeof(*sym));
		if (!sym || sh[i].sh_entsize != sizeof(*sym))
			return false;
		int best = -1;
		for (uint64_t j = 0; j < count; j++) {
			const Elf64_Sym *s = &sym[j];
			if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF ||
			    vaddr < s->st_value || vaddr - s->st_value >= s->st_size)
				continue;
			const char *name = string_at(img, &sh[sh[i].sh_link], s->st_name);
			if (!name || !*name || alias_rank(s, name) <= best)
				continue;
			*out = (struct symbol){ name, s->st_value, s->st_size };
			best = alias_rank(s, name);
		}
		return best >= 0;
	}
	return false;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Name file offset @off of the ELF object @img, loaded from @module. */
static enum stack_trace_found name_in(const struct image *img, uint64_t off, const char *module,
				      char *buf, size_t len)
{
	const Elf64_Ehdr *eh = elf_header(img);
	uint64_t vaddr;
	struct symbol s;
	if (!eh || !offset_to_vaddr(img, eh, off, &vaddr)) {
		snprintf(buf, len, "%s+0x%lx", module, (unsigned long)off);
		return STACK_SYM_MODULE;
	}
	if (find_function(img, eh, SHT_SYMTAB, vaddr, &s) ||
	    find_function(img, eh, SHT_DYNSYM, vaddr, &s)) {
		snprintf(buf, len, "%s+0x%lx/0x%lx [%s]", s.name, (unsigned long)(vaddr - s.value),
			 (unsigned long)s.size, base_name(module));
		return STACK_SYM_FUNCTION;
	}
	snprintf(buf, len, "%s+0x%lx", module, (unsigned long)vaddr);
	return STACK_SYM_MODULE;
}

/* Map the file at @path read-only if it is still the one with @inode. */
static bool map_file(const char *path, unsigned long inode, struct image *img)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	void *p = MAP_FAILED;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_ino == inode &&
	    st.st_size >= (off_t)sizeof(Elf64_Ehdr))
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return false;
	*img = (struct image){ p, (size_t)st.st_size };
	return true;
}

/* Name @addr in the file-backed mapping @e of @path, at file offset @off. */
static enum stack_trace_found name_in_file(const struct maps_entry *e, const char *path,
					   uint64_t off, char *buf, size_t len)
{
	/* A thread that finds the cache in use (another thread, or a signal) maps its own. */
	bool cached = !__atomic_exchange_n(&last.busy, 1, __ATOMIC_ACQUIRE);
	uintptr_t load = e->start - e->offset;
	struct image img;
	enum stack_trace_found found;
	if (cached && last.img.base && last.inode == e->inode && last.load == load &&
	    !strcmp(last.path, path)) {
		img = last.img;
	} else if (!map_file(path, e->inode, &img)) {
		snprintf(buf, len, "%s+0x%lx", path, (unsigned long)off);
		found = STACK_SYM_MODULE;
		goto out;
	} else if (cached) {
		if (last.img.base)
			munmap((void *)last.img.base, last.img.size);
		last.inode = e->inode;
		last.load = load;
		snprintf(last.path, sizeof(last.path), "%s", path);
		last.img = img;
	}
	found = name_in(&img, off, path, buf, len);
	if (!cached)
		munmap((void *)img.base, img.size);
out:
	if (cached)
		__atomic_store_n(&last.busy, 0, __ATOMIC_RELEASE);
	return found;
}

enum stack_trace_found stack_trace_symbol(uintptr_t addr, char *buf, size_t len)
{
	struct maps_entry e;
	char path[PATH_LEN];
	enum stack_trace_found found = STACK_SYM_MODULE;
	int saved_errno = errno;
	int cancel = os_cancel_off();	/* open() is a cancellation point */
	if (!maps_find(addr, &e, path, sizeof(path))) {
		snprintf(buf, len, "?");
		found = STACK_SYM_NONE;
	} else if (path[0] == '/') {
		found = name_in_file(&e, path, addr - e.start + e.offset, buf, len);
	} else if (!strcmp(path, "[vdso]")) {
		struct image img = { (const unsigned char *)e.start, e.end - e.start };
		found = name_in(&img, addr - e.start, path, buf, len);
	} else {	/* anonymous memory (JIT code, say), [stack], [heap]: no module */
		snprintf(buf, len, "%s+0x%lx", path[0] ? path : "[anonymous]",
			 (unsigned long)(addr - e.start));
		found = STACK_SYM_NONE;
	}
	os_cancel_restore(cancel);
	errno = saved_errno;
	return found;
}

void stack_trace_print(const uintptr_t *entries, unsigned int nr, const char *indent)
{
	char name[NAME_LEN];
	for (unsigned int i = 0; i < nr; i++) {
		stack_trace_symbol(entries[i], name, sizeof(name));
		slub_report_cont("%s%s", indent, name);
	}
}
