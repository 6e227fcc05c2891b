"""L1 distance and RMSE between a released and a non-private topic-word matrix (TopicDP, Wang et al. 2022, §4).

``convention="topicdp"`` reproduces the paper's figures (its pairs (L1, RMSE) have the ratio sqrt(n) for m x n
matrices, 10x10: 0.8954 / 0.2838 = 3.16): "L1" the mean over rows of the *Euclidean* row distance, "RMSE" the mean of
the row-wise RMSE, as the authors' script computes; the default ``"entrywise"`` conventions are the textbook ones.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_option

L1_CONVENTIONS = ("entrywise", "entrywise-mean", "topicdp")
RMSE_CONVENTIONS = ("entrywise", "topicdp")


def _pair(released, reference) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(released, dtype=float)
    b = np.asarray(reference, dtype=float)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(
            f"released and reference must be 2-D arrays of the same shape, got {a.shape} and {b.shape}"
        )
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("released and reference must be finite")
    return a, b


def l1_distance(released, reference, *, convention: str = "entrywise") -> float:
    """Distance between a released matrix and the non-private one: ``"entrywise"`` ``sum_ij |a_ij - b_ij|``,
    ``"entrywise-mean"`` the same over m n, ``"topicdp"`` ``(1/m) sum_i ||a_i - b_i||_2`` (module docstring).
    """
    check_option(convention, "convention", L1_CONVENTIONS)
    a, b = _pair(released, reference)
    diff = a - b
    if convention == "entrywise":
        return float(np.abs(diff).sum())
    if convention == "entrywise-mean":
        return float(np.abs(diff).mean())
    return float(np.linalg.norm(diff, axis=1).mean())


def rmse(released, reference, *, convention: str = "entrywise") -> float:
    """Root-mean-square error between a released matrix and the non-private one: ``"entrywise"``
    ``sqrt(mean_ij (a_ij - b_ij)^2)``, ``"topicdp"`` the row-averaged ``(1/m) sum_i sqrt(mean_j (a_ij - b_ij)^2)``.
    """
    check_option(convention, "convention", RMSE_CONVENTIONS)
    a, b = _pair(released, reference)
    sq = (a - b) ** 2
    if convention == "entrywise":
        return float(np.sqrt(sq.mean()))
    return float(np.sqrt(sq.mean(axis=1)).mean())
