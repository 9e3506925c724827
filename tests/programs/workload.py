# SPDX-License-Identifier: MIT
"""A real Python workload for libslub-malloc: many small objects of every
size (dicts, lists, strings, tuples), json, regular expressions, a class
hierarchy, sorting, and threads passing objects to each other.  Its output
is deterministic, so a run on libslub must print what a run on glibc does."""
import collections
import hashlib
import json
import random
import re
import sqlite3
import threading
import queue

rng = random.Random(1234)

# Dicts and lists of every size, built and torn down.
words = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 12)))
         for _ in range(200000)]
counts = collections.Counter(words)
print("distinct words", len(counts), "most common", counts.most_common(3))

# json round trip of a nested structure.
doc = {str(i): {"v": list(range(i % 40)), "s": words[i] * (i % 7)} for i in range(20000)}
text = json.dumps(doc, sort_keys=True)
back = json.loads(text)
print("json", len(text), back == doc, hashlib.sha256(text.encode()).hexdigest()[:16])

# Regular expressions over a large string.
big = " ".join(words[:100000])
print("regex", len(re.findall(r"\b(a\w*j)\b", big)), len(re.sub(r"[aeiou]", "", big)))

# Objects with references, then a sort by several keys.
class Node:
    __slots__ = ("key", "payload", "children")

    def __init__(self, key):
        self.key = key
        self.payload = bytearray(rng.randint(0, 300))
        self.children = []

nodes = [Node(rng.randint(0, 10**6)) for _ in range(100000)]
for n in nodes:
    n.children = [nodes[rng.randrange(len(nodes))] for _ in range(rng.randint(0, 4))]
nodes.sort(key=lambda n: (n.key, len(n.payload), len(n.children)))
print("nodes", nodes[0].key, nodes[-1].key, sum(len(n.payload) for n in nodes))

# sqlite in memory, through Python.
db = sqlite3.connect(":memory:")
db.execute("create table t (a integer, b text)")
db.executemany("insert into t values (?, ?)", ((i, words[i]) for i in range(50000)))
print("sqlite", db.execute("select count(*), count(distinct b), sum(a) from t").fetchone())

# Threads handing objects to each other.
q = queue.Queue(maxsize=1000)
results = []
lock = threading.Lock()

def producer(seed):
    r = random.Random(seed)
    for _ in range(20000):
        q.put({"k": r.randint(0, 1000), "data": [r.random() for _ in range(r.randint(0, 20))]})

def consumer():
    total = 0
    while True:
        item = q.get()
        if item is None:
            break
        total += item["k"] + len(item["data"])
    with lock:
        results.append(total)

consumers = [threading.Thread(target=consumer) for _ in range(3)]
producers = [threading.Thread(target=producer, args=(s,)) for s in range(4)]
for t in consumers + producers:
    t.start()
for t in producers:
    t.join()
for _ in consumers:
    q.put(None)
for t in consumers:
    t.join()
print("threads", sum(results))
