"""Un-whitening: from the decomposition ``(lambda_i, v_i)`` of the whitened tensor to ``(mu_i, alpha_i)``.

The whitened tensor's eigenvalues are ``lambda_i = 2 sqrt(alpha0(alpha0+1))/((alpha0+2) sqrt(alpha_i))``
(DeCarolis et al. 2020, App. H.5), hence ``alpha_i = 4 alpha0 (alpha0+1) / ((alpha0+2)^2 lambda_i^2)`` and
``mu_i = (alpha0+2)/2 * lambda_i * (W^T)^dagger v_i``. Negative entries: ``simplex="clip"`` sets them to 0 and
renormalises, ``"project"`` (the default) is the Euclidean projection onto the simplex (Duchi et al. 2008),
1-Lipschitz in L2; a row with no positive part becomes uniform and is counted in ``n_degenerate``.
"""

from __future__ import annotations

import numpy as np

# one post-processing map for every road (re-exported here for the spectral modules)
from ..mechanisms.postprocess import SIMPLEX_METHODS, project_to_simplex, to_simplex  # noqa: F401


def alpha_from_eigenvalues(values: np.ndarray, alpha0: float) -> np.ndarray:
    """``alpha_i = 4 alpha0 (alpha0+1) / ((alpha0+2)^2 lambda_i^2)`` (App. H.5 inverted); inf-safe for lambda <= 0."""
    lam = np.maximum(np.abs(np.asarray(values, dtype=float)), np.finfo(float).tiny ** 0.25)
    return 4.0 * alpha0 * (alpha0 + 1.0) / ((alpha0 + 2.0) ** 2 * lam * lam)


def recover_topics(values: np.ndarray, vectors: np.ndarray, B: np.ndarray, alpha0: float,
                   simplex: str = "clip") -> tuple[np.ndarray, np.ndarray, int]:
    """``(topic_word (k x d), alpha (k,), n_degenerate)`` from eigenpairs and the un-whitening matrix B (d x k)."""
    lam = np.asarray(values, dtype=float)
    raw = (B @ vectors) * ((alpha0 + 2.0) / 2.0 * lam)  # d x k, column i = mu_i
    topics, n_bad = to_simplex(raw.T, simplex)
    alpha = alpha_from_eigenvalues(lam, alpha0)
    order = np.argsort(-alpha, kind="stable")
    return topics[order], alpha[order], n_bad
