"""DP vocabulary selection on real corpora: how many words pass, and how much of the usual vocabulary.

    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/utility/vocabulary_blogs.py [--corpora blogs,enron_sent]
        [--epsilons 0.3,1,3] [--delta 1e-7] [--ks 50,100,300] [--units user,document] [--seeds 5] [--out FILE] [--data DIR]

For every corpus, unit, k and epsilon: the number of words ``topicdp.vocabulary.select_vocabulary``
releases (replace-one neighbours, the library's default; mean and range over ``--seeds`` noise draws),
and how many of the non-private top 2000 (``CountVectorizer`` limits ``max_features=2000, min_df=5,
max_df=0.5`` on the same texts, with topicdp's tokenisation) they cover. Also prints ``tau sqrt(k)``
(how many units a word needs when every unit holding it has k words; units with fewer words weigh more)
and the share of units with fewer than k distinct words.

Each corpus is tokenised once (about a minute of CPU for blogs): the per-unit top-k sets for every k come
from the same token counts, and the noisy threshold (steps 3-4 of the mechanism) is re-run per epsilon
and seed through the module's own ``_select``; ``tests/test_vocabulary.py`` checks that path against
``select_vocabulary``. Needs ../shared/data (skips otherwise). Seeded noise: these are measurements,
not releases.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from topicdp.corpus import make_vectorizer
from topicdp.vocabulary import _select, calibrate_selection, unit_top_words, word_set_counts

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import SHARED as DATA  # noqa: E402
FILES = {"blogs": "blogs/blogs.jsonl.gz", "enron_sent": "enron_sent/enron_sent.jsonl.gz"}


def read(path: Path):
    texts, users = [], []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                texts.append(row["text"])
                users.append(row["user"])
    return texts, users


def unit_totals(texts, users, ks):
    """{unit: {k: {word: total T(w)}}} (each unit adds 1/sqrt(|S_u|) to its words) in one tokenisation."""
    analyze = make_vectorizer().build_analyzer()
    per_user: dict = {}
    doc: dict = {k: {} for k in ks}
    doc_short = {k: 0 for k in ks}
    n_docs = 0
    for text, user in zip(texts, users):
        c = Counter(analyze(text))
        if not c:
            continue
        n_docs += 1
        per_user.setdefault(user, Counter()).update(c)
        for k in ks:
            doc[k][n_docs] = unit_top_words(c, k)
            doc_short[k] += len(c) < k
    user: dict = {k: {} for k in ks}
    user_short = {k: 0 for k in ks}
    for u, c in per_user.items():
        for k in ks:
            user[k][u] = unit_top_words(c, k)
            user_short[k] += len(c) < k
    return ({"user": {k: word_set_counts(v).totals() for k, v in user.items()},
             "document": {k: word_set_counts(v).totals() for k, v in doc.items()}},
            {"user": {k: v / len(per_user) for k, v in user_short.items()},
             "document": {k: v / n_docs for k, v in doc_short.items()}})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", default="blogs,enron_sent")
    ap.add_argument("--epsilons", default="0.3,1,3")
    ap.add_argument("--delta", type=float, default=1e-7)
    ap.add_argument("--ks", default="50,100,300")
    ap.add_argument("--units", default="user,document")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--top", type=int, default=2000, help="size of the non-private reference vocabulary")
    ap.add_argument("--out", default=None, help="write the rows as JSON here")
    ap.add_argument("--data", type=Path, default=DATA, help="folder with blogs/ and enron_sent/ (default ../shared/data)")
    args = ap.parse_args()
    if not args.data.exists():
        print(f"skipped: {args.data} is absent")
        return 0
    epsilons = [float(x) for x in args.epsilons.split(",")]
    ks = [int(x) for x in args.ks.split(",")]
    units = args.units.split(",")
    rows = []
    for name in args.corpora.split(","):
        start = time.perf_counter()
        texts, users = read(args.data / FILES[name])
        ref = make_vectorizer(min_df=5, max_df=0.5, max_features=args.top)
        ref.fit(texts)
        top = set(ref.get_feature_names_out())
        totals, short = unit_totals(texts, users, ks)
        print(f"\n{name}: {len(texts)} documents, {len(set(users))} users; non-private top {len(top)} "
              f"(min_df=5, max_df=0.5); tokenised in {time.perf_counter() - start:.0f} s", flush=True)
        print("| unit | k | eps | tau sqrt(k) | units with < k words | words selected (mean [min, max]) "
              f"| of top {len(top)} covered (mean) | selected outside top {len(top)} (mean) |")
        print("|---|---|---|---|---|---|---|---|")
        for unit in units:
            for k in ks:
                for eps in epsilons:
                    sigma, tau = calibrate_selection(eps, args.delta, k, "replace-one")
                    sizes, covered, outside = [], [], []
                    for seed in range(args.seeds):
                        words = set(_select(totals[unit][k], sigma, tau, None, np.random.default_rng(seed)))
                        sizes.append(len(words))
                        covered.append(len(words & top))
                        outside.append(len(words - top))
                    row = dict(corpus=name, unit=unit, k=k, epsilon=eps, delta=args.delta, sigma=sigma, tau=tau,
                               tau_in_units=tau * math.sqrt(k), share_units_short=short[unit][k],
                               selected_mean=float(np.mean(sizes)), selected_min=min(sizes),
                               selected_max=max(sizes), covered_mean=float(np.mean(covered)),
                               outside_mean=float(np.mean(outside)), top=len(top), seeds=args.seeds)
                    rows.append(row)
                    print(f"| {unit} | {k} | {eps:g} | {row['tau_in_units']:.0f} | {short[unit][k]:.0%} "
                          f"| {row['selected_mean']:.0f} [{min(sizes)}, {max(sizes)}] "
                          f"| {row['covered_mean']:.0f} ({row['covered_mean'] / len(top):.0%}) "
                          f"| {row['outside_mean']:.0f} |", flush=True)
        del texts, users, totals
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
        print(f"rows written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
