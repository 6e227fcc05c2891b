"""The spectral paper's comparison (DeCarolis et al. 2020, Fig. 2 and Fig. 4): configurations 1-4 and DP stochastic
variational inference (Park et al. 2016) at equal (epsilon, delta), on synthetic LDA with ground truth.

Metrics: recovery error (mean L1 per topic after Hungarian matching) and held-out per-word perplexity
(document completion, :func:`topicdp.metrics.heldout_perplexity`) on 10% of the documents held out.
A configuration whose preconditions fail on the released quantities is recorded with ``failed = 1``
and the reason, not dropped.
"""

from __future__ import annotations

import numpy as np

from ..baselines import DPSVI, SVILDA
from ..datasets import synthetic_lda
from ..metrics import heldout_perplexity, recovery_error
from ..spectral import PreconditionError, SpectralDP, SpectralLDA

DELTA = 1e-5


def _split(X, rng, heldout: float = 0.1):
    idx = rng.permutation(X.shape[0])
    n_out = max(1, int(heldout * X.shape[0]))
    return X[idx[n_out:]], X[idx[:n_out]]


def _fit(mechanism: str, k: int, alpha0: float, epsilon, X, seed: int, iterations: int):
    if mechanism == "spectral-nonprivate":
        return SpectralLDA(k, alpha0, random_state=seed).fit(X)
    if mechanism == "dpsvi-nonprivate":
        return SVILDA(k, n_iterations=iterations, random_state=seed).fit(X)
    if mechanism == "dpsvi":
        return DPSVI(k, epsilon=epsilon, delta=DELTA, n_iterations=iterations, random_state=seed).fit(X)
    return SpectralDP(k, alpha0, int(mechanism[-1]), epsilon=epsilon, delta=DELTA, unit="document", random_state=seed).fit(X)


def run_spectral(store, grid, progress) -> None:
    """Fill ``store`` with the spectral panel of ``grid.spectral``."""
    cfg = grid.spectral
    k, d = cfg["n_topics"], cfg["n_words"]
    private = ["config1", "config2", "config3", "config4", "dpsvi"]
    for n_docs, alpha0 in ((n, a) for n in cfg["n_docs"] for a in cfg["alpha0s"]):
        name = f"synthetic-N{n_docs}-d{d}-k{k}-a{alpha0:g}"
        for rep in range(cfg["repeats"]):
            combos = [(m, e) for m in private for e in cfg["epsilons"]]
            combos += [("spectral-nonprivate", float("inf")), ("dpsvi-nonprivate", float("inf"))]
            todo = [c for c in combos if not store.has(**_key(c, name, k, rep))]
            if not todo:
                continue
            data = synthetic_lda(n_docs, d, k, alpha0=alpha0, random_state=rep)
            X_train, X_test = _split(data.X, np.random.default_rng(rep))
            for mech, eps in todo:
                metrics, extra, guarantee = _evaluate(mech, k, alpha0, eps, X_train, X_test, data.topic_word,
                                                      rep, cfg["dpsvi_iterations"])
                store.write(_key((mech, eps), name, k, rep), metrics, delta=DELTA, guarantee=guarantee, extra=extra)
            progress(f"spectral panel {name} repeat {rep}: {len(todo)} fits")


def _evaluate(mech, k, alpha0, eps, X_train, X_test, truth, rep, iterations):
    try:
        est = _fit(mech, k, alpha0, eps, X_train, rep, iterations)
    except PreconditionError as exc:
        return {"failed": 1.0, "recovery_error": float("nan"), "perplexity": float("nan")}, {"reason": str(exc)}, "none"
    W = est.topic_word_
    metrics = {
        "failed": 0.0,
        "recovery_error": recovery_error(W, truth),
        "perplexity": heldout_perplexity(W, X_test, alpha=alpha0 / k, random_state=0),
    }
    guarantee = est.report_.guarantee if hasattr(est, "report_") and "nonprivate" not in mech else "none"
    return metrics, None, guarantee


def _key(combo, name, k, rep) -> dict:
    mech, eps = combo
    return {"panel": "spectral", "corpus": name, "mechanism": mech, "model": "lda", "n_topics": k,
            "epsilon": eps, "gamma": "", "repeat": rep}
