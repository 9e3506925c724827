/* SPDX-License-Identifier: MIT */
/*
 * slubrun_fs.h - slubrun --fs: the program's live tree mounted (slubfs)
 * while it runs.
 */
#ifndef SLUBRUN_FS_H
#define SLUBRUN_FS_H

#include <stdbool.h>
#include <sys/types.h>

struct slubrun_fs {
	const char *dir;	/* asked for; "" for the default */
	char path[4096];	/* where it is mounted */
	bool made_dir;		/* ours to remove */
	pid_t server;		/* slubfs, 0 if none runs */
};

/*
 * Program @pid is starting with its agent on: wait for the agent's socket
 * (while the program lives) and mount its tree; say where on stderr.
 */
void slubrun_fs_mount(struct slubrun_fs *fs, pid_t pid);
/* The program has ended: slubfs ends with it; make sure the mount is gone. */
void slubrun_fs_unmount(struct slubrun_fs *fs);

#endif
