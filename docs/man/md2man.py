#!/usr/bin/env python3
"""Turns p11glue's manual pages, written in a small Markdown subset, into
roff (man(7)). One source per page, in docs/man/NAME.SECTION.md:

    # NAME(SECTION) -- one-line summary      (first line: the title)
    ## HEADING                               (a section: NAME, SYNOPSIS ...)
    ### Heading                              (a subsection, e.g. one command)
    paragraph text, with **bold** and *italic* and `code` (shown bold)
    - a bullet item
    `term`                                   (a line alone in backquotes:
    : its description                         a tagged paragraph)
        indented lines                        (verbatim, an example)

Usage: md2man.py SOURCE OUTPUT [VERSION]
"""
import re
import sys


def inline(text):
    text = text.replace('\\', '\\e')
    # roff treats a leading dot or quote as a request
    text = re.sub(r"^([.'])", r"\\&\1", text)
    text = text.replace('-', '\\-')
    # `code` is bold and taken literally: no emphasis inside it
    parts = re.split(r'(`[^`]+`)', text)
    for i, part in enumerate(parts):
        if i % 2:
            parts[i] = '\\fB' + part[1:-1] + '\\fR'
        else:
            part = re.sub(r'\*\*(.+?)\*\*', r'\\fB\1\\fR', part)
            parts[i] = re.sub(r'(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])', r'\\fI\1\\fR', part)
    return ''.join(parts)


def convert(lines, version):
    out = []
    title = re.match(r'#\s+([\w.-]+)\((\d)\)\s+--\s+(.*)', lines[0])
    if not title:
        sys.exit('first line must be "# NAME(SECTION) -- summary"')
    name, section, summary = title.groups()
    out.append('.TH "%s" "%s" "" "p11glue %s" "p11glue"' % (name.upper(), section, version))
    out.append('.SH NAME')
    out.append('%s \\- %s' % (inline(name), inline(summary)))
    verbatim = False
    for raw in lines[1:]:
        line = raw.rstrip('\n')
        if line.startswith('    ') or (verbatim and line == ''):
            if not verbatim:
                out.append('.PP\n.RS 4\n.nf')
                verbatim = True
            out.append(inline(line[4:]) if line else '')
            continue
        if verbatim:
            while out[-1] == '':
                out.pop()
            out.append('.fi\n.RE')
            verbatim = False
            if line and not line.startswith('#'):
                out.append('.PP')
        if line.startswith('### '):
            out.append('.SS "%s"' % inline(line[4:]))
        elif line.startswith('## '):
            out.append('.SH ' + line[3:].upper())
        elif line.startswith('- '):
            out.append('.IP \\(bu 2\n' + inline(line[2:]))
        elif line.startswith(': '):
            out.append(inline(line[2:]))
        elif re.fullmatch(r'`[^`]+`(, `[^`]+`)*', line):
            out.append('.TP\n' + inline(line))
        elif line == '':
            if out and not out[-1].startswith(('.SH', '.SS', '.TP', '.PP')):
                out.append('.PP')
        else:
            out.append(inline(line))
    if verbatim:
        out.append('.fi\n.RE')
    return '\n'.join(out) + '\n'


def main():
    source, output = sys.argv[1], sys.argv[2]
    version = sys.argv[3] if len(sys.argv) > 3 else ''
    with open(source, encoding='utf-8') as f:
        lines = f.readlines()
    with open(output, 'w', encoding='utf-8') as f:
        f.write(convert(lines, version))


if __name__ == '__main__':
    main()
