"""Find the tests that pin whole printed sentences, grouped by the module of ``topicdp`` that writes the message.

A test pins a sentence where it asserts on a string literal of more than ``--min-chars`` characters (60 by
default; the literal parts of an f-string are joined): in an ``assert`` statement, or as the ``match=`` of
``pytest.raises`` / ``pytest.warns``, or bound to a name the assertion reads; or where it compares a whole line of output with a literal of any length
(``assert lines[0] == "..."``, ``assert lines[-1].strip() != "..."``: equality with one element of a list of lines;
``assert "..." in out.splitlines()``: membership in the list itself; a substring of one line is not a whole line).
The writing module is found by searching the literal's longest runs of plain text (split at digits, quotes,
brackets, regex and format characters; at least 14 characters) among the string constants of
``topicdp/**/*.py``; a literal found nowhere is grouped under ``(not found)`` (built from pieces, or a test's own
text). The module holding the most of its runs (in characters) is named; ties are all named.

A pin whose test's subject is the exact wording (a published sentence, a string function's output) is marked
deliberate by a comment ``# deliberate pin: REASON`` on its line or the line above; it is listed apart with its
reason and not counted.

Run::

    python benchmarks/refactors/pinned_sentences.py [--root DIR] [--min-chars 60]
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve()


def _literal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _literal(node.left), _literal(node.right)
        if a is not None and b is not None:
            return a + b
    return None


def _lines_list(node: ast.AST) -> bool:
    """``node`` is a list of lines itself: ``lines``, ``x.lines``, ``out.splitlines()``, ``[l.strip() for l in ...]``."""
    if isinstance(node, ast.Name):
        return node.id.endswith("lines")
    if isinstance(node, ast.Attribute):
        return node.attr.endswith("lines")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr == "splitlines"
    if isinstance(node, (ast.ListComp, ast.SetComp)):
        return any(_lines_list(g.iter) for g in node.generators)
    return False


def _one_line(node: ast.AST) -> bool:
    """``node`` is one line of output: ``lines[i]``, ``out.splitlines()[-1]``, ``lines[i].strip()``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("strip", "rstrip"):
        node = node.func.value
    return isinstance(node, ast.Subscript) and _lines_list(node.value) and not isinstance(node.slice, ast.Slice)


def _long_names(nodes, min_chars: int) -> dict[str, str]:
    names = {}
    for node in nodes:
        if isinstance(node, ast.Assign):
            text = _literal(node.value)
            if text is not None and len(text) > min_chars and "\n" not in text:  # (a code snippet has lines)
                names.update({t.id: text for t in node.targets if isinstance(t, ast.Name)})
    return names


def pins(path: Path, min_chars: int):
    """(line, literal, kind) of every pinned sentence in the test file ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    seen: set[int] = set()
    out = []

    def add(node, text, kind):
        if id(node) not in seen:
            seen.add(id(node))
            out.append((node.lineno, text, kind))

    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            for sub in ast.walk(node.test):
                if isinstance(sub, ast.Compare):
                    sides = [sub.left, *sub.comparators]
                    for side in sides:
                        text = _literal(side)
                        if text is None:
                            continue
                        others = [s for s in sides if s is not side]
                        eq = any(isinstance(op, (ast.Eq, ast.NotEq)) for op in sub.ops)
                        member = any(isinstance(op, (ast.In, ast.NotIn)) for op in sub.ops)
                        whole = (eq and any(_one_line(o) for o in others)) or \
                            (member and side is sub.left and any(_lines_list(o) for o in others))
                        if whole:
                            add(side, text, "whole line")
                        elif len(text) > min_chars:
                            add(side, text, "long literal")
                elif isinstance(sub, (ast.Constant, ast.JoinedStr)):
                    text = _literal(sub)
                    if text is not None and len(text) > min_chars:
                        add(sub, text, "long literal")
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "match":
                    text = _literal(kw.value)
                    if text is not None and len(text) > min_chars:
                        add(kw.value, text, "match=")
    # a long literal bound to a name (in the function, or at module level) and asserted on through the name
    module_names = _long_names(tree.body, min_chars)
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        names = module_names | _long_names(ast.walk(func), min_chars)
        for node in ast.walk(func):
            if isinstance(node, ast.Assert):
                for sub in ast.walk(node.test):
                    if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in names:
                        out.append((node.lineno, names[sub.id], f"long literal via {sub.id}"))
    longest: dict[int, tuple[int, str, str]] = {}
    for line, text, kind in out:  # one pin a line: the longest literal (a "..." + f"..." is also its parts)
        if line not in longest or len(text) > len(longest[line][1]):
            longest[line] = (line, text, kind)
    return sorted(longest.values())


DELIBERATE = re.compile(r"#\s*deliberate pin:\s*(.*)")


def deliberate(lines: list[str], line: int) -> str | None:
    """The reason of a ``# deliberate pin: REASON`` comment on line ``line`` (1-based) or the line above, if any."""
    for text in (lines[line - 1], lines[line - 2] if line > 1 else ""):
        found = DELIBERATE.search(text)
        if found:
            return found.group(1).strip()
    return None


def _plain_runs(text: str) -> list[str]:
    runs = re.split(r"\{\}|\\.|[\d^$*+?()\[\]|{}=<>\"'\n]|\.\*", text)
    return sorted((r.strip(" .,:;-") for r in runs if len(r.strip(" .,:;-")) >= 14), key=len, reverse=True)


def _strings(text: str) -> str:
    """Every string constant of a module (f-strings' literal parts apart), joined by NUL."""
    parts = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            parts.append(node.value)
    return "\x00".join(parts)


def writer(text: str, sources: dict[str, str]) -> str:
    """The module whose strings hold the most of the literal's plain runs (by characters; ties all named)."""
    for cut in (None, 30):
        score: dict[str, int] = defaultdict(int)
        for run in _plain_runs(text):
            probe = run if cut is None else run[:cut]
            for m, src in sources.items():
                if probe in src:
                    score[m] += len(probe)
        if score:
            best = max(score.values())
            return ", ".join(sorted(m for m, v in score.items() if v == best))
    return "(not found)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=HERE.parents[2], help="a checkout (default: this one)")
    parser.add_argument("--min-chars", type=int, default=60)
    args = parser.parse_args(argv)
    root = args.root.resolve()
    sources = {p.relative_to(root).as_posix(): _strings(p.read_text(encoding="utf-8"))
               for p in sorted((root / "topicdp").rglob("*.py"))}
    groups: dict[str, list[str]] = defaultdict(list)
    kept: list[str] = []
    n = 0
    for test in sorted((root / "tests").rglob("*.py")):
        lines = test.read_text(encoding="utf-8").splitlines()
        for line, text, kind in pins(test, args.min_chars):
            short = text if len(text) <= 90 else text[:87] + "..."
            hit = f"{test.relative_to(root).as_posix()}:{line}  [{kind}] {short!r}"
            reason = deliberate(lines, line)
            if reason is not None:
                kept.append(f"{hit}\n        because: {reason}")
                continue
            n += 1
            groups[writer(text, sources)].append(hit)
    print(f"{n} pinned sentences (literals over {args.min_chars} characters in assertions or match=, and whole "
          f"lines of output compared with a literal) in {len(groups)} groups by the writing module"
          + (f"; {len(kept)} deliberate pins apart" if kept else ""))
    for module in sorted(groups, key=lambda m: (m == "(not found)", m)):
        print(f"\n{module}: {len(groups[module])}")
        for hit in groups[module]:
            print(f"    {hit}")
    if kept:
        print(f"\ndeliberate pins (the test's subject is the wording): {len(kept)}")
        for hit in kept:
            print(f"    {hit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
