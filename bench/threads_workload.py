# SPDX-License-Identifier: MIT
# threads_workload.py - CPython with threads (run_programs.sh's
# python-threads): a producer queues lists of strings, two workers build a
# dict of lists from each, so objects made in one thread die in another.
# The dicts (about 1 KiB) come from malloc; the small objects from pymalloc.
import queue
import threading

q = queue.Queue(maxsize=1000)


def work(out):
    n = 0
    while True:
        item = q.get()
        if item is None:
            break
        d = {k: [k] * 3 for k in item}
        n += len(d)
    out.append(n)


res = []
workers = [threading.Thread(target=work, args=(res,)) for _ in range(2)]
for t in workers:
    t.start()
for i in range(80000):
    q.put(["k%d-%d" % (i, j) for j in range(20)])
for t in workers:
    q.put(None)
for t in workers:
    t.join()
print(sum(res))
