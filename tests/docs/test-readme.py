#!/usr/bin/env python3
"""The README against the tool: its first lines give exactly the two
commands (./run main, ./run test); every `p11glue COMMAND` it shows is a
command of the tool, and every option it passes to one is in that
command's --help. TAP output.

Usage: test-readme.py P11GLUE README
"""
import re
import shlex
import subprocess
import sys

p11glue, readme = sys.argv[1], sys.argv[2]
text = open(readme, encoding='utf-8').read()
results = []


def check(ok, name, detail=''):
    results.append((ok, name, detail))


lines = text.splitlines()
first_block = []
for line in lines[1:]:
    if line.startswith('    '):
        first_block.append(line.split('#')[0].strip())
    elif first_block:
        break
check(first_block == ['./run main', './run test'],
      'the README starts with exactly the two commands', repr(first_block))


def help_of(words):
    out = subprocess.run([p11glue, *words, '--help'], capture_output=True, text=True)
    return out.returncode, out.stdout


# Commands in code lines: "p11glue WORD [SUBWORD] ...", prompts and
# continuation lines joined.
code, pending = [], ''
for line in lines:
    if not line.startswith('    '):
        pending = ''
        continue
    line = re.sub(r'^\s*[$#] ', '', line.strip())
    line = pending + line
    if line.endswith('\\'):
        pending = line[:-1] + ' '
        continue
    pending = ''
    code.append(line)

seen = set()
for line in code:
    m = re.search(r'(?:^|[;(|&]\s*)p11glue\s+(.*)', line)
    if not m:
        continue
    try:
        words = shlex.split(m.group(1).split(' #')[0])
    except ValueError:
        words = m.group(1).split()
    if not words or words[0].startswith('-'):
        continue
    cmd = [words[0]]
    if words[0] in ('uri', 'trust') and len(words) > 1:
        cmd.append(words[1])
    rc, helptext = help_of(cmd)
    name = ' '.join(cmd)
    if name not in seen:
        seen.add(name)
        check(rc == 0, f'README: p11glue {name} is a command', helptext)
    opts = [w.split('=')[0] for w in words[len(cmd):] if w.startswith('--')]
    missing = [o for o in opts if not re.search(re.escape(o) + r'(?![\w-])', helptext)]
    if opts:
        check(not missing, f'README: p11glue {name} {" ".join(opts)}: options in its --help',
              ' '.join(missing))

check(len(seen) >= 12, f'README shows {len(seen)} commands', ' '.join(sorted(seen)))
for i, (ok, name, detail) in enumerate(results, 1):
    print(f'{"ok" if ok else "not ok"} {i} - {name}')
    if not ok and detail:
        for line in str(detail).splitlines()[:10]:
            print(f'#   {line}')
print(f'1..{len(results)}')
sys.exit(0 if all(ok for ok, _, _ in results) else 1)
