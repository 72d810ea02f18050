#!/usr/bin/env python3
"""Counts the places a process's readable memory holds pieces of an RSA
private key's private exponent (its first and last 32 bytes, in both byte
orders): how a test sees whether a key is unwrapped in a process, and
that it is wiped again.

Usage: key-in-memory.py PID KEY.pem
Prints the count; exit status 2 when the memory cannot be read.
"""
import re
import subprocess
import sys

LARGEST = 1 << 30
pid, pem = int(sys.argv[1]), sys.argv[2]
text = subprocess.run(['openssl', 'rsa', '-in', pem, '-noout', '-text'],
                      capture_output=True, text=True, check=True).stdout
m = re.search(r'privateExponent:\n((?:\s+[0-9a-f:]+\n)+)', text)
d = bytes.fromhex(re.sub(r'[\s:]', '', m.group(1))).lstrip(b'\0')
needles = [d[:32], d[-32:], d[:32][::-1], d[-32:][::-1]]
found = 0
try:
    with open(f'/proc/{pid}/maps') as maps, open(f'/proc/{pid}/mem', 'rb', 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            if 'r' not in perms:
                continue
            lo, hi = (int(x, 16) for x in span.split('-'))
            # A sanitizer's shadow memory is terabytes of nothing.
            if hi - lo > LARGEST or 'p' not in perms:
                continue
            try:
                mem.seek(lo)
                chunk = mem.read(hi - lo)
            except (OSError, OverflowError, ValueError, MemoryError):
                continue
            found += sum(chunk.count(n) for n in needles)
except OSError as e:
    print(e, file=sys.stderr)
    sys.exit(2)
print(found)
