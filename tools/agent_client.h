/* SPDX-License-Identifier: MIT */
/*
 * agent_client.h - the tools' side of the agent's socket (src/agent/
 * agent_proto.h): connect to a process's agent, ask, read the answer.
 */
#ifndef SLUB_AGENT_CLIENT_H
#define SLUB_AGENT_CLIENT_H

#include <stddef.h>
#include <sys/types.h>

/*
 * A connection to @pid's agent (a socket fd), or -errno: -ENOENT no
 * socket (no agent, or not yet listening), -ESRCH the process is gone,
 * -ECONNREFUSED nobody listens, -EACCES not ours.  @path (if not NULL)
 * gets the socket's path.
 */
int agent_connect(pid_t pid, char *path, size_t len);
/* The same, for the socket at @path. */
int agent_connect_path(const char *path);

/*
 * Send request @line (no newline; fields separated by tabs) and, for a
 * write, @payload; the answer's bytes, NUL-terminated, in *@body (malloc'd,
 * the caller frees; NULL if none was sent).  Returns the agent's status
 * (0 or -errno), or -ECONNRESET if the connection broke (the process
 * exited, or refused us).
 */
int agent_call(int fd, const char *line, const char *payload, size_t payload_len, char **body,
	       size_t *body_len);

#endif
