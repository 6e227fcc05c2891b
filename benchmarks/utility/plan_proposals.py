"""The plan's proposals checked by forcing: blogs at 1,000 to 2,000 private bloggers, user level, K = 10.

``split`` writes the files into ``--workdir`` (a temporary directory, never the repository) from ``../shared/data``:
``{data}_private.jsonl`` (the bloggers whose id hashes below 0.5 by the ``--user-fraction`` rule),
``{data}_reference.jsonl`` (hash in [0.5, 0.75): the public reference P, disjoint), ``{data}_heldout.jsonl`` (hash
>= 0.75: the scores, whole), the others each blogger's first 20 posts. A size is ``--user-fraction F`` on the private file (F 0.25:
about 1,000 of the 3,968 blogs' bloggers; 0.18 about 1,000 of blogs-more's 5,662).

``release`` (one JSON line per run, appended to ``--cache``): for each cell (fraction, epsilon, with or without P)
the owner's command (``topicdp privatize private --user-fraction F --max-docs-per-user 20 --topics 10 --epsilon E
[--reference P] --seed 0``). Where it is refused with a proposal, the proposed command is run as printed
(``topicdp.cli.main``, seeds 0..``--seeds``-1 by its ``--seed``), and the original is forced (``--release-anyway``,
seed 0) to show whether the refusal was right. A line keeps the top-10 lists, the printed refusal and the time.

``table``: each released line scored on the held-out bloggers against the owner's non-private gensim LDA (5 passes)
on an ordinary 2,000-word vocabulary of the same private bloggers (``decision_validation.ordinary_lda``,
``score_lists``: NPMI and contrast as ratios, diversity, matched overlap; the median over ``--lda-seeds`` fits),
judged on :data:`topicdp.forecast.TARGETS` at the user level, or the document level for a document-level proposal.

    python benchmarks/utility/plan_proposals.py split --data blogs   # and --data more
    python benchmarks/utility/plan_proposals.py release --data blogs --fractions 0.25 0.5 --epsilons 3 10
    python benchmarks/utility/plan_proposals.py table --data blogs --out docs/results/plan_proposals_table.md
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shlex
import sys
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups

import numpy as np  # noqa: E402

from _data import SHARED as DATA  # noqa: E402
from utility.decision_validation import TARGETS, ordinary_lda, score_lists  # noqa: E402


def _run(words: list[str], out: Path) -> dict:
    """``topicdp`` with ``words`` (its stderr kept): the release's top-10 lists, or the refusal."""
    from topicdp import PrivateRelease
    from topicdp.cli import main

    err, start = io.StringIO(), time.perf_counter()
    with redirect_stderr(err), redirect_stdout(err):
        code = main(words + ["--out", str(out), "--overwrite"])
    row = {"command": "topicdp " + shlex.join(words), "seconds": round(time.perf_counter() - start, 1)}
    text = [line for line in err.getvalue().splitlines() if "passes" not in line]
    timed = [line for line in text if "forecast on public facts in" in line]
    if timed:  # the plan's added time: the configurations forecast before the refusal
        row["proposal_seconds"] = float(timed[-1].rsplit(" in ", 1)[1].split(" s")[0])
    if code != 0:
        row["refusal"] = next((line for line in text if line.startswith("topicdp: error")), text[-1:])
        return row
    release = PrivateRelease.load(out)
    row["top"] = [[w for w, _ in topic] for topic in release.top_words(10)]
    row["proposal_lines"] = [line for line in text if line.startswith(("Proposed", "No configuration"))]
    return row


def _proposed(refusal: str) -> list[str] | None:
    head = "Run (a new release, charged as any): " if "Run (a new" in refusal else "Run: "
    if head + "topicdp " not in refusal:
        return None
    return shlex.split(refusal.split(head, 1)[1].split(" (from Python:", 1)[0])[1:]


def _with_seed(words: list[str], seed: int) -> list[str]:
    out = list(words)
    if "--seed" in out:
        out[out.index("--seed") + 1] = str(seed)
        return out
    return out + ["--seed", str(seed)]


#: the data sets' files (``--data blogs`` or ``more``)
SOURCES = {"blogs": "blogs", "more": "blogs-more"}


def split(args) -> int:
    """Write ``{data}_private.jsonl`` (hash < 0.5), ``{data}_reference.jsonl`` ([0.5, 0.75)) and
    ``{data}_heldout.jsonl`` (>= 0.75) into ``--workdir``: each blogger's first 20 posts (in the file's order), by
    the ``--user-fraction`` hash (:func:`topicdp.corpus.user_selected`)."""
    import gzip

    from topicdp.corpus import user_selected

    source = Path(args.source) / SOURCES[args.data] / "blogs.jsonl.gz"
    if not source.exists():
        print(f"skipped: {source} is absent")
        return 0
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    files = {name: (work / f"{args.data}_{name}.jsonl").open("w") for name in ("private", "reference", "heldout")}
    seen: dict = {}
    with gzip.open(source, "rt") as lines:
        for line in lines:
            record = json.loads(line)
            user = record["user"]
            seen[user] = seen.get(user, 0) + 1
            name = ("private" if user_selected(user, 0.5) else "reference" if user_selected(user, 0.75)
                    else "heldout")
            if seen[user] > 20 and name != "heldout":  # the scores read the held-out bloggers whole
                continue
            files[name].write(json.dumps({"user": user, "text": record["text"]}) + "\n")
    for f in files.values():
        f.close()
    return 0


def releases(args) -> int:
    work, cache = Path(args.workdir), Path(args.cache)
    private, reference = work / f"{args.data}_private.jsonl", work / f"{args.data}_reference.jsonl"
    for fraction in args.fractions:
        for epsilon in args.epsilons:
            for ref in args.references:
                words = ["privatize", str(private), "--user-fraction", f"{fraction:g}", "--max-docs-per-user", "20",
                         "--topics", "10", "--epsilon", f"{epsilon:g}", "--seed", "0", "--n-jobs", "1"]
                if ref == "yes":
                    words += ["--reference", str(reference)]
                cell = {"data": args.data, "fraction": fraction, "epsilon": epsilon, "reference": ref}
                rows = [dict(cell, role="original", **_run(words, work / "release.json"))]
                refusal = rows[0].get("refusal")
                if refusal:
                    proposed = _proposed(refusal)
                    for seed in range(args.seeds if proposed else 0):
                        rows.append(dict(cell, role="proposed", seed=seed,
                                         **_run(_with_seed(proposed, seed), work / "release.json")))
                    rows.append(dict(cell, role="forced original",
                                     **_run(words + ["--release-anyway"], work / "release.json")))
                with cache.open("a") as f:
                    for row in rows:
                        f.write(json.dumps(row) + "\n")
                        print(json.dumps({k: v for k, v in row.items() if k != "top"})[:600], flush=True)
    return 0


def table(args) -> int:
    from topicdp.corpus import Corpus

    work = Path(args.workdir)
    rows = [json.loads(line) for line in Path(args.cache).open()]
    rows = [r for r in rows if r["data"] == args.data]
    pairs = [json.loads(line) for line in (work / f"{args.data}_private.jsonl").open()]
    held = [json.loads(line) for line in (work / f"{args.data}_heldout.jsonl").open()]
    from topicdp.corpus import user_selected

    ldas = {}
    for fraction in sorted({r["fraction"] for r in rows}):
        own = [(p["text"], p["user"]) for p in pairs if user_selected(p["user"], fraction)]
        fits = [ordinary_lda(own, seed) for seed in range(args.lda_seeds)]
        ldas[fraction] = [[[v[j] for j in np.argsort(-row, kind="stable")[:10]] for row in W] for W, v in fits]
    words = sorted({w for r in rows for row in r.get("top", []) for w in row}
                   | {w for fits in ldas.values() for lists in fits for row in lists for w in row})
    heldout = Corpus.from_texts([h["text"] for h in held], [h["user"] for h in held], vocabulary=words)
    lines = ["| data | bloggers (fraction) | epsilon | P | run | unit | NPMI x | contrast x | diversity | overlap | "
             "meets the targets | seconds |", "|---|---|---:|---|---|---|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        unit = "document" if "--unit document" in r["command"] else "user"
        head = (f"| {r['data']} | {r['fraction']:g} | {r['epsilon']:g} | {r['reference']} | {r['role']}"
                + (f" (seed {r['seed']})" if "seed" in r else "") + f" | {unit} |")
        if "top" not in r:
            lines.append(head + f" refused | | | | | {r['seconds']} |")
            continue
        scores = [score_lists(r["top"], lda, heldout) for lda in ldas[r["fraction"]]]
        s = {k: float(np.median([x[k] for x in scores])) for k in scores[0]}
        ok = all(s[k] >= v for k, v in TARGETS[unit].items())
        lines.append(head + f" {s['npmi']:.2f} | {s['contrast']:.2f} | {s['diversity']:.2f} | {s['overlap']:.2f} | "
                     f"{'yes' if ok else 'no'} | {r['seconds']} |")
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=("split", "release", "table"))
    ap.add_argument("--data", default="blogs")
    ap.add_argument("--workdir", default="/tmp/propose")
    ap.add_argument("--source", default=str(DATA), help="split: the shared data directory (default %(default)s)")
    ap.add_argument("--cache", default="/tmp/propose/plan_proposals.jsonl")
    ap.add_argument("--fractions", type=float, nargs="+", default=[0.25, 0.5])
    ap.add_argument("--epsilons", type=float, nargs="+", default=[3.0, 10.0])
    ap.add_argument("--references", nargs="+", default=["yes", "no"])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--lda-seeds", type=int, default=2)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    if args.step == "split":
        return split(args)
    if not (Path(args.workdir) / f"{args.data}_private.jsonl").exists():
        print(f"skipped: {args.workdir}/{args.data}_private.jsonl is absent (see the module docstring)")
        return 0
    return releases(args) if args.step == "release" else table(args)


if __name__ == "__main__":
    sys.exit(main())
