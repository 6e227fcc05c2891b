"""Coverage of the private evaluation's 90% intervals against the exact (unclipped) values, by held-out size.

Half of the bloggers (a hash of their id, as ``--user-fraction 0.5``) is the private pool; the other half gives the
vocabulary (its 2,000 most frequent words, with the lists' words). Lists: a readable dp-vem release's top words
(``docs/results/private_evaluation_lists.json``) and ten lists of ten vocabulary words drawn at random (seeded: a
noisy release's). Cells: 500, 1,812, 2,000 and 10,000 documents drawn from the pool (document level, epsilon
``EVALUATION_EPSILON["document"]``), 100, 500 and 1,000 of its users with all their documents (user level,
``EVALUATION_EPSILON["user"]``), and, where intervals are given, the whole pool at epsilon 1, 3 and 10 and 10,000
documents at 10; delta 1e-6 and the library's default clip. The exact values and the clipped sums
are computed once per cell; each of ``--draws`` redraws adds fresh Gaussian noise at the calibrated sigma and runs
:func:`topicdp.metrics.private.estimate` (post-processing), which is what an evaluation would see. Where the library
refuses the intervals (:func:`topicdp.metrics.private.interval_refusal`, per draw: the user level always, the document
level where the noise leaves the mean NPMI's interval wider than +-0.5) the cell says in what share of draws, the
coverage of the intervals given (``coverage_given``) and what every interval, refused or not, would have covered.

Run (about 10 minutes at nice under load)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/private_interval_coverage.py --data blogs \\
        --out docs/results/private_interval_coverage_blogs.json

Skips (exit 0, with a message) where the data set is absent.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import ROOT, SHARED as DATA  # noqa: E402

LISTS = ROOT / "docs" / "results" / "private_evaluation_lists.json"
KEYS = ("mean_npmi", "mean_contrast", "npmi", "contrast")


def load(name: str, data: Path = DATA):
    """(private pool, public half, vocabulary, readable lists) of data set ``name``: the bloggers split by a hash
    of their id."""
    from topicdp.corpus import Corpus, _id_key, read_jsonl_records

    def selected(user) -> bool:  # topicdp.pipeline.request.user_selected's rule
        digest = hashlib.sha256(b"topicdp.user_fraction\x00" + _id_key(user)).digest()
        return int.from_bytes(digest[:8], "little") < 0.5 * 2.0 ** 64

    pool, public = [], []
    for text, user in read_jsonl_records(data / name / "blogs.jsonl.gz"):
        (pool if selected(user) else public).append((text, user))
    lists = json.loads(LISTS.read_text())["top_words"]
    vocab = Corpus.from_texts([t for t, _ in public], min_df=5, max_df=0.5, max_features=2000).vocabulary
    words = sorted(set(vocab) | {w for t in lists for w in t})
    build = lambda rows: Corpus.from_texts([t for t, _ in rows], [u for _, u in rows], vocabulary=words)  # noqa: E731
    return build(pool), build(public), words, lists


def subset(corpus, unit: str, size: int, seed: int):
    """``size`` documents (document level) or users with all their documents (user level), drawn with ``seed``."""
    import numpy as np

    from topicdp.corpus import Corpus

    rng = np.random.default_rng(seed)
    if unit == "document":
        docs = np.sort(rng.choice(corpus.n_docs, size, replace=False))
    else:
        users = rng.choice(corpus.n_users, size, replace=False)
        docs = np.flatnonzero(np.isin(corpus.doc_users, users))
    users = np.unique(corpus.doc_users[docs], return_inverse=True)[1]
    return Corpus(corpus.X[docs], corpus.vocabulary, users)


def cell(corpus, public, lists, unit: str, epsilon: float, draws: int, seed: int) -> dict:
    """Coverage of every interval over ``draws`` noise redraws, exact values and sums computed once; and the
    forecast before spending (:func:`topicdp.metrics.private.predict_error`, 20 draws) from the public half's
    rates at the cell's size."""
    import numpy as np

    from topicdp.metrics import private as pv

    design = pv.coherence_design(lists)
    exact = pv.exact_values(corpus, design)
    clip = pv.default_clip(design)
    S, w = pv.clipped_sum(pv.unit_contributions(corpus, design, unit), clip)
    sigma = pv.calibrate(design, epsilon, 1e-6, unit, "add-remove")[0]
    n_units = corpus.n_docs if unit == "document" else corpus.n_users
    forecast = pv.predict_error(design, pv.reference_rates(public, design, unit), n_units, epsilon=epsilon,
                                delta=1e-6, unit=unit, n_sim=20)
    rng = np.random.default_rng(seed)
    hits = {k: [] for k in KEYS}
    half = {k: [] for k in KEYS}
    err, resolved, refused = [], [], []
    for _ in range(draws):
        est = pv.estimate(S + rng.normal(0.0, sigma, S.size), design, sigma)
        why = pv.interval_refusal(design, unit, clip, est["mean_npmi_interval"])
        refused.append(why is not None)
        for k in KEYS:
            iv = np.asarray(est[k + "_interval"])
            hits[k].append(np.mean((iv[..., 0] <= exact[k]) & (exact[k] <= iv[..., 1])))
            half[k].append(np.mean(iv[..., 1] - iv[..., 0]) / 2.0)
        err.append(est["mean_npmi"] - exact["mean_npmi"])
        resolved.append(est["resolved"])
    return {"unit": unit, "epsilon": epsilon, "sigma": sigma, "n_docs": corpus.n_docs,
            "n_users": corpus.n_users, "clipped_units": int(np.sum(w < 1.0)),
            "exact_mean_npmi": exact["mean_npmi"], "exact_mean_contrast": exact["mean_contrast"],
            "refused_share": float(np.mean(refused)), "reason": why, "forecast_refused": forecast.refused,
            "forecast_half_width": forecast.half_width,
            "coverage": {k: float(np.mean(v)) for k, v in hits.items()},
            "coverage_given": {k: float(np.mean(np.asarray(v)[~np.asarray(refused)])) if not all(refused) else None
                               for k, v in hits.items()},
            "half_width": {k: float(np.mean(v)) for k, v in half.items()},
            "mean_error": float(np.mean(err)), "resolved_share": float(np.mean(resolved))}


def main() -> int:
    import numpy as np

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="blogs", help="blogs or blogs-more (a folder of --data-dir)")
    ap.add_argument("--data-dir", type=Path, default=DATA, help="where the data sets are (default: ../shared/data)")
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if not (args.data_dir / args.data / "blogs.jsonl.gz").exists():
        print(f"skipped: {args.data_dir / args.data} is absent")
        return 0
    t0 = time.perf_counter()
    pool, public, words, readable = load(args.data, args.data_dir)
    rng = np.random.default_rng(1)
    noisy = [[str(w) for w in rng.choice(words, 10, replace=False)] for _ in range(10)]
    print(f"{args.data}: pool {pool.n_docs} documents of {pool.n_users} users, {len(words)} words "
          f"({time.perf_counter() - t0:.0f} s)", flush=True)
    from topicdp.experiments.compare import EVALUATION_EPSILON

    doc, user = EVALUATION_EPSILON["document"], EVALUATION_EPSILON["user"]
    # compare's budgets; then where intervals are given: the whole pool, and larger epsilons
    cells = [("document", n, doc) for n in (500, 1812, 2000, 10000)] + [("user", n, user) for n in (100, 500, 1000)]
    cells += [("document", pool.n_docs, doc), ("document", pool.n_docs, 3.0), ("document", pool.n_docs, 10.0),
              ("document", 10000, 10.0)]
    rows = []
    for unit, size, eps in cells:
        corpus = pool if size == pool.n_docs else subset(pool, unit, size, seed=size)
        for name, lists in (("readable", readable), ("random words", noisy)):
            row = {"list": name, "size": size, **cell(corpus, public, lists, unit, eps, args.draws, seed=size)}
            rows.append(row)
            c = row["coverage"]
            print(f"{unit} {size} eps {eps:g} {name}: exact {row['exact_mean_npmi']:+.3f}, coverage mean NPMI "
                  f"{c['mean_npmi']:.3f} contrast {c['mean_contrast']:.3f} each NPMI {c['npmi']:.3f} each "
                  f"contrast {c['contrast']:.3f}, half-width {row['half_width']['mean_npmi']:.3f}, "
                  f"error {row['mean_error']:+.3f}, refused in {100 * row['refused_share']:.0f}% (forecast: "
                  f"{'refused' if row['forecast_refused'] else 'given'}, +-{row['forecast_half_width']:.2f}) "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"data": args.data, "draws": args.draws, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
