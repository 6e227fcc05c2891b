"""The Python entry points against the command on real blog posts: the same refusal, and forced, the same release.

About 1,000 private bloggers (the users of the blogs corpus whose id hash falls below ``--user-fraction``, the
command's own ``--user-fraction`` rule) with a public word list (the other bloggers' 2,000 most frequent words),
K = 10, epsilon 3, delta 1e-6, user level, at most 20 documents per user. Each entry point runs twice, as asked and
forced (``--release-anyway`` / ``release_anyway=True``), seed 0:

* ``topicdp privatize`` as the issue ran it (the plan's rule picks the mechanism), and with ``--mechanism dp-vem``;
* ``topicdp.release(...)`` with the same options;
* ``DPVariationalLDA(...).fit(path)``, and the README's recipe ``DPVariationalLDA(...).fit(Corpus.from_jsonl(path,
  users=..., vocabulary=words))`` on the same users.

It prints (and writes with ``--out``) a table: each entry point's outcome, its refusal sentence's figures and what it
spent, and the SHA-256 of each forced release's topic-word matrix (bit-identical releases share it).

Run from the repository root (about 15 minutes on 2 busy cores)::

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/owners/python_entry_points.py \\
        --out docs/results/python_entry_points.md

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import BLOGS, ROOT, available, nearest, records  # noqa: E402

sys.path.insert(0, str(ROOT))
OPTIONS = dict(n_topics=10, epsilon=3.0, delta=1e-6, unit="user", max_docs_per_user=20)
FLAGS = ["--topics", "10", "--epsilon", "3", "--delta", "1e-6", "--unit", "user", "--max-docs-per-user", "20"]
COMMAND = "import sys; from topicdp.cli import main; sys.exit(main(sys.argv[1:]))"
SETTING = ("The bloggers of the blogs corpus whose id hash falls below the user fraction (the command's "
           "`--user-fraction` rule) are the private users; the other bloggers' 2,000 most frequent words are the public "
           "word list. K = 10, epsilon 3, delta 1e-6, user level, at most 20 documents per user, seed 0; each entry "
           "point in its own call (the command in a fresh process on this checkout). \"DP count\" and \"dp-vem "
           "forecast\" are the plan's printed lines (a DP output and a function of it); the last column of the "
           "refusals is each refusal's sentence in the command's words, of the forced releases the SHA-256 of the "
           "released topic-word matrix (float64 bytes).")


def public_words(path: Path, fraction: float, out: Path) -> list[str]:
    """The 2,000 most frequent words of the bloggers the release does not take (public here by construction)."""
    from topicdp import Corpus
    from topicdp.corpus import user_selected

    others = [(r["text"], r["user"]) for r in records(path) if not user_selected(r["user"], fraction)]
    words = list(Corpus.from_texts([t for t, _ in others], [u for _, u in others], max_features=2000).vocabulary)
    out.write_text("\n".join(words) + "\n")
    return words


def command(path: Path, words: Path, *extra: str) -> dict:
    """``topicdp privatize`` in a fresh process on this checkout's code: its exit status, last line and matrix."""
    out = Path(tempfile.mkdtemp()) / "release.json"
    argv = ["privatize", str(path), *FLAGS, "--user-fraction", str(FRACTION), "--vocabulary", str(words),
            "--seed", "0", "--out", str(out), *extra]
    started = time.perf_counter()
    run = subprocess.run([sys.executable, "-c", COMMAND, *argv], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT), TOPICDP_PROGRESS="0"))
    lines = (run.stdout + run.stderr).strip().splitlines()
    matrix = json.loads(out.read_text())["topic_word"] if out.exists() else None
    return dict(code=run.returncode, last=lines[-1], lines=lines, matrix=matrix,
                seconds=time.perf_counter() - started)


def python(run) -> dict:
    """A Python entry point: its refusal (or release), the plan's lines it logged, its matrix."""
    import numpy as np

    from topicdp.pipeline import ReleaseRefused

    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("topicdp").addHandler(handler)
    logging.getLogger("topicdp").setLevel(logging.INFO)
    started = time.perf_counter()
    try:
        released = run(lines)
        out = dict(code=0, last="released", matrix=np.asarray(released.topic_word).tolist())
    except ReleaseRefused as refused:
        out = dict(code=2, last=str(refused), matrix=None)
    finally:
        logging.getLogger("topicdp").removeHandler(handler)
    return dict(out, lines=lines, seconds=time.perf_counter() - started)


def entry_points(path: Path, words_file: Path, words: list[str], forced: bool) -> dict:
    import topicdp
    from topicdp.corpus import user_selected

    anyway = {"release_anyway": True} if forced else {}
    flag = ["--release-anyway"] if forced else []
    selected = sorted({r["user"] for r in records(path) if user_selected(r["user"], FRACTION)})
    common = dict(OPTIONS, user_fraction=FRACTION, **anyway)
    return {
        "topicdp privatize (the plan's rule)": lambda: command(path, words_file, *flag),
        "topicdp privatize --mechanism dp-vem": lambda: command(path, words_file, "--mechanism", "dp-vem", *flag),
        "topicdp.release(...)": lambda: python(lambda lines: topicdp.release(
            str(path), **common, vocabulary=str(words_file), seed=0, echo=lines.append)),
        "DPVariationalLDA(...).fit(path)": lambda: python(lambda lines: topicdp.DPVariationalLDA(
            **common, vocabulary=str(words_file), random_state=0).fit(str(path)).release_),
        "DPVariationalLDA(...).fit(Corpus)": lambda: python(lambda lines: topicdp.DPVariationalLDA(
            **OPTIONS, **anyway, random_state=0).fit(topicdp.Corpus.from_jsonl(
                str(path), users=selected, vocabulary=words)).release_),
    }


def _figures(result: dict) -> str:
    """The refusal's sentence in the command's words (``--release-anyway``), or the forecast line of a release."""
    from topicdp._argparse import cli_words

    if result["code"] == 2:
        return cli_words(result["last"]).removeprefix("topicdp: error: ")
    return next((ln.split("forecast ", 1)[1] for ln in result["lines"] if "forecast dp-vem" in ln), "")


def _plan(result: dict) -> tuple[str, str]:
    """The plan's DP count of the users and dp-vem's forecast figures, as the entry point printed them."""
    import re

    count = next((m.group(1) for ln in result["lines"] if "plan: " in ln
                  for m in [re.search(r"about ([\d,.e+]+ users)", ln)] if m), "")
    forecast = next((" ".join(ln.split("forecast dp-vem", 1)[1].split()) for ln in result["lines"]
                     if "forecast dp-vem" in ln), "")
    return count, forecast


def _digest(matrix) -> str:
    import numpy as np

    return "" if matrix is None else hashlib.sha256(np.asarray(matrix, dtype=np.float64).tobytes()).hexdigest()[:16]


def table(results: dict, forced: bool) -> list[str]:
    last = "topic-word SHA-256 (first 16)" if forced else "its last line (in the command's words)"
    out = [f"| entry point | exit | seconds | DP count | dp-vem forecast | {last} |", "|---|---|---|---|---|---|"]
    for name, r in results.items():
        shown = _digest(r["matrix"]) if forced else _figures(r).replace("|", "\\|")
        count, forecast = _plan(r)
        out.append(f"| {name} | {r['code']} | {r['seconds']:.0f} | {count} | {forecast} | {shown} |")
    return out


def main() -> int:
    global FRACTION
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user-fraction", type=float, default=0.25)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    FRACTION = args.user_fraction
    path = nearest(BLOGS)
    if not available(path):
        print(f"skipped: {path} is absent")
        return 0
    scratch = Path(tempfile.mkdtemp())
    words = public_words(path, FRACTION, scratch / "public_words.txt")
    report = ["# The Python entry points refuse and release as the command does", "",
              f"Command: `{' '.join(['python', *sys.argv])}` (from the repository root, "
              "`OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1`).", "", SETTING, ""]
    for forced in (False, True):
        results = {name: run() for name, run in entry_points(path, scratch / "public_words.txt", words,
                                                            forced).items()}
        for name, r in results.items():
            print(f"{'forced' if forced else 'asked'} | {name}: exit {r['code']}, {r['seconds']:.0f} s", flush=True)
        report += ["## " + ("Forced (`--release-anyway`, `release_anyway=True`)" if forced else "As asked"), "",
                   *table(results, forced), ""]
        if not forced:
            report += ["Identical refusal sentences: " + str(len({_figures(r) for r in results.values()}) == 1)
                       + "; identical count and forecast: " + str(len({_plan(r) for r in results.values()}) == 1), ""]
        else:
            report += ["Identical matrices: " + str(len({_digest(r["matrix"]) for r in results.values()}) == 1), ""]
    text = "\n".join(report)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


FRACTION = 0.25

if __name__ == "__main__":
    raise SystemExit(main())
