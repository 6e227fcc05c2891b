"""Gaussian noise for the spectral configurations, without ever forming a d x d x d array.

"Symmetric Gaussian noise" is ``Sym(F)``, the projection onto symmetric tensors of F with i.i.d. N(0, s^2)
entries: ``M + Sym(F) = Sym(M + F)`` for a symmetric M is post-processing of the Gaussian mechanism on all entries,
so s is calibrated to the *Frobenius* sensitivity of M. Whitened (configuration 1): with ``G = W^T W = L L^T``,
``Sym(s F'(L^T, L^T, L^T))`` for a k^3 standard normal F' has exactly the law of ``Sym(F)(W, W, W)``, in O(k^4)
time and O(k^3) memory (:func:`whitened_m3_noise`).
"""

from __future__ import annotations

import numpy as np

from .tensor import multilinear, symmetrize


def symmetric_matrix_noise(dim: int, sigma: float, rng: np.random.Generator, block: int = 2048) -> np.ndarray:
    """Dense ``Sym(F)`` (dim x dim), F i.i.d. N(0, sigma^2), generated and symmetrised in place (one dim x dim
    float64 array and one block: 3.2 GB + 34 MB at dim = 20 000)."""
    E = np.empty((dim, dim))
    for start in range(0, dim, block):
        rng.standard_normal(out=E[start:start + block])
    for i in range(0, dim, block):
        for j in range(i, dim, block):  # a diagonal block too: its S is exactly symmetric (addition commutes)
            S = 0.5 * (E[i:i + block, j:j + block] + E[j:j + block, i:i + block].T)
            E[i:i + block, j:j + block] = S
            E[j:j + block, i:i + block] = S.T
    E *= sigma
    return E


def symmetric_tensor_noise(k: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """``Sym(F)`` for a k x k x k tensor F with i.i.d. N(0, sigma^2) entries."""
    return symmetrize(sigma * rng.standard_normal((k, k, k)))


def whitened_m3_noise(W: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """A draw of ``Sym(F)(W, W, W)`` for d x d x d F with i.i.d. N(0, sigma^2) entries, in k^3 space (exact law)."""
    G = W.T @ W
    L = np.linalg.cholesky(0.5 * (G + G.T))
    return symmetrize(multilinear(sigma * rng.standard_normal((W.shape[1],) * 3), L.T))
