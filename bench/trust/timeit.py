#!/usr/bin/env python3
# timeit.py N CMD...: runs CMD N times (output discarded) and prints the
# median wall time in milliseconds. Used by run.sh on both sides, so the
# cost of starting a process counts the same for both.
import statistics
import subprocess
import sys
import time

n = int(sys.argv[1])
times = []
for _ in range(n):
    start = time.perf_counter()
    subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times.append(time.perf_counter() - start)
print("%.2f" % (statistics.median(times) * 1000))
