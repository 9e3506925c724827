/* SPDX-License-Identifier: MIT */
/*
 * agent_proto.h - what the in-process agent (agent.c) and the tools that
 * talk to it (slabinfo -p, slubfs, slubrun --fs) share: where the socket
 * is, and the protocol on it.  Compiled into the tools too, so nothing
 * here knows the allocator.
 *
 * The socket: $XDG_RUNTIME_DIR/slub/<pid>.sock, else /run/slub/<pid>.sock
 * when /run/slub is ours (or we may make it), else /tmp/slub-<uid>/; the
 * directory is 0700.  SOCK_STREAM; only the owner's uid and root are
 * answered (SO_PEERCRED).
 *
 * A request is one line, its fields separated by tabs:
 *   caches                    each cache: "id\tname[\talias...]\n"
 *   attrs                     each attribute: "mode\tname\n" (mode in octal)
 *   read\tCACHE\tATTR         the attribute's text, as the kernel's file
 *   write\tCACHE\tATTR\tLEN   then LEN bytes: written as `echo` would
 * CACHE is a cache's id (its directory), its name or an alias.  The answer
 * to each request is "STATUS\tLEN\n" and LEN bytes, STATUS 0 or -errno
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
 * The directory this process's socket goes in, made (0700) if missing and
 * checked (a directory of ours no one else may write to, or a sticky shared
 * one): 0 or -errno.  Never allocates.
 */
int agent_socket_dir(char *buf, size_t len);

/*
 * The socket of process @pid, looked for where its agent would put it
 * (our $XDG_RUNTIME_DIR, /run/user/<its uid>, /run/slub, /tmp/slub-<its
 * uid>): 0, -ENOENT if none, -ESRCH if the process is gone (its stale
 * socket is removed then).  For the tools.
 */
int agent_socket_find(pid_t pid, char *buf, size_t len);

/* Remove the sockets in @dir whose process is gone.  Never allocates. */
void agent_clean_stale(const char *dir);

#endif /* SLUB_AGENT_PROTO_H */
