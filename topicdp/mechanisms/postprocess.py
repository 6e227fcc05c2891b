"""Post-processing of a noisy topic-word matrix (free under DP: it does not touch the data).

The default (:func:`to_simplex`) clips negative entries to zero and renormalises each row to sum to 1, so
the release reads as topics again. A row whose entries are all <= 0 after noise carries no signal; it
becomes the uniform distribution and is counted, never dropped silently.
"""

from __future__ import annotations

import numpy as np


def to_simplex(W_noisy: np.ndarray) -> tuple[np.ndarray, int]:
    """Clip negatives to 0 and renormalise rows; returns (matrix, number of rows that were all <= 0)."""
    clipped = np.clip(W_noisy, 0.0, None)
    sums = clipped.sum(axis=1, keepdims=True)
    empty = (sums[:, 0] <= 0)
    out = np.divide(clipped, sums, out=np.full_like(clipped, 1.0 / clipped.shape[1]), where=sums > 0)
    return out, int(empty.sum())


def top_words(W: np.ndarray, vocabulary, n: int = 10) -> list[list[tuple[str, float]]]:
    """The n most heavily weighted words of each topic, with their weights (ties by word index)."""
    order = np.argsort(-W, axis=1, kind="stable")[:, :n]
    return [[(vocabulary[j], float(W[i, j])) for j in row] for i, row in enumerate(order)]
