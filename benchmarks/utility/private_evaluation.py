"""Private evaluation of a release on blogs: the smallest epsilon at which the private mean NPMI is within a
tolerance of the exact value in 90% of noise redraws, beside the predicted one, and the interval's coverage there.

The private corpus is half of the bloggers (a hash of their id, ``user_selected(u, 0.5)``, as ``--user-fraction
0.5``); the other half is the *public reference* of the prediction (its rates and its document count, stated public
for this benchmark). The lists are the top words of a release (``--release``, a published release file). The exact
statistic is computed once; each redraw adds fresh Gaussian noise at the calibrated sigma and re-runs the estimator
(post-processing), which is what a release would see.

Run (document level under a load of 4 to 5 on 2 cores: about 10 minutes for the epsilon scan, 1 for the forecast
and 37 for the coverage's 500 redraws, which also records each topic's coverage and the side of its misses)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/private_evaluation.py --release RELEASE.json --unit document \\
        --out docs/results/private_evaluation_document.json

Skips (exit 0, with a message) where the data set is absent.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from _data import BLOGS  # noqa: E402
EPSILONS = (0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0)


def predict_epsilon(design, rates, n_units: float, *, delta: float, tolerance: float = 0.02,
                    probability: float = 0.9, grid=None, **kwargs) -> float:
    """The smallest epsilon of ``grid`` (default 0.05 to 10, 12 steps per factor 10) whose :func:`predict_error`
    quantile is at most ``tolerance`` (inf when none is); bisection over the grid, assuming the error falls with
    epsilon."""
    import numpy as np

    from topicdp.metrics.private import predict_error

    eps = np.asarray(grid if grid is not None else 10.0 ** np.arange(math.log10(0.05), 1.0 + 1e-9, 1.0 / 12))

    def ok(i: int) -> bool:
        return predict_error(design, rates, n_units, epsilon=float(eps[i]), delta=delta, probability=probability,
                             **kwargs).quantile <= tolerance

    lo, hi = -1, len(eps) - 1
    if not ok(hi):
        return math.inf
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return float(eps[hi])


def load_halves(words, fraction: float = 0.5):
    """(private corpus, public reference corpus) over ``words``: the bloggers split by a hash of their id."""
    import hashlib

    from topicdp.corpus import Corpus, _id_key, read_jsonl_records

    def selected(user) -> bool:  # topicdp.pipeline.request.user_selected, without importing the pipeline
        digest = hashlib.sha256(b"topicdp.user_fraction\x00" + _id_key(user)).digest()
        return int.from_bytes(digest[:8], "little") < fraction * 2.0 ** 64

    private, public = [], []
    for text, user in read_jsonl_records(BLOGS):
        (private if selected(user) else public).append((text, user))
    build = lambda rows: Corpus.from_texts([t for t, _ in rows], [u for _, u in rows], vocabulary=list(words))  # noqa: E731
    return build(private), build(public)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", required=True, help="a published release file (its top_words are evaluated)")
    ap.add_argument("--unit", choices=("document", "user"), default="document")
    ap.add_argument("--clip", type=float, default=None, help="per-unit clipping norm (default: the library's)")
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--tolerance", type=float, default=0.02)
    ap.add_argument("--redraws", type=int, default=500)
    ap.add_argument("--coverage-redraws", type=int, default=500)
    ap.add_argument("--n-boot", type=int, default=None, help="bootstrap replicates of each interval (library default)")
    ap.add_argument("--epsilons", type=float, nargs="+", default=None, help="the scan's grid (default: EPSILONS)")
    ap.add_argument("--out", default=None, help="write the figures (JSON) here")
    args = ap.parse_args()
    if not BLOGS.exists():
        print(f"skipped: {BLOGS} is absent")
        return 0

    import numpy as np

    from topicdp.metrics import private as pv
    from topicdp.metrics.readability import heldout_npmi, npmi_contrast, top_words_matrix

    tops = json.loads(Path(args.release).read_text())["top_words"]
    design = pv.coherence_design(tops)
    start = time.perf_counter()
    corpus, reference = load_halves(design.words)
    print(f"read {corpus.n_docs} private documents of {corpus.n_users} users, {reference.n_docs} public ones "
          f"({time.perf_counter() - start:.0f} s)", flush=True)
    W = top_words_matrix(np.array([[design.words.index(w) for w in t] for t in tops]), len(design.words))
    exact = {"mean_npmi": float(heldout_npmi(W, corpus)), "contrast_all_pairs": float(npmi_contrast(W, corpus))}
    ours = pv.exact_values(corpus, design)  # the same NPMI and contrast (over every across pair)
    exact["mean_contrast_sampled"] = float(pv.exact_values(corpus, design, clip=math.inf)["mean_contrast"])
    assert abs(ours["mean_npmi"] - exact["mean_npmi"]) < 1e-9
    clip = pv.default_clip(design) if args.clip is None else args.clip
    x = pv.unit_contributions(corpus, design, args.unit)
    S, w = pv.clipped_sum(x, clip)
    clipped = pv.topic_values(S, design)
    out: dict = {"unit": args.unit, "delta": args.delta, "tolerance": args.tolerance, "clip": clip,
                 "n_words": len(design.words), "n_pairs": int(design.pairs.shape[0]), "exact": exact,
                 "clipped_mean_npmi": float(clipped["mean_npmi"]), "units_clipped": int(np.sum(w < 1.0)),
                 "n_units": int(x.shape[0]), "top_words": tops}
    print(f"exact mean NPMI {exact['mean_npmi']:.4f}; on the clipped corpus {clipped['mean_npmi']:.4f} "
          f"({out['units_clipped']} of {x.shape[0]} units clipped at C = {clip:.3g})", flush=True)

    rng = np.random.default_rng(12345)
    scan = []
    met_at = None
    for eps in args.epsilons or EPSILONS:
        sigma, D, _ = pv.calibrate(design, eps, args.delta, args.unit, "add-remove", clip)
        err = np.array([pv.point_estimate(S + rng.normal(0.0, sigma, S.size), design, sigma)["mean_npmi"]
                        - exact["mean_npmi"] for _ in range(args.redraws)])
        row = {"epsilon": eps, "sigma": sigma, "sensitivity": D, "within": float(np.mean(np.abs(err) <= args.tolerance)),
               "q90_abs_error": float(np.quantile(np.abs(err), 0.9)), "bias": float(err.mean())}
        scan.append(row)
        print(json.dumps(row), flush=True)
        if row["within"] >= 0.9 and met_at is None:
            met_at = eps
        if met_at is not None and eps >= met_at * 1.9:
            break
    out["scan"] = scan
    out["smallest_epsilon_measured"] = met_at

    rates = pv.reference_rates(reference, design, args.unit, clip)
    target = pv.reference_rates(reference, design, args.unit, math.inf)  # the forecast includes clipping's shift
    # the public half's number of units stands for the private half's (same hash split)
    n_stated = float(reference.n_docs if args.unit == "document" else reference.n_users)
    start = time.perf_counter()
    predicted = predict_epsilon(design, rates, n_stated, delta=args.delta, tolerance=args.tolerance,
                                   grid=EPSILONS, unit=args.unit, clip=clip, target_rates=target)
    out["predicted_epsilon"] = predicted
    print(f"predicted smallest epsilon {predicted} ({time.perf_counter() - start:.0f} s)", flush=True)

    if met_at is not None and args.coverage_redraws:
        sigma, _, _ = pv.calibrate(design, met_at, args.delta, args.unit, "add-remove", clip)
        kw = {} if args.n_boot is None else {"n_boot": args.n_boot}
        hits = []
        topic_hits, topic_above, topic_width = [], [], []
        start = time.perf_counter()
        for i in range(args.coverage_redraws):
            est = pv.estimate(S + rng.normal(0.0, sigma, S.size), design, sigma, random_state=rng, **kw)
            lo, hi = est["mean_npmi_interval"]
            clo, chi = est["mean_contrast_interval"]
            t_lo, t_hi = est["npmi_interval"][:, 0], est["npmi_interval"][:, 1]
            hits.append((lo <= exact["mean_npmi"] <= hi, clo <= exact["contrast_all_pairs"] <= chi,
                         float(np.mean((t_lo <= ours["npmi"]) & (ours["npmi"] <= t_hi))), (hi - lo) / 2,
                         lo <= clipped["mean_npmi"] <= hi))
            topic_hits.append((t_lo <= ours["npmi"]) & (ours["npmi"] <= t_hi))
            topic_above.append(t_lo > ours["npmi"])  # a miss with the interval above the exact value
            topic_width.append((t_hi - t_lo) / 2)
            if i % 50 == 49:
                print(f"coverage {i + 1}: {np.mean([h[0] for h in hits]):.3f} ({time.perf_counter() - start:.0f} s)",
                      flush=True)
        H = np.array(hits, dtype=float)
        out["coverage"] = {"epsilon": met_at, "level": 0.9, "redraws": len(hits), "mean_npmi": float(H[:, 0].mean()),
                           "mean_contrast_vs_all_pairs": float(H[:, 1].mean()),
                           "per_topic_npmi": float(H[:, 2].mean()), "mean_half_width": float(H[:, 3].mean()),
                           "mean_npmi_on_the_clipped_corpus": float(H[:, 4].mean()),
                           "each_topic_npmi": np.mean(topic_hits, axis=0).tolist(),
                           "each_topic_misses_above": np.sum(topic_above, axis=0).tolist(),
                           "each_topic_misses_below": (len(hits) - np.sum(topic_hits, axis=0)
                                                       - np.sum(topic_above, axis=0)).tolist(),
                           "each_topic_mean_half_width": np.mean(topic_width, axis=0).tolist()}
        print(json.dumps(out["coverage"]), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
