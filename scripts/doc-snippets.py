#!/usr/bin/env python3
"""The code blocks of the documentation, for the test suite to build and run.

Usage:
  doc-snippets.py check ROOT             every code block is marked (exit 1 and a list if not)
  doc-snippets.py extract ROOT OUTDIR    writes each checked block to OUTDIR and
                                         OUTDIR/snippets.cmake, the list CMake reads

ROOT is the repository; the documents are README.md and docs/**/*.md. A block
of one of the checked languages (below) must have a marker on the line just
before its opening fence:

  <!-- check: compile -->        a whole C++ (or C) program: compiled and linked
  <!-- check: fragment -->       C++ (or C) statements: compiled as the body of a
                                 function with the names of tests/docs/fragment_prelude.hpp
                                 (fragment_prelude.h for C) in scope
  <!-- check: run -->            Python or shell: run against a real ferryd
                                 (tests/docs/run_snippet.sh)
  <!-- check: config -->         YAML: `ferry config check` must accept it
  <!-- check: skip: REASON -->   not checked; REASON says why

Blocks of other languages (text, json, ...) are output and are not checked.
Each extracted file starts with a #line directive (or a comment) naming the
document and line, so a compiler error points at the documentation.
"""

import os
import re
import sys

# Fence language -> the language of the extracted file.
CHECKED = {
    "cpp": "cpp", "c++": "cpp", "cxx": "cpp",
    "c": "c",
    "python": "python", "py": "python",
    "sh": "sh", "bash": "sh", "shell": "sh",
    "yaml": "yaml", "yml": "yaml",
    "cmake": "cmake",
}
# What each marker may be used for.
ALLOWED = {
    "compile": {"cpp", "c"},
    "fragment": {"cpp", "c"},
    "run": {"python", "sh"},
    "config": {"yaml"},
    "skip": set(CHECKED.values()),
}
MARKER = re.compile(r"^\s*<!--\s*check:\s*(\w+)\s*(?::\s*(.*?))?\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")


class Block:
    def __init__(self, path, line, lang, kind, reason, code):
        self.path, self.line, self.lang = path, line, lang
        self.kind, self.reason, self.code = kind, reason, code

    @property
    def slug(self):
        stem = re.sub(r"\.md$", "", self.path)
        stem = re.sub(r"^docs/", "", stem)
        return re.sub(r"[^A-Za-z0-9]+", "_", stem).strip("_").lower() + "_" + str(self.line)


def documents(root):
    paths = ["README.md"] if os.path.exists(os.path.join(root, "README.md")) else []
    for base, dirs, files in os.walk(os.path.join(root, "docs")):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".md"):
                paths.append(os.path.relpath(os.path.join(base, name), root))
    return paths


def blocks(root, path, problems):
    """Every fenced block of one document, with its marker."""
    lines = open(os.path.join(root, path), encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        start = i
        body = []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence[0] * len(fence))
                                      and lines[i].strip().strip(fence[0]) == ""):
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        i += 1  # the closing fence
        marker = MARKER.match(lines[start - 1]) if start > 0 else None
        where = f"{path}:{start + 1}"
        if lang not in CHECKED:
            if marker:
                problems.append(f"{where}: a marker on a ```{lang or 'plain'} block, which is not checked")
            continue
        kind_lang = CHECKED[lang]
        if not marker:
            problems.append(f"{where}: ```{lang} block without a marker; put one of "
                            "<!-- check: compile|fragment|run|config|skip: REASON --> on the line before it")
            continue
        kind, reason = marker.group(1), marker.group(2)
        if kind not in ALLOWED:
            problems.append(f"{where}: unknown marker 'check: {kind}'; expected one of "
                            + ", ".join(sorted(ALLOWED)))
            continue
        if kind_lang not in ALLOWED[kind]:
            problems.append(f"{where}: 'check: {kind}' does not apply to a ```{lang} block")
            continue
        if kind == "skip" and not reason:
            problems.append(f"{where}: 'check: skip' needs a reason: <!-- check: skip: WHY -->")
            continue
        # The first line of the code is the line after the opening fence.
        yield Block(path, start + 2, kind_lang, kind, reason, "\n".join(body) + "\n")


def collect(root):
    problems, found = [], []
    for path in documents(root):
        found.extend(blocks(root, path, problems))
    return found, problems


def write_if_changed(path, text):
    """Keeps the file's time when nothing changed, so the build does not redo it."""
    if os.path.exists(path) and open(path, encoding="utf-8").read() == text:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def cmake_list(name, items):
    return f"set({name}\n" + "".join(f"  \"{x}\"\n" for x in items) + ")\n"


def extract(root, out):
    found, problems = collect(root)
    lists = {k: [] for k in ("CPP_PROGRAMS", "CPP_FRAGMENTS", "C_PROGRAMS", "C_FRAGMENTS",
                              "PYTHON", "SHELL", "YAML")}
    for b in found:
        source = os.path.join(root, b.path)
        line_directive = f'#line {b.line} "{source}"\n'
        if b.kind == "compile" and b.lang in ("cpp", "c"):
            ext = "cpp" if b.lang == "cpp" else "c"
            f = os.path.join(out, b.lang, b.slug + "." + ext)
            write_if_changed(f, line_directive + b.code)
            lists["CPP_PROGRAMS" if b.lang == "cpp" else "C_PROGRAMS"].append(f"{b.slug}|{f}")
        elif b.kind == "fragment":
            ext = "cpp" if b.lang == "cpp" else "c"
            prelude = "fragment_prelude.hpp" if b.lang == "cpp" else "fragment_prelude.h"
            # An external function: the linker must resolve everything it uses.
            text = (f'#include "{prelude}"\n'
                    f"void doc_snippet_{b.slug}(FERRY_DOC_FRAGMENT_PARAMETERS);\n"
                    f"void doc_snippet_{b.slug}(FERRY_DOC_FRAGMENT_PARAMETERS) {{\n"
                    f"FERRY_DOC_FRAGMENT_BEGIN\n{line_directive}{b.code}"
                    "FERRY_DOC_FRAGMENT_END\n}\n")
            f = os.path.join(out, b.lang + "-fragments", b.slug + "." + ext)
            write_if_changed(f, text)
            lists["CPP_FRAGMENTS" if b.lang == "cpp" else "C_FRAGMENTS"].append(f"{b.slug}|{f}")
        elif b.kind == "run":
            ext = "py" if b.lang == "python" else "sh"
            f = os.path.join(out, b.lang, b.slug + "." + ext)
            write_if_changed(f, f"# {b.path}:{b.line}\n" + b.code)
            lists["PYTHON" if b.lang == "python" else "SHELL"].append(f"{b.slug}|{f}")
        elif b.kind == "config":
            f = os.path.join(out, "yaml", b.slug + ".yaml")
            write_if_changed(f, f"# {b.path}:{b.line}\n" + b.code)
            lists["YAML"].append(f"{b.slug}|{f}")
    # One program per language links every fragment: the linker must resolve
    # whatever a fragment calls (main only takes their addresses).
    for lang, ext, key in (("cpp", "cpp", "CPP_FRAGMENTS"), ("c", "c", "C_FRAGMENTS")):
        names = [entry.split("|")[0] for entry in lists[key]]
        prelude = "fragment_prelude.hpp" if lang == "cpp" else "fragment_prelude.h"
        text = f'#include "{prelude}"\n'
        text += "".join(f"void doc_snippet_{n}(FERRY_DOC_FRAGMENT_PARAMETERS);\n" for n in names)
        text += "typedef void (*doc_snippet_fn)(FERRY_DOC_FRAGMENT_PARAMETERS);\n"
        text += "static doc_snippet_fn const doc_snippets[] = {\n"
        text += "".join(f"    &doc_snippet_{n},\n" for n in names) or "    0,\n"
        text += "};\nint main(void) { return doc_snippets[0] == 0 && sizeof doc_snippets > sizeof doc_snippets[0]; }\n"
        write_if_changed(os.path.join(out, lang + "-fragments", "main." + ext), text)
    manifest = "# Written by scripts/doc-snippets.py extract: the documentation's checked code blocks.\n"
    manifest += "".join(cmake_list("FERRY_DOC_" + k, v) for k, v in lists.items())
    manifest += cmake_list("FERRY_DOC_SOURCES", [os.path.join(root, p) for p in documents(root)])
    write_if_changed(os.path.join(out, "snippets.cmake"), manifest)
    return problems


def main(argv):
    if len(argv) >= 2 and argv[0] == "check":
        found, problems = collect(argv[1])
        for p in problems:
            print(p, file=sys.stderr)
        counts = {}
        for b in found:
            counts[b.kind] = counts.get(b.kind, 0) + 1
        summary = ", ".join(f"{counts[k]} {k}" for k in sorted(counts))
        print(f"doc-snippets: {len(found)} checked block(s) ({summary}); {len(problems)} problem(s)")
        return 1 if problems else 0
    if len(argv) >= 3 and argv[0] == "extract":
        problems = extract(os.path.abspath(argv[1]), os.path.abspath(argv[2]))
        # Unmarked blocks are reported by the test docs_snippets_marked, not here:
        # a configure step that fails on a documentation typo would stop every build.
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
