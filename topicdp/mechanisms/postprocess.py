"""Post-processing of a noisy topic-word matrix (free under DP: it does not touch the data). :func:`to_simplex` is
the one map every road uses: ``"clip"`` (TopicDP's) zeroes negative entries and renormalises each row; ``"project"``
is the Euclidean projection onto the simplex (Duchi, Shalev-Shwartz, Singer & Chandra 2008, "Efficient projections
onto the l1-ball for learning in high dimensions", Fig. 1), 1-Lipschitz in L2. A row with no positive finite mass
left becomes uniform and is counted; no NaN is returned.
"""

from __future__ import annotations

import numpy as np

SIMPLEX_METHODS = ("clip", "project")


def project_to_simplex(V: np.ndarray) -> np.ndarray:
    """Row-wise Euclidean projection onto the probability simplex (Duchi et al. 2008, Fig. 1)."""
    V = np.atleast_2d(np.asarray(V, dtype=float))
    n, d = V.shape
    U = -np.sort(-V, axis=1)
    css = np.cumsum(U, axis=1) - 1.0
    ind = np.arange(1, d + 1)
    cond = U - css / ind > 0
    rho = d - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(n), rho] / (rho + 1.0)
    return np.maximum(V - theta[:, None], 0.0)


def to_simplex(W_noisy: np.ndarray, method: str = "clip") -> tuple[np.ndarray, int]:
    """Rows of ``W_noisy`` as probability vectors by ``method``; returns ``(matrix, number of rows made uniform)``."""
    if method not in SIMPLEX_METHODS:
        raise ValueError(f"method must be one of {SIMPLEX_METHODS}, got {method!r}")
    raw = np.asarray(W_noisy, dtype=float)
    out = project_to_simplex(raw) if method == "project" else np.maximum(raw, 0.0)
    sums = out.sum(axis=1)
    bad = ~(sums > 0) | ~np.isfinite(sums)
    out[bad] = 1.0
    return out / out.sum(axis=1, keepdims=True), int(bad.sum())


def top_words(W: np.ndarray, vocabulary, n: int = 10) -> list[list[tuple[str, float]]]:
    """The n most heavily weighted words of each topic, with their weights (ties by word index)."""
    from ..topics import top_indices

    order = top_indices(W, n)
    return [[(vocabulary[j], float(W[i, j])) for j in row] for i, row in enumerate(order)]
