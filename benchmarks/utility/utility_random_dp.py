"""The agnostic road at its best on real text: TopicDP over a *stable* f with a public reference P.

f is the noiseless variational EM of :mod:`topicdp.variational` (10 iterations, per-user weighting) started
from topics fitted on a public reference corpus (:func:`topicdp.forecast.public_init`); P draws users
from that same public corpus. Users split as in ``benchmarks/utility/utility_real.py``: 80% private (at most 20
posts each), the held-out 20% halved into the public reference and the evaluation users. The guarantee is
(epsilon, delta, gamma)-random DP with respect to P -- NOT differential privacy.

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/utility_random_dp.py --out docs/results/utility_blogs --sizing exchangeable

``--model gensim-lda`` takes gensim LDA (random start, K = 10) as f instead; with ``--cache-dir`` the samples
that ``bench_sampler.py --blogs --cache-dir`` drew for its timings (same split, seed and P) are reused:

    OPENBLAS_NUM_THREADS=1 python benchmarks/utility/utility_random_dp.py --out docs/results/utility_blogs \
        --model gensim-lda --sizing lambert-w --cache-dir CACHE

Lambert-W sizing (285 pairs at gamma = 0.1, 572 fits) costs about 572 x one fit / 2 workers; the script prints
the forecast first and ``--max-minutes`` refuses runs that would exceed it.
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

import numpy as np  # noqa: E402

from topicdp import TopicDP, make_model  # noqa: E402
from topicdp.metrics.readability import readability  # noqa: E402
from topicdp.samplers import SensitivitySampling, sample_sensitivity  # noqa: E402
from topicdp.samplers.neighbours import PublicReference  # noqa: E402
from topicdp.forecast import public_init  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: _data and the groups
from utility.utility_real import DELTA, K, add_common_arguments, data_and_out, gensim_reference, load  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(p)
    p.add_argument("--sizing", default="exchangeable", choices=("exchangeable", "lambert-w"))
    p.add_argument("--gamma", type=float, default=0.1)
    p.add_argument("--n-jobs", type=int, default=2)
    p.add_argument("--max-minutes", type=float, default=None)
    p.add_argument("--model", default="vem", choices=("vem", "gensim-lda"),
                   help="f: the stable variational EM from a public start (default), or gensim LDA")
    p.add_argument("--cache-dir", default=None,
                   help="reuse/keep sensitivity samples here (bench_sampler.py --blogs --cache-dir writes the same)")
    args = p.parse_args(argv)
    paths = data_and_out(args)
    if paths is None:
        return 0
    data, out = paths
    t0 = time.perf_counter()
    train, heldout, public, _ = load(args.corpus, data, "nonprivate", None, "user")
    reference = gensim_reference(train)
    if args.model == "vem":
        model = make_model("vem", K, 0, unit="user", n_iterations=10, init=public_init(public, K, unit="user"))
    else:
        model = make_model("gensim-lda", K, 0)
    print(f"{train}; public reference {public}; loaded in {time.perf_counter() - t0:.0f} s", flush=True)
    t1 = time.perf_counter()
    W = model.fit_topic_word(train)
    fit_seconds = time.perf_counter() - t1
    # one sensitivity sample and one fit serve every epsilon: neither depends on it
    sampling = SensitivitySampling(PublicReference(public, "user"), args.gamma, args.sizing, random_state=0,
                                   cache_dir=args.cache_dir, progress=True, max_minutes=args.max_minutes)
    sample = sample_sensitivity(model, train, sampling, unit="user", n_jobs=args.n_jobs, fit_seconds=fit_seconds)
    cached = " (from cache)" if sample.from_cache else ""
    print(f"one fit {fit_seconds:.0f} s; {sample.h} pairs in {time.perf_counter() - t1:.0f} s{cached}; "
          f"Delta_s = {sample.sensitivity:.4g} (median pair {np.median(sample.deltas):.4g})", flush=True)
    for eps in args.epsilons:
        privatizer = TopicDP(model, epsilon=eps, delta=DELTA, unit="user",
                             sampling=SensitivitySampling(public, args.gamma, args.sizing))
        t1 = time.perf_counter()
        release = privatizer.fit(train, keep_nonprivate=True, sensitivity_sample=sample, topic_word=W).release_
        scores = readability(release.topic_word, train.vocabulary, heldout, reference=reference)
        clean = readability(W, train.vocabulary, heldout, reference=reference)
        row = {"mechanism": f"topicdp-{args.model}", "guarantee": release.report.guarantee, "unit": "user", "epsilon": eps,
               "delta": DELTA, "gamma": args.gamma, "sizing": args.sizing, "sensitivity": release.report.sensitivity,
               "sigma": release.report.sigma, "seconds": round(time.perf_counter() - t1, 1),
               **{k: scores[k] for k in ("npmi", "npmi_contrast", "diversity", "overlap")},
               "noiseless_f": {k: clean[k] for k in ("npmi", "npmi_contrast", "diversity", "overlap")},
               "top_words": scores["per_topic"]["top_words"]}
        print(json.dumps({k: v for k, v in row.items() if k != "top_words"}), flush=True)
        with (out / "random_dp.jsonl").open("a") as fh:
            fh.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
