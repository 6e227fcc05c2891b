"""Distinguishers: score a batch of released matrices; higher (or lower) scores suggest "the canary is in". One
is fixed before the audit's trials are drawn (it may depend on D, D' and f, never on the releases scored);
otherwise the Clopper-Pearson statement does not apply.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _as_batch(releases: np.ndarray, shape: tuple) -> np.ndarray:
    releases = np.asarray(releases, dtype=np.float64)
    if releases.shape[1:] != shape:
        raise ValueError(f"releases must have shape (n, {', '.join(map(str, shape))}), got {releases.shape}")
    return releases.reshape(releases.shape[0], -1)


@dataclass
class ProjectionDistinguisher:
    """Score = ``<M - f(D), u>``, ``u = (f(D') - f(D)) / ||f(D') - f(D)||_F`` (white box: needs f).

    For additive Gaussian noise the likelihood ratio is monotone in it (Neyman-Pearson), so the audit can reach the
    mechanism's exact trade-off curve (Dong, Roth & Su 2022, Sec. 2.3).
    """

    W_out: np.ndarray
    W_in: np.ndarray
    name: str = "projection"

    def __post_init__(self) -> None:
        self.W_out = np.asarray(self.W_out, dtype=np.float64)
        self.W_in = np.asarray(self.W_in, dtype=np.float64)
        if self.W_out.shape != self.W_in.shape:
            raise ValueError(f"W_out and W_in must have the same shape, got {self.W_out.shape} and {self.W_in.shape}")
        diff = (self.W_in - self.W_out).ravel()
        norm = float(np.linalg.norm(diff))
        if not np.isfinite(norm) or norm == 0.0:
            raise ValueError("f(D') equals f(D): the projection distinguisher has no direction; nothing to audit")
        self._u = diff / norm
        self._offset = float(self.W_out.ravel() @ self._u)

    @property
    def distance(self) -> float:
        """||f(D') - f(D)||_F: the sensitivity actually used by this neighbour pair."""
        return float(np.linalg.norm(self.W_in - self.W_out))

    def score(self, releases: np.ndarray) -> np.ndarray:
        return _as_batch(releases, self.W_out.shape) @ self._u - self._offset


@dataclass
class CanaryWordDistinguisher:
    """Score = total released weight on the canary's words ``word_indices``, ``sum_k sum_v w_v M[k, v]`` (black
    box; ``weights`` default 1)."""

    word_indices: np.ndarray
    weights: np.ndarray | None = None
    name: str = "canary-words"

    def __post_init__(self) -> None:
        idx = np.asarray(self.word_indices)
        if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError("word_indices must be a non-empty 1-D array of vocabulary indices")
        if idx.min() < 0:
            raise ValueError("word_indices must be non-negative")
        self.word_indices = idx.astype(np.int64)
        w = np.ones(idx.size) if self.weights is None else np.asarray(self.weights, dtype=np.float64)
        if w.shape != idx.shape or not np.all(np.isfinite(w)):
            raise ValueError(f"weights must be finite with the shape of word_indices {idx.shape}, got {w.shape}")
        self.weights = w

    def score(self, releases: np.ndarray) -> np.ndarray:
        releases = np.asarray(releases, dtype=np.float64)
        if releases.ndim < 2 or self.word_indices.max() >= releases.shape[-1]:
            raise ValueError(f"releases must be (n, ..., V) with V > {int(self.word_indices.max())} (the largest "
                             f"canary word index), got shape {releases.shape}")
        cols = releases[..., self.word_indices]
        return (cols.reshape(releases.shape[0], -1, self.word_indices.size) @ self.weights).sum(axis=1)


DISTINGUISHERS = ("projection", "canary-words")


def make_distinguisher(kind, *, W_out=None, W_in=None, canary_words=None, canary_weights=None):
    """A distinguisher by name (``"projection"`` or ``"canary-words"``), or ``kind`` itself if it has ``score``."""
    if hasattr(kind, "score"):
        return kind
    if kind == "projection":
        if W_out is None or W_in is None:
            raise ValueError("distinguisher='projection' needs f(D) and f(D') (W_out, W_in)")
        return ProjectionDistinguisher(W_out, W_in)
    if kind == "canary-words":
        if canary_words is None:
            raise ValueError("distinguisher='canary-words' needs canary_words (vocabulary indices)")
        return CanaryWordDistinguisher(canary_words, canary_weights)
    raise ValueError(f"distinguisher must be one of {', '.join(map(repr, DISTINGUISHERS))} or an object with "
                     f".score; got {kind!r}")
