"""Park et al. 2016 ("Private Topic Modeling"), Fig. 1, at a smaller scale: per-word perplexity of DP-SVI for
mini-batch sizes S in {10, 20, 50, 100, 200, 400} when the noise is calibrated by the paper's zCDP recipe, by its
two baselines (advanced and linear composition of the amplified steps) and by a correct accountant (dp-accounting
RDP for the Poisson-sampled steps DP-SVI really takes), at the paper's budget (epsilon 1, delta 1e-4).

Two claims of the figure are checked:
1. zCDP needs less noise than advanced composition, which needs less than linear, whatever S (the noise
   multipliers, pure arithmetic at the paper's own setting, D = 400,000 and 160,000 documents seen; also a test:
   ``tests/test_baselines_accounting.py::test_paper_fig1_noise_ordering``);
2. smaller mini-batches give lower perplexity (amplification by subsampling), and the composition order holds in
   perplexity too (measured here on real text).

Scale: ``../shared/data/blogs`` at document level (each user's first ``--max-docs-per-user`` posts; every 10th
document held out), the vocabulary the training half's 2,000 most frequent words (NOT private: this measures the
accountants, not a release), K = 10 topics (the paper: 100 topics, 8,000 words, Wikipedia), and the same fraction
of the corpus seen as the paper (160,000 of 400,000 documents: 0.4 D, so J = 0.4 D / S iterations). Perplexity is
held-out document completion (:func:`topicdp.inference.heldout_perplexity`; the paper reports the variational
bound), the median over ``--seeds`` runs.

The paper's recipes are run through DP-SVI's ``accountant="paper"`` (the zCDP recipe) at the epsilon for which that
recipe gives the baseline's noise multiplier (:func:`benchmarks.privacy.paper_baselines.paper_baseline_epsilon`
inverted): the same z, so the same noise, whatever its accounting. Their epsilons are the paper's statements, not guarantees (the
recipe has no theorem behind its step 3; see :mod:`topicdp.baselines.accounting`); the RDP row's is one.

Run::

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/privacy/dpsvi_composition.py --out docs/results/dpsvi_composition.md

Skips (exit 0) where ``../shared/data`` is absent.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from topicdp import RepeatedReleaseWarning  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import SHARED as DATA  # noqa: E402
BATCHES = (10, 20, 50, 100, 200, 400)
METHODS = ("non-private", "rdp (correct)", "zcdp (paper)", "advanced (paper)", "linear (paper)")
DELTA = 1e-4


def noise_table(epsilon: float) -> list[str]:
    """The noise multipliers at the paper's own setting (no data)."""
    from benchmarks.privacy.paper_baselines import paper_baseline_noise_multiplier
    from topicdp.baselines import calibrate_noise_multiplier, make_scheme

    lines = ["| S | J | z RDP (correct) | z zCDP (paper) | z advanced (paper) | z linear (paper) |", "|---|---|---|---|---|---|"]
    for S in BATCHES:
        J = 160_000 // S
        rdp = calibrate_noise_multiplier(make_scheme("poisson", 400_000, J, batch_size=S), epsilon, DELTA)
        paper = [paper_baseline_noise_multiplier(epsilon, DELTA, S / 400_000, J, c) for c in ("zcdp", "advanced", "linear")]
        lines.append(f"| {S} | {J} | {rdp:.3f} | " + " | ".join(f"{z:.3f}" for z in paper) + " |")
    return lines


def fit(method: str, epsilon: float, S: int, J: int, D: int, X, seed: int):
    from benchmarks.privacy.paper_baselines import paper_baseline_epsilon, paper_baseline_noise_multiplier
    from topicdp.baselines import DPStochasticVI, SVILDA

    common = dict(batch_size=S, n_iterations=J, random_state=seed)
    if method == "non-private":
        return SVILDA(10, **common).fit(X)
    if method == "rdp (correct)":
        return DPStochasticVI(10, epsilon=epsilon, delta=DELTA, accountant="rdp", **common).fit(X)
    composition = method.split()[0]
    z = paper_baseline_noise_multiplier(epsilon, DELTA, S / D, J, composition)
    # the zCDP recipe's epsilon at this z: DP-SVI's accountant="paper" then calibrates exactly this z
    eps = paper_baseline_epsilon(z, S / D, J, DELTA, "zcdp")
    return DPStochasticVI(10, epsilon=eps, delta=DELTA, accountant="paper", **common).fit(X)


def perplexity_table(epsilon: float, X, X_test, seeds: int) -> list[str]:
    D, rows = X.shape[0], {}
    with warnings.catch_warnings():  # every fit here is a measurement of one accountant, none is published
        warnings.simplefilter("ignore", RepeatedReleaseWarning)
        for S in BATCHES:
            J = max(1, round(0.4 * D / S))
            for method in METHODS:
                values, t0 = [], time.perf_counter()
                for seed in range(seeds):
                    model = fit(method, epsilon, S, J, D, X, seed)
                    values.append(model.perplexity(X_test, random_state=0))
                    z = getattr(model, "noise_multiplier_", 0.0)
                rows[S, method] = (statistics.median(values), z, time.perf_counter() - t0)
                print(f"epsilon={epsilon:g} S={S} J={J} {method}: perplexity {rows[S, method][0]:.1f} (z {z:.3f}, "
                      f"{rows[S, method][2]:.0f} s)", flush=True)
    lines = [f"Held-out per-word perplexity at epsilon {epsilon:g}, delta 1e-4 (blogs, document level, {D} training "
             f"documents, 2,000 words, K = 10, J = 0.4 D / S, median of {seeds} seeds; z is the noise multiplier):", "",
             "| S | J | " + " | ".join(METHODS) + " |", "|---|---|" + "---|" * len(METHODS)]
    for S in BATCHES:
        J = max(1, round(0.4 * D / S))
        cells = [f"{rows[S, m][0]:.0f}" + ("" if m == "non-private" else f" (z {rows[S, m][1]:.2f})") for m in METHODS]
        lines.append(f"| {S} | {J} | " + " | ".join(cells) + " |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 10.0],
                    help="the paper's budget is 1; a larger one shows the order where 1 leaves only noise at this scale")
    ap.add_argument("--max-docs-per-user", type=int, default=20)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    lines = ["# DP-SVI: zCDP against linear and advanced composition, and the mini-batch size (Park et al. 2016, Fig. 1)",
             "", "Noise multipliers z at the paper's own setting (epsilon 1, delta 1e-4, D = 400,000, 160,000 "
             "documents seen, J = 160,000 / S; Poisson sampling at rate S / D for the RDP column):", "", *noise_table(1.0)]
    print("\n".join(lines), flush=True)
    path = DATA / "blogs" / "blogs.jsonl.gz"
    if not path.exists():
        print(f"skipped the perplexity runs: {path} is absent")
        return 0

    import numpy as np

    from topicdp import Corpus
    from topicdp.corpus import read_jsonl_records, tokenize

    records = list(read_jsonl_records(path))
    seen: Counter = Counter()
    kept = []
    for text, user in records:  # each user's first posts
        if seen[user] < args.max_docs_per_user:
            seen[user] += 1
            kept.append(text)
    train_texts = [t for i, t in enumerate(kept) if i % 10]
    counts = Counter(w for doc in tokenize(train_texts) for w in doc)
    words = sorted(w for w, _ in counts.most_common(2000))
    corpus = Corpus.from_texts(kept, list(range(len(kept))), vocabulary=words)
    held = np.arange(corpus.n_docs) % 10 == 0
    X, X_test = corpus.X[~held], corpus.X[held]
    D = X.shape[0]
    print(f"\nblogs, document level: {D} training documents, {X_test.shape[0]} held out, 2,000 words, K = 10", flush=True)
    for epsilon in args.epsilons:
        lines += ["", *perplexity_table(epsilon, X, X_test, args.seeds)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
