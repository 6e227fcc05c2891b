"""Count the package's size and shape: lines, docstring share, long functions, ``cli.py``'s length.

Lines are physical lines of ``topicdp/**/*.py``. A docstring line is a line of a module, class or function
docstring (the string node's first to last line). A function's code lines are its lines minus its docstring,
comments and blank lines. Imports that run back up the layers are counted by ``tests/test_import_graph.py``.

Run::

    python benchmarks/refactors/package_counts.py [--by-package] [--long 80]
"""

from __future__ import annotations

import argparse
import ast
import io
import tokenize
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "topicdp"


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def _comment_or_blank(text: str) -> set[int]:
    lines = {i for i, line in enumerate(text.splitlines(), 1) if not line.strip()}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT and not text.splitlines()[tok.start[0] - 1].split("#")[0].strip():
            lines.add(tok.start[0])
    return lines


def count(long_limit: int) -> tuple[Counter, Counter, list[tuple[int, str]]]:
    total, docs, long = Counter(), Counter(), []
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        rel = path.relative_to(ROOT.parent)
        package = rel.parts[1] if len(rel.parts) > 2 else rel.stem
        doc = _docstring_lines(tree)
        skip = doc | _comment_or_blank(text)
        total[package] += len(text.splitlines())
        docs[package] += len(doc)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                code = [i for i in range(node.lineno, node.end_lineno + 1) if i not in skip]
                if len(code) > long_limit:
                    long.append((len(code), f"{rel}:{node.lineno} {node.name}"))
    return total, docs, sorted(long, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--by-package", action="store_true")
    parser.add_argument("--long", type=int, default=80, help="code lines above which a function is long")
    args = parser.parse_args()
    total, docs, long = count(args.long)
    if args.by_package:
        for package in sorted(total, key=total.get, reverse=True):
            print(f"{package:14s} {total[package]:6d} lines, docstrings {docs[package] / total[package]:4.0%}")
    lines, doc = sum(total.values()), sum(docs.values())
    print(f"topicdp/: {lines} lines, docstrings {doc} ({doc / lines:.1%})")
    print(f"cli.py: {len((ROOT / 'cli.py').read_text().splitlines())} lines")
    print(f"functions over {args.long} code lines: {len(long)}")
    for n, where in long:
        print(f"  {n:4d} {where}")


if __name__ == "__main__":
    main()
