"""What a data owner sees: each step a new user took with their own data, as typed, on the code in ``--code``.

The steps of a trial by a new user (fresh clone, README, ``--help``): their posts in a Parquet or CSV export, a
database or a DataFrame; dates written "14,May,2004"; the wrap recipe from Python; ``evaluate`` on held-out
bloggers; ``compare --quick``; a refused user-level release; a forced release and its view; a series over time and
its view; a missing file and a misnamed field; the random-DP road. Blog posts cut by a hash of the user id into a
public third P and private users (``_data.write_users``). Each step prints its exit status, its time and its
output (both streams, as a terminal shows them); ``checks`` lines are what the harness reads of the files.

Run (a worktree of the older commit for the "before" column)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/owners/owner_transcripts.py --out after.md
    OPENBLAS_NUM_THREADS=1 python benchmarks/owners/owner_transcripts.py --code BEFORE --out before.md

About 15 minutes on 2 cores (``--only NAME`` runs one step). Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import BLOGS, ROOT, available, records, write_users  # noqa: E402

SALT = "owner-trial"
#: (name, file, share of the users under SALT): P the public third, the private users cut from the rest
SPLITS = (("P", "P.jsonl.gz", 0.0, 0.3), ("small", "small.jsonl.gz", 0.34, 0.42),
          ("heldout", "heldout.jsonl.gz", 0.94, 1.0), ("private", "private.jsonl.gz", 0.34, 0.66))
#: a document-level release on P's 2,000 most frequent words (no simulation: seconds, not minutes)
DOC = ["--unit", "document", "--epsilon", "3", "--vocabulary", "public_words.txt", "--seed", "0", "--n-jobs", "2"]

#: (name, what the user did, [argv after ``topicdp``, or ("python", code)]); the files are in the working directory
STEPS = (
    ("sources", "their posts in a Parquet or CSV export, a database, a DataFrame",
     [["privatize", "small.jsonl.gz", *DOC, "--out", "r_jsonl.json"],
      ["privatize", "small.parquet", *DOC, "--out", "r_parquet.json"],
      ["privatize", "small.csv", *DOC, "--out", "r_csv.json"],
      ["privatize", "sqlite:///small.db", "--query", "SELECT author AS user, body AS text FROM posts", *DOC,
       "--out", "r_sqlite.json"],
      ("python", "import pandas, topicdp; df = pandas.read_parquet('small.parquet'); "
                 "topicdp.release(df, unit='document', epsilon=3, vocabulary='public_words.txt', seed=0, n_jobs=2, "
                 "out='r_frame.json')")]),
    ("dates", "the dates read \"14,May,2004\"",
     [["ledger", "create", "d.ledger", "--epsilon", "20", "--delta", "1e-5", "--unit", "document",
       "--neighbours", "add-remove"],
      ["privatize", "named_dates.jsonl.gz", *DOC, "--ledger", "d.ledger", "--period", "month",
       "--periods", "2004-05:2004-06", "--out", "d.json", "--html", "d.html"],
      ["privatize", "named_dates.jsonl.gz", *DOC, "--ledger", "d.ledger", "--period", "month",
       "--periods", "2004-05:2004-06", "--date-format", "%d,%B,%Y", "--out", "d.json", "--html", "d.html"],
      ("html", "d.html")]),
    ("notebook", "the wrap recipe from Python (as in a notebook)",
     [("python", "from sklearn.decomposition import LatentDirichletAllocation\n"
                 "from topicdp import Corpus, TopicDP\nfrom topicdp.samplers import SensitivitySampling\n"
                 "P = Corpus.from_jsonl('P.jsonl.gz', max_features=1000)\n"
                 "corpus = Corpus.from_jsonl('small.jsonl.gz', vocabulary=P.vocabulary).bound(max_docs_per_user=20)\n"
                 "mine = LatentDirichletAllocation(n_components=5, random_state=0, max_iter=5)\n"
                 "dp = TopicDP(mine, epsilon=3.0, unit='user', sampling=SensitivitySampling(distribution=P, "
                 "gamma=0.1, sizing='exchangeable'))\nrelease = dp.fit(corpus).release_\n"
                 "print('displays itself in a notebook:', hasattr(release, '_repr_html_'))\n"
                 "print('to scikit-learn:', hasattr(release, 'to_sklearn'))")]),
    ("evaluate", "topicdp evaluate on held-out private bloggers",
     [["privatize", "small.jsonl.gz", *DOC, "--topics", "10", "--out", "e.json"],
      ["evaluate", "e.json", "heldout.jsonl.gz", "--epsilon", "1", "--reference", "P.jsonl.gz", "--seed", "0"]]),
    ("compare", "topicdp compare --quick to choose a road",
     [["compare", "private.jsonl.gz", "--reference", "P.jsonl.gz", "--out", "cmp", "--quick"],
      ("show", "cmp/table.md")]),
    ("refused", "a user-level release refused with a public reference",
     [["privatize", "private.jsonl.gz", "--unit", "user", "--epsilon", "3", "--reference", "P.jsonl.gz",
       "--seed", "0", "--n-jobs", "2", "--out", "u.json"]]),
    ("forced", "a release forced with --release-anyway, and its view",
     [["privatize", "small.jsonl.gz", "--unit", "user", "--epsilon", "1", "--vocabulary", "public_words.txt",
       "--seed", "0", "--n-jobs", "2", "--release-anyway", "--out", "f.json", "--html", "f.html"],
      ("html", "f.html")]),
    ("mistakes", "a missing vocabulary file; a file whose user field is author",
     [["privatize", "small.jsonl.gz", "--vocabulary", "words.txt", "--out", "m.json"],
      ["privatize", "author.jsonl.gz", "--reference", "P.jsonl.gz", "--out", "m.json"]]),
    ("random-dp", "the random-DP road on the private bloggers",
     [["privatize", "private.jsonl.gz", "--guarantee", "random-dp", "--reference", "P.jsonl.gz", "--epsilon", "3",
       "--seed", "0", "--n-jobs", "2", "--out", "rd.json"]]),
)


#: steps a user would give up on: stopped after this many seconds (the random-DP road's full sample takes hours)
TIMEOUTS = {"random-dp": 420}


def prepare(work: Path) -> None:
    """The cuts of blogs, and the same small corpus as Parquet, CSV, SQLite, with named dates, with ``author``."""
    import pandas as pd

    for _, name, low, high in SPLITS:
        if not (work / name).exists():
            write_users(BLOGS, work / name, SALT, low, high)
    if not (work / "public_words.txt").exists():  # P's 2,000 words in the most documents: a public word list
        from collections import Counter

        from topicdp.corpus import tokenize

        df = Counter(w for tokens in tokenize([r["text"] for r in records(work / "P.jsonl.gz")]) for w in set(tokens))
        (work / "public_words.txt").write_text("\n".join(w for w, _ in df.most_common(2000)) + "\n")
    rows = list(records(work / "small.jsonl.gz"))
    frame = pd.DataFrame({"user": [r["user"] for r in rows], "text": [r["text"] for r in rows],
                          "date": [r["date"] for r in rows]})
    frame.to_parquet(work / "small.parquet", index=False)
    frame.to_csv(work / "small.csv", index=False)
    with sqlite3.connect(work / "small.db") as db:
        db.execute("CREATE TABLE IF NOT EXISTS posts (author TEXT, body TEXT)")
        db.execute("DELETE FROM posts")
        db.executemany("INSERT INTO posts VALUES (?, ?)", zip(frame.user, frame.text))
    _rewrite(work, rows, "named_dates.jsonl.gz", lambda r: {**r, "date": _named(r.get("date"))})
    _rewrite(work, rows, "author.jsonl.gz", lambda r: {"author" if k == "user" else k: v for k, v in r.items()})


def _named(iso: str | None) -> str | None:
    """2004-05-14 as the blog corpus' original files write it: 14,May,2004 (a record without a date keeps none)."""
    import datetime

    if not iso:
        return iso
    d = datetime.date.fromisoformat(iso)
    return f"{d.day},{d.strftime('%B')},{d.year}"


def _rewrite(work: Path, rows: list, name: str, change) -> None:
    import gzip

    with gzip.open(work / name, "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(change(r)) + "\n")


def run_step(code: Path, step, work: Path, timeout: float = 3600) -> tuple[int | None, float, list[str]]:
    """(exit status, seconds, output lines) of one command, both streams in the order a terminal shows them; a
    command still running after ``timeout`` seconds is stopped, its output so far kept (exit status None)."""
    env = {**os.environ, "PYTHONPATH": str(code), "OPENBLAS_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1",
           "TOPICDP_PROGRESS": "1"}
    if isinstance(step, tuple) and step[0] in ("show", "html"):
        return None, 0.0, _read(work / step[1], step[0])
    argv = ([sys.executable, "-c", step[1]] if isinstance(step, tuple) else
            [sys.executable, "-m", "topicdp.cli", *step])
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=work,
                              timeout=timeout)
    except subprocess.TimeoutExpired as stopped:  # what a user saw before giving up on it
        said = stopped.stdout.decode() if isinstance(stopped.stdout, bytes) else (stopped.stdout or "")
        return None, time.perf_counter() - t0, [*said.replace("\r", "\n").splitlines(),
                                                f"(stopped by the harness after {timeout:.0f} s)"]
    return proc.returncode, time.perf_counter() - t0, proc.stdout.replace("\r", "\n").splitlines()


def _read(path: Path, kind: str) -> list[str]:
    if not path.exists():
        return [f"({path.name} was not written)"]
    text = path.read_text(encoding="utf-8")
    if kind == "show":
        return text.splitlines()
    # what a reader of the page sees first: its visible text, tags and scripts removed
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", text, flags=re.S)
    visible = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)).strip()
    released = re.search(r'"sizes_released":\s*(true|false)', text)
    sized = "yes" if 'id="topic-size"' in text else "no"
    forced = "yes" if re.search(r"against the plan|released anyway|forced", visible, re.I) else "no"
    return [f"visible text (first 600 characters): {visible[:600]}",
            f"topic heading with a size: {sized}; sizes released (the page's data): "
            + (released.group(1) if released else "not said"),
            f"says the release was forced: {forced}",
            "period selector: " + ("yes" if "<select" in text else "no")]


def checks(name: str, work: Path) -> list[str]:
    """What the harness reads of the files a step wrote."""
    if name != "sources":
        return []
    out = []
    base = work / "r_jsonl.json"
    if not base.exists():
        return ["the JSON Lines release was not written"]
    ref = json.loads(base.read_text())["topic_word"]
    for kind in ("parquet", "csv", "sqlite", "frame"):
        path = work / f"r_{kind}.json"
        same = path.exists() and json.loads(path.read_text())["topic_word"] == ref
        out.append(f"{kind}: " + ("not written" if not path.exists() else
                                  "topic_word bit-identical to the JSON Lines release" if same else "DIFFERENT"))
    return out


def shown(step) -> str:
    if isinstance(step, tuple):
        return {"python": "python -c ...", "show": f"cat {step[1]}", "html": f"(read {step[1]})"}[step[0]]
    return "topicdp " + " ".join(a if " " not in a and a else repr(a) for a in step)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose topicdp runs")
    parser.add_argument("--work", type=Path, default=None, help="directory for the cuts (kept; default a temp dir)")
    parser.add_argument("--only", action="append", default=None, help="run only this step (repeatable)")
    parser.add_argument("--lines", type=int, default=40, help="lines of output kept per command")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if not available(BLOGS):
        print(f"skipped: {BLOGS} is absent")
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="owners-"))
    work.mkdir(parents=True, exist_ok=True)
    prepare(work)
    out = [f"# What a data owner sees ({args.code.resolve().name})", ""]
    for name, did, steps in STEPS:
        if args.only and name not in args.only:
            continue
        out += [f"## {name}: {did}", ""]
        for step in steps:
            status, seconds, lines = run_step(args.code.resolve(), step, work, TIMEOUTS.get(name, 3600))
            tail = (f"    # exit status {status}, {seconds:.0f} s" if status is not None else
                    f"    # stopped after {seconds:.0f} s" if seconds else "")
            out += [f"    {shown(step)}{tail}", "", "```", *lines[:args.lines],
                    *([f"... ({len(lines) - args.lines} more lines)"] if len(lines) > args.lines else []), "```", ""]
            print(f"{name}: {shown(step)[:80]} -> {status} ({seconds:.0f} s)", file=sys.stderr)
        out += [f"- {c}" for c in checks(name, work)] + [""]
    args.out.write_text("\n".join(out) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
