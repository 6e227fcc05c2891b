"""Top eigenpairs of M2_hat through block mat-vecs, whitening W and un-whitening W^dagger (DeCarolis et al.
2020, steps (2) and (5)): ``W = U Lambda^{-1/2}`` and ``(W^T)^dagger = U Lambda^{1/2}`` from the top-k eigenpairs
of M2_hat, so that ``W^T M2_hat W = I_k``. The paper writes the SVD; whitening needs the *positive* top
eigenvalues of the symmetric M2_hat, so the algebraically largest eigenpairs are used.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass
class Eigenpairs:
    """Algebraically largest eigenpairs, descending. ``values`` has k+1 entries (the last gives the gap)."""

    values: np.ndarray
    vectors: np.ndarray
    n_iter: int
    converged: bool


def top_eigenpairs(matmat: Callable[[np.ndarray], np.ndarray], dim: int, n: int, *, rng: np.random.Generator,
                   oversample: int | None = None, tol: float = 1e-9, max_iter: int = 300,
                   n_converge: int | None = None, shift: float = 0.0) -> Eigenpairs:
    """The ``n`` algebraically largest eigenpairs of a symmetric operator given by ``matmat``.

    Block subspace iteration with Rayleigh-Ritz at every step (Saad 2011, Alg. 5.3), a block of ``n + oversample``
    vectors, until the first ``n_converge`` Ritz pairs have residual ``<= tol * |theta_1|`` (a block product with
    sparse X costs about a few single mat-vecs, which ARPACK's ``eigsh`` applies one at a time). ``shift`` iterates
    on ``A + shift I`` for a released M2 whose noise bulk is wider than its signal.
    """
    n_converge = n if n_converge is None else n_converge
    b = min(dim, n + (max(10, n // 2) if oversample is None else oversample))
    Q, _ = np.linalg.qr(rng.standard_normal((dim, b)))
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        Z = matmat(Q)
        H = Q.T @ Z
        H = 0.5 * (H + H.T)
        theta, S = np.linalg.eigh(H)
        order = np.argsort(theta)[::-1]
        theta, S = theta[order], S[:, order]
        V = Q @ S[:, :n]
        AV = Z @ S[:, :n]
        resid = np.linalg.norm(AV - V * theta[:n], axis=0)
        scale = max(abs(theta[0]), np.finfo(float).tiny)
        if np.all(resid[:n_converge] <= tol * scale):
            converged = True
            break
        # next block: the Ritz-rotated images of the shifted operator, wanted ones first
        Q, _ = np.linalg.qr((Z + shift * Q) @ S)
    # each column's largest-magnitude entry made positive (a deterministic convention)
    signs = np.sign(V[np.argmax(np.abs(V), axis=0), np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return Eigenpairs(values=theta[:n].copy(), vectors=V * signs, n_iter=it, converged=converged)


@dataclass
class Whitening:
    """``W = U Lambda^{-1/2}`` (d x k) and ``B = (W^T)^dagger = U Lambda^{1/2}`` from the top-k eigenpairs (positive,
    descending), and the (k+1)-th eigenvalue for the spectral gap.
    """

    eigenvalues: np.ndarray
    next_eigenvalue: float
    U: np.ndarray
    n_iter: int = 0
    converged: bool = True

    @property
    def W(self) -> np.ndarray:
        return self.U / np.sqrt(self.eigenvalues)

    @property
    def B(self) -> np.ndarray:
        """``(W^T)^dagger = U Lambda^{1/2}``: maps whitened coordinates back to word space (step (6))."""
        return self.U * np.sqrt(self.eigenvalues)

    @property
    def sigma_k(self) -> float:
        return float(self.eigenvalues[-1])

    @property
    def gap(self) -> float:
        return float(self.eigenvalues[-1] - self.next_eigenvalue)


def whiten(matmat: Callable[[np.ndarray], np.ndarray], dim: int, k: int, *, rng: np.random.Generator,
           what: str = "M2_hat", tol: float = 1e-9, max_iter: int = 300, warn: bool = True,
           shift: float = 0.0) -> Whitening:
    """Whitening from the top-k eigenpairs of a symmetric operator; a ``ValueError`` when fewer than k are positive."""
    pairs = top_eigenpairs(matmat, dim, min(k + 1, dim), rng=rng, tol=tol, max_iter=max_iter, n_converge=k, shift=shift)
    vals = pairs.values
    # eigenvalues below 1e-10 * lambda_1 are numerically zero (e.g. words no document uses)
    n_pos = int(np.sum(vals[:k] > 1e-10 * max(abs(vals[0]), np.finfo(float).tiny)))
    if n_pos < k:
        raise ValueError(
            f"{what} has only {n_pos} positive eigenvalue(s) among its top {k}, fewer than n_topics={k}: "
            "whitening needs k positive eigenvalues. Use more documents or fewer topics"
            + (", or a larger epsilon for the M2 release" if "noisy" in what else "")
        )
    if warn and not pairs.converged:
        warnings.warn(f"eigenpairs of {what} did not converge to tol={tol:g} in {max_iter} iterations",
                      RuntimeWarning, stacklevel=2)
    return Whitening(eigenvalues=vals[:k].copy(), next_eigenvalue=float(vals[k]) if vals.size > k else 0.0,
                     U=pairs.vectors[:, :k].copy(), n_iter=pairs.n_iter, converged=pairs.converged)
