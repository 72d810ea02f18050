#!/usr/bin/env python3
"""Generate a C file that checks p11glue's PKCS#11 constants at compile time.

Usage:
    gen-header-check.py --name NAME --output FILE.c [--depfile FILE.d]
        --ref-include HDR [--ref-include HDR ...]
        --ref-file GLOB [--ref-file GLOB ...]
        [--ref-cflag=FLAG ...] [--ours HDR]
        -- CC [CC-ARGS ...]

--ref-include names the headers to include (<HDR>), --ref-file the paths
(shell patterns) whose macros are checked, --ref-cflag the flags the
reference needs (-I..., -D...). CC is the C compiler command.

The reference headers (NSS's or p11-kit's) define the same names as ours,
so both cannot be included in one translation unit. Instead:

 1. Run "CC -dD -E" on a file including the reference headers. -dD keeps
    every #define/#undef in order, between line markers, so each macro is
    attributed to the file that defined it. Macros that "CC -dM -E
    /dev/null" also defines (compiler built-ins) are dropped.
 2. Classify each macro. Only object-like macros whose replacement list is
    an integer constant expression count as constants: integer literals,
    unary + - ~ !, binary | & ^ + - * / % << >>, parentheses, casts to
    basic integer types ("(unsigned long) x") or to a typedef name, and
    names of other macros that are themselves constants (the Classifier
    parses the replacement list to decide). Everything else is skipped and
    counted: function-like macros (a "(" directly after the name), empty
    macros (include guards, feature switches), string or character
    literals, and anything naming a type, a function or a non-constant
    macro (CK_PTR, CK_DECLARE_FUNCTION, compatibility renames such as
    p11-kit's "#define ck_info CK_INFO").
 3. Rename every reference macro to REF_<name>, in its name and in every
    replacement list, so reference macros only expand to other reference
    macros and never to ours. Only the constants, and the macros their
    replacement lists use, are emitted.
 4. Emit C that includes OUR header, defines the REF_ macros, and for each
    constant defined in one of the --ref-file headers either
        #ifndef NAME / #error   (missing from ours)
    or  _Static_assert((NAME) == (REF_NAME), ...)
    unless ALLOW (below) exempts the name for this reference, with a reason.

The generated file also exports a summary (pg_hdrcheck_<name>) that the
TAP test prints. Standard library only.
"""

import argparse
import fnmatch
import os
import re
import subprocess
import sys
import tempfile

# Names a reference may define that ours need not match, one reason each.
# Keyed by the --name of the reference set.
ALLOW = {
    "nss": {
        "_PKCS11_H_": "include guard",
        "_PKCS11T_H_": "include guard",
        "CK_NULL_PTR": "NSS-only spelling of NULL_PTR",
        "SFTK_MIN_USER_SLOT_ID": "NSS softoken slot numbering, internal to NSS",
        "SFTK_MAX_USER_SLOT_ID": "NSS softoken slot numbering, internal to NSS",
        "SFTK_MIN_FIPS_USER_SLOT_ID": "NSS softoken slot numbering, internal to NSS",
        "SFTK_MAX_FIPS_USER_SLOT_ID": "NSS softoken slot numbering, internal to NSS",
        "SECMOD_MODULE_DB_FUNCTION_FIND": "NSS module-DB callback opcode, internal to NSS",
        "SECMOD_MODULE_DB_FUNCTION_ADD": "NSS module-DB callback opcode, internal to NSS",
        "SECMOD_MODULE_DB_FUNCTION_DEL": "NSS module-DB callback opcode, internal to NSS",
        "SECMOD_MODULE_DB_FUNCTION_RELEASE": "NSS module-DB callback opcode, internal to NSS",
        "CKA_FLAGS_ONLY": "NSS-internal template marker (equals CKA_CLASS)",
        "CKA_DIGEST": "NSS-internal operation flag OR-ed onto CKA_ values, never on the wire",
        "CKA_NSS_MESSAGE": "NSS-internal operation flag OR-ed onto CKA_ values, never on the wire",
        "CKA_NSS_MESSAGE_MASK": "NSS-internal mask for CKA_NSS_MESSAGE",
        "CKM_FAKE_RANDOM": "NSS-internal test mechanism",
        "CKM_INVALID_MECHANISM": "NSS library API sentinel (~0), not a PKCS#11 value",
        "CKK_INVALID_KEY_TYPE": "NSS library API sentinel (~0), not a PKCS#11 value",
        "CKT_INVALID_TYPE": "NSS library API sentinel (~0), not a PKCS#11 value",
    },
    "nss-compat": {
        # The run with NSS_PKCS11_2_0_COMPAT, for the Netscape-era aliases.
        # NSS's pre-OASIS spellings of standard names:
        "CKF_EC_FP": "NSS's pre-OASIS spelling of CKF_EC_F_P",
        "CKO_KG_PARAMETERS": "NSS's pre-OASIS spelling of CKO_DOMAIN_PARAMETERS",
        "CK_INVALID_SESSION": "NSS's pre-OASIS spelling of CK_INVALID_HANDLE",
        "CKR_KEY_PARAMS_INVALID": "obsolete NSS return code 0x6B, never standardised",
    },
    "p11-kit": {
        "PKCS11_H": "include guard",
        "PKCS11_X_H_": "include guard",
        "CRYPTOKI_VERSION_MAJOR": "p11-kit's header is 2.40, ours is 3.0",
        "CRYPTOKI_VERSION_MINOR": "p11-kit's header is 2.40, ours is 3.0",
        "P11_KIT_CRYPTOKI_VERSION_REVISION": "p11-kit's own header revision number",
        "CRYPTOKI_COMPAT": "p11-kit switch choosing its spec-style names; ours only has those",
        # p11-kit 0.24 numbers five 2.40 return codes 0x1c0-0x1c4; the
        # 2.40 and 3.0 specifications and NSS say 0x1b5-0x1b9.
        "CKR_EXCEEDED_MAX_ITERATIONS": "p11-kit 0.24 value 0x1c0 is wrong; spec and NSS say 0x1b5",
        "CKR_FIPS_SELF_TEST_FAILED": "p11-kit 0.24 value 0x1c1 is wrong; spec and NSS say 0x1b6",
        "CKR_LIBRARY_LOAD_FAILED": "p11-kit 0.24 value 0x1c2 is wrong; spec and NSS say 0x1b7",
        "CKR_PIN_TOO_WEAK": "p11-kit 0.24 value 0x1c3 is wrong; spec and NSS say 0x1b8",
        "CKR_PUBLIC_KEY_INVALID": "p11-kit 0.24 value 0x1c4 is wrong; spec and NSS say 0x1b9",
    },
}
# "nss-compat" sees everything "nss" sees, plus the compatibility names.
ALLOW["nss-compat"].update(ALLOW["nss"])

INT_LITERAL = re.compile(
    r"^(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)"
    r"([uU](ll|LL|l|L)?|(ll|LL|l|L)[uU]?)?$")
TOKEN = re.compile(r"""
      (?P<ws>\s+)
    | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<number>\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.])*)
    | (?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
    | (?P<punct><<|>>|&&|\|\||==|!=|<=|>=|\#\#|[-+*/%&|^~!<>()?:,\[\]{}.;=\#])
    """, re.VERBOSE)
TYPE_WORDS = {"unsigned", "signed", "long", "int", "short", "char"}
DEFINE = re.compile(r"^#\s*define\s+([A-Za-z_][A-Za-z0-9_]*)(\(?)(.*)$")
UNDEF = re.compile(r"^#\s*undef\s+([A-Za-z_][A-Za-z0-9_]*)")
LINEMARK = re.compile(r'^#\s+[0-9]+\s+"((?:\\.|[^"\\])*)"')


def tokenize(text):
    """Split a replacement list into tokens; None if it has odd characters."""
    out, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            return None
        pos = m.end()
        if m.lastgroup != "ws":
            out.append((m.lastgroup, m.group()))
    return out


def run(cmd, stdin_text=None):
    res = subprocess.run(cmd, input=stdin_text, capture_output=True,
                         text=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        sys.exit("gen-header-check: command failed: %s" % " ".join(cmd))
    return res.stdout


def builtin_macros(cc):
    names = set()
    for line in run(cc + ["-dM", "-E", "-x", "c", os.devnull]).splitlines():
        m = DEFINE.match(line)
        if m:
            names.add(m.group(1))
    return names


def reference_macros(cc, cflags, includes):
    """Return ({name: (function_like, body, file)}, files seen).

    The dictionary keeps definition order; #undef removes an entry.
    """
    src = "".join("#include <%s>\n" % h for h in includes)
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
        f.write(src)
        path = f.name
    try:
        text = run(cc + cflags + ["-dD", "-E", "-x", "c", path])
    finally:
        os.unlink(path)
    macros, current, files = {}, "", set()
    for line in text.splitlines():
        m = LINEMARK.match(line)
        if m:
            current = m.group(1)
            if not current.startswith("<") and current != path:
                files.add(current)
            continue
        m = DEFINE.match(line)
        if m:
            macros[m.group(1)] = (m.group(2) == "(", m.group(3).strip(),
                                  current)
            continue
        m = UNDEF.match(line)
        if m:
            macros.pop(m.group(1), None)
    return macros, sorted(files)


class Classifier:
    """Decide which macros are integer constant expressions.

    A small recursive-descent parser accepts exactly
        expr    := unary (binop unary)*
        unary   := ("+" | "-" | "~" | "!") unary | cast unary | primary
        cast    := "(" type-word+ ")" | "(" typedef-name ")"
        primary := integer-literal | constant-macro | "(" expr ")"
    where a typedef-name is an identifier that is not a macro (NSS casts
    some deprecated aliases to deprecated typedefs, e.g. CK_TRUST). The
    renamed copy replaces such a cast by "(unsigned long)", the type of
    every PKCS#11 constant on this ABI, so ours need not have the typedef.
    """

    BINOPS = {"|", "&", "^", "+", "-", "*", "/", "%", "<<", ">>"}
    UNOPS = {"+", "-", "~", "!"}

    def __init__(self, macros):
        self.macros = macros
        self.memo = {}
        self.typedef_casts = {}

    def why_not(self, name, stack=()):
        """None if NAME is a constant, else a short reason."""
        if name in self.memo:
            return self.memo[name]
        if name in stack:
            return "recursive"
        func, body, _ = self.macros[name]
        toks = tokenize(body) if not func else None
        if func:
            reason = "function-like"
        elif not body:
            reason = "empty"
        elif toks is None:
            reason = "unparsable"
        elif any(kind == "string" for kind, _ in toks):
            reason = "string or character literal"
        else:
            self.toks, self.pos, self.stack = toks, 0, stack + (name,)
            self.casts = []
            reason = self.expr()
            if reason is None and self.pos != len(toks):
                reason = "not an integer constant (%s)" % toks[self.pos][1]
            if reason is None and self.casts:
                self.typedef_casts[name] = self.casts
        self.memo[name] = reason
        return reason

    def peek(self, offset=0):
        i = self.pos + offset
        return self.toks[i] if i < len(self.toks) else (None, None)

    def expr(self):
        reason = self.unary()
        while reason is None and self.peek()[1] in self.BINOPS:
            self.pos += 1
            reason = self.unary()
        return reason

    def unary(self):
        kind, tok = self.peek()
        if tok in self.UNOPS:
            self.pos += 1
            return self.unary()
        if tok == "(":
            n = self.cast_length()
            if n:
                self.pos += n
                return self.unary()
            self.pos += 1
            reason = self.expr()
            if reason is None and self.peek()[1] != ")":
                reason = "not an integer constant (%s)" % self.peek()[1]
            self.pos += 1
            return reason
        self.pos += 1
        if kind == "number" and INT_LITERAL.match(tok):
            return None
        if kind == "ident" and tok in self.macros:
            saved = (self.toks, self.pos, self.stack, self.casts)
            inner = self.why_not(tok, self.stack)
            self.toks, self.pos, self.stack, self.casts = saved
            return None if inner is None else (
                "uses non-constant macro %s" % tok)
        return "not an integer constant (%s)" % tok

    def cast_length(self):
        """Tokens in a cast at the current "(", or 0 if it is no cast."""
        i = 1
        while self.peek(i)[1] in TYPE_WORDS:
            i += 1
        if i > 1 and self.peek(i)[1] == ")":
            return i + 1
        kind, tok = self.peek(1)
        if (kind == "ident" and tok not in self.macros
                and tok not in TYPE_WORDS and self.peek(2)[1] == ")"):
            after = self.peek(3)
            if after[0] in ("ident", "number") or after[1] in ("(", "~"):
                self.casts.append(tok)
                return 3
        return 0

    def renamed_body(self, name):
        casts = set(self.typedef_casts.get(name, ()))
        out = []
        for kind, tok in tokenize(self.macros[name][1]):
            if kind == "ident" and tok in self.macros:
                tok = "REF_" + tok
            elif kind == "ident" and tok in casts:
                tok = "unsigned long"
            out.append(tok)
        return " ".join(out)

    def closure(self, names):
        """NAMES plus every macro their replacement lists use."""
        seen, todo = set(), list(names)
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            for kind, tok in tokenize(self.macros[n][1]):
                if kind == "ident" and tok in self.macros:
                    todo.append(tok)
        return seen


def c_string(text):
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--ref-include", action="append", required=True)
    ap.add_argument("--depfile")
    ap.add_argument("--ref-file", action="append", required=True,
                    help="pattern: macros from matching files are checked")
    ap.add_argument("--ref-cflag", action="append", default=[])
    ap.add_argument("--ours", default="p11glue/pkcs11x.h")
    ap.add_argument("--verbose", action="store_true",
                    help="print the counts (the TAP test reports them too)")
    ap.add_argument("cc", nargs="+", help="compiler command, after --")
    args = ap.parse_args()

    ident = re.sub(r"[^A-Za-z0-9_]", "_", args.name)
    allow = ALLOW.get(args.name, {})
    builtins = builtin_macros(args.cc)
    all_macros, seen_files = reference_macros(
        args.cc, args.ref_cflag, args.ref_include)
    macros = {n: v for n, v in all_macros.items() if n not in builtins}
    cls = Classifier(macros)

    checked, skipped, allowed = [], {}, []
    for name, (_, _, path) in macros.items():
        if not any(fnmatch.fnmatchcase(os.path.normpath(path), g)
                   for g in args.ref_file):
            continue
        reason = cls.why_not(name)
        if reason is not None:
            key = reason.split(" (")[0]
            skipped.setdefault(key, []).append(name)
        elif name in allow:
            allowed.append(name)
        else:
            checked.append(name)
    if not checked:
        sys.exit("gen-header-check: no constants found in %s; wrong flags?"
                 % ", ".join(args.ref_include))
    stale = sorted(set(allow) - set(allowed))
    for name in stale:
        sys.stderr.write("gen-header-check: %s: allow-list entry %s is not "
                         "a constant of the reference (stale?)\n"
                         % (args.name, name))

    needed = sorted(cls.closure(checked + allowed))
    lines = [
        "/* Generated by tests/header/gen-header-check.py for '%s'. */"
        % args.name,
        "/* Do not edit; regenerated on every build. */",
        "#include <%s>" % args.ours,
        "",
        "#include \"header-check.h\"",
        "",
        "/* The reference's constants, renamed to REF_<name>. */",
    ]
    for name in needed:
        lines.append("#define REF_%s %s" % (name, cls.renamed_body(name)))
    lines.append("")
    lines.append("/* One check per constant the reference defines. */")
    for name in checked:
        path = macros[name][2]
        lines += [
            "#ifndef %s" % name,
            "#error %s" % c_string("%s: %s is missing from p11glue's "
                                   "headers (defined in %s)"
                                   % (args.name, name, path)),
            "#else",
            "_Static_assert((%s) == (REF_%s), %s);"
            % (name, name, c_string("%s: %s differs from %s"
                                    % (args.name, name, path))),
            "#endif",
        ]
    lines.append("")
    lines.append("/* Allowed to be missing or different:")
    for name in allowed:
        lines.append(" *   %s: %s" % (name, allow[name]))
    lines.append(" * Skipped as not integer constants:")
    for key in sorted(skipped):
        lines.append(" *   %s: %d (%s)" % (key, len(skipped[key]),
                                            " ".join(sorted(skipped[key]))))
    lines.append(" */")
    lines += [
        "",
        "const struct pg_hdrcheck_summary pg_hdrcheck_%s = {" % ident,
        "\t.reference = %s," % c_string(args.name),
        "\t.compared = %d," % len(checked),
        "\t.allowed = %d," % len(allowed),
        "\t.skipped = %d," % sum(len(v) for v in skipped.values()),
        "};",
        "",
    ]
    tmp = args.output + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, args.output)
    if args.depfile:
        # Rebuild when a reference header (or this script) changes.
        deps = seen_files + [os.path.abspath(__file__)]
        with open(args.depfile, "w") as f:
            f.write("%s: %s\n" % (args.output.replace(" ", "\\ "),
                                  " ".join(d.replace(" ", "\\ ")
                                           for d in deps)))
    if args.verbose:
        print("gen-header-check: %s: %d constants compared, %d allowed, "
              "%d skipped" % (args.name, len(checked), len(allowed),
                              sum(len(v) for v in skipped.values())))


if __name__ == "__main__":
    main()
