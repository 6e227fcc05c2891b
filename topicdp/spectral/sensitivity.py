"""Sensitivities of the spectral algorithm's nodes (DeCarolis, Ram, Esmaeili, Wang & Huang 2020, "An end-to-end
differentially private LDA using a spectral algorithm", App. H), with proofs where the text has gaps.

Neighbours: *replace one privacy unit*, a document (``n = N``) or a user (``n = U``, the per-user weighted moments
of :mod:`.moments`), ``n`` public and counted before filtering. The proofs use only that a unit's statistics
``(T_u, B_u, q_u)`` are nonnegative with entry sum 1, or zero for a unit with no usable document. Norms: entry-wise
l1 (Laplace) and Frobenius (the Gaussian releases' L2 sensitivity; it bounds the spectral change Weyl needs).
Nonnegative arrays of entry sum at most 1 have ``||P||_F <= 1`` and ``||P - P'||_F^2 <= 2``.

M2 (Thm. 4, App. H.1): replacing unit 1 by 1' moves ``M2_hat`` by ``X / n``, ``X = (A - B) - a (delta r^T + r
delta^T)`` (``A, B`` the units' second-order and ``p, q`` their first-order estimators, ``delta = p - q``, ``r``
the other units' mean M1, ``a = alpha0/(alpha0+1)``). l1: ``2 + 4a``. Frobenius: ``sqrt(2 + 4 a^2)``, attained
(``A = e_w e_w^T``, ``B = e_v e_v^T``, ``r = e_u``): ``(A, p)`` and ``(B, q)`` lie in the hull of the points
``(sym(e_u e_v^T), (e_u + e_v)/2)`` (and the origin), X is affine in each block, so the maximum is at vertices,
each a quadratic in a at most ``2 + 4 a^2`` on [0, 1] (``test_m2_frobenius_bound_by_vertex_enumeration``, exact
rationals: a computer-assisted proof).

M3 (Thm. 4, App. H.2): the change is ``Y / n``, ``Y = (T - T') + b sym3((A - B) (x) r + Q (x) delta) + c (delta
(x) R + [R_ac delta_b] + [R_bc delta_a])`` (``Q`` the others' mean M2, ``R`` the mean of ``M1^m (x) M1^p`` over
ordered pairs of distinct other units, ``b = -alpha0/(alpha0+2)``, ``c = 2 alpha0^2/((alpha0+1)(alpha0+2))``).
l1: ``2 + 12|b| + 6c``; App. H.2's ``4|b|/N`` counts the placement B1 only, B2 and B3 add as much each (attained
when the replaced document's words occur nowhere else). Frobenius: ``sqrt 2 + sqrt 42 |b| + 2 sqrt 3 c`` by the
triangle inequality, each term maximised over vertices: ``||sym3(Z)||_F^2 <= 42`` over the 877 coincidence
patterns of its 7 word labels, the placements of ``delta (x) R`` at most ``sqrt 12`` (15 patterns;
``test_m3_frobenius_constants_by_vertex_enumeration``, exact integers, the origin included). The l1 proofs hold
over the hulls with the origin (``test_l1_bounds_by_vertex_enumeration``); a brute-force search with empty,
out-of-vocabulary and short units finds no change above the bounds.

Whitened tensor (Thm. 5, Eq. 64, which is not an upper bound: the map is trilinear, so the difference has terms
linear in ``||W - W'||``, and the released tensor depends on the eigenbasis). Configurations 2-4 whiten with the
*released* M2, so W is public and ``||A(W, W, W)||_F <= ||A||_F ||W||_2^3`` gives the global sensitivity given W
``Delta_T = Delta3_F / lambda_k^{3/2}`` (:func:`whitened_tensor_sensitivity`), no gap precondition.

Decomposition (Thm. 6-7, App. H.4-H.5, Lemma 9, which treat ``T(D)`` as exactly decomposable). Configurations 3-4
use Jennrich's algorithm, ``v_i`` the eigenvectors of ``M_theta = T(I, I, theta)`` for a public unit theta; with
gap ``gamma`` of M_theta's eigenvalues, Yu, Wang & Samworth (2015, Cor. 1) give ``||s v_i' - v_i|| <= 2^{3/2}
Delta_T / gamma`` for a sign s, and the sign-free ``w_i = T(I, v_i, v_i)`` moves by at most ``Delta_T (1 + 2^{5/2}
||T||_F / gamma)``: ``sqrt(k)`` times that for ``[w_1 ... w_k]`` (:func:`jennrich_sensitivity`). ``gamma`` and
``||T||_F`` have sensitivities ``2 Delta_T`` (Weyl) and ``Delta_T`` given W; Procedure 1 bounds them privately
(:mod:`.procedure1`).
"""

from __future__ import annotations

import math

from .._validation import check_int, check_option
from .moments import lda_coefficients


#: the norms a moment's sensitivity is given in: entry-wise l1 (Laplace) and Frobenius (Gaussian, Weyl)
NORMS = ("l1", "fro")


def _check_units(n_units: int, norm: str) -> float:
    """``n_units`` (>= 3: the U-statistics of M3 need 3 units) as a float, once ``norm`` is checked."""
    check_option(norm, "norm", NORMS)
    return float(check_int(n_units, "n_units", low=3))


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
