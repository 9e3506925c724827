// SPDX-License-Identifier: MIT
/*
 * slub-symbolize - give each stack frame of a libslub report its file:line,
 * as the kernel's scripts/decode_stacktrace.sh does for an oops.
 *
 *   slub-symbolize [DIR|FILE...] < report > decoded
 *
 * Reads any text on stdin and copies it to stdout, line by line; a frame
 * it can resolve gets " FILE:LINE" appended, with the functions inlined
 * there ("(inlined into CALLER at FILE:LINE)").  Frames are what libslub
 * prints:
 *   function+0xOFF/0xSIZE [MODULE]   (as the kernel's %pS)
 *   /path/to/module+0xADDR           (no symbol covers it: a link-time address)
 * MODULE is a file name, or a path when the program ran with
 * slub_report_paths=1 (slubrun sets it); a path is printed back as its file
 * name, so the lines keep the kernel's format.  A bare file name is looked
 * for in the paths seen so far, the arguments (files or directories), the
 * current directory, $PATH and the usual library directories.  The address
 * is the symbol's in the module's symbol table plus the offset: no process
 * has to be alive, nothing has to be loaded where it was.  The line is that
 * of the call (the return address minus one).  Frames without debug
 * information, or whose module is not found, stay as they are.
 *
 * C++ names are demangled ("operator new(unsigned long)+0x1c/0x35"), with
 * libstdc++'s __cxa_demangle looked up at run time: where libstdc++ is
 * missing they stay as printed.
 *
 * DWARF is read with elfutils' libdw (separate debug files through its
 * standard lookup: /usr/lib/debug, build-ids).  The allocator itself never
 * parses DWARF: this runs outside the program (slubrun runs it).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- modules -------------------------------------------------------------------------- */

/* One module file, opened once with its own Dwfl session (NULL dwfl: not usable). */
struct module {
	char *name;		/* as the report names it: a path or a file name */
	char *path;		/* the file found for it, or NULL */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct module *next;
};

static struct module *modules;
static char **search;		/* directories and files to look in, from the arguments */
static int nr_search;

static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static bool regular_file(const char *path)
{
	struct stat st;
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/* @dir/@name into @out if that file exists. */
static bool try_dir(const char *dir, const char *name, char *out, size_t size)
{
	if (snprintf(out, size, "%s/%s", dir, name) >= (int)size)
		return false;
	return regular_file(out);
}

/* Try each directory of the colon-separated @list. */
static bool try_list(const char *list, const char *name, char *out, size_t size)
{
	if (!list)
		return false;
	char *copy = strdup(list), *save = NULL;
	bool found = false;
	for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save))
		found = try_dir(*dir ? dir : ".", name, out, size);
	free(copy);
	return found;
}

/* Where a module named only by its file name is: see the comment at the top. */
static bool find_module_file(const char *name, char *out, size_t size)
{
	for (struct module *m = modules; m; m = m->next)
		if (m->path && !strcmp(base_name(m->path), name)) {
			snprintf(out, size, "%s", m->path);
			return true;
		}
	for (int i = 0; i < nr_search; i++) {
		if (!strcmp(base_name(search[i]), name) && regular_file(search[i])) {
			snprintf(out, size, "%s", search[i]);
			return true;
		}
		if (try_dir(search[i], name, out, size))
			return true;
	}
	return try_dir(".", name, out, size) || try_list(getenv("PATH"), name, out, size) ||
	       try_list("/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:/usr/lib64:/lib:"
			"/usr/lib:/usr/local/lib", name, out, size);
}

static struct module *module_get(const char *name)
{
	for (struct module *m = modules; m; m = m->next)
		if (!strcmp(m->name, name))
			return m;
	struct module *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->name = strdup(name);
	char path[PATH_MAX];
	bool found = strchr(name, '/') ? regular_file(name) && snprintf(path, sizeof(path), "%s", name) > 0
				       : find_module_file(name, path, sizeof(path));
	if (found) {
		m->path = strdup(path);
		m->dwfl = dwfl_begin(&offline_callbacks);
		if (m->dwfl) {
			m->mod = dwfl_report_offline(m->dwfl, base_name(path), path, -1);
			dwfl_report_end(m->dwfl, NULL, NULL);
		}
	}
	m->next = modules;
	modules = m;
	return m;
}

/* The address of @name+@off in @m: the function of that name (and @size, if known). */
static bool symbol_address(struct module *m, const char *name, uint64_t off, uint64_t size,
			   Dwarf_Addr *addr)
{
	int n = dwfl_module_getsymtab(m->mod);
	bool found = false;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *s = dwfl_module_getsym_info(m->mod, i, &sym, &value, NULL, NULL, NULL);
		if (!s || GELF_ST_TYPE(sym.st_info) != STT_FUNC || strcmp(s, name))
			continue;
		if (size && sym.st_size != size && found)
			continue;
		*addr = value + off;
		found = true;
		if (!size || sym.st_size == size)
			return true;
	}
	return found;
}

/* ---- source lines ------------------------------------------------------------------- */

static const char *short_file(const char *file)
{
	char cwd[PATH_MAX];
	size_t n;
	if (file && getcwd(cwd, sizeof(cwd)) && (n = strlen(cwd)) && !strncmp(file, cwd, n) &&
	    file[n] == '/')
		return file + n + 1;
	return file;
}

/* The file of an inlined subroutine's call (DW_AT_call_file), or NULL. */
static const char *call_file(Dwarf_Die *die, Dwarf_Die *cu)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;
	Dwarf_Files *files;
	if (!dwarf_attr(die, DW_AT_call_file, &attr) || dwarf_formudata(&attr, &idx) ||
	    dwarf_getsrcfiles(cu, &files, NULL))
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/*
 * " FILE:LINE" for @addr (a call's address) of @m, then for each function
 * inlined there " (inlined into CALLER at FILE:LINE)", into @out; false if
 * the module has no line for it.
 */
/*
 * The compile unit that holds @addr.  clang emits no .debug_aranges, and
 * elfutils before 0.191 (Debian 12 has 0.188) finds no unit without them:
 * then each unit's ranges are asked in turn.
 */
static Dwarf_Die *unit_of(struct module *m, Dwarf_Addr addr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, addr, bias);
	while (!cu && (cu = dwfl_module_nextcu(m->mod, cu, bias)))
		if (dwarf_haspc(cu, addr - *bias) > 0)
			return cu;
	return cu;
}

static bool describe(struct module *m, Dwarf_Addr addr, char *out, size_t size)
{
	Dwfl_Line *line = dwfl_module_getsrc(m->mod, addr);
	int lineno = 0;
	const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	Dwarf_Addr bias;
	Dwarf_Die *cu = unit_of(m, addr, &bias), *scopes = NULL;
	if ((!file || !lineno) && cu) {
		Dwarf_Line *l = dwarf_getsrc_die(cu, addr - bias);
		file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
		if (!l || dwarf_lineno(l, &lineno))
			lineno = 0;
	}
	if (!file || !lineno)
		return false;
	size_t used = (size_t)snprintf(out, size, " %s:%d", short_file(file), lineno);
	int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
	/*
	 * The list ends at the innermost inlined instance, then goes on with its
	 * abstract origin's scopes, not the function it was inlined into: the
	 * chain of callers is that instance's own parents.
	 */
	Dwarf_Die *chain = NULL;
	for (int i = 0; i < n; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) {
			Dwarf_Die inner = scopes[i];
			free(scopes);
			scopes = NULL;
			n = dwarf_getscopes_die(&inner, &chain);
			scopes = chain;
			break;
		}
	/* scopes[0] is the innermost: each inlined one's caller is the next function scope. */
	for (int i = 0; i < n && used < size; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		Dwarf_Word call_line = 0;
		Dwarf_Attribute attr;
		dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &call_line);
		const char *caller = NULL, *cfile = call_file(&scopes[i], cu);
		for (int j = i + 1; j < n && !caller; j++)
			if (dwarf_tag(&scopes[j]) == DW_TAG_subprogram ||
			    dwarf_tag(&scopes[j]) == DW_TAG_inlined_subroutine)
				caller = dwarf_diename(&scopes[j]);
		used += (size_t)snprintf(out + used, size - used, " (%s inlined into %s at %s:%lu)",
					 dwarf_diename(&scopes[i]) ? dwarf_diename(&scopes[i]) : "?",
					 caller ? caller : "?", cfile ? short_file(cfile) : "?",
					 (unsigned long)call_line);
	}
	free(scopes);
	return true;
}

/* ---- frames in a line --------------------------------------------------------------- */

typedef char *demangle_fn(const char *mangled, char *buf, size_t *len, int *status);

/* @name demangled into @out if it is a C++ name and libstdc++ is there; else as it is. */
static const char *demangled(const char *name, char *out, size_t size)
{
	static demangle_fn *demangle;
	static bool looked;
	if (strncmp(name, "_Z", 2))
		return name;
	if (!looked) {
		looked = true;
		void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h)
			demangle = (demangle_fn *)dlsym(h, "__cxa_demangle");
	}
	int status = -1;
	char *d = demangle ? demangle(name, NULL, NULL, &status) : NULL;
	if (!d || status)
		return name;
	snprintf(out, size, "%s", d);
	free(d);
	return out;
}

/*
 * Frames of the form "NAME+0xOFF/0xSIZE [MODULE]": the line from @p on,
 * rewritten into @out with "[path]" cut to "[file]" and the source appended.
 */
static bool frame_symbol(const char *tok, size_t *len, char *out, size_t size, char *loc,
			 size_t loc_size)
{
	char name[512], module[PATH_MAX];
	unsigned long long off, fsize;
	int used = 0;
	if (sscanf(tok, "%511[^+ \t]+0x%llx/0x%llx [%4095[^]]]%n", name, &off, &fsize, module,
		   &used) != 4 || !used)
		return false;
	*len = (size_t)used;
	char readable[1024];
	snprintf(out, size, "%s+0x%llx/0x%llx [%s]", demangled(name, readable, sizeof(readable)),
		 off, fsize, base_name(module));
	loc[0] = 0;
	struct module *m = module_get(module);
	Dwarf_Addr addr = 0;
	/* A return address: the call is the byte before (the first byte of a function: itself). */
	if (m && m->mod && symbol_address(m, name, off, fsize, &addr))
		describe(m, off ? addr - 1 : addr, loc, loc_size);
	return true;
}

/* Frames "/path/module+0xADDR" (a module and a link-time address). */
static bool frame_address(const char *tok, size_t *len, char *out, size_t size, char *loc,
			  size_t loc_size)
{
	char module[PATH_MAX];
	unsigned long long addr;
	int used = 0;
	if (tok[0] != '/' || sscanf(tok, "%4095[^+ \t]+0x%llx%n", module, &addr, &used) != 2 ||
	    !used)
		return false;
	*len = (size_t)used;
	snprintf(out, size, "%.*s", used, tok);
	loc[0] = 0;
	struct module *m = module_get(module);
	Dwarf_Addr bias;
	if (m && m->mod && dwfl_module_getelf(m->mod, &bias))
		describe(m, bias + addr - 1, loc, loc_size);
	return true;
}

/* Copy @line to stdout with its frames decoded. */
static void decode_line(const char *line)
{
	char rewritten[PATH_MAX + 2048], loc[2048], tail[4096] = "";
	const char *p = line;
	while (*p) {
		size_t len;
		bool at_start = p == line || p[-1] == ' ' || p[-1] == '\t';
		if (at_start && (frame_symbol(p, &len, rewritten, sizeof(rewritten), loc, sizeof(loc)) ||
				 frame_address(p, &len, rewritten, sizeof(rewritten), loc, sizeof(loc)))) {
			fputs(rewritten, stdout);
			/* The source goes at the line's end: the frame may be followed by "age=..." */
			if (strlen(tail) + strlen(loc) < sizeof(tail))
				strcat(tail, loc);
			p += len;
			continue;
		}
		fputc(*p++, stdout);
	}
	fputs(tail, stdout);
}

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: slub-symbolize [DIR|FILE...] < report\n"
		       "Append FILE:LINE (and inlined calls) to each frame of a libslub report.\n"
		       "Frames name their module by path (slub_report_paths=1), or by file name,\n"
		       "looked for in the arguments, the current directory, $PATH and the\n"
		       "library directories.\n");
		return 0;
	}
	search = argv + 1;
	nr_search = argc - 1;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	setvbuf(stdout, NULL, _IOLBF, 0);	/* a line as soon as it is read: reports are live */
	while ((n = getline(&line, &cap, stdin)) > 0) {
		bool nl = line[n - 1] == '\n';
		if (nl)
			line[n - 1] = 0;
		decode_line(line);
		if (nl)
			fputc('\n', stdout);
	}
	free(line);
	return 0;
}
