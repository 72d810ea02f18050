#!/usr/bin/env python3
"""Check that p11glue's sources keep the layout docs/DESIGN.md draws.

The folder map in docs/DESIGN.md (the table under "## The folders") is the
rule book: each row names a folder, the folders it may include and the
headers it offers to others.  This script reads that table and fails when

  - a source file includes a header of a folder its row does not list,
  - a folder includes another folder's header that is not offered to others,
  - a header name exists in two folders (an include would be ambiguous),
  - an include or a meson.build reaches another folder by a "../" path,
  - a meson target compiles a source outside the folder that defines it
    (needs --build, the build directory, for meson's introspection),
  - a source file is longer than the limit (800 lines),
  - the map itself has a cycle, or a folder of src/ has no row,
  - files of one folder call each other in a cycle: a shared function
    (pg_* or p11glue_*, defined at the start of a line as the style
    writes definitions) of file A called in file B and one of B in A,
    or a longer ring; a part reads bottom to top, file by file too.

Usage: check-layering.py [--root SRC_ROOT] [--build BUILD_DIR] [--max-lines N]
Exit status: 0 when the tree keeps the map, 1 when it does not (every
violation is printed, one per line), 2 when the map cannot be read.
"""

import argparse
import json
import os
import re
import subprocess
import sys

SOURCE_EXT = ('.c', '.h', '.inc', '.py')
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
PARENT_PATH_RE = re.compile(r'''['"]\.\./''')


class MapError(Exception):
    pass


def read_map(design_path):
    """Return {folder: (may_include set, offered headers set or None)}."""
    try:
        with open(design_path, encoding='utf-8') as f:
            text = f.read()
    except OSError as e:
        raise MapError(f'{design_path}: {e.strerror}')
    m = re.search(r'^## The folders\s*$(.*?)(?=^## |\Z)', text, re.M | re.S)
    if not m:
        raise MapError(f'{design_path}: no "## The folders" section')
    rows = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) != 4 or not cells[0].startswith('`src/'):
            continue
        folder = cells[0].strip('`').rstrip('/')
        may = set()
        for name in re.findall(r'`([^`]+)`', cells[2]):
            may.add('src/' + name.rstrip('/'))
        offered = None
        if cells[3] != 'all':
            offered = set(re.findall(r'`([^`]+)`', cells[3]))
        if folder in rows:
            raise MapError(f'{design_path}: {folder} has two rows')
        rows[folder] = (may, offered)
    if not rows:
        raise MapError(f'{design_path}: the folder table has no rows')
    for folder, (may, _) in rows.items():
        for dep in may:
            if dep not in rows:
                raise MapError(f'{design_path}: {folder} may include {dep}, '
                               'which has no row')
    return rows


def map_cycles(rows):
    problems = []
    state = {}

    def visit(node, path):
        state[node] = 1
        for dep in sorted(rows[node][0]):
            if state.get(dep) == 1:
                cycle = path[path.index(dep):] + [dep]
                problems.append('map: cycle ' + ' -> '.join(cycle))
            elif dep not in state:
                visit(dep, path + [dep])
        state[node] = 2

    for node in sorted(rows):
        if node not in state:
            visit(node, [node])
    return problems


def part_of(rel, rows):
    """The longest folder of the map that holds the path rel."""
    best = None
    for folder in rows:
        if rel == folder or rel.startswith(folder + '/'):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def walk_sources(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, 'src')):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            out.append(os.path.relpath(path, root))
    return out


def check(root, build, max_lines):
    rows = read_map(os.path.join(root, 'docs', 'DESIGN.md'))
    problems = map_cycles(rows)
    files = walk_sources(root)

    headers = {}
    for rel in files:
        if rel.endswith(('.h', '.inc')):
            headers.setdefault(os.path.basename(rel), []).append(rel)
    if build:
        gen_root = os.path.join(build, 'src')
        for dirpath, _, filenames in os.walk(gen_root):
            for name in filenames:
                if name.endswith('.h') and name not in headers:
                    rel = os.path.relpath(os.path.join(dirpath, name), build)
                    headers[name] = [rel]
    for name, where in sorted(headers.items()):
        if len(where) > 1:
            problems.append(f'{name}: header name in {len(where)} places: '
                            + ', '.join(where))

    for rel in files:
        part = part_of(rel, rows)
        if part is None:
            folder = os.path.dirname(rel)
            problems.append(f'{folder}/: folder has no row in the map')
            continue
        path = os.path.join(root, rel)
        if rel.endswith(SOURCE_EXT):
            with open(path, encoding='utf-8', errors='replace') as f:
                text = f.read()
            lines = text.count('\n')
            if lines > max_lines:
                problems.append(f'{rel}: {lines} lines (limit {max_lines})')
        elif os.path.basename(rel) == 'meson.build':
            with open(path, encoding='utf-8', errors='replace') as f:
                for no, line in enumerate(f, 1):
                    code = line.split('#', 1)[0]
                    if PARENT_PATH_RE.search(code):
                        problems.append(f'{rel}:{no}: path into another '
                                        'folder: ' + line.strip())
            continue
        else:
            continue
        if not rel.endswith(('.c', '.h', '.inc')):
            continue
        for m in INCLUDE_RE.finditer(text):
            inc = m.group(1)
            no = text.count('\n', 0, m.start()) + 1
            where = f'{rel}:{no}'
            if '..' in inc.split('/'):
                problems.append(f'{where}: includes "{inc}" by a ../ path')
                continue
            if inc.startswith('p11glue/') or inc == 'config.h':
                continue
            here = os.path.join(os.path.dirname(rel), inc)
            if here in files:
                target = here
            else:
                found = headers.get(os.path.basename(inc), [])
                if len(found) != 1:
                    continue  # a system header, or ambiguity reported above
                target = found[0]
            tpart = part_of(target, rows)
            if tpart is None or tpart == part:
                continue
            if tpart not in rows[part][0]:
                problems.append(f'{where}: {part}/ includes {inc} of '
                                f'{tpart}/, which its row does not list')
                continue
            offered = rows[tpart][1]
            if offered is not None and os.path.basename(target) not in offered:
                problems.append(f'{where}: {part}/ includes {inc}, private '
                                f'to {tpart}/')

    problems += call_cycles(root, files)
    if build:
        problems += check_targets(root, build)
    return problems


DEF_RE = re.compile(r'^((?:pg|p11glue)_\w+)\(', re.M)
CALL_RE = re.compile(r'\b((?:pg|p11glue)_\w+)\s*\(')


def call_cycles(root, files):
    """Rings of .c files that call each other's shared functions."""
    sources = [rel for rel in files if rel.endswith('.c')]
    text = {}
    for rel in sources:
        with open(os.path.join(root, rel), encoding='utf-8', errors='replace') as f:
            text[rel] = f.read()
    defined = {}
    for rel in sources:
        for name in DEF_RE.findall(text[rel]):
            defined.setdefault(name, set()).add(rel)
    graph = {rel: set() for rel in sources}
    for rel in sources:
        for name in set(CALL_RE.findall(text[rel])):
            graph[rel] |= defined.get(name, set()) - {rel}
    # Tarjan's strongly connected components, iteratively.
    index, low, on, stack, rings = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                ring = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    ring.append(top)
                    if top == node:
                        break
                if len(ring) > 1:
                    rings.append(sorted(ring))
    return ['call cycle: ' + ' <-> '.join(ring) for ring in sorted(rings)]


def check_targets(root, build):
    try:
        out = subprocess.run(['meson', 'introspect', '--targets', build],
                             check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        return [f'meson introspect --targets {build}: {e}']
    problems = []
    src_root = os.path.realpath(os.path.join(root, 'src'))
    build_root = os.path.realpath(build)
    inc_root = os.path.realpath(os.path.join(root, 'include'))
    for target in json.loads(out):
        if target['type'] == 'custom':
            continue  # generators read what they are given
        defined = os.path.dirname(os.path.realpath(target['defined_in']))
        if not defined.startswith(src_root + os.sep):
            continue
        for group in target.get('target_sources', []):
            for src in group.get('sources', []) + group.get('generated_sources', []):
                real = os.path.realpath(src)
                if real.startswith((build_root + os.sep, inc_root + os.sep)):
                    continue
                if not real.startswith(defined + os.sep):
                    problems.append(
                        f'{os.path.relpath(target["defined_in"], root)}: target '
                        f'{target["name"]} compiles '
                        f'{os.path.relpath(real, root)} from another folder')
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--root', default=os.path.join(os.path.dirname(__file__), '..'),
                    help='the source tree (default: this script\'s tree)')
    ap.add_argument('--build', help='a configured build directory, to check '
                    'which sources each meson target compiles')
    ap.add_argument('--max-lines', type=int, default=800,
                    help='longest source file allowed (default 800)')
    args = ap.parse_args()
    try:
        problems = check(os.path.abspath(args.root), args.build, args.max_lines)
    except MapError as e:
        print(f'check-layering: {e}', file=sys.stderr)
        return 2
    for p in problems:
        print(p)
    if problems:
        print(f'check-layering: {len(problems)} problem(s)', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
