"""Recovery error against ground truth after optimal topic matching (synthetic data)."""

from __future__ import annotations

import numpy as np

from ..topics import matching


def _finite_matrix(x, name: str) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim != 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"{name} must be a finite 2-D array (topics x words)")
    return x


def match_topics(estimated, truth) -> np.ndarray:
    """Permutation ``perm`` minimising ``sum_j ||estimated[perm[j]] - truth[j]||_1`` (Hungarian algorithm,
    :func:`topicdp.topics.matching`), so that ``estimated[perm]`` is aligned with ``truth`` (both (k, V))."""
    est, tru = _finite_matrix(estimated, "estimated"), _finite_matrix(truth, "truth")
    if est.shape != tru.shape:
        raise ValueError(f"estimated and truth must have the same shape, got {est.shape} and {tru.shape}")
    # cost[i, j] = ||truth_i - est_j||_1, built row by row to stay O(k V) in memory
    cost = np.stack([np.abs(est - t).sum(axis=1) for t in tru])
    rows, cols = matching(cost, maximize=False)
    perm = np.empty(tru.shape[0], dtype=int)
    perm[rows] = cols
    return perm


def recovery_error(estimated, truth) -> float:
    """Mean L1 distance per topic between ``estimated`` and ``truth`` after Hungarian matching."""
    perm = match_topics(estimated, truth)
    est = np.asarray(estimated, dtype=float)[perm]
    return float(np.abs(est - np.asarray(truth, dtype=float)).sum(axis=1).mean())
