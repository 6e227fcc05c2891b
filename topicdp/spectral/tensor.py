"""Symmetric k x k x k tensors: contractions, the simultaneous tensor power method and Jennrich's method, which
recover ``(lambda_i, v_i)`` of the (up to noise) orthogonally decomposable whitened tensor of LDA,
``T = sum_i lambda_i v_i^{x3}`` (DeCarolis et al. 2020, App. H.5; :mod:`.recovery`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def symmetrize(T: np.ndarray) -> np.ndarray:
    """Average of T over the 6 permutations of its modes (the orthogonal projection onto symmetric tensors)."""
    return (T + T.transpose(0, 2, 1) + T.transpose(1, 0, 2) + T.transpose(1, 2, 0)
            + T.transpose(2, 0, 1) + T.transpose(2, 1, 0)) / 6.0


def multilinear(T: np.ndarray, A: np.ndarray, B: np.ndarray | None = None, C: np.ndarray | None = None) -> np.ndarray:
    """``T(A, B, C)_{abc} = sum_{ijk} T_ijk A_ia B_jb C_kc`` (the footnote-2 multilinear map)."""
    B = A if B is None else B
    C = A if C is None else C
    out = np.tensordot(T, A, axes=([0], [0]))          # j k a
    out = np.tensordot(out, B, axes=([0], [0]))        # k a b
    return np.tensordot(out, C, axes=([0], [0]))       # a b c


def apply_vv(T: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Columns ``T(I, v_j, v_j)`` for the columns v_j of V, as one BLAS product (k^3 * m flops)."""
    k = T.shape[0]
    kr = (V[:, None, :] * V[None, :, :]).reshape(k * k, V.shape[1])
    return T.reshape(k, k * k) @ kr


@dataclass
class Decomposition:
    """``T ~ sum_i values_i vectors[:, i]^{x3}`` with values > 0, sorted descending."""

    values: np.ndarray
    vectors: np.ndarray
    residual: float
    n_iter: int = 0


def _finish(T: np.ndarray, V: np.ndarray, n_iter: int = 0, *, sort: bool = True) -> Decomposition:
    """Values ``T(v, v, v)`` of the columns of V made positive, sorted descending if ``sort``, and the residual."""
    lam = np.einsum("aj,aj->j", V, apply_vv(T, V))  # T(v_j, v_j, v_j) of each column
    sign = np.where(lam < 0, -1.0, 1.0)  # T(-v,-v,-v) = -T(v,v,v): the odd order fixes the sign
    V = V * sign
    lam = lam * sign
    if sort:
        order = np.argsort(-lam)
        lam, V = lam[order], V[:, order]
    approx = np.einsum("j,aj,bj,cj->abc", lam, V, V, V)
    return Decomposition(values=lam, vectors=V, residual=float(np.linalg.norm(T - approx)), n_iter=n_iter)


def power_method(T: np.ndarray, *, rng: np.random.Generator, n_restarts: int = 5, max_iter: int = 300,
                 tol: float = 1e-12) -> Decomposition:
    """Simultaneous tensor power iteration (Wang & Lu 2017, Alg. 1), the decomposition the paper cites.

    ``V <- QR([T(I, v_1, v_1), ..., T(I, v_k, v_k)])`` from a random orthonormal start until the columns stop moving
    (``max_j 1 - |<v_j, v_j'>| <= tol``); of ``n_restarts`` seeded starts, the one with the smallest residual
    ``||T - sum_j lambda_j v_j^{x3}||_F``, with ``lambda_j = T(v_j, v_j, v_j)`` made positive by flipping ``v_j``.
    """
    k = T.shape[0]
    best: Decomposition | None = None
    for _ in range(max(1, n_restarts)):
        V, _ = np.linalg.qr(rng.standard_normal((k, k)))
        it = 0
        for it in range(1, max_iter + 1):
            Vn, R = np.linalg.qr(apply_vv(T, V))
            Vn *= np.where(np.diag(R) < 0, -1.0, 1.0)
            moved = np.max(1.0 - np.abs(np.einsum("aj,aj->j", Vn, V)))
            V = Vn
            if moved <= tol:
                break
        dec = _finish(T, V, it)
        if best is None or dec.residual < best.residual:
            best = dec
    assert best is not None  # max(1, n_restarts) >= 1 starts ran
    return best


def jennrich(T: np.ndarray, theta: np.ndarray) -> tuple[Decomposition, np.ndarray]:
    """Decomposition from the eigenvectors of ``M_theta = T(I, I, theta)`` for a fixed (public) ``theta``.

    For ``T = sum_i lambda_i v_i^{x3}`` with orthonormal v_i, ``M_theta = sum_i lambda_i <v_i, theta> v_i v_i^T``
    has eigenvectors v_i (Harshman 1970, "Jennrich's algorithm"): a matrix eigendecomposition, whose perturbation
    Davis-Kahan-type theorems bound (:mod:`.sensitivity`). Returns the decomposition (columns in decreasing order of
    M_theta's eigenvalues) and those eigenvalues.
    """
    M = np.tensordot(T, theta, axes=([2], [0]))
    M = 0.5 * (M + M.T)
    rho, V = np.linalg.eigh(M)
    order = np.argsort(-rho)
    rho, V = rho[order], V[:, order]
    return _finish(T, V, sort=False), rho


def eigengaps(values: np.ndarray) -> np.ndarray:
    """``min(rho_{i-1} - rho_i, rho_i - rho_{i+1})`` for values sorted descending (ends use one side)."""
    d = -np.diff(np.asarray(values, dtype=float))
    return np.minimum(np.concatenate([[np.inf], d]), np.concatenate([d, [np.inf]]))
