"""Check that a refactor leaves seeded releases bit for bit: run the same ``topicdp`` commands on two source trees
and compare the published files (every field but the wall-clock ones) and the printed lines (but times and paths).

The commands: ``topicdp demo`` (both guarantees) and three ``topicdp privatize`` runs on 300 bloggers (at most 15
posts each) of the blogs corpus with 300 others as the public reference: dp-vem from the reference's start, a DP
vocabulary with a DP count, and gaussian-global on a public word list of the reference's 800 most common words.
Without the blogs data only the two demos run.

Run::

    python benchmarks/refactors/releases_before_after.py BEFORE_TREE AFTER_TREE [--work DIR]

where a tree is a directory holding the ``topicdp`` package (e.g. ``git archive <commit> topicdp | tar -x -C DIR``).
"""

from __future__ import annotations

import argparse
import collections
import difflib
import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data
from _data import BLOGS, BLOGS_MORE, nearest  # noqa: E402

TIMING = ("created", "timestamp", "seconds", "wall_seconds", "time", "date")


def _take(src: Path, dst: Path, n_users: int, cap: int = 15) -> None:
    counts: collections.Counter = collections.Counter()
    with gzip.open(src, "rt") as f, open(dst, "w") as out:
        for line in f:
            r = json.loads(line)
            if r["user"] not in counts and len(counts) >= n_users:
                break
            if counts[r["user"]] < cap:
                counts[r["user"]] += 1
                out.write(json.dumps({"user": r["user"], "text": r["text"]}) + "\n")


def commands(work: Path) -> dict[str, list[str]]:
    out = {"demo": ["demo", "--seed", "0"], "demo_rdp": ["demo", "--guarantee", "random-dp", "--seed", "0"]}
    blogs, more = nearest(BLOGS), nearest(BLOGS_MORE)
    if not (blogs.exists() and more.exists()):
        return out
    priv, ref, words = work / "priv.jsonl", work / "ref.jsonl", work / "words.txt"
    if not words.exists():
        _take(blogs, priv, 300)
        _take(more, ref, 300)
        counts: collections.Counter = collections.Counter()
        for line in open(ref):
            counts.update(set(re.findall(r"[a-z]{4,}", json.loads(line)["text"].lower())))
        words.write_text("\n".join(w for w, _ in counts.most_common(800)))
    base = ["privatize", str(priv), "--topics", "5", "--epsilon", "3", "--seed", "0", "--release-anyway"]
    out["priv_ref"] = base + ["--reference", str(ref), "--max-docs-per-user", "20"]
    out["priv_dp"] = base + ["--max-docs-per-user", "20"]
    out["priv_gg"] = base + ["--n-units", "300", "--mechanism", "gaussian-global", "--vocabulary", str(words)]
    return out


def run(tree: Path, out: Path, cmds: dict[str, list[str]]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1", PYTHONPATH=str(tree))
    for name, args in cmds.items():
        (out / f"{name}.json").unlink(missing_ok=True)
        done = subprocess.run([sys.executable, "-c", "import sys; sys.argv[0] = 'topicdp'; from topicdp.cli import "
                               "main; sys.exit(main())", *args, "--out", str(out / f"{name}.json")], cwd=tree, env=env,
                              capture_output=True, text=True)
        (out / f"{name}.out").write_text(done.stdout + f"rc={done.returncode}\n")


def _strip(x):
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in TIMING}
    return [_strip(v) for v in x] if isinstance(x, list) else x


def _lines(path: Path, tree_out: Path) -> list[str]:
    text = path.read_text().replace(str(tree_out), "OUT")
    return [re.sub(r"\d+(\.\d+)? s\b", "T s", line) for line in text.splitlines()]


def compare(before: Path, after: Path, cmds) -> bool:
    same = True
    for name in cmds:
        b, a = before / f"{name}.json", after / f"{name}.json"
        if b.exists() or a.exists():
            equal = b.exists() and a.exists() and _strip(json.loads(b.read_text())) == _strip(json.loads(a.read_text()))
            print(f"{name}: release {'identical' if equal else 'DIFFERS'}")
            same &= equal
        diff = [d for d in difflib.unified_diff(_lines(before / f"{name}.out", before),
                                                _lines(after / f"{name}.out", after), lineterm="", n=0)
                if not d.startswith(("---", "+++", "@@"))]
        print(f"{name}: printed lines {'identical (times and paths aside)' if not diff else 'differ:'}")
        for d in diff[:10]:
            print("   ", d[:200])
        same &= not diff
    return same


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    p.add_argument("--work", type=Path, default=Path("/tmp/topicdp-before-after"))
    args = p.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    cmds = commands(args.work)
    run(args.before.resolve(), args.work / "before", cmds)
    run(args.after.resolve(), args.work / "after", cmds)
    return 0 if compare(args.work / "before", args.work / "after", cmds) else 1


if __name__ == "__main__":
    sys.exit(main())
