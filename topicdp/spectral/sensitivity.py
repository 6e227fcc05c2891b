"""Sensitivities of the spectral algorithm's nodes (DeCarolis, Ram, Esmaeili, Wang & Huang 2020, "An end-to-end
differentially private LDA using a spectral algorithm", App. H), with proofs where the text has gaps.

Neighbours. Every bound is for *replace one privacy unit*, the number of units ``n`` public and counted before
filtering: a document (``n = N``) or a user (``n = U``, with the per-user weighted moments of :mod:`.moments`). A
proof uses only that a unit's statistics ``(T_u, B_u, q_u)`` are nonnegative with entry sum 1 (one document, or
any average of documents), or zero for a unit with no usable document (it stays in n, :mod:`.moments`). Two
norms are given: entry-wise l1 (Laplace) and Frobenius (the Gaussian releases' L2 sensitivity; it bounds the
spectral-norm change Weyl's inequality needs). Facts used: a nonnegative array with entry sum at most 1 has
``||P||_F <= 1``, and two such have ``||P - P'||_F^2 <= 2`` (``<P, P'> >= 0``).

M2 (Thm. 4, App. H.1). Replacing unit 1 by 1' changes ``M2_hat`` by ``X / n``,
``X = (A - B) - a (delta r^T + r delta^T)``, with ``A, B`` the units' second-order and ``p, q`` their first-order
estimators, ``delta = p - q``, ``r`` the other units' mean M1 (a sub-probability vector), ``a = alpha0/(alpha0+1)``.

* l1: ``||X||_1 <= 2 + 4a`` (App. H.1).
* Frobenius: ``||X||_F <= sqrt(2 + 4 a^2)``, attained. A document's ``(M2^n, M1^n)`` is the average over ordered
  pairs of distinct positions of ``(sym(e_u e_v^T), (e_u + e_v)/2)``, so ``(A, p)``, ``(B, q)`` lie in the hull H
  of these points (with the origin for a zero unit). X is affine in each block, so ``||X||_F`` is maximised at
  vertices (r at some ``e_z`` or 0); each vertex configuration gives a quadratic in a, and all are at most
  ``2 + 4 a^2`` on [0, 1] (``test_m2_frobenius_bound_by_vertex_enumeration``, exact rationals: a
  computer-assisted proof). Equality: ``A = e_w e_w^T``, ``B = e_v e_v^T``, ``r = e_u``, u, v, w distinct. A
  replacement involving a zero unit moves M2_hat by at most ``sqrt(1 + 2a^2)/n``.

M3 (Thm. 4, App. H.2). Replacing unit 1 changes ``M3_hat`` by ``Y / n``,
``Y = (T - T') + b sym3((A - B) (x) r + Q (x) delta) + c (delta (x) R + [R_ac delta_b] + [R_bc delta_a])``,
``Q`` the others' mean M2, ``R`` the mean of ``M1^m (x) M1^p`` over ordered pairs of distinct other units,
``b = -alpha0/(alpha0+2)``, ``c = 2 alpha0^2/((alpha0+1)(alpha0+2))``.

* l1: ``2 + 12|b| + 6c``. App. H.2 prints ``2/N + 4|b|/N + 6c(N-1)/(N(N-2))``: its step (b) bounds the placement
  B1 by ``4|b|/N`` but does not add B2 and B3; the three contribute ``3 * 4|b|/N``, attained in order when the
  replaced document's words occur nowhere else (the tests find corpora exceeding the printed value). Step (c):
  the ``3 (n-1)(n-2)`` products containing the unit have l1 norm at most ``||delta||_1 <= 2``: ``6c/n``.
* Frobenius: ``sqrt 2 + sqrt 42 |b| + 2 sqrt 3 c``, by the triangle inequality over the three terms, each
  maximised exactly over vertices as for M2: (i) ``||T - T'||_F <= sqrt 2``; (ii) ``||sym3(Z)||_F^2 <= 42`` for
  ``Z = (A - B) (x) r + Q (x) delta`` over the 877 coincidence patterns of its 7 word labels; (iii) the three
  placements of ``delta (x) R`` have norm at most ``sqrt 12`` (15 patterns), R relaxed to any nonnegative
  matrix of entry sum at most 1 (``test_m3_frobenius_constants_by_vertex_enumeration``, exact integers, the
  origin included for zero units). Not attained: the terms cannot all be extreme at once.

The l1 proofs hold as they are over the hulls with the origin (``test_l1_bounds_by_vertex_enumeration``), and a
brute-force search with empty, out-of-vocabulary and short units finds no change above the bounds.

Whitened tensor (Thm. 5, Lemma 28, Eq. 64). Eq. 64 is not an upper bound: Eq. 60 bounds
``M3(W,W,W) - M3(W',W',W')`` by ``||M3|| ||W - W'||^3``, but the map is trilinear, so the difference has terms
linear in ``||W - W'||``; Lemma 28's ``W'`` spans M2's eigenspace, not M2''s; Eq. 58 mixes units; and the
released tensor depends on the eigenbasis chosen. What we use (configurations 2-4): whiten with the *released*
noisy M2, so W is public, and since ``||A(W, W, W)||_F <= ||A||_F ||W||_2^3`` with ``||W||_2 = lambda_k^{-1/2}``,

    Delta_T = Delta3_F / lambda_k(M2_released)^{3/2}               (:func:`whitened_tensor_sensitivity`),

a global sensitivity given W, with no spectral-gap precondition.

Tensor decomposition (Thm. 6-7, App. H.4-H.5, Lemma 9). H.4 treats the finite-sample ``T(D)`` as exactly
orthogonally decomposable, and Lemma 9's 2/N bounds eigenvalue changes by the (local) tensor change. What we
use (configurations 3-4): Jennrich's algorithm, ``v_i`` the eigenvectors of ``M_theta = T(I, I, theta)`` for a
public unit theta. With ``||M_theta - M_theta'||_op <= Delta_T``, gap ``gamma`` of M_theta's eigenvalues and the
Davis-Kahan variant of Yu, Wang & Samworth (2015, Cor. 1), ``||s v_i' - v_i|| <= 2^{3/2} Delta_T / gamma`` for
some sign s; ``w_i = T(I, v_i, v_i)`` is sign-free, and

    ||w_i - w_i'|| <= ||T - T'||_F + 2 ||T||_F ||v_i - s v_i'|| <= Delta_T (1 + 2^{5/2} ||T||_F / gamma),

so ``[w_1 ... w_k]`` has L2 sensitivity ``sqrt(k)`` times that (:func:`jennrich_sensitivity`). ``gamma`` and
``||T||_F`` have global sensitivities ``2 Delta_T`` (Weyl) and ``Delta_T`` given W; Procedure 1 releases their
confidence bounds (:mod:`.procedure1`).
"""

from __future__ import annotations

import math

import numpy as np

from .moments import lda_coefficients


#: the norms a moment's sensitivity is given in: entry-wise l1 (Laplace) and Frobenius (Gaussian, Weyl)
NORMS = ("l1", "fro")


def _check_units(n_units: int, norm: str) -> float:
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    if not (isinstance(n_units, (int, np.integer)) and n_units >= 3):
        raise ValueError(f"n_units must be an integer >= 3 (the U-statistics of M3 need 3 units), got {n_units!r}")
    return float(n_units)


def delta_m2(n_units: int, alpha0: float, *, norm: str) -> float:
    """Sensitivity of M2_hat for replace-one-unit: l1 ``(2 + 4a)/n`` (App. H.1), Frobenius ``sqrt(2 + 4a^2)/n``."""
    n = _check_units(n_units, norm)
    a, _, _ = lda_coefficients(alpha0)
    return ((2.0 + 4.0 * a) if norm == "l1" else math.sqrt(2.0 + 4.0 * a * a)) / n


def delta_m3(n_units: int, alpha0: float, *, norm: str) -> float:
    """Sensitivity of M3_hat: l1 ``(2 + 12|b| + 6c)/n`` (App. H.2 with all of B1-B3), Frobenius
    ``(sqrt 2 + sqrt 42 |b| + 2 sqrt 3 c)/n``.
    """
    n = _check_units(n_units, norm)
    _, b, c = lda_coefficients(alpha0)
    if norm == "l1":
        return (2.0 + 12.0 * abs(b) + 6.0 * c) / n
    return (math.sqrt(2.0) + math.sqrt(42.0) * abs(b) + 2.0 * math.sqrt(3.0) * c) / n


def whitened_tensor_sensitivity(delta3: float, lambda_k: float) -> float:
    """``Delta3 / lambda_k^{3/2}``: L2 sensitivity of ``M3_hat(W, W, W)`` for a public ``W = U Lambda^{-1/2}``."""
    if not lambda_k > 0:
        raise ValueError(f"lambda_k must be positive, got {lambda_k}")
    return delta3 / lambda_k ** 1.5


def jennrich_sensitivity(delta_t: float, gap: float, tensor_norm: float, n_topics: int) -> float:
    """L2 sensitivity of ``[T(I, v_i, v_i)]_i`` (k x k) from Jennrich's algorithm (see module docstring)."""
    if not gap > 0:
        raise ValueError(f"the eigengap bound must be positive, got {gap}")
    return math.sqrt(n_topics) * delta_t * (1.0 + 2.0 ** 2.5 * tensor_norm / gap)


def eigenvector_perturbation(delta_t: float, gap: float) -> float:
    """``2^{3/2} Delta_T / gamma`` (Yu, Wang & Samworth 2015, Cor. 1): how far each v_i can move."""
    return 2.0 ** 1.5 * delta_t / gap
