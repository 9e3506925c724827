# SPDX-License-Identifier: MIT
# fake_agent.py - a server that is not a libslub agent, for the tests of
# the tools' trust in the socket (test_slabinfo_live.sh).
#
#   fake_agent.py plant PATH LOG   listen at PATH (another pid's socket):
#                                  log "conn N" with the bytes each client
#                                  sent, closing as soon as any come
#   fake_agent.py hostile DIR      listen at DIR/<own pid>.sock and answer
#                                  one cache, then a positive status (which
#                                  a client must not take for a length)
#                                  to every other request
#   fake_agent.py exec DIR PROG…   listen at DIR/<own pid>.sock, answer
#                                  one cache, hang up at the first read of
#                                  an attribute and exec PROG (as a launcher
#                                  that is itself on libslub does)
# Each prints "ready" once listening; plant and hostile run until killed.
import os
import socket
import sys


def listen(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(8)
    print("ready", flush=True)
    return s


def plant(path, log):
    s = listen(path)
    while True:
        c, _ = s.accept()
        c.settimeout(30)
        try:
            n = len(c.recv(4096))
        except OSError:
            n = -1
        c.close()
        with open(log, "a") as f:
            f.write("conn %d\n" % n)


def hostile(directory):
    s = listen(os.path.join(directory, "%d.sock" % os.getpid()))
    while True:
        c, _ = s.accept()
        f = c.makefile("rb")
        for line in f:
            if line == b"caches\n":
                body = b"kmem_cache\tkmem_cache\n"
                c.sendall(b"0\t%d\n" % len(body) + body)
            else:
                c.sendall(b"1000000\t0\n")
        c.close()


def launcher(directory, argv):
    path = os.path.join(directory, "%d.sock" % os.getpid())
    s = listen(path)
    c, _ = s.accept()
    f = c.makefile("rb")
    for line in f:
        if line != b"caches\n":
            break
        body = b"kmem_cache\tkmem_cache\n"
        c.sendall(b"0\t%d\n" % len(body) + body)
    c.close()
    s.close()
    os.unlink(path)
    os.execvp(argv[0], argv)


if sys.argv[1] == "plant":
    plant(sys.argv[2], sys.argv[3])
elif sys.argv[1] == "exec":
    launcher(sys.argv[2], sys.argv[3:])
else:
    hostile(sys.argv[2])
