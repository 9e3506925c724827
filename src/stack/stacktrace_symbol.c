// SPDX-License-Identifier: MIT
/*
 * stacktrace_symbol.c - names of stack frames, at print time only
 * (stacktrace.h), without the dynamic loader's lock and without malloc:
 *  1. /proc/self/maps gives the mapping, its file and the file offset
 *     (base/maps.h);
 *  2. the file's PT_LOAD headers turn the offset into the link-time
 *     address that the symbol tables and addr2line use (the offset itself
 *     in most PIE and shared objects, 0x400000 more in a classic non-PIE
 *     executable);
 *  3. the FUNC symbol holding that address comes from .symtab (unstripped
 *     objects), else .dynsym (what a stripped library exports).
 * The file is read with pread() into stack buffers, never mapped: a
 * library rewritten in place (cp over it, truncate) makes a read short,
 * where a mapping would raise SIGBUS, even in the middle of a read.  It is
 * opened once per name or per printed stack (its frames share a few
 * modules) and closed after, so no descriptor or state outlives a report.
 * The vdso is an ELF image in memory, read in place.  Every offset taken
 * from a file is checked against the file's size, and the file must be
 * the one mapped (same inode): it may have been replaced.
 */
#define _GNU_SOURCE
#include "stack/stacktrace.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/maps.h"
#include "base/options.h"
#include "base/os.h"
#include "base/report.h"

#define PATH_LEN 1024
#define NAME_LEN 384		/* a frame's name in a report line */
#define SYM_NAME 256		/* of a symbol's name, at most this is read */
#define CHUNK 4096		/* table entries are read this many bytes at a time */

/* An ELF object's bytes: a file read with pread(), or memory (@fd < 0: the vdso). */
struct image {
	int fd;
	const unsigned char *mem;
	uint64_t size;		/* the file's at open: a later truncation makes reads short */
};

/* A symbol table and its string table, as file offsets. */
struct symtab {
	uint64_t off, count, str_off, str_size;
};

/* The module file being read, kept open for the next frame of one stack. */
struct module {
	struct image img;	/* img.fd -1: none open */
	unsigned long inode;
	uintptr_t load;		/* start - offset of the mapping it was found by */
	char path[PATH_LEN];
	bool elf;		/* header read: the fields below are valid */
	Elf64_Ehdr eh;
	struct symtab tabs[2];	/* .symtab, .dynsym (count 0: none) */
};

/* Copy the @len bytes at @off of @img into @buf; false unless all are there. */
static bool image_read(const struct image *img, uint64_t off, void *buf, size_t len)
{
	if (off > img->size || len > img->size - off)
		return false;
	if (img->fd < 0) {
		memcpy(buf, img->mem + off, len);
		return true;
	}
	for (size_t done = 0; done < len;) {
		ssize_t n = pread(img->fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;	/* truncated since fstat(), or an I/O error */
		done += (size_t)n;
	}
	return true;
}

/*
 * Entries @first.. of the table of @count entries of @entsize at @off, as
 * many as fit in @buf (CHUNK bytes); how many were read, 0 if none could be.
 */
static uint64_t read_entries(const struct image *img, uint64_t off, uint64_t count,
			     size_t entsize, uint64_t first, void *buf)
{
	if (first >= count || first > (UINT64_MAX - off) / entsize)
		return 0;
	uint64_t n = count - first < CHUNK / entsize ? count - first : CHUNK / entsize;
	return image_read(img, off + first * entsize, buf, (size_t)(n * entsize)) ? n : 0;
}

/* Read and check the ELF header, and find the symbol tables, once per module. */
static bool elf_open(struct module *m)
{
	if (m->elf)
		return true;
	Elf64_Ehdr *eh = &m->eh;
	if (!image_read(&m->img, 0, eh, sizeof(*eh)) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr))
		return false;
	memset(m->tabs, 0, sizeof(m->tabs));
	m->elf = true;
	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return true;	/* no sections: names by module and offset */
	Elf64_Shdr sh[CHUNK / sizeof(Elf64_Shdr)];
	for (uint64_t i = 0, n; (n = read_entries(&m->img, eh->e_shoff, eh->e_shnum, sizeof(*sh),
						 i, sh)); i += n)
		for (uint64_t j = 0; j < n; j++) {
			struct symtab *t = &m->tabs[sh[j].sh_type == SHT_DYNSYM];
			Elf64_Shdr str;
			if ((sh[j].sh_type != SHT_SYMTAB && sh[j].sh_type != SHT_DYNSYM) || t->count ||
			    sh[j].sh_entsize != sizeof(Elf64_Sym) || sh[j].sh_link >= eh->e_shnum ||
			    !image_read(&m->img, eh->e_shoff + sh[j].sh_link * sizeof(str), &str,
					sizeof(str)) || str.sh_type != SHT_STRTAB)
				continue;
			*t = (struct symtab){ sh[j].sh_offset, sh[j].sh_size / sizeof(Elf64_Sym),
					      str.sh_offset, str.sh_size };
		}
	return true;
}

/* File offset @off to its link-time address, through the PT_LOAD holding it. */
static bool offset_to_vaddr(const struct module *m, uint64_t off, uint64_t *vaddr)
{
	Elf64_Phdr ph[CHUNK / sizeof(Elf64_Phdr)];
	for (uint64_t i = 0, n; (n = read_entries(&m->img, m->eh.e_phoff, m->eh.e_phnum,
						 sizeof(*ph), i, ph)); i += n)
		for (uint64_t j = 0; j < n; j++)
			if (ph[j].p_type == PT_LOAD && off >= ph[j].p_offset &&
			    off - ph[j].p_offset < ph[j].p_filesz) {
				*vaddr = ph[j].p_vaddr + (off - ph[j].p_offset);
				return true;
			}
	return false;
}

/* The name at @at of @t's string table into @name (cut to SYM_NAME - 1); false if none. */
static bool string_at(const struct module *m, const struct symtab *t, uint32_t at, char *name)
{
	if (at >= t->str_size)
		return false;
	size_t len = t->str_size - at < SYM_NAME - 1 ? (size_t)(t->str_size - at) : SYM_NAME - 1;
	if (t->str_off > UINT64_MAX - at || !image_read(&m->img, t->str_off + at, name, len))
		return false;
	name[len] = 0;
	return name[0] != 0;
}

/* Of aliases, the name a programmer calls: global, then without a leading '_'. */
static int alias_rank(const Elf64_Sym *s, const char *name)
{
	return (ELF64_ST_BIND(s->st_info) == STB_GLOBAL) * 2 + (name[0] != '_');
}

struct symbol {
	char name[SYM_NAME];
	uint64_t value, size;
};

/* The function holding @vaddr in symbol table @t. */
static bool find_function(const struct module *m, const struct symtab *t, uint64_t vaddr,
			  struct symbol *out)
{
	Elf64_Sym sym[CHUNK / sizeof(Elf64_Sym)];
	char name[SYM_NAME];
	int best = -1;
	for (uint64_t i = 0, n; (n = read_entries(&m->img, t->off, t->count, sizeof(*sym), i,
						 sym)); i += n)
		for (uint64_t j = 0; j < n; j++) {
			const Elf64_Sym *s = &sym[j];
			if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF ||
			    vaddr < s->st_value || vaddr - s->st_value >= s->st_size ||
			    !string_at(m, t, s->st_name, name) || alias_rank(s, name) <= best)
				continue;
			memcpy(out->name, name, sizeof(name));
			out->value = s->st_value;
			out->size = s->st_size;
			best = alias_rank(s, name);
		}
	return best >= 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Name file offset @off of the ELF object @m, loaded from @module. */
static enum stack_trace_found name_in(struct module *m, uint64_t off, const char *module,
				      char *buf, size_t len)
{
	uint64_t vaddr;
	struct symbol s;
	if (!elf_open(m) || !offset_to_vaddr(m, off, &vaddr)) {
		snprintf(buf, len, "%s+0x%lx", module, (unsigned long)off);
		return STACK_SYM_MODULE;
	}
	if (find_function(m, &m->tabs[0], vaddr, &s) || find_function(m, &m->tabs[1], vaddr, &s)) {
		/* A path for slub-symbolize, which prints it back as the file name. */
		snprintf(buf, len, "%s+0x%lx/0x%lx [%s]", s.name, (unsigned long)(vaddr - s.value),
			 (unsigned long)s.size,
			 READ_ONCE(slub_opt(report_paths)) ? module : base_name(module));
		return STACK_SYM_FUNCTION;
	}
	snprintf(buf, len, "%s+0x%lx", module, (unsigned long)vaddr);
	return STACK_SYM_MODULE;
}

static void module_close(struct module *m)
{
	if (m->img.fd >= 0)
		close(m->img.fd);
	m->img.fd = -1;
	m->elf = false;
}

/* Open the file at @path into @m if it is still the one with @inode. */
static bool module_open(struct module *m, const char *path, unsigned long inode, uintptr_t load)
{
	module_close(m);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_ino != inode) {
		close(fd);
		return false;
	}
	m->img = (struct image){ fd, NULL, (uint64_t)st.st_size };
	m->inode = inode;
	m->load = load;
	snprintf(m->path, sizeof(m->path), "%s", path);
	return true;
}

/* Name @addr in the file-backed mapping @e of @path, at file offset @off. */
static enum stack_trace_found name_in_file(struct module *m, const struct maps_entry *e,
					   const char *path, uint64_t off, char *buf, size_t len)
{
	uintptr_t load = e->start - e->offset;
	bool same = m->img.fd >= 0 && m->inode == e->inode && m->load == load &&
		    !strcmp(m->path, path);
	if (!same && !module_open(m, path, e->inode, load)) {
		snprintf(buf, len, "%s+0x%lx", path, (unsigned long)off);
		return STACK_SYM_MODULE;
	}
	return name_in(m, off, path, buf, len);
}

/* stack_trace_symbol() with @m, the module file a previous frame left open. */
static enum stack_trace_found symbol_in(struct module *m, uintptr_t addr, char *buf, size_t len)
{
	struct maps_entry e;
	char path[PATH_LEN];
	if (!maps_find(addr, &e, path, sizeof(path))) {
		snprintf(buf, len, "?");
		return STACK_SYM_NONE;
	}
	if (path[0] == '/')
		return name_in_file(m, &e, path, addr - e.start + e.offset, buf, len);
	if (!strcmp(path, "[vdso]")) {
		struct module vdso = { .img = { -1, (const unsigned char *)e.start, e.end - e.start } };
		return name_in(&vdso, addr - e.start, path, buf, len);
	}
	/* anonymous memory (JIT code, say), [stack], [heap]: no module */
	snprintf(buf, len, "%s+0x%lx", path[0] ? path : "[anonymous]",
		 (unsigned long)(addr - e.start));
	return STACK_SYM_NONE;
}

enum stack_trace_found stack_trace_symbol(uintptr_t addr, char *buf, size_t len)
{
	struct module m = { .img.fd = -1 };
	int saved_errno = errno;
	int cancel = os_cancel_off();	/* open() is a cancellation point */
	enum stack_trace_found found = symbol_in(&m, addr, buf, len);
	module_close(&m);
	os_cancel_restore(cancel);
	errno = saved_errno;
	return found;
}

void stack_trace_print(const uintptr_t *entries, unsigned int nr, const char *indent)
{
	struct module m = { .img.fd = -1 };
	char name[NAME_LEN];
	int saved_errno = errno;
	int cancel = os_cancel_off();
	for (unsigned int i = 0; i < nr; i++) {
		symbol_in(&m, entries[i], name, sizeof(name));
		slub_report_cont("%s%s", indent, name);
	}
	module_close(&m);
	os_cancel_restore(cancel);
	errno = saved_errno;
}
