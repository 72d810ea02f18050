#!/usr/bin/env python3
"""The manual pages cannot drift from the tool: every command of the
command table (as `p11glue --help` prints it) has a section "### NAME" in
p11glue(1) (the trust subcommands "### trust NAME" in p11glue-trust(1)),
and every option its `--help` shows appears in that section or in a
section of the page whose heading names OPTIONS. Every format, filter
and purpose `trust extract --help` lists is in p11glue-trust(1). Each
built page renders without a warning from groff.

Usage: test-man-pages.py P11GLUE MAN-SOURCE-DIR BUILT-PAGE...
TAP output.
"""
import re
import shutil
import subprocess
import sys

p11glue, srcdir, built = sys.argv[1], sys.argv[2], sys.argv[3:]
results = []


def check(ok, name, detail=''):
    results.append((ok, name, detail))


def help_text(*args):
    out = subprocess.run([p11glue, *args, '--help'], capture_output=True, text=True)
    return out.returncode, out.stdout


def commands(text, start):
    """Command names of a table that follows a line starting with start."""
    names, inside = [], False
    for line in text.splitlines():
        if line.startswith(start):
            inside = True
            continue
        if inside:
            m = re.match(r'  ([a-z][a-z0-9-]*)\s', line)
            if not m:
                if names:
                    break
                continue
            names.append(m.group(1))
    return names


def options(text):
    """Long options anywhere in a help text, short ones in option lists."""
    found = set(re.findall(r'(?<![\w-])--[a-z][a-z0-9-]*', text))
    for line in text.splitlines():
        found.update(re.findall(r'^\s+(-[a-zA-Z])[, ]', line))
    return found


def sections(page):
    """{heading: text} for ### subsections, plus '' for every OPTIONS section."""
    text = open(f'{srcdir}/{page}.md', encoding='utf-8').read()
    out, head, body, common = {}, None, [], []
    for line in text.splitlines() + ['## END']:
        if line.startswith('#'):
            if head is not None:
                out[head] = '\n'.join(body)
            if line.startswith('## ') and 'OPTIONS' in line:
                head = '## options'
            elif line.startswith('### '):
                head = line[4:].strip()
            else:
                head = None
            body = []
            if head == '## options':
                head = f'## options {len(common)}'
                common.append(head)
        elif head is not None:
            body.append(line)
    shared = '\n'.join(out[h] for h in common)
    return out, shared, text


def documented(page_sections, shared, heading, opts):
    body = page_sections.get(heading)
    if body is None:
        return f'no section "### {heading}"'
    missing = sorted(o for o in opts if not re.search(re.escape(o) + r'(?![\w-])', body + shared))
    return f'options missing: {" ".join(missing)}' if missing else ''


rc, top = help_text()
main_sections, main_shared, main_text = sections('p11glue.1')
table = commands(top, 'Commands:')
check(rc == 0 and len(table) >= 10, 'p11glue --help lists the command table', top)
# Global options (--help, --version) in the OPTIONS section.
problem = documented({'': ''}, main_shared, '', options(top))
check(not problem, 'p11glue(1): the global options', problem)

for name in table:
    rc, text = help_text(name)
    subs = commands(text, 'Commands:') if 'COMMAND' in text.splitlines()[0] else []
    if name == 'trust':
        continue  # below, against p11glue-trust(1)
    if not subs:
        problem = documented(main_sections, main_shared, name, options(text))
        check(rc == 0 and not problem, f'p11glue(1) documents {name} and its options', problem)
    for sub in subs:
        rc, subtext = help_text(name, sub)
        problem = documented(main_sections, main_shared, f'{name} {sub}', options(subtext))
        check(rc == 0 and not problem, f'p11glue(1) documents {name} {sub} and its options', problem)

# trust: its subcommands in p11glue-trust(1), and a mention in p11glue(1).
check('### trust' in main_text, 'p11glue(1) has a section for trust')
trust_sections, trust_shared, trust_text = sections('p11glue-trust.1')
rc, text = help_text('trust')
subs = commands(text, 'Common trust commands are:')
check(rc == 0 and 'check' in subs and 'extract' in subs, 'trust --help lists its commands', text)
for sub in subs:
    rc, subtext = help_text('trust', sub)
    problem = documented(trust_sections, trust_shared, f'trust {sub}', options(subtext))
    check(rc == 0 and not problem, f'p11glue-trust(1) documents trust {sub} and its options', problem)
    check(sub in re.findall(r'trust ([a-z-]+)', main_text), f'p11glue(1) names trust {sub}')
rc, text = help_text('trust', 'extract')
values = set(re.findall(r'^\s{20,}([a-z][a-z0-9-]+)\s', text, re.M))
missing = sorted(v for v in values if f'`{v}`' not in trust_text)
check(len(values) > 15 and not missing, 'p11glue-trust(1) lists every format, filter and purpose',
      ' '.join(missing))

# Examples write PIN files with printf: echo's handling of backslashes and
# of a leading -n or -e differs between shells, and a PIN is bytes.
for page in ('p11glue.1', 'p11glue-trust.1', 'p11glue.conf.5', 'p11glue-store.8'):
    text = open(f'{srcdir}/{page}.md', encoding='utf-8').read()
    bad = [line.strip() for line in text.splitlines()
           if re.search(r'\becho\b[^|;]*>[^;)]*pin', line, re.I)]
    check(not bad, f'{page}: examples write PIN files with printf, not echo', '\n'.join(bad))

# Each built page: the right title, and groff finds nothing to warn about.
groff = shutil.which('groff')
for page in built:
    roff = open(page, encoding='utf-8').read()
    name = page.rsplit('/', 1)[-1]
    title = name.rsplit('.', 1)
    check(roff.startswith(f'.TH "{title[0].upper()}" "{title[1]}"'), f'{name}: title line')
    if groff:
        out = subprocess.run([groff, '-man', '-Tutf8', '-ww', '-z', page],
                             capture_output=True, text=True)
        check(out.returncode == 0 and out.stderr == '', f'{name}: groff renders it without warnings',
              out.stderr)
    for heading in ('NAME', 'SYNOPSIS', 'DESCRIPTION', 'SEE ALSO'):
        check(f'.SH {heading}' in roff, f'{name}: has {heading}')

for i, (ok, name, detail) in enumerate(results, 1):
    print(f'{"ok" if ok else "not ok"} {i} - {name}')
    if not ok and detail:
        for line in str(detail).splitlines()[:20]:
            print(f'#   {line}')
print(f'1..{len(results)}')
sys.exit(0 if all(ok for ok, _, _ in results) else 1)
