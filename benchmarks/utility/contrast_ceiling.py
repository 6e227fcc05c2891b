"""What NPMI contrast topics made only of a DP vocabulary's words can reach, against the owner's ordinary vocabulary.

A user-level DP vocabulary passes the words the most users hold (the weighted set union ranks words by
``T(w) = sum_u 1[w in S_u] / sqrt(|S_u|)``, ``S_u`` a user's 300 most frequent words), so a release on it is made of
the V' words of largest ``T``, whatever the noise. This measures, without any noise, the contrast of a non-private
LDA fitted on those V' words over the contrast of the owner's LDA on an ordinary 2,000-word vocabulary (min_df 5,
max_df 0.5), both scored on held-out bloggers: the ceiling that the plan's contrast forecast multiplies by the noise
factor q^2 (:func:`topicdp.forecast.contrast_ceiling`).

Each folder separately (``--folder blogs`` or ``blogs-more``), a hash of the id (salt ``"ceiling"``) holds out about
600 bloggers; public subsamples of n bloggers (``--sizes``), at most 20 posts each, K = 10; each V' fitted with 3 LDA
seeds against 3 seeds of the ordinary LDA, every measure the median of the 9 pairs.

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/contrast_ceiling.py --folder blogs \
        --out docs/results/contrast_ceiling.jsonl
    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/contrast_ceiling.py --folder blogs-more \
        --out docs/results/contrast_ceiling.jsonl

Resumable (one JSON line per folder, size and V'). Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from _data import BLOGS, BLOGS_MORE, available, nearest, user_share  # noqa: E402
from utility.decision_validation import K, _hash, capped, ordinary_lda, score_lists, top_lists  # noqa: E402

FOLDERS = {"blogs": BLOGS, "blogs-more": BLOGS_MORE}
SIZES = (1000, 3000)
WORDS_KEPT = (15, 30, 60, 120, 250, 500, 1000, 2000)
SEEDS = (0, 1, 2)
HELD_SHARE = 0.12


def ranked_words(rows: list) -> list[str]:
    """The words by the weighted set union's total ``T(w)`` (largest first, ties by the word): the order in which a
    DP vocabulary of these users passes them."""
    from topicdp.vocabulary import _word_totals, unit_word_sets

    totals = _word_totals(unit_word_sets([t for t, _ in rows], [u for _, u in rows]))
    return sorted(totals, key=lambda w: (-totals[w], w))


def fit_lists(corpus, model: str, seed: int) -> list[list[str]]:
    """Top-10 lists of a noiseless fit: gensim's LDA (5 passes), or dp-vem's algorithm without its noise
    (:class:`topicdp.VariationalLDA`, user level, from a random start, as the release)."""
    from topicdp.variational import VariationalLDA
    from topicdp.topics import reference_lda

    if model == "lda":
        W = reference_lda(corpus, K, passes=5, random_state=seed)
    else:
        W = VariationalLDA(K, unit="user", random_state=seed).fit(corpus).topic_word_
    return top_lists(W, list(corpus.vocabulary))


def measure(rows: list, heldout, ordinary: list, words: list[str], model: str) -> dict:
    from topicdp.corpus import Corpus

    corpus = Corpus.from_texts([t for t, _ in rows], [u for _, u in rows], vocabulary=words)
    corpus = corpus.subset_documents(np.flatnonzero(np.asarray(corpus.X.sum(axis=1)).ravel() > 0))
    ours = [fit_lists(corpus, model, seed) for seed in SEEDS]
    scores = [score_lists(mine, lda, heldout) for mine in ours for lda in ordinary]
    return {key: float(np.median([s[key] for s in scores])) for key in ("contrast", "npmi", "diversity", "overlap")}


def table(path: Path) -> str:
    """The measured ceilings side by side (a column per folder and size), each against the library's calibrated
    :func:`topicdp.forecast.contrast_ceiling` (ratio measured / calibrated)."""
    from topicdp.forecast import contrast_ceiling

    records = [json.loads(line) for line in path.open()]
    for r in records:
        r.setdefault("model", "lda")
    columns = sorted({(r["model"], r["folder"], r["n"]) for r in records})
    by = {(r["model"], r["folder"], r["n"], r["words"]): r for r in records}
    words = sorted({r["words"] for r in records})
    lines = ["| V' | " + " | ".join(f"{m} {f} {n:,}" for m, f, n in columns) + " | calibrated lda / vem |",
             "|---:|" + "---:|" * (len(columns) + 1)]
    for V in words:
        cells = []
        for m, f, n in columns:
            r = by.get((m, f, n, V))
            cells.append("-" if r is None else f"{r['contrast']:.3f} ({r['contrast'] / contrast_ceiling(V, m):.2f})")
        lines.append(f"| {V:,} | " + " | ".join(cells) + f" | {contrast_ceiling(V, 'lda'):.3f} / "
                     f"{contrast_ceiling(V, 'vem'):.3f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    from topicdp.corpus import Corpus

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--folder", choices=sorted(FOLDERS))
    ap.add_argument("--table", action="store_true", help="print the measured ceilings against the calibrated ones")
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--words", type=int, nargs="+", default=list(WORDS_KEPT))
    ap.add_argument("--model", choices=("lda", "vem"), default="lda")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    if args.table:
        print(table(Path(args.out)), end="")
        return 0
    if args.folder is None:
        ap.error("--folder is required unless --table")
    path = nearest(FOLDERS[args.folder])
    if not available(path):
        print(f"skipped: the {args.folder} corpus is absent")
        return 0
    from topicdp.corpus import read_jsonl_records

    out = Path(args.out)
    done = {(r["folder"], r["n"], r["words"], r.get("model", "lda")) for r in map(json.loads, out.open())} if out.exists() else set()
    pool, held = [], []
    for text, user in read_jsonl_records(path):
        (held if user_share(user, "ceiling") < HELD_SHARE else pool).append((text, user))
    users = sorted(dict.fromkeys(u for _, u in pool), key=lambda u: _hash("ceiling-size", u))
    for n in args.sizes:
        rows = capped(pool, set(users[:n]))
        ordinary_fits = [ordinary_lda(rows, seed) for seed in SEEDS]
        ordinary = [top_lists(W, vocabulary) for W, vocabulary in ordinary_fits]
        ranked = ranked_words(rows)
        scored = sorted(set(ranked[:max(args.words)]) | {w for lists in ordinary for row in lists for w in row})
        heldout = Corpus.from_texts([t for t, _ in held], [u for _, u in held], vocabulary=scored)
        for V in args.words:
            if (args.folder, n, V, args.model) in done or V > len(ranked):
                continue
            record = {"folder": args.folder, "n": n, "words": V, "model": args.model,
                      "held": len({u for _, u in held}), **measure(rows, heldout, ordinary, ranked[:V], args.model)}
            with out.open("a") as f:
                f.write(json.dumps(record) + "\n")
            print(json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
