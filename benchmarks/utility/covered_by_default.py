"""Covered by default on the command line: a random-DP release with a public reference P and no word list, beside the
same command given P's 2,000 words explicitly.

The blog corpus is split as in ``wrap_your_model.py`` (a hash of the user id: below 0.45 the private corpus, 0.45-0.5
held-out bloggers of the private side, 0.5 and above the public half P). Two commands, as a user types them:

    topicdp privatize private.jsonl.gz --guarantee random-dp --model gensim-lda --reference public.jsonl.gz \\
        --unit user --max-docs-per-user 20 --topics 10 --epsilon 3 --max-features 2000 [--vocabulary p_words.txt]

the first with no word list (the columns are then P's own words, built by the command: public and free), the
second with the 2,000 most frequent words of P written by the user (``Corpus.from_jsonl(P, max_features=2000)``).
Each release's published fields and their statuses are read from its file; its top-10 lists are scored on the
held-out bloggers against the owner's non-private LDA on an ordinary vocabulary (gensim LDA, 5 passes, the
private texts' own 5,000 most frequent words, min_df 5, max_df 0.5; seeds 0-2, each measure the median over them):
NPMI and contrast relative to the LDA's, diversity, matched top-10 overlap (``wrap_your_model.score_on_heldout``).

Run (the sampler's sizing is an option; both commands use the same)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/covered_by_default.py --sizing exchangeable --gamma 0.1 \\
        --out docs/results/covered_by_default.json

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups

from _data import SHARED as DATA  # noqa: E402


def top_lists(release: dict) -> list[list[str]]:
    import numpy as np

    words = release["vocabulary"]
    return [[words[j] for j in np.argsort(-np.asarray(row), kind="stable")[:10]] for row in release["topic_word"]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizing", choices=("lambert-w", "exchangeable"), default="exchangeable")
    parser.add_argument("--gamma", type=float, default=0.1)
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--fraction", type=float, default=1.0, help="fraction of each side's users (default 1)")
    parser.add_argument("--out", default="docs/results/covered_by_default.json")
    args = parser.parse_args(argv)
    path = DATA / "blogs" / "blogs.jsonl.gz"
    if not path.exists():
        print(f"skipped: {path} not found")
        return 0
    from utility.wrap_your_model import owner_ldas, score_on_heldout, split, write

    from topicdp.cli import main as topicdp
    from topicdp.corpus import Corpus
    from topicdp.private_release import published_paths, status_of

    parts = split(path, args.fraction)
    runs: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as scratch:
        os.chmod(scratch, 0o700)  # private texts
        here = Path(scratch)
        write(parts["private"], here / "private.jsonl.gz")
        write(parts["public"], here / "public.jsonl.gz")
        words = Corpus.from_jsonl(str(here / "public.jsonl.gz"), max_features=2000).vocabulary
        (here / "p_words.txt").write_text("\n".join(words) + "\n")
        command = ["privatize", str(here / "private.jsonl.gz"), "--guarantee", "random-dp", "--model", "gensim-lda",
                   "--reference", str(here / "public.jsonl.gz"), "--unit", "user", "--max-docs-per-user", "20",
                   "--topics", "10", "--epsilon", "3", "--max-features", "2000", "--sizing", args.sizing,
                   "--gamma", str(args.gamma), "--n-jobs", str(args.n_jobs)]
        for name, extra in (("no word list", []), ("P's words given", ["--vocabulary", str(here / "p_words.txt")])):
            out = here / f"{len(runs)}.json"
            start = time.perf_counter()
            written = ["--out", str(out), "--diagnostics", str(here / f"{len(runs)}.diag")]
            code = topicdp([*command, *extra, *written])
            refused = code != 0
            if refused:  # a refusal: forced, so that the decision can be checked against the release
                code = topicdp([*command, *extra, *written, "--release-anyway"])
            release = json.loads(out.read_text()) if code == 0 else None
            runs[name] = {"refused": refused, "exit": code,
                          "seconds": time.perf_counter() - start, "release": release}
    result: dict = {"fraction": args.fraction, "sizing": args.sizing, "gamma": args.gamma, "runs": {}}
    lists = {name: top_lists(run["release"]) for name, run in runs.items() if run["release"] is not None}
    ldas = owner_ldas(parts, 3)
    for name, run in runs.items():
        entry = {"refused (then forced)": run["refused"], "exit": run["exit"], "seconds": run["seconds"]}
        if run["release"] is not None:
            report = run["release"]["report"]
            statuses = {"format": "public", "top_words": "post-processing", **report["published"]}
            entry.update(guarantee=report["guarantee"], n_words=len(run["release"]["vocabulary"]),
                         statuses=sorted({status_of(p, statuses).split(":")[0] for p in published_paths(run["release"])}),
                         vocabulary_status=statuses["vocabulary"],
                         scores_vs_ordinary_lda=score_on_heldout(parts, lists[name], ldas),
                         top_words=[" ".join(row) for row in lists[name]])
        result["runs"][name] = entry
    if len(lists) == 2:
        a, b = (set(runs[n]["release"]["vocabulary"]) for n in runs)
        result["vocabulary_jaccard"] = len(a & b) / len(a | b)
    print(json.dumps({k: v for k, v in result.items()}, indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
