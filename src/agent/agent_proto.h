/* SPDX-License-Identifier: MIT */
/*
 * agent_proto.h - what the in-process agent (agent.c) and the tools that
 * talk to it (slabinfo -p, slubfs, slubrun --fs) share: where the socket
 * is, and the protocol on it.  Compiled into the tools too, so nothing
 * here knows the allocator.
 *
 * The socket: $XDG_RUNTIME_DIR/slub/<pid>.sock, else /run/slub/<pid>.sock
 * for root, else /tmp/slub-<uid>/; the directory is the process's uid's,
 * and no other uid may write to it (a shared sticky one would let another
 * user plant a socket for a pid to come).  SOCK_STREAM; only the process's
 * effective uid and root are answered (SO_PEERCRED at accept, the uid
 * checked against the effective uid again at each request).  The tools
 * trust a socket only in such a directory of the process's uid, and only
 * when its listener (SO_PEERCRED) is that pid with that uid.
 *
 * A request is one line, its fields separated by tabs:
 *   caches                    each cache: "id\tname[\talias...]\n"
 *   attrs                     each attribute: "mode\tname\n" (mode in octal)
 *   read\tCACHE\tATTR         the attribute's text, as the kernel's file
 *   write\tCACHE\tATTR\tLEN   then LEN bytes: written as `echo` would
 *   leaks                     a leak scan, kmemleak's (needs slub_debug U): its listing
 * CACHE is a cache's id (its directory), its name or an alias.  The answer
 * to each request is "STATUS\tLEN\n" and LEN bytes (none after an error;
 * after a write of validate, the number of problems reported while it
 * ran, and a newline), STATUS 0 or -errno
 * (-ENOENT no such cache or attribute, -EPERM read-only, -EINVAL refused,
 * -ENOSPC too long for the agent's buffer).  A connection may carry any
 * number of requests, one at a time.
 */
#ifndef SLUB_AGENT_PROTO_H
#define SLUB_AGENT_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define AGENT_REQUEST_MAX 512		/* one request line, with its newline */
#define AGENT_WRITE_MAX 256		/* the bytes of one write */
#define AGENT_ANSWER_MAX (4u << 20)	/* one answer: alloc_calls of 4096 sites fit */
#define AGENT_PATH_MAX 108		/* sun_path */

/*
 * Open @path as a directory for the sockets of uid @owner: a directory
 * itself (a symlink is not followed), owned by @owner, that no other uid
 * may write to.  An O_PATH fd, or -errno: -ENOENT missing, -EPERM not
 * such a directory (then @why, if not NULL, says what is wrong).  Never
 * allocates.
 */
int agent_dir_open(const char *path, uid_t owner, char *why, size_t why_len);

/*
 * The directory this process's socket goes in, made (0700) if missing and
 * @make, and checked as agent_dir_open() does for our effective uid: 0 or
 * -errno, and @buf names it either way (@why says what is wrong on -EPERM).
 * Never allocates.
 */
int agent_socket_dir(char *buf, size_t len, bool make, char *why, size_t why_len);

/*
 * Where the agent of a process of uid @uid may have put its socket, its
 * $XDG_RUNTIME_DIR aside: up to 3 directories into @dirs (/run/user/UID,
 * the usual $XDG_RUNTIME_DIR; /run/slub for root; /tmp/slub-UID); returns
 * how many.  For the tools.
 */
int agent_socket_dirs(uid_t uid, char dirs[][AGENT_PATH_MAX]);

/* Remove the sockets in @dir whose process is gone.  Never allocates. */
void agent_clean_stale(const char *dir);

#endif /* SLUB_AGENT_PROTO_H */
