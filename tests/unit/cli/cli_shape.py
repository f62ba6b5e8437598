#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The CLI's shape (issue #29 item 3): it parses options and wires, the
library computes. Two rules, checked over tools/rtdiag of a source tree:

  1. no function in tools/rtdiag/*.c is over 100 lines, counted from the
     first line of its declaration to its closing brace;
  2. tools/rtdiag includes only the public headers (include/rtdiag/*), its
     own headers (tools/rtdiag/*.h) and system headers: nothing of src/;
  3. tools/rtdiag quotes no string itself (a format escaping a byte or code
     point: \\u%04x, \\x%02x, \\U%08x): JSON strings are
     rtd_format_json_str()'s, Go's text form rtd_gotrace_bin2text_event()'s.

usage: cli_shape.py [TREE]   (TREE: the project's root, default .)
Prints each breach and exits 1 when there is one, 0 otherwise.
"""
import os
import re
import sys

MAX_LINES = 100

# Files allowed to break rule 2 for now, each with the reason and who
# removes it.
INCLUDE_EXCEPTIONS = set()


def strip(text):
    """@text with comments, string and character literals blanked (their
    newlines kept, so line numbers hold) and preprocessor lines emptied."""
    out = []
    i, n = 0, len(text)
    bol = True  # at the beginning of a line (only blanks so far)
    while i < n:
        c = text[i]
        if bol and c == '#':
            # a directive, with its continuation lines
            while i < n and text[i] != '\n':
                if text[i] == '\\' and i + 1 < n and text[i + 1] == '\n':
                    out.append('\n')
                    i += 2
                    continue
                i += 1
            continue
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(' ' + '\n' * text.count('\n', i, j))
            i = j
            continue
        if text.startswith('//', i):
            while i < n and text[i] != '\n':
                i += 1
            continue
        if c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(c + c + '\n' * text.count('\n', i, j))
            i = j + 1
            bol = False
            continue
        out.append(c)
        if c == '\n':
            bol = True
        elif not c.isspace():
            bol = False
        i += 1
    return ''.join(out)


def functions(text):
    """(name, first line, last line) of each function defined in @text: a
    brace at file scope whose declaration (the text since the last ';',
    '}' or directive at file scope) has a parameter list and no '='."""
    s = strip(text)
    depth = 0
    decl_start = 0  # offset where the current file-scope declaration begins
    found = []
    cur = None
    for i, c in enumerate(s):
        if c == '{':
            if depth == 0:
                decl = s[decl_start:i]
                m = re.search(r'(\w+)\s*\([^=]*\)\s*$', decl, re.S)
                if m and '=' not in decl:
                    lead = len(decl) - len(decl.lstrip())
                    first = s.count('\n', 0, decl_start + lead) + 1
                    cur = (m.group(1), first)
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0:
                if cur:
                    found.append((cur[0], cur[1], s.count('\n', 0, i) + 1))
                    cur = None
                decl_start = i + 1
        elif c == ';' and depth == 0:
            decl_start = i + 1
    return found


# a string quoter's escape of one byte or code point, as C source spells it
QUOTE = re.compile(r'\\\\(u%0?4|x%0?2|U%0?8)[xX]')


def quote_breaches(tree, path):
    text = open(path, encoding='utf-8', errors='replace').read()
    return ['%s:%d: escapes %s itself: quote with the library '
            '(rtd_format_json_str(), rtd_gotrace_bin2text_event())' %
            (os.path.relpath(path, tree), text.count('\n', 0, m.start()) + 1, m.group(0))
            for m in QUOTE.finditer(text)]


INC = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def include_breaches(tree, path):
    cli = os.path.realpath(os.path.join(tree, 'tools', 'rtdiag'))
    pub = os.path.realpath(os.path.join(tree, 'include', 'rtdiag'))
    # the project's include paths, in the order the build searches them
    dirs = [os.path.join(tree, 'include'), os.path.join(tree, 'src')]
    out = []
    text = open(path, encoding='utf-8', errors='replace').read()
    for m in INC.finditer(text):
        kind, name = m.group(1), m.group(2)
        cands = ([os.path.dirname(path)] if kind == '"' else []) + dirs
        hit = None
        for d in cands:
            p = os.path.realpath(os.path.join(d, name))
            if os.path.isfile(p):
                hit = p
                break
        if hit is None:
            continue  # a system header
        inside = os.path.dirname(hit) in (cli, pub)
        if not inside:
            line = text.count('\n', 0, m.start()) + 1
            out.append('%s:%d: includes %s%s%s (%s): the CLI includes only '
                       'include/rtdiag/* and its own headers' %
                       (os.path.relpath(path, tree), line, kind, name,
                        '>' if kind == '<' else '"',
                        os.path.relpath(hit, tree)))
    return out


def main():
    tree = sys.argv[1] if len(sys.argv) > 1 else '.'
    cdir = os.path.join(tree, 'tools', 'rtdiag')
    if not os.path.isdir(cdir):
        print('cli_shape: no %s' % cdir, file=sys.stderr)
        return 2
    bad = 0
    nfun = 0
    for f in sorted(os.listdir(cdir)):
        path = os.path.join(cdir, f)
        if f.endswith('.c'):
            text = open(path, encoding='utf-8', errors='replace').read()
            for name, first, last in functions(text):
                nfun += 1
                n = last - first + 1
                if n > MAX_LINES:
                    print('tools/rtdiag/%s:%d: %s is %d lines (at most %d: '
                          'split it into named steps, or move the work into '
                          'the library)' % (f, first, name, n, MAX_LINES))
                    bad += 1
        if f.endswith(('.c', '.h')):
            for msg in quote_breaches(tree, path):
                print(msg)
                bad += 1
        if f.endswith(('.c', '.h')) and f not in INCLUDE_EXCEPTIONS:
            for msg in include_breaches(tree, path):
                print(msg)
                bad += 1
    if nfun == 0:
        print('cli_shape: no function found in %s' % cdir, file=sys.stderr)
        return 2
    print('cli_shape: %d functions in tools/rtdiag, %d breaches' % (nfun, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
