"""Does subtracting the bootstrap's bias estimate fix the private choice of K at a small evaluation budget?

On the generated LDA corpus with K = 20 of ``private_choice_of_k.py`` (the same seeds, so the same four dp-vem fits),
each redraw evaluates the four candidates with :func:`topicdp.metrics.private.estimate` (15 bootstrap replicates) and
counts the argmax of the plain private mean NPMI and of the private mean NPMI minus its bootstrap bias.

Run (about 10 minutes under load)::

    OPENBLAS_NUM_THREADS=1 python benchmarks/private_choice_bias.py --epsilons 0.25 0.5 --redraws 25

Obsolete: ``estimate`` no longer runs a bootstrap (its intervals are bounds: docs/results/private_interval_coverage.md),
so there is no bias estimate to subtract; the script says so and stops. Its figures in private_evaluation.md are
the record of the former interval.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    print("obsolete: topicdp.metrics.private.estimate has no bootstrap bias any more (see the module docstring)")
    return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.25, 0.5])
    ap.add_argument("--redraws", type=int, default=25)
    args = ap.parse_args()

    import numpy as np

    from topicdp.corpus import Corpus
    from topicdp.datasets import synthetic_lda
    from topicdp.metrics import private as pv
    from topicdp.metrics.select import dp_vem_fits
    from topicdp.rdp import PrivacyLedger

    data = synthetic_lda(5000, 1000, 20, alpha0=1.0, beta=0.05, mean_length=80, random_state=20)
    corpus = Corpus.from_matrix(data.X, [f"w{j}" for j in range(1000)], users=np.arange(5000))
    fits, _ = dp_vem_fits(corpus, (5, 10, 20, 40), epsilon=3.0, delta=1e-6, unit="document", random_state=0)
    ledger = PrivacyLedger()
    releases = {K: fit(ledger) for K, fit in fits.items()}
    designs = {K: pv.coherence_design([[w for w, _ in t] for t in r.top_words(10)]) for K, r in releases.items()}
    sums = {K: pv.clipped_sum(pv.unit_contributions(corpus, designs[K], "document"),
                              pv.default_clip(designs[K]))[0] for K in releases}
    print("exact mean NPMI", {K: round(float(pv.topic_values(sums[K], designs[K])["mean_npmi"]), 3) for K in releases})
    rng = np.random.default_rng(5)
    for eps in args.epsilons:
        sigma = {K: pv.calibrate(designs[K], eps, 1e-6, "document", "add-remove")[0] for K in releases}
        plain, corrected = [], []
        for _ in range(args.redraws):
            est = {K: pv.estimate(sums[K] + rng.normal(0.0, sigma[K], sums[K].size), designs[K], sigma[K], n_boot=15,
                                  random_state=rng) for K in releases}
            plain.append(max(releases, key=lambda K: est[K]["mean_npmi"]))
            corrected.append(max(releases, key=lambda K: est[K]["mean_npmi"] - est[K]["mean_npmi_bias"]))
        print(f"epsilon_eval {eps:g}: plain picks {dict((K, plain.count(K)) for K in releases)}, "
              f"bias-corrected picks {dict((K, corrected.count(K)) for K in releases)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
