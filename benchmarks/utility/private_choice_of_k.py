"""A private choice of K from {5, 10, 20, 40}: how often the private pick is within one step of the K the same score
picks without noise, on generated LDA corpora with a known K and on blogs, with the total epsilon of the search.

Each candidate is fitted once, privately (dp-vem at the document level, ``--fit-epsilon`` each, seeded); its score is
the private mean NPMI of its top-10 lists on the same corpus (:mod:`private_select`, mode ``"each"``). The
exact statistic of each candidate is computed once; each redraw adds fresh evaluation noise to all four and takes the
argmax of the private scores (what a search would choose), against the argmax of the exact scores. One real search
(:func:`private_select.private_search`) gives the ledger's total; the total of Papernot & Steinke's repeated
selection over the same runs is computed by dp-accounting for comparison.

Run (generated: a few minutes; blogs: about 15 minutes more, mostly the four fits)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/private_choice_of_k.py --out docs/results/private_choice_of_k.json \\
        [--blogs-vocabulary RELEASE.json]

``--resolve-redraws N`` adds, per row, how often the search's "not resolved" warning fires over N evaluations with
intervals, split by whether the pick was within one step (``docs/results/private_evaluation.md``).

The blogs part is skipped where the data set is absent or no ``--blogs-vocabulary`` (a release file whose public
vocabulary is used) is given.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
sys.path.insert(0, str(Path(__file__).resolve().parent))  # private_select, beside this file
from _data import BLOGS  # noqa: E402

CANDIDATES = (5, 10, 20, 40)
TOTAL_DELTA = 1e-5  # the delta at which every total is stated (4 fits and 4 evaluations at delta 1e-6 each: 8e-6)


def measure(name: str, corpus, *, fit_epsilon: float, eval_epsilons, delta: float, redraws: int, true_k=None,
            resolve_redraws: int = 0) -> dict:
    import numpy as np

    from topicdp.metrics import private as pv
    from private_select import dp_vem_fits, private_search
    from topicdp.rdp import PrivacyLedger

    start = time.perf_counter()
    fits, planned = dp_vem_fits(corpus, CANDIDATES, epsilon=fit_epsilon, delta=delta, unit="document", random_state=0)
    ledger = PrivacyLedger()
    releases = {K: fit(ledger) for K, fit in fits.items()}
    fit_seconds = time.perf_counter() - start
    lists = {K: [[w for w, _ in t] for t in rel.top_words(10)] for K, rel in releases.items()}
    designs = {K: pv.coherence_design(lists[K]) for K in CANDIDATES}
    sums = {K: pv.clipped_sum(pv.unit_contributions(corpus, designs[K], "document"),
                              pv.default_clip(designs[K]))[0] for K in CANDIDATES}
    exact = {K: pv.topic_values(sums[K], designs[K]) for K in CANDIDATES}
    out: dict = {"name": name, "n_docs": corpus.n_docs, "true_k": true_k, "fit_epsilon": fit_epsilon, "delta": delta,
                 "fit_seconds": fit_seconds,
                 "exact_npmi": {K: float(exact[K]["mean_npmi"]) for K in CANDIDATES},
                 "exact_contrast": {K: float(exact[K]["mean_contrast"]) for K in CANDIDATES}, "rows": []}
    exact_pick = max(CANDIDATES, key=lambda K: out["exact_npmi"][K])
    out["exact_pick_npmi"] = exact_pick
    out["exact_pick_contrast"] = max(CANDIDATES, key=lambda K: out["exact_contrast"][K])
    rng = np.random.default_rng(2024)
    for eps in eval_epsilons:
        sig = {K: pv.calibrate(designs[K], eps, delta, "document", "add-remove")[0] for K in CANDIDATES}
        picks = []
        for _ in range(redraws):
            scores = {K: pv.point_estimate(sums[K] + rng.normal(0.0, sig[K], sums[K].size), designs[K],
                                           sig[K])["mean_npmi"] for K in CANDIDATES}
            picks.append(max(CANDIDATES, key=lambda K: scores[K]))
        step = {K: i for i, K in enumerate(CANDIDATES)}
        within = float(np.mean([abs(step[p] - step[exact_pick]) <= 1 for p in picks]))
        same = float(np.mean([p == exact_pick for p in picks]))
        search = private_search({K: (lambda r: lambda _ledger: r)(releases[K]) for K in CANDIDATES}, corpus,
                                epsilon=eps, delta=delta, ledger=_copy(ledger), random_state=int(rng.integers(1 << 30)),
                                total_delta=TOTAL_DELTA, n_boot=10)
        row = {"eval_epsilon": eps, "redraws": redraws, "same_as_exact": same, "within_one_step": within,
               "picks": {K: int(sum(p == K for p in picks)) for K in CANDIDATES},
               "search_total_epsilon": search.total_epsilon, "search_total_delta": search.total_delta,
               "search_covers": search.covers, "repeat_and_select_epsilon": _repeat_total(planned, designs, eps, delta)}
        if resolve_redraws:
            row["resolution"] = _resolution(sums, designs, sig, exact_pick, resolve_redraws)
        out["rows"].append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps({k: v for k, v in out.items() if k != "rows"}), flush=True)
    return out


def _resolution(sums, designs, sig, exact_pick, redraws: int) -> dict:
    """How often the search's warning (``SearchResult.unresolved`` non-empty) fires, over ``redraws`` evaluations of
    the four candidates with intervals (10 bootstrap replicates, as the search above), split by whether the pick was
    within one step of the exact pick."""
    import numpy as np

    from topicdp.metrics import private as pv
    from private_select import unresolved_candidates

    rng = np.random.default_rng(2025)
    step = {K: i for i, K in enumerate(CANDIDATES)}
    rows = []
    for _ in range(redraws):
        est = {K: pv.estimate(sums[K] + rng.normal(0.0, sig[K], sums[K].size), designs[K], sig[K], n_boot=10,
                              random_state=rng) for K in CANDIDATES}
        scores = {K: float(e["mean_npmi"]) for K, e in est.items()}
        pick = max(CANDIDATES, key=lambda K: scores[K])
        flagged = bool(unresolved_candidates(pick, scores, {K: e["mean_npmi_interval"] for K, e in est.items()}))
        rows.append((abs(step[pick] - step[exact_pick]) <= 1, flagged))
    near = [f for ok, f in rows if ok]
    far = [f for ok, f in rows if not ok]
    return {"redraws": redraws, "warned": float(np.mean([f for _, f in rows])),
            "picks_within_one_step": len(near), "warned_when_within_one_step": float(np.mean(near)) if near else None,
            "picks_further": len(far), "warned_when_further": float(np.mean(far)) if far else None}


def _copy(ledger):
    from topicdp.rdp import PrivacyLedger

    new = PrivacyLedger()
    new.record(ledger.records)
    return new


def _repeat_total(planned, designs, eps, delta) -> dict:
    """Papernot & Steinke's total for runs of (one dp-vem fit + one evaluation), geometric number of runs with mean 8
    (dp-accounting's RDP accountant), at TOTAL_DELTA."""
    import math

    from dp_accounting import dp_event
    from dp_accounting.rdp import RdpAccountant

    from topicdp.metrics import private as pv

    mu_fit = max(math.sqrt(sum(e.mu ** 2 for e in planned[K])) for K in planned)
    mu_eval = max(pv.calibrate(d, eps, delta, "document", "add-remove")[1]
                  / pv.calibrate(d, eps, delta, "document", "add-remove")[0] for d in designs.values())
    run_mu = math.sqrt(mu_fit ** 2 + mu_eval ** 2)
    out = {}
    for mean in (4.0, 8.0):
        acc = RdpAccountant()
        acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(1.0 / run_mu), mean, 1.0))
        out[f"mean_runs_{mean:g}"] = float(acc.get_epsilon(TOTAL_DELTA))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fit-epsilon", type=float, default=3.0)
    ap.add_argument("--eval-epsilons", type=float, nargs="+", default=[0.25, 1.0])
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--redraws", type=int, default=200)
    ap.add_argument("--blogs-vocabulary", default=None, help="a release file whose vocabulary the blogs fits use")
    ap.add_argument("--skip-generated", action="store_true")
    ap.add_argument("--resolve-redraws", type=int, default=0,
                    help="redraws with intervals measuring how often the search warns that its choice is unresolved")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    import numpy as np

    from topicdp.corpus import Corpus
    from topicdp.datasets import synthetic_lda

    results = []
    if not args.skip_generated:
        for true_k in (10, 20):
            data = synthetic_lda(5000, 1000, true_k, alpha0=1.0, beta=0.05, mean_length=80, random_state=true_k)
            words = [f"w{j}" for j in range(1000)]
            corpus = Corpus.from_matrix(data.X, words, users=np.arange(5000))
            results.append(measure(f"generated LDA, K = {true_k}, 5000 documents, 1000 words", corpus,
                                   fit_epsilon=args.fit_epsilon, eval_epsilons=args.eval_epsilons, delta=args.delta,
                                   redraws=args.redraws, true_k=true_k, resolve_redraws=args.resolve_redraws))
    blogs = BLOGS
    if args.blogs_vocabulary and blogs.exists():
        from utility.private_evaluation import load_halves  # the same hash split of the bloggers

        words = json.loads(Path(args.blogs_vocabulary).read_text())["vocabulary"]
        corpus, _ = load_halves(words)
        results.append(measure("blogs, half of the bloggers, document level", corpus, fit_epsilon=args.fit_epsilon,
                               eval_epsilons=args.eval_epsilons, delta=args.delta, redraws=args.redraws,
                               resolve_redraws=args.resolve_redraws))
    elif args.blogs_vocabulary:
        print(f"blogs skipped: {blogs} is absent")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
