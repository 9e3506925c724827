// SPDX-License-Identifier: MIT
/*
 * slubrun_check.c - will the program load the preloaded library?
 *
 * The loader drops LD_PRELOAD without a word in two cases: a static program
 * has no loader at all, and a set-user-ID or set-group-ID program that
 * changes the effective id (or one with file capabilities) runs in secure
 * mode, where a preload path with a slash is ignored.  Seen from the shell,
 * slubrun then "does nothing".  We read the file before exec and say so.
 */
#define _GNU_SOURCE
#include "slubrun_check.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* As execvp() finds it: a name with a slash is a path, others go by $PATH. */
static bool resolve(const char *prog, char *out, size_t size)
{
	if (strchr(prog, '/'))
		return snprintf(out, size, "%s", prog) < (int)size;
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; ; p++) {
		const char *end = strchrnul(p, ':');
		/* An empty entry is the current directory. */
		int n = end == p ? snprintf(out, size, "%s", prog)
				 : snprintf(out, size, "%.*s/%s", (int)(end - p), p, prog);
		struct stat st;
		if (n < (int)size && !stat(out, &st) && S_ISREG(st.st_mode) && !access(out, X_OK))
			return true;
		if (!*end)
			return false;
		p = end;
	}
}

/* Does exec of @path with this process's ids run in the loader's secure mode? */
static const char *secure_mode(const char *path, const struct stat *st)
{
	if ((st->st_mode & S_ISUID) && st->st_uid != geteuid())
		return "is set-user-ID";
	if ((st->st_mode & S_ISGID) && st->st_gid != getegid())
		return "is set-group-ID";
	/* File capabilities raise a non-root caller's privileges: secure mode too. */
	if (geteuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0)
		return "has file capabilities";
	return NULL;
}

enum verdict { LOADS, UNKNOWN, STATIC, SECURE };

/*
 * Read the ELF program headers of @path: no PT_INTERP means no loader, so
 * nothing is preloaded.  Only our own word size is judged: for another
 * the loader says itself that it cannot preload us.
 */
static enum verdict elf_verdict(int fd, const Elf64_Ehdr *eh)
{
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr))
		return UNKNOWN;
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		off_t at = (off_t)(eh->e_phoff + i * sizeof(ph));
		if (pread(fd, &ph, sizeof(ph), at) != (ssize_t)sizeof(ph))
			return UNKNOWN;
		if (ph.p_type == PT_INTERP)
			return LOADS;
	}
	return STATIC;
}

/*
 * The verdict on one file; for a "#!" script, @interp receives its
 * interpreter (which the caller then judges: one level, as the kernel
 * follows).  @why says what makes a SECURE file so.
 */
static enum verdict file_verdict(const char *path, char *interp, size_t size, const char **why)
{
	interp[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return UNKNOWN;	/* exec will say why */
	struct stat st;
	union {
		Elf64_Ehdr eh;
		char text[PATH_MAX + 2];
	} head;
	memset(&head, 0, sizeof(head));
	ssize_t n = fstat(fd, &st) ? -1 : pread(fd, &head, sizeof(head) - 1, 0);
	enum verdict v = UNKNOWN;
	if (n >= 2 && head.text[0] == '#' && head.text[1] == '!') {
		/* The kernel ignores set-ID bits on scripts: only the interpreter counts. */
		const char *p = head.text + 2;
		p += strspn(p, " \t");
		size_t len = strcspn(p, " \t\n");
		if (len && len < size) {
			memcpy(interp, p, len);
			interp[len] = 0;
		}
	} else if (n >= (ssize_t)sizeof(Elf64_Ehdr) && !memcmp(head.eh.e_ident, ELFMAG, SELFMAG)) {
		*why = secure_mode(path, &st);
		v = *why ? SECURE : elf_verdict(fd, &head.eh);
	}
	close(fd);
	return v;
}

void slubrun_check_program(const char *prog, const char *lib_name)
{
	char path[PATH_MAX], interp[PATH_MAX], subject[2 * PATH_MAX + 32];
	const char *why = NULL;
	if (!resolve(prog, path, sizeof(path)))
		return;
	enum verdict v = file_verdict(path, interp, sizeof(interp), &why);
	snprintf(subject, sizeof(subject), "%s", path);
	if (interp[0]) {
		char ignored[PATH_MAX];
		v = file_verdict(interp, ignored, sizeof(ignored), &why);
		snprintf(subject, sizeof(subject), "%s (a script) runs %s, which", path, interp);
	}
	if (v == STATIC)
		fprintf(stderr, "slubrun: %s is statically linked: it cannot load %s and runs "
			"on its own malloc\n", subject, lib_name);
	else if (v == SECURE)
		fprintf(stderr, "slubrun: %s %s: the loader ignores LD_PRELOAD for it, so it runs "
			"on its own malloc\n", subject, why);
}
