#!/usr/bin/env python3
"""The layering check (scripts/check-layering.py): the tree keeps the folder
map of docs/DESIGN.md, and the check fails on each kind of violation, shown on
small trees made here.  TAP output.

Usage: test-layering.py CHECKER SOURCE_ROOT BUILD_DIR
"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile

checker, source_root, build_dir = sys.argv[1:4]
count = 0
failed = 0


def ok(cond, name, detail=''):
    global count, failed
    count += 1
    if cond:
        print(f'ok {count} - {name}')
    else:
        failed += 1
        print(f'not ok {count} - {name}')
        for line in detail.splitlines():
            print(f'# {line}')


def run(root, *extra):
    p = subprocess.run([sys.executable, checker, '--root', root, *extra],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


MAP = """# design

## The folders

| folder | owns | may include | headers for others |
|---|---|---|---|
| `src/low/` | the bottom | — | all |
| `src/mid/` | the middle | `low` | `mid.h` |
| `src/top/` | the top | `low` `mid` | none |

## After
"""


def tree(files, design=MAP):
    d = tempfile.mkdtemp(prefix='layering-')
    atexit.register(shutil.rmtree, d, True)
    files = dict(files)
    files['docs/DESIGN.md'] = design
    for rel, text in files.items():
        path = os.path.join(d, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(text)
    return d


CLEAN = {
    'src/low/low.h': '#pragma once\n',
    'src/low/low.c': '#include "low.h"\n#include <stdio.h>\n',
    'src/mid/mid.h': '#include "low.h"\n',
    'src/mid/mid-private.h': '#pragma once\n',
    'src/mid/mid.c': '#include "mid.h"\n#include "mid-private.h"\n',
    'src/mid/meson.build': "mid_lib = static_library('mid', 'mid.c')\n",
    'src/top/top.c': '#include "mid.h"\n#include "low.h"\n#include "p11glue/uri.h"\n',
}


def case(name, changes, expect, design=MAP, extra=()):
    files = dict(CLEAN)
    files.update(changes)
    rc, out = run(tree(files, design), *extra)
    ok(rc == 1 and expect in out, name, f'exit {rc}\n{out}')


# The real tree, with its meson graph.
rc, out = run(source_root, '--build', build_dir)
ok(rc == 0, 'the source tree keeps the folder map of docs/DESIGN.md', out)

rc, out = run(tree(CLEAN))
ok(rc == 0 and out == '', 'a tree that keeps its map passes', f'exit {rc}\n{out}')

case('a lower folder including a higher one fails',
     {'src/low/low.c': '#include "mid.h"\n'},
     'src/low/low.c:1: src/low/ includes mid.h of src/mid/')
case('a folder-private header included from another folder fails',
     {'src/top/top.c': '#include "mid-private.h"\n'},
     'src/top/top.c:1: src/top/ includes mid-private.h, private to src/mid/')
case('one header name in two folders fails',
     {'src/top/low.h': '#pragma once\n'},
     'low.h: header name in 2 places')
case('an include by a ../ path fails',
     {'src/top/top.c': '#include "../mid/mid.h"\n'},
     'src/top/top.c:1: includes "../mid/mid.h" by a ../ path')
case('a meson.build compiling another folder\'s source by path fails',
     {'src/top/meson.build': "executable('t', files('../low/low.c'))\n"},
     'src/top/meson.build:1: path into another folder')
case('a source file over the line limit fails',
     {'src/low/long.c': '\n' * 801},
     'src/low/long.c: 801 lines (limit 800)')
case('a folder without a row in the map fails',
     {'src/stray/x.c': '\n'},
     'src/stray/: folder has no row in the map')
case('two files calling each other\'s functions fail',
     {'src/low/a.c': 'void\npg_a(void)\n{\n\tpg_b();\n}\n',
      'src/low/b.c': 'void\npg_b(void)\n{\n}\n\nvoid\npg_c(void)\n{\n\tpg_a();\n}\n'},
     'call cycle: src/low/a.c <-> src/low/b.c')
case('a ring of three files fails',
     {'src/low/a.c': 'void\npg_a(void)\n{\n\tpg_b();\n}\n',
      'src/low/b.c': 'void\npg_b(void)\n{\n\tpg_c();\n}\n',
      'src/low/c.c': 'void\npg_c(void)\n{\n\tpg_a();\n}\n'},
     'call cycle: src/low/a.c <-> src/low/b.c <-> src/low/c.c')
case('a cycle in the map fails',
     {}, 'map: cycle',
     design=MAP.replace('| `src/low/` | the bottom | — |',
                        '| `src/low/` | the bottom | `top` |'))

# A target handed another folder's sources through a variable: no path in
# the text shows it, meson's introspection does.
files = dict(CLEAN)
files.update({
    'meson.build': "project('t', 'c')\nsubdir('src/low')\nsubdir('src/top')\n",
    'src/low/meson.build': "low_src = files('low.c')\n",
    'src/top/meson.build': "static_library('top', low_src)\n",
    'src/top/top.c': '\n',
})
root = tree(files)
build = os.path.join(root, 'build')
setup = subprocess.run(['meson', 'setup', build, root], capture_output=True, text=True)
if setup.returncode == 0:
    rc, out = run(root, '--build', build)
    ok(rc == 1 and 'target top compiles src/low/low.c from another folder' in out,
       'a target compiling another folder\'s sources through a variable fails',
       f'exit {rc}\n{out}')
else:
    ok(False, 'meson setup of a small project', setup.stdout + setup.stderr)

rc, out = run(tree(CLEAN, design='# no map here\n'))
ok(rc == 2 and 'no "## The folders" section' in out,
   'a design page without the map is an error, not a pass', f'exit {rc}\n{out}')

print(f'1..{count}')
sys.exit(1 if failed else 0)
