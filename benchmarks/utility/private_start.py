"""dp-vem from a random start (no public data): the recovery of known topics, and where the gain came from.

Synthetic LDA, 40,000 documents, V = 2,000, K = 10 (``synthetic_lda(40000, 2000, 10, random_state=0)``),
document level, delta = 1e-6. Mean L1 to the true topics (Hungarian matching) of the released topics for:

* ``E-step on the thresholded release``: the first rule, where the next E-step saw the release
  soft-thresholded at ``threshold`` x sigma (2 sigma), as the output is;
* ``E-step on the release clipped at 0``: the second (the output still soft-thresholded at 2 sigma);
* the over-complete warm-up, the default of :class:`topicdp.variational.DPVariationalEM` now: the first 4 of
  7 releases fit 3K topics, whose release is merged into K; the output thresholded at 1 sigma;

at epsilon in {none (no noise), 1, 3, 10}, T in {5, 10} releases (7 for the warm-up), seeds 0 and 1 (start and
noise; ``--seeds N`` for more). Run (one core, about 13 minutes with numba; ``--rules 2`` the default's rows only, about 3 minutes)::

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python benchmarks/utility/private_start.py [--quick] [--rules 2]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from topicdp.datasets import synthetic_lda
from topicdp.metrics.recovery import recovery_error
from topicdp.variational import DPVariationalEM, VariationalLDA


class ThresholdedEStep(DPVariationalEM):
    """The first rule: the next E-step sees the release soft-thresholded as the output is."""

    def _next_e_step_topics(self, S, eta):
        return self._released(S, eta)


def earlier(cls, **threshold):
    """The rules before the over-complete warm-up: no warm-up, output thresholded at 2 sigma (no threshold
    without noise)."""
    return lambda *args, **kw: cls(*args, warmup_iterations=0, **threshold, **kw)


#: name -> (private estimator factory, its noiseless counterpart or None, the numbers of releases T measured);
#: without noise there is no threshold, so the first two rules coincide and only the second is run
RULES = {"E-step on the thresholded release": (earlier(ThresholdedEStep, threshold=2.0), None, (5, 10)),
         "E-step on the release clipped at 0": (earlier(DPVariationalEM, threshold=2.0), earlier(VariationalLDA),
                                                (5, 10)),
         "over-complete warm-up (4 of 7 releases at 3K topics), tau 1: the default": (DPVariationalEM, VariationalLDA,
                                                                                      (7,)),
         "over-complete warm-up at 2K topics": (lambda *a, **kw: DPVariationalEM(*a, warmup_topics=20, **kw),
                                                lambda *a, **kw: VariationalLDA(*a, warmup_topics=20, **kw), (7,))}


def _model(rule, eps, T: int, seed: int):
    private, noiseless, _ = rule
    params = dict(unit="document", n_iterations=T, random_state=seed)
    return noiseless(10, **params) if eps is None else private(10, epsilon=eps, delta=1e-6, **params)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="epsilon 3, one seed")
    parser.add_argument("--rules", nargs="*", choices=range(len(RULES)), type=int, default=list(range(len(RULES))),
                        help="which rules (0, 1, 2, 3: their order in the table); default all")
    parser.add_argument("--seeds", type=int, default=2, help="seeds 0 .. N-1 (default 2)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # repeated fits of one corpus outside a ledger: intended here
    data = synthetic_lda(40000, 2000, 10, random_state=0)
    epsilons = (3.0,) if args.quick else (None, 1.0, 3.0, 10.0)
    seeds = (0,) if args.quick else tuple(range(args.seeds))
    print("| rule | epsilon | T | sigma | mean L1 per seed | mean |\n|---|---|---:|---:|---|---:|")
    for eps in epsilons:
        for i, (name, rule) in enumerate(RULES.items()):
            if i not in args.rules or (eps is None and rule[1] is None):
                continue
            passes = rule[2]
            for T in passes[:1] if args.quick else passes:
                start, errors = time.perf_counter(), []
                for seed in seeds:
                    model = _model(rule, eps, T, seed)
                    errors.append(recovery_error(model.fit(data.X).topic_word_, data.topic_word))
                sigma = getattr(model, "sigma_", 0.0)  # the noiseless estimator has none
                print(f"| {name} | {eps if eps is not None else 'no noise'} | {T} | {sigma:.2f} | "
                      f"{' '.join(f'{e:.3f}' for e in errors)} | {np.mean(errors):.3f} |"
                      f"  <!-- {time.perf_counter() - start:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
