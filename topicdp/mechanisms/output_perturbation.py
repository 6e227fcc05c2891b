"""Output perturbation of a topic-word matrix: the Gaussian mechanism (TopicDP Alg. 2) and the Laplace
baseline (TopicDP Sec. 4.2), with their provable global sensitivities for row-stochastic matrices."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_int, check_real


def gaussian_perturbation(W: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """W + N(0, sigma^2) entrywise (TopicDP Alg. 2 line 4; Gaussian mechanism on R^{K x V})."""
    sigma = check_real(sigma, "sigma", low=0.0, low_open=False)
    return W + sigma * rng.standard_normal(W.shape)


def laplace_perturbation(W: np.ndarray, scale: float, rng: np.random.Generator) -> np.ndarray:
    """W + Lap(scale) entrywise: epsilon-DP when scale = L1 sensitivity / epsilon (Dwork et al. 2006)."""
    scale = check_real(scale, "scale", low=0.0, low_open=False)
    return W + rng.laplace(0.0, scale, size=W.shape) if scale > 0 else W.copy()


def simplex_l1_sensitivity(n_topics: int) -> float:
    """Global L1 sensitivity 2K of K rows on the simplex (TopicDP Sec. 4.2: ``||p - q||_1 <= 2`` per row)."""
    return 2.0 * check_int(n_topics, "n_topics", low=1)


def simplex_l2_sensitivity(n_topics: int) -> float:
    """Global Frobenius sensitivity sqrt(2K) of K rows on the simplex.

    ``||p - q||_2^2 <= ||p - q||_1 max|p_i - q_i| <= 2`` per row, attained by two point masses. It holds for every
    pair of datasets, so noise calibrated to it is (epsilon, delta)-DP, not random DP.
    """
    return math.sqrt(2.0 * check_int(n_topics, "n_topics", low=1))


def check_row_stochastic(W: np.ndarray, atol: float = 1e-6) -> tuple[bool, str]:
    """Whether every row is non-negative and sums to 1 (needed for the global sensitivities above)."""
    sums = W.sum(axis=1)
    worst = float(np.max(np.abs(sums - 1.0)))
    ok = bool(W.min() >= -atol and worst <= atol)
    return ok, f"min entry {W.min():.3g}, max |row sum - 1| {worst:.3g}"
