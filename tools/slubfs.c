// SPDX-License-Identifier: MIT
/*
 * slubfs - mount a live libslub process's caches as a /sys/kernel/slab
 * tree (libfuse3, high-level API), served from its agent's socket.
 *
 *   slubfs [-f] [-d] PID MOUNTPOINT
 *
 * A directory per cache, named as the kernel names it (slub_cache_id: the
 * unique id ":[flags-]size" of a mergeable cache, else its name), a symlink
 * to it for each name merged into it (the creator's too, as the kernel's
 * tree has them), a file per attribute with the kernel's mode.  `cat`
 * reads an attribute (one snapshot per open, as sysfs), `echo 1 > shrink`
 * writes one; the agent's -errno comes back as the write's error.  The root
 * file `leaks` is kmemleak's /sys/kernel/debug/kmemleak: a read runs a
 * live leak scan and gives its report (slabinfo -p PID --leaks), `echo
 * scan >` runs one and drops the text, any other write is EINVAL.  Mounted
 * with auto_unmount, so a killed slubfs leaves no mount; when the process
 * exits, slubfs unmounts and ends.  Without -f it goes to the background
 * once mounted.  slabinfo -d MOUNTPOINT reads the tree as any other.
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <fuse.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_client.h"

/* The caches as last listed: "id" directories and "alias -> id" links. */
struct entry {
	char *name;
	const char *link;	/* the id an alias points at; NULL for a directory */
};

static struct {
	pthread_mutex_t lock;	/* the connection and the lists */
	int fd;
	pid_t pid;
	struct entry *entries;
	size_t nr;
	char *list_text;	/* the strings the entries point into */
	struct timespec listed;
	char **attrs;		/* the attributes, the same in every cache */
	unsigned int *modes;
	size_t nr_attrs;
	time_t mounted;
} fs = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

/* One request under the lock; its status (0 or -errno) and answer. */
static int call(const char *req, const char *payload, size_t len, char **body)
{
	size_t n;
	int st = agent_call(fs.fd, req, payload, len, body, &n);
	/* The process is gone: the mount goes with it (the watcher unmounts). */
	return st == -ECONNRESET ? -ENODEV : st;
}

static double age(const struct timespec *t)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) * 1e-9;
}

/* The cache list again, if older than @max_age seconds (lock held). */
static int refresh(double max_age)
{
	if (fs.list_text && age(&fs.listed) < max_age)
		return 0;
	char *text;
	int st = call("caches", NULL, 0, &text);
	if (st) {
		free(text);
		return st;
	}
	size_t lines = 0;
	for (char *p = text; *p; p++)
		lines += *p == '\n' || *p == '\t';
	struct entry *e = calloc(lines + 1, sizeof(*e));
	if (!e) {
		free(text);
		return -ENOMEM;
	}
	size_t nr = 0;
	for (char *line = text, *next; *line; line = next) {
		next = strchrnul(line, '\n');
		if (*next)
			*next++ = 0;
		char *id = line, *name = strchr(line, '\t');
		if (!name)
			continue;
		*name++ = 0;
		e[nr++] = (struct entry){ id, NULL };
		/* A merged cache's every name links to its id; a plain one's is its id. */
		char *alias = name;
		bool merged = id[0] == ':';
		if (!merged)
			alias = strchr(name, '\t') ? strchr(name, '\t') + 1 : NULL;
		while (alias && *alias) {
			char *tab = strchr(alias, '\t');
			if (tab)
				*tab = 0;
			e[nr++] = (struct entry){ alias, id };
			alias = tab ? tab + 1 : NULL;
		}
	}
	free(fs.entries);
	free(fs.list_text);
	fs.entries = e;
	fs.nr = nr;
	fs.list_text = text;
	clock_gettime(CLOCK_MONOTONIC, &fs.listed);
	return 0;
}

static const struct entry *find_entry(const char *name, size_t len)
{
	for (size_t i = 0; i < fs.nr; i++)
		if (strlen(fs.entries[i].name) == len && !strncmp(fs.entries[i].name, name, len))
			return &fs.entries[i];
	return NULL;
}

/* "/cache[/attr]": the cache's entry and the attribute's index (-1 for none). */
static int resolve(const char *path, const struct entry **e, long *attr)
{
	const char *name = path + 1, *slash = strchr(name, '/');
	size_t len = slash ? (size_t)(slash - name) : strlen(name);
	*e = find_entry(name, len);
	if (!*e && refresh(0.2) == 0)	/* a cache made since the last list */
		*e = find_entry(name, len);
	if (!*e)
		return -ENOENT;
	*attr = -1;
	if (!slash)
		return 0;
	if ((*e)->link)
		return -ENOTDIR;	/* through the link: the kernel resolves it to the id */
	for (size_t i = 0; i < fs.nr_attrs; i++)
		if (!strcmp(fs.attrs[i], slash + 1)) {
			*attr = (long)i;
			return 0;
		}
	return -ENOENT;
}

/* The root's kmemleak file; it hides a cache of that name. */
#define LEAKS "leaks"
#define LEAKS_MODE 0600	/* a read scans the process's memory: its owner's */

static bool is_leaks(const char *path)
{
	return !strcmp(path, "/" LEAKS);
}

static int slubfs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_atime = st->st_mtime = st->st_ctime = fs.mounted;
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (is_leaks(path)) {
		st->st_mode = S_IFREG | LEAKS_MODE;
		st->st_size = 4096;
		st->st_nlink = 1;
		return 0;
	}
	pthread_mutex_lock(&fs.lock);
	const struct entry *e;
	long attr;
	int err = refresh(1.0);
	if (!err)
		err = resolve(path, &e, &attr);
	if (!err && attr >= 0) {
		st->st_mode = S_IFREG | fs.modes[attr];
		st->st_size = 4096;	/* as sysfs: the text's length is known at read */
		st->st_nlink = 1;
	} else if (!err && e->link) {
		st->st_mode = S_IFLNK | 0777;
		st->st_size = (off_t)strlen(e->link);
		st->st_nlink = 1;
	} else if (!err) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	}
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int slubfs_readlink(const char *path, char *buf, size_t size)
{
	pthread_mutex_lock(&fs.lock);
	const struct entry *e;
	long attr;
	int err = resolve(path, &e, &attr);
	if (!err && !e->link)
		err = -EINVAL;
	if (!err)
		snprintf(buf, size, "%s", e->link);
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int slubfs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
			  struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	pthread_mutex_lock(&fs.lock);
	const struct entry *e = NULL;
	long attr;
	int err = strcmp(path, "/") ? resolve(path, &e, &attr) : refresh(0);
	if (!err && e && (e->link || attr >= 0))
		err = -ENOTDIR;
	if (!err) {
		fill(buf, ".", NULL, 0, 0);
		fill(buf, "..", NULL, 0, 0);
		if (!e)
			fill(buf, LEAKS, NULL, 0, 0);
		for (size_t i = 0; !e && i < fs.nr; i++)
			fill(buf, fs.entries[i].name, NULL, 0, 0);
		for (size_t i = 0; e && i < fs.nr_attrs; i++)
			fill(buf, fs.attrs[i], NULL, 0, 0);
	}
	pthread_mutex_unlock(&fs.lock);
	return err;
}

/* An open attribute: its text, read once at the first read, as sysfs. */
struct open_attr {
	char *cache, *attr;	/* both NULL for the leaks file */
	char *text;
	size_t len;
	bool read;
};

static int slubfs_open(const char *path, struct fuse_file_info *fi)
{
	if (is_leaks(path)) {
		struct open_attr *o = calloc(1, sizeof(*o));
		if (!o)
			return -ENOMEM;
		fi->fh = (uint64_t)(uintptr_t)o;
		fi->direct_io = 1;
		return 0;
	}
	pthread_mutex_lock(&fs.lock);
	const struct entry *e;
	long attr;
	int err = resolve(path, &e, &attr);
	if (!err && attr < 0)
		err = -EISDIR;
	if (!err && (fi->flags & O_ACCMODE) != O_RDONLY && !(fs.modes[attr] & 0200))
		err = -EACCES;
	struct open_attr *o = err ? NULL : calloc(1, sizeof(*o));
	if (!err && !o)
		err = -ENOMEM;
	if (o) {
		o->cache = strdup(e->name);
		o->attr = strdup(fs.attrs[attr]);
		fi->fh = (uint64_t)(uintptr_t)o;
		fi->direct_io = 1;	/* the text's length is not the size getattr said */
	}
	pthread_mutex_unlock(&fs.lock);
	return err;
}

static int slubfs_read(const char *path, char *buf, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)path;
	struct open_attr *o = (void *)(uintptr_t)fi->fh;
	if (!o->read || !off) {
		char req[512] = LEAKS;	/* a scan each time, the report its text */
		if (o->attr)
			snprintf(req, sizeof(req), "read\t%s\t%s", o->cache, o->attr);
		free(o->text);
		pthread_mutex_lock(&fs.lock);
		int st = call(req, NULL, 0, &o->text);
		pthread_mutex_unlock(&fs.lock);
		if (st)
			return st;
		o->len = strlen(o->text);
		o->read = true;
	}
	if ((size_t)off >= o->len)
		return 0;
	size_t n = o->len - (size_t)off < size ? o->len - (size_t)off : size;
	memcpy(buf, o->text + off, n);
	return (int)n;
}

static int slubfs_write(const char *path, const char *buf, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	(void)path;
	(void)off;	/* each write is the whole value, as sysfs takes it */
	struct open_attr *o = (void *)(uintptr_t)fi->fh;
	char req[512] = LEAKS, *body;
	if (o->attr)
		snprintf(req, sizeof(req), "write\t%s\t%s\t%zu", o->cache, o->attr, size);
	else if (!(size == 4 || (size == 5 && buf[4] == '\n')) || memcmp(buf, "scan", 4))
		return -EINVAL;	/* kmemleak's other commands (clear, off, dump=) are not ours */
	pthread_mutex_lock(&fs.lock);
	int st = call(req, o->attr ? buf : NULL, o->attr ? size : 0, &body);
	pthread_mutex_unlock(&fs.lock);
	free(body);
	return st ? st : (int)size;
}

/* `echo 1 >` opens with O_TRUNC: nothing to cut. */
static int slubfs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)path;
	(void)size;
	(void)fi;
	return 0;
}

static int slubfs_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	struct open_attr *o = (void *)(uintptr_t)fi->fh;
	free(o->cache);
	free(o->attr);
	free(o->text);
	free(o);
	return 0;
}

static const struct fuse_operations slubfs_ops = {
	.getattr = slubfs_getattr,
	.readlink = slubfs_readlink,
	.readdir = slubfs_readdir,
	.open = slubfs_open,
	.read = slubfs_read,
	.write = slubfs_write,
	.truncate = slubfs_truncate,
	.release = slubfs_release,
};

/* The attributes and their modes, once: the library's table does not change. */
static int load_attrs(void)
{
	char *text;
	int st = call("attrs", NULL, 0, &text);
	if (st)
		return st;
	size_t cap = 0;
	for (char *p = text; *p; p++)
		cap += *p == '\n';
	fs.attrs = calloc(cap + 1, sizeof(*fs.attrs));
	fs.modes = calloc(cap + 1, sizeof(*fs.modes));
	for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		char *tab = strchr(line, '\t');
		*nl = 0;
		if (!tab || fs.nr_attrs == cap)
			continue;
		fs.modes[fs.nr_attrs] = (unsigned int)strtoul(line, NULL, 8);
		fs.attrs[fs.nr_attrs++] = tab + 1;	/* @text stays for the mount's life */
	}
	return 0;
}

/*
 * An exec keeps the pid: the new image, the agent on in its environment,
 * listens again at the same path.  Up to 5 s for it; the lists are read
 * anew (another program, other caches).
 */
static bool reconnect(void)
{
	for (int waited = 0; waited < 5000 && agent_process_running(fs.pid); waited += 20) {
		int fd = agent_connect(fs.pid, NULL, 0);
		if (fd >= 0) {
			pthread_mutex_lock(&fs.lock);
			close(fs.fd);
			fs.fd = fd;
			free(fs.list_text);
			fs.list_text = NULL;	/* refresh() lists again */
			pthread_mutex_unlock(&fs.lock);
			return true;
		}
		struct timespec ts = { 0, 20 * 1000000L };
		nanosleep(&ts, NULL);
	}
	return false;
}

/*
 * The process's end: its agent's socket hangs up, and no new agent comes
 * for its pid.  SIGHUP to ourselves ends fuse_loop (libfuse's handler),
 * which unmounts on the way out.
 */
static void *watch_process(void *arg)
{
	(void)arg;
	do {
		struct pollfd p = { fs.fd, POLLRDHUP, 0 };
		while (poll(&p, 1, -1) < 0 || !(p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
			;
	} while (reconnect());
	kill(getpid(), SIGHUP);
	return NULL;
}

/* /proc/self/mountinfo's escapes (\040 for a space) undone in place. */
static void unescape_octal(char *s)
{
	char *out = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = 0;
}

/*
 * The mount ID (mountinfo's first field) of the newest slubfs mount at
 * @mnt, or -1 if none; with @id >= 0, @id if that mount is still there.
 * The mount table, since a dead mount's stat may still answer.
 */
static long slubfs_mount_id(const char *mnt, long id)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	long found = -1;
	while (getline(&line, &cap, f) > 0) {
		char *fields[5], *save, *p = line;
		int n = 0;
		for (; n < 5 && (fields[n] = strtok_r(p, " ", &save)); n++)
			p = NULL;
		const char *sep = strstr(save ? save : "", "- fuse.slubfs ");
		if (n < 5 || !sep)
			continue;
		unescape_octal(fields[4]);
		long this = strtol(fields[0], NULL, 10);
		if (!strcmp(fields[4], mnt) && (id < 0 || this == id))
			found = this;	/* the last one: mounts are listed oldest first */
	}
	free(line);
	fclose(f);
	return found;
}

/*
 * auto_unmount has a race: fusermount3 sees our control socket close and
 * checks the mount (an open() that must fail with ENOTCONN) before the
 * kernel has aborted our FUSE connection, as our fds close one by one
 * while we die; it then leaves the mount behind, dead ("Transport endpoint
 * is not connected"; 2 to 6 kill -9s in 100 on a loaded machine).  A child
 * forked before the mount (it holds neither the FUSE fd nor libfuse's
 * socket) waits on a pipe for us, the daemon after fuse_daemonize's fork
 * too, to die; gives fusermount3 a second; then unmounts our mount if it
 * is still at @mnt.  Ours by its mount ID, which we send once mounted: a
 * guard that runs late must not take away the next slubfs's mount of the
 * same directory.  A clean exit has unmounted first.
 * Returns the pipe's write end, or -1.
 */
static int start_unmount_guard(const char *mnt)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGINT, SIG_IGN);	/* a ^C is for slubfs, which unmounts */
		signal(SIGHUP, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		int devnull = open("/dev/null", O_RDWR);
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(pipefd[0], 3);
		close_range(4, ~0U, 0);	/* the agent's socket, ours: not to hold it open */
		long id = -1;	/* none sent: we died as the mount appeared */
		ssize_t got;
		while ((got = read(3, &id, sizeof(id))) < 0 && errno == EINTR)
			;
		if (got != (ssize_t)sizeof(id))
			id = -1;
		char c;
		while (got > 0 && (got = read(3, &c, 1)) != 0 && (got > 0 || errno == EINTR))
			;
		for (int i = 0; i < 20; i++) {
			if (slubfs_mount_id(mnt, id) < 0)
				_exit(0);
			struct timespec ts = { 0, 50 * 1000000L };
			nanosleep(&ts, NULL);
		}
		execlp("fusermount3", "fusermount3", "-uzq", mnt, (char *)NULL);
		_exit(127);
	}
	close(pipefd[0]);	/* the write end stays open until we die */
	if (pid < 0) {
		close(pipefd[1]);
		return -1;
	}
	return pipefd[1];
}

static void usage(FILE *out)
{
	fprintf(out, "usage: slubfs [-f] [-d] PID MOUNTPOINT\n"
		"Mount the caches of libslub process PID (run with SLUB_OPTIONS=slub_agent,\n"
		"or under slubrun --fs) as a /sys/kernel/slab tree: cat reads an attribute,\n"
		"echo 1 > CACHE/shrink writes one.  cat leaks runs a leak scan and prints\n"
		"its report (as slabinfo -p PID --leaks; needs slub_debug=U), echo scan >\n"
		"leaks runs one.  Unmounted when the process exits (or: fusermount3 -u\n"
		"MOUNTPOINT).\n"
		"  -f  stay in the foreground      -d  FUSE debugging output\n");
}

int main(int argc, char **argv)
{
	bool foreground = false, debug = false;
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-f")) {
			foreground = true;
		} else if (!strcmp(argv[i], "-d")) {
			debug = foreground = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "slubfs: unknown option %s\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	char *end;
	long pid = i + 2 == argc ? strtol(argv[i], &end, 10) : 0;
	if (pid <= 0 || *end) {
		usage(stderr);
		return 2;
	}
	const char *mnt = argv[i + 1];
	char mnt_path[PATH_MAX];
	if (!realpath(mnt, mnt_path)) {	/* the guard below runs in / (fuse_daemonize) */
		fprintf(stderr, "slubfs: %s: %s\n", mnt, strerror(errno));
		return 1;
	}
	char path[128] = "";
	fs.pid = (pid_t)pid;
	fs.fd = agent_connect_wait(fs.pid, path, sizeof(path));
	if (fs.fd < 0) {
		agent_explain("slubfs", fs.pid, fs.fd, path);
		return 1;
	}
	if (load_attrs() || refresh(0)) {
		fprintf(stderr, "slubfs: pid %ld: its agent does not answer\n", pid);
		return 1;
	}
	fs.mounted = time(NULL);

	/* auto_unmount: fusermount3 removes the mount when we die, however we die. */
	char *fargs[] = { argv[0], "-o", "auto_unmount,fsname=slubfs,subtype=slubfs",
			  debug ? "-d" : NULL, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(debug ? 4 : 3, fargs);
	struct fuse *f = fuse_new(&args, &slubfs_ops, sizeof(slubfs_ops), NULL);
	if (!f)
		return 1;
	int guard = start_unmount_guard(mnt_path);	/* before the mount: a kill may come as it appears */
	if (fuse_mount(f, mnt)) {
		fuse_destroy(f);
		return 1;
	}
	long id = slubfs_mount_id(mnt_path, -1);
	if (guard >= 0 && id >= 0) {
		/* Should this fail, the guard falls back to any slubfs mount at the path. */
		ssize_t sent = write(guard, &id, sizeof(id));
		(void)sent;
	}
	struct fuse_session *se = fuse_get_session(f);
	int ret = 1;
	if (fuse_set_signal_handlers(se) == 0 && fuse_daemonize(foreground) == 0) {
		/* After the daemon's fork: a thread does not survive it. */
		pthread_t t;
		sigset_t hup, old;
		sigemptyset(&hup);
		sigaddset(&hup, SIGHUP);
		pthread_sigmask(SIG_BLOCK, &hup, &old);	/* the watcher's SIGHUP is the loop's */
		pthread_create(&t, NULL, watch_process, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		ret = fuse_loop(f) < 0;
		fuse_remove_signal_handlers(se);
	}
	fuse_unmount(f);
	fuse_destroy(f);
	return ret;
}
