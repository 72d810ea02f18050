#!/usr/bin/env python3
# timeit.py N CMD...: runs CMD N times (output discarded) and prints the
# median wall time and the median processor time (user + system, of the
# command and its children) in milliseconds: "WALL CPU". Used by run.sh
# on both sides, so the cost of starting a process counts the same for
# both. The processor time hardly changes when other work loads the
# machine; the wall time does.
import os
import statistics
import subprocess
import sys
import time

n = int(sys.argv[1])
wall, cpu = [], []
for _ in range(n):
    start = time.perf_counter()
    child = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(child.pid, 0)
    wall.append(time.perf_counter() - start)
    cpu.append(usage.ru_utime + usage.ru_stime)
print("%.2f %.2f" % (statistics.median(wall) * 1000, statistics.median(cpu) * 1000))
