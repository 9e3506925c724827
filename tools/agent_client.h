/* SPDX-License-Identifier: MIT */
/*
 * agent_client.h - the tools' side of the agent's socket (src/agent/
 * agent_proto.h): connect to a process's agent, ask, read the answer.
 */
#ifndef SLUB_AGENT_CLIENT_H
#define SLUB_AGENT_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* How long a process just started (or exec'ing) is given for its agent to listen. */
#define AGENT_WAIT_S 5

/*
 * A connection to @pid's agent (a socket fd), or -errno: -ENOENT no
 * socket (no agent, or not yet listening), -ESRCH the process is gone
 * (its stale socket, if any, removed), -ESTALE gone and its stale socket
 * left (another uid's directory), -ECONNREFUSED nobody listens, -EACCES
 * another uid's process, -EPERM a socket that is not its agent's or a
 * directory not safe to use (nothing was sent; agent_refusal() says why).
 * @path (if not NULL) gets the socket's path when one was found.
 */
int agent_connect(pid_t pid, char *path, size_t len);
/*
 * The same, giving a process that has just started, or one whose SLUB_OPTIONS
 * ask for the agent, up to AGENT_WAIT_S seconds for its agent to listen.
 */
int agent_connect_wait(pid_t pid, char *path, size_t len);
/*
 * The same, for a process that just exec'd: up to @at_least seconds while
 * its SLUB_OPTIONS ask for the agent (a slow start: a sanitizer's, a
 * loaded machine's), AGENT_WAIT_S otherwise.
 */
int agent_connect_wait_for(pid_t pid, char *path, size_t len, double at_least);
/* The socket at @path, unchecked (the tests' own sockets). */
int agent_connect_path(const char *path);
/* Why this thread's last agent_connect() refused (-EPERM, -EACCES). */
const char *agent_refusal(void);
/* One line on stderr, "@tool: pid N: ...", saying why agent_connect() gave @err. */
void agent_explain(const char *tool, pid_t pid, int err, const char *path);
/* @pid runs and is not a zombie. */
bool agent_process_running(pid_t pid);

/*
 * Send request @line (no newline; fields separated by tabs) and, for a
 * write, @payload; the answer's bytes, NUL-terminated, in *@body (malloc'd,
 * the caller frees; NULL if none was sent).  Returns the agent's status
 * (0 or -errno), -ECONNRESET if the connection broke (the process exited,
 * or refused us), -EPROTO if the answer is not the protocol's.
 */
int agent_call(int fd, const char *line, const char *payload, size_t payload_len, char **body,
	       size_t *body_len);

#endif
