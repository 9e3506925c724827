#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_doc_examples.py SOURCE_DIR BUILD_DIR - the README's and docs/'s examples, compiled and run.

Every ```c block of README.md and docs/*.md is a whole program: it is
compiled with -Wall -Wextra -Werror against include/slub.h (with the
build's generated slub_rcu.h) and the build's libslub.so, and run; it
must exit 0 and print what its directive expects.
A ```sh block runs only when a directive marks it (install and build lines
are what CI itself runs).  A directive is an HTML comment on the line just
before the fence, invisible on GitHub:

  <!-- example: file=bugs.c link=none run=no -->
  <!-- example: run expect="Right Redzone overwritten" expect="leak:" -->

  file=NAME     the source's name in the scratch directory (default exN.c);
                later blocks may use it (cc bugs.c, ./bugs)
  link=slub|malloc|porter|none   link libslub.so (default), libslub-malloc.so,
                libslub.so with the porter's <linux/...> headers, or neither
  run / run=no  run the block (sh blocks: only with run; c blocks: by default)
  compile=no    a c block only written to its file, for a later sh block to
                build as the text shows (a buggy program -Werror would stop)
  env=K=V       environment for the run (repeatable)
  status=N      the exit status expected (default 0)
  expect="S"    S appears in the output (stdout and stderr; repeatable)

sh blocks run under bash -eo pipefail in a scratch directory holding
`build` (a link to BUILD_DIR) and `include`, with build/tools on PATH, so
the docs can say build/tools/slubrun as a reader after `make` would.
Prints one line per example and `N passed, N failed`.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\w*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*example:(.*)-->\s*$")


def blocks(path):
    """(language, directive dict or None, first line number, text) of each fenced block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        lang, start = m.group(1), i + 1
        directive = None
        if i > 0 and DIRECTIVE.match(lines[i - 1]):
            directive = parse_directive(DIRECTIVE.match(lines[i - 1]).group(1), path, i)
        j = start
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        if j == len(lines):
            raise SystemExit(f"{path}:{i + 1}: a fence that never closes")
        yield lang, directive, start, "\n".join(lines[start:j]) + "\n"
        i = j + 1


def parse_directive(text, path, line):
    d = {"env": [], "expect": []}
    for word in shlex.split(text):
        key, eq, value = word.partition("=")
        if key in ("env", "expect"):
            d[key].append(value)
        elif key in ("file", "link", "status", "compile"):
            d[key] = value
        elif key == "run":
            d["run"] = value != "no"
        else:
            raise SystemExit(f"{path}:{line}: unknown directive word '{word}'")
    return d


def run(cmd, cwd, env, timeout=120):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace")


def main():
    src, build = (os.path.abspath(a) for a in sys.argv[1:3])
    docs = [os.path.join(src, "README.md")] + sorted(
        os.path.join(src, "docs", f) for f in os.listdir(os.path.join(src, "docs")) if f.endswith(".md"))
    cc = os.environ.get("CC", "cc")
    scratch = tempfile.mkdtemp(prefix="slub-docs-")
    os.symlink(build, os.path.join(scratch, "build"))
    os.symlink(os.path.join(src, "include"), os.path.join(scratch, "include"))
    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "tools") + ":" + env["PATH"]
    env.pop("SLUB_OPTIONS", None)
    # liburcu "as needed", as the installed slub.pc names it (the build's flavour).
    pc = open(os.path.join(build, "slub.pc")).read()
    urcu = re.search(r"-Wl,--push-state\S*( -l\S+)+ -Wl,--pop-state", pc)
    urcu = urcu.group(0).split() if urcu else []
    libs = {"slub": ["-L" + build, "-lslub"] + urcu, "malloc": ["-L" + build, "-lslub-malloc"] + urcu,
            "none": []}
    libs["porter"] = ["-I", "include/porter"] + libs["slub"]
    passed = failed = n = 0
    for doc in docs:
        name = os.path.relpath(doc, src)
        for lang, d, line, text in blocks(doc):
            if lang not in ("c", "sh"):
                continue
            d = d or {"env": [], "expect": []}
            if lang == "sh" and not d.get("run"):
                continue
            n += 1
            where = f"{name}:{line}"
            problem = None
            out = ""
            if lang == "c":
                file = d.get("file", f"ex{n}.c")
                open(os.path.join(scratch, file), "w").write(text)
                exe = os.path.splitext(file)[0]
                link = d.get("link", "slub")
                if d.get("compile") == "no":
                    d["run"] = False
                else:
                    rc, out = run([cc, "-std=gnu11", "-g", "-Wall", "-Wextra", "-Werror", "-I",
                                   "include", "-I", "build/include", file, "-o", exe] + libs[link] +
                                  ["-Wl,-rpath," + build], scratch, env)
                    if rc:
                        problem = "does not compile"
                    cmd = ["./" + exe]
            else:
                cmd = ["bash", "-eo", "pipefail", "-c", text]
            if not problem and (lang == "sh" or d.get("run", True)):
                e = dict(env)
                for kv in d["env"]:
                    k, _, v = kv.partition("=")
                    e[k] = v
                try:
                    rc, out = run(cmd, scratch, e)
                except subprocess.TimeoutExpired:
                    rc, out = -1, "(timed out after 120 s)"
                want = int(d.get("status", 0))
                if rc != want:
                    problem = f"exit {rc}, expected {want}"
                else:
                    missing = [s for s in d["expect"] if s not in out]
                    if missing:
                        problem = "output lacks " + ", ".join(repr(s) for s in missing)
            if problem:
                failed += 1
                print(f"FAIL {where} ({lang}): {problem}")
                print("\n".join("    " + l for l in out.rstrip().split("\n")[-40:]))
            else:
                passed += 1
                print(f"ok   {where} ({lang})")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
