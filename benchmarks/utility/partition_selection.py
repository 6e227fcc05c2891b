"""Words kept by the DP vocabulary's selection methods, and by the per-user word cap, on 1,000 to 9,000 bloggers.

    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/utility/partition_selection.py \\
        --out docs/results/vocabulary_selection.md

(from a git worktree, prefix ``PYTHONPATH=.`` so that its ``topicdp`` is imported).

The bloggers of ``blogs/`` and ``blogs-more/`` together (9,630, disjoint samples of one corpus) are ranked by
:func:`topicdp.corpus.user_hash` (the hash behind ``--user-fraction``); a size N takes the first N, so the sizes are
nested. Each user's words are tokenised as :func:`topicdp.vocabulary.unit_word_sets` does (checked on three users)
and ranked by count, ties by code point; a cap k keeps the first k (the selection's own step 1).

The budget: for each total epsilon (delta 1e-6 total) the selection gets the vocabulary's share as the pipeline
splits it (:func:`topicdp.pipeline.plan.split_budget`: 20% of epsilon, half of delta), at the user level with the
request's default neighbour relation (add/remove: the number of users not stated). Three tables:

1. words kept at k = 300 by ``method="weighted-gaussian"`` (today's) and ``"two-round"``, each a library call
   (:func:`topicdp.vocabulary.select_vocabulary_from_counts`) with seeds 0, 1, 2: median and range, and the median
   seconds of a call (the weights, the noise and the threshold; tokenising excluded); for the weighted Gaussian also
   the exact expectation ``sum_w Phi((T(w) - tau) / sigma)``;
2. the two-round selection's words kept by its first round's share of the budget (``--shares``);
3. words kept across caps (``--caps``) at two sizes (``--cap-sizes``), both methods, medians over the seeds.

Seeded noise: measurements, not releases. Private scratch (each user's ranked words) is cached under ``--cache``
(created 0700; delete it after). Skips when the data is absent.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from scipy import special

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import BLOGS, BLOGS_MORE, available, nearest  # noqa: E402

from topicdp.corpus import make_vectorizer, read_jsonl_records, user_hash  # noqa: E402
from topicdp.pipeline.plan import split_budget  # noqa: E402
from topicdp.pipeline.request import CorpusSource, ReleaseRequest  # noqa: E402
from topicdp.vocabulary import (_select, _two_round, calibrate_selection, round_calibration,  # noqa: E402
                                select_vocabulary_from_counts, selection_method, unit_word_sets, word_set_counts)

DELTA, MAX_CAP = 1e-6, 1000
SALT = b"topicdp.user_fraction"


def ranked_words(cache: Path, salt: bytes = SALT) -> list[tuple[str, ...]]:
    """Every blogger's (at most) MAX_CAP most frequent tokens by count then code point, in :func:`user_hash` order
    with ``salt`` (another salt: another nested draw of the bloggers, to check a rule on users it was not fitted on)."""
    if cache.exists():
        with open(cache, "rb") as fh:
            ranked = pickle.load(fh)
        return [ranked[u] for u in sorted(ranked, key=lambda u: user_hash(u, salt)) if ranked[u]]
    analyze = make_vectorizer(stop_words="english", min_token_length=3).build_analyzer()
    ranked: dict = {}
    texts: dict = {}
    for path in (nearest(BLOGS), nearest(BLOGS_MORE)):  # disjoint bloggers: one file's counts at a time
        counts: dict = {}
        for text, user in read_jsonl_records(path):
            counts.setdefault(user, Counter()).update(analyze(text))
            if len(texts) < 3 or user in texts:
                texts.setdefault(user, []).append(text)
        ranked.update((u, tuple(w for w, _ in sorted(c.items(), key=lambda wc: (-wc[1], wc[0]))[:MAX_CAP]))
                      for u, c in counts.items())
        del counts
    for user, own in texts.items():  # the selection's own step 1 gives the same sets
        for k in (50, 300):
            mine = unit_word_sets(own, [user] * len(own), max_words_per_unit=k).get(user, ())
            assert mine == tuple(sorted(ranked[user][:k])), user
    cache.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(cache, "wb") as fh:
        pickle.dump(ranked, fh)
    return [ranked[u] for u in sorted(ranked, key=lambda u: user_hash(u, salt)) if ranked[u]]


def word_sets(ranked, n: int, k: int) -> dict:
    return {i: tuple(sorted(words[:k])) for i, words in enumerate(ranked[:n])}


def vocabulary_budget(epsilon: float):
    request = ReleaseRequest(source=CorpusSource(path=str(nearest(BLOGS))), epsilon=epsilon, delta=DELTA)
    budget = split_budget(request).vocabulary
    assert budget is not None
    return budget, str(request.neighbours)


def summary(values) -> str:
    return f"{statistics.median(values):g} ({min(values):g}-{max(values):g})"


def methods_table(ranked, sizes, epsilons, seeds, k=300) -> list[str]:
    out = ["| users | total eps | selection (eps, delta) | weighted Gaussian: expected | words kept | s | "
           "two-round: words kept | s | N/m | the pipeline's rule picks |", "|---|---|---|---|---|---|---|---|---|---|"]
    for n in sizes:
        sets = word_sets(ranked, n, k)
        for eps in epsilons:
            budget, neighbours = vocabulary_budget(eps)
            row = [f"{n:,}", f"{eps:g}", f"({budget.epsilon:g}, {budget.delta:g})"]
            medians: dict = {}
            for method in ("weighted-gaussian", "two-round"):
                kept, secs = [], []
                for seed in seeds:
                    start = time.perf_counter()
                    data = sets if method == "two-round" else word_set_counts(sets)
                    result = select_vocabulary_from_counts(data, epsilon=budget.epsilon, delta=budget.delta,
                                                           neighbours=neighbours, max_words_per_unit=k,
                                                           method=method, random_state=seed)
                    secs.append(time.perf_counter() - start)
                    kept.append(len(result))
                if method == "weighted-gaussian":
                    totals = np.fromiter(word_set_counts(sets).totals().values(), dtype=float)
                    row.append(f"{special.ndtr((totals - result.tau) / result.sigma).sum():.1f}")
                row += [summary(kept), f"{statistics.median(secs):.1f}"]
                medians[method] = statistics.median(kept)
            _, tau = calibrate_selection(budget.epsilon, budget.delta, k, neighbours)
            pick = selection_method(budget.epsilon, budget.delta, n, k, neighbours)
            other = "weighted-gaussian" if pick == "two-round" else "two-round"
            verdict = "right" if medians[pick] >= medians[other] else "wrong"
            row += [f"{n / (tau * k ** 0.5):.1f}", f"{pick} ({verdict})"]
            out.append("| " + " | ".join(row) + " |")
            print(out[-1], flush=True)
    return out


def kept_by_method(sets, budget, neighbours, k, seeds, share=None) -> tuple[list, list]:
    """Words kept by the weighted Gaussian and by the two rounds (first-round ``share``) over ``seeds``, from the
    selection's own functions (the totals computed once)."""
    totals = word_set_counts(sets).totals()
    sigma, tau = calibrate_selection(budget.epsilon, budget.delta, k, neighbours)
    rounds = round_calibration(budget.epsilon, budget.delta, k, neighbours,
                               **({} if share is None else {"first_share": share}))
    one = [len(_select(totals, sigma, tau, None, np.random.default_rng(s))) for s in seeds]
    two = [len(_two_round(sets, rounds, None, np.random.default_rng(s))[0]) for s in seeds]
    return one, two


def shares_table(ranked, sizes, epsilons, shares, seeds, k=300) -> list[str]:
    out = ["| users | total eps | weighted Gaussian | " + " | ".join(f"two-round, share {s:g}" for s in shares) + " |",
           "|---" * (3 + len(shares)) + "|"]
    for n in sizes:
        sets = word_sets(ranked, n, k)
        for eps in epsilons:
            budget, neighbours = vocabulary_budget(eps)
            row = [f"{n:,}", f"{eps:g}"]
            for i, share in enumerate(shares):
                one, two = kept_by_method(sets, budget, neighbours, k, seeds, share)
                if i == 0:
                    row.append(summary(one))
                row.append(summary(two))
            out.append("| " + " | ".join(row) + " |")
            print(out[-1], flush=True)
    return out


def caps_table(ranked, sizes, epsilons, caps, seeds) -> list[str]:
    out = ["| users | total eps | method | " + " | ".join(f"k={k}" for k in caps) + " |",
           "|---" * (3 + len(caps)) + "|"]
    for n in sizes:
        for eps in epsilons:
            budget, neighbours = vocabulary_budget(eps)
            cells = [kept_by_method(word_sets(ranked, n, k), budget, neighbours, k, seeds) for k in caps]
            for j, name in enumerate(("weighted Gaussian", "two-round")):
                row = [f"{n:,}", f"{eps:g}", name] + [f"{statistics.median(c[j]):g}" for c in cells]
                out.append("| " + " | ".join(row) + " |")
                print(out[-1], flush=True)
    return out


def ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",")]


def floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=ints, default=ints("1000,2000,4000,6000,9000"))
    ap.add_argument("--epsilons", type=floats, default=floats("1,3,10"), help="total epsilons (delta 1e-6)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--shares", type=floats, default=floats("0.1,0.2,0.3,0.5"))
    ap.add_argument("--share-sizes", type=ints, default=ints("2000,9000"))
    ap.add_argument("--caps", type=ints, default=ints("50,100,200,300,500,1000"))
    ap.add_argument("--cap-sizes", type=ints, default=ints("2000,9000"))
    ap.add_argument("--tables", default="methods,shares,caps")
    ap.add_argument("--cache", type=Path, default=Path(f"/tmp/topicdp-partition-selection-{os.getuid()}/ranked.pkl"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--salt", default=SALT.decode(), help="the hash that orders the bloggers (another: other users)")
    args = ap.parse_args()
    if not available(nearest(BLOGS), nearest(BLOGS_MORE)):
        print(f"skipped: {nearest(BLOGS)} or {nearest(BLOGS_MORE)} is absent")
        return 0
    start = time.perf_counter()
    ranked = ranked_words(args.cache, args.salt.encode())
    print(f"{len(ranked):,} bloggers with a token; ranked in {time.perf_counter() - start:.0f} s", flush=True)
    seeds = list(range(args.seeds))
    lines = ["# DP vocabulary: words kept by selection method and by per-user cap", "",
             "    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/utility/partition_selection.py "
             + " ".join(sys.argv[1:]), ""]
    tables = args.tables.split(",")
    if "methods" in tables:
        lines += ["## Words kept at k = 300 (median and range over 3 seeds; seconds per selection)", ""]
        lines += methods_table(ranked, args.sizes, args.epsilons, seeds) + [""]
    if "shares" in tables:
        lines += ["## The two-round selection by its first round's share of the budget (k = 300)", ""]
        lines += shares_table(ranked, args.share_sizes, args.epsilons, args.shares, seeds) + [""]
    if "caps" in tables:
        lines += ["## Words kept by the per-user cap k (median over the seeds)", ""]
        lines += caps_table(ranked, args.cap_sizes, args.epsilons, args.caps, seeds) + [""]
    if args.out:
        args.out.write_text("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
