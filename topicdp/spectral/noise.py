"""Gaussian noise for the spectral configurations, without ever forming a d x d x d array.

"Symmetric Gaussian noise" here means ``Sym(F)``, the orthogonal projection onto symmetric tensors
(matrices) of a tensor F with i.i.d. N(0, s^2) entries. Releasing ``M + Sym(F)`` for a symmetric M equals
``Sym(M + F)``, a post-processing of the plain Gaussian mechanism on all entries, so it is (eps, delta)-DP
whenever s is calibrated to the *Frobenius* sensitivity of M. (The other common reading -- i.i.d. N(0, s^2)
on the unique entries, mirrored -- would have to be calibrated to the sensitivity of the unique entries
and puts variance s^2 instead of s^2/6 or s^2/3 on off-diagonal entries; the two have different
covariances, which ``test_spectral_noise`` shows.) Entry variances of ``Sym(F)``: ``s^2`` on the diagonal,
``s^2/2`` off it for matrices; ``s^2``, ``s^2/3``, ``s^2/6`` for tensor entries with 1, 2, 3 distinct indices.

Whitened M3 noise (config 1, DESIGN.md "Performance principles")
----------------------------------------------------------------
``Sym(F)(W, W, W) = Sym(F(W, W, W))`` and ``vec F(W, W, W) = (W (x) W (x) W)^T vec F ~ N(0, s^2 G (x) G (x) G)``
with ``G = W^T W``. With ``G = L L^T``, ``s F'(L^T, L^T, L^T)`` for a k x k x k standard normal F' has exactly
this law, so :func:`whitened_m3_noise` returns ``Sym(s F'(L^T, L^T, L^T))``, distributed exactly as the
explicit d^3 noise pushed through W, in O(k^4) time and O(k^3) memory.
"""

from __future__ import annotations

import numpy as np

from .tensor import multilinear, symmetrize


def symmetric_matrix_noise(dim: int, sigma: float, rng: np.random.Generator, block: int = 2048) -> np.ndarray:
    """Dense ``Sym(F)`` (dim x dim), F i.i.d. N(0, sigma^2), generated and symmetrised in place.

    Peak memory is one dim x dim float64 array plus one block (at dim = 20 000: 3.2 GB + 34 MB).
    """
    E = np.empty((dim, dim))
    for start in range(0, dim, block):
        rng.standard_normal(out=E[start:start + block])
    for i in range(0, dim, block):
        for j in range(i, dim, block):
            if i == j:
                B = E[i:i + block, i:i + block]
                B[...] = 0.5 * (B + B.T)
            else:
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
    k = W.shape[1]
    return symmetrize(multilinear(sigma * rng.standard_normal((k, k, k)), L.T))


def explicit_m3_noise_whitened(W: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """The reference: draw the d^3 tensor ``Sym(F)`` and push it through W (tests, tiny d only)."""
    d = W.shape[0]
    return multilinear(symmetrize(sigma * rng.standard_normal((d, d, d))), W)
