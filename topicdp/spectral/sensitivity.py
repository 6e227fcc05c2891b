r"""Sensitivities of the spectral algorithm's nodes (DeCarolis et al. 2020, App. H), with proofs where the text
has gaps.

Neighbouring corpora and units
------------------------------
Every bound below is for *replace one privacy unit*, with the number of units ``n`` public (stated, or taken
as public), counted before any filtering:

* document level (``unit="document"``): the unit is a document, ``n = N`` (Sec. 3 of DeCarolis, Ram,
  Esmaeili, Wang & Huang 2020, "An end-to-end differentially private LDA using a spectral algorithm"; below
  "the paper", whose N counts the documents with >= 3 tokens);
* user level (``unit="user"``): the unit is a user, ``n = U`` the number of users, and the moments are the
  per-user weighted ones of :mod:`.moments` (each usable document weighted by ``1/n_u``, so every user has
  total weight 1). A user may be replaced by one with *any* number of documents: the proofs use only that a
  unit's statistics ``(T_u, B_u, q_u)`` (its third-, second- and first-order estimators) are nonnegative with
  entry sum 1, which holds for one document and for any average of documents alike -- or are zero.

A unit with no usable document (every document shorter than 3 tokens, empty, or out of vocabulary) stays in
n with zero statistics (:mod:`.moments`, "Zero units"): otherwise the normaliser would be a count of the
private data, which one replacement changes. The paper's neighbours (and the bounds as first derived here)
replace one usable unit by another with the usable count public; the section "Zero units" below extends
every proof to the units that may now be zero.

Two norms are given for every moment, because two mechanisms use them: the entry-wise l1 norm (Laplace
releases of a whole moment) and the Frobenius norm (the L2 sensitivity of the Gaussian releases; it also
bounds the spectral-norm change, which is what Weyl's inequality needs for eigenvalues).
Facts used throughout: a nonnegative array ``P`` with entry sum at most 1 has ``||P||_F <= 1``, and for two
such arrays ``||P - P'||_F^2 = ||P||^2 + ||P'||^2 - 2<P, P'> <= 2`` (``<P, P'> >= 0``).

M2 (Thm. 4, App. H.1)
---------------------
Replacing unit 1 by 1' changes ``M2_hat`` (Eq. 6 in U-statistic form) by ``X / n`` with

    X = (A - B) - a (delta r^T + r delta^T),

``A, B`` the second-order estimators of the old and new unit, ``p, q`` their first-order ones,
``delta = p - q``, ``r = (1/(n-1)) sum_{m != 1} M1^m`` (a probability vector) and ``a = alpha0/(alpha0+1)``
in ``[0, 1)``.

* l1: ``||X||_1 <= 2 + 4a`` (App. H.1 as printed: ``||A - B||_1 <= 2``, ``||delta||_1 <= 2``, ``||r||_1 = 1``).
* Frobenius, ``||X||_F <= sqrt(2 + 4 a^2)``, attained. Proof. A document's ``(M2^n, M1^n)`` is the average
  over ordered pairs of distinct token positions ``(i, j)`` of ``(sym(e_{w_i} e_{w_j}^T), (e_{w_i} + e_{w_j})/2)``
  (every position is first in as many pairs as it is second), so ``(A, p)`` and ``(B, q)`` -- for a
  document or for a user's average -- lie in the convex hull H of the points
  ``(sym(e_u e_v^T), (e_u + e_v)/2)``. For fixed r, X is affine in ``((A, p), (B, q))``, so ``||X||_F`` is
  convex there and its maximum over ``H x H`` is at a pair of vertices; for fixed vertices X is affine in r,
  so the maximum over the simplex is at some ``r = e_z``. Each of the finitely many vertex configurations
  (labels ``u, v, s, t, z``, which matter only through which of them coincide) gives ``||X||_F^2 =
  alpha + beta a + gamma a^2`` with rational coefficients, and each of these quadratics is at most
  ``2 + 4 a^2`` on ``[0, 1]``: ``test_spectral_sensitivity.test_m2_frobenius_bound_by_vertex_enumeration``
  checks all of them in exact rational arithmetic (a computer-assisted proof). Equality holds for
  ``A = e_w e_w^T``, ``B = e_v e_v^T``, ``r = e_u`` with u, v, w distinct (three single-word documents "www",
  "vvv" and the others all "uuu"): ``||A - B||^2 = 2`` and ``||delta r^T + r delta^T||^2 = 4``, orthogonal.
  The triangle inequality alone gives ``sqrt 2 + sqrt 6 a`` (``||A - B||_F <= sqrt 2``; ``||delta r^T + r
  delta^T||_F^2 = 2 ||delta||^2 ||r||^2 + 2 (delta . r)^2 <= 6`` since ``|delta . r| <= max_i r_i <= 1``),
  1.52x larger at ``alpha0 = 1``; the l1 bound used as L2 before is 2.31x larger.

M3 (Thm. 4, App. H.2)
---------------------
Replacing unit 1 changes ``M3_hat`` by ``Y / n`` with

    Y = (T - T') + b sym3((A - B) (x) r + Q (x) delta) + c (delta (x) R + [R_{ac} delta_b] + [R_{bc} delta_a]),

``T, T'`` the units' third-order estimators, ``Q`` the average of the other units' ``M2``, ``R`` the average of
``M1^m (x) M1^p`` over ordered pairs of distinct other units (entry sum 1 each), ``b = -alpha0/(alpha0+2)``,
``c = 2 alpha0^2/((alpha0+1)(alpha0+2))``.

* l1: ``2 + 12|b| + 6c``. App. H.2 prints ``2/N + 4|b|/N + 6c(N-1)/(N(N-2))``: its step (b) bounds one
  placement B1 by ``4|b|/N`` and then says B2, B3 "have a similar behavior" but does not add them. By the
  triangle inequality the three placements contribute ``3 * 4|b|/N``, and the bound is attained in order:
  when the replaced document's words occur in no other document the three placements have disjoint
  supports (``test_spectral_sensitivity`` finds neighbouring corpora whose change exceeds the printed
  value). Step (c): the terms of ``sum_{distinct} M1^n M1^m M1^p`` that contain the replaced unit are
  ``3 (n-1)(n-2)`` products of l1 norm at most ``||delta||_1 <= 2``, giving ``6c/n`` (the printed
  ``6c(N-1)/(N(N-2))`` is a slightly larger, also valid, bound; we use the exact count).
* Frobenius: ``sqrt 2 + sqrt 42 |b| + 2 sqrt 3 c``. Proof: the triangle inequality over the three terms, each
  bounded exactly over relaxed hulls as for M2. (i) ``||T - T'||_F <= sqrt 2`` (attained by "www" -> "vvv").
  (ii) ``Z = (A - B) (x) r + Q (x) delta`` is affine in the units' ``((A, p), (B, q))`` (both in H) for fixed
  ``(Q, r)``, and affine in ``(Q, r)`` for fixed units, with Q in the hull of the ``sym(e_e e_f^T)`` and r in the
  simplex; so ``max ||sym3(Z)||_F`` is attained at vertices, which have 7 word labels ``u, v, s, t, e, f, z``
  mattering through their 877 coincidence patterns: the maximum of ``||sym3(Z)||_F^2`` is 42 (all labels
  equal except ``s = t``; checked exactly in integers by
  ``test_spectral_sensitivity.test_m3_frobenius_constants_by_vertex_enumeration``). (iii) with R relaxed to
  any nonnegative matrix of entry sum 1 (vertices ``e_x e_y^T``) and p, q to the simplex, the three
  placements of ``delta (x) R`` have Frobenius norm at most ``sqrt 12 = 2 sqrt 3``, attained at
  ``delta = e_u - e_v``, ``R = e_u e_u^T`` (15 patterns). The plain triangle inequality gives
  ``sqrt 2 (1 + 6|b| + 3c)`` (``||sym3(Z)|| <= 3 (||A - B|| ||r|| + ||Q|| ||delta||) <= 6 sqrt 2``, and ``3 sqrt 2``
  for (iii)), 1.2x larger at ``alpha0 = 1``; the l1 bound used as L2 before is 1.7x larger. Not attained:
  the three terms cannot all be extreme at once, and the worst change found by search is reported by
  ``test_spectral_sensitivity`` (about a third of the bound); a joint vertex enumeration of the 11
  labels (Bell(11) = 678 570 patterns per alpha0) would tighten it further and was not done.

Zero units
----------
With units of zero statistics among the n, replacing unit 1 changes M2_hat and M3_hat by the same ``X / n``
and ``Y / n`` as above (the U-statistic sums over ordered distinct pairs and triples of the n units, with a
zero unit adding nothing), with two differences: (1) either version of unit 1 may be the zero unit, so
``(A, p)`` and ``(B, q)`` range over ``H0 = conv(H u {0})``, and ``(T, T')`` over the third-order hull with the
origin; (2) the averages ``r, Q, R`` of the other units are nonnegative with entry sum *at most* 1 (the share
of usable ones), so they range over the hulls of the earlier vertices and the origin. Each proof above
used only convexity (a convex norm of a map affine in each block is maximised at vertices of each block's
hull) and the vertices, so it suffices to add the origin as a vertex of every block:

* M2, Frobenius: ``test_spectral_sensitivity.test_m2_frobenius_bound_by_vertex_enumeration`` enumerates the
  zero unit among the vertices of both units and ``r = 0`` (every other unit zero), in exact rationals: every
  quadratic is still at most ``2 + 4 a^2`` on ``[0, 1]``, so ``Delta2_F = sqrt(2 + 4a^2)/n`` is unchanged. A
  replacement in which one version of the unit is zero changes M2_hat by at most ``sqrt(1 + 2a^2)/n``, the
  bound over ``sqrt 2`` (attained by ``A = e_w e_w^T``, ``r = e_u``); the bound itself is attained by two usable
  units, as before.
* M3, Frobenius: (i) ``||T - T'||_F <= sqrt 2`` by the fact above (``<= 1`` when one of them is zero); (ii)
  and (iii) ``test_spectral_sensitivity.test_m3_frobenius_constants_by_vertex_enumeration`` enumerates the
  877 (15) coincidence patterns with each of ``(A, p)``, ``(B, q)``, ``Q``, ``r`` (``p``, ``q``, ``R``) also at the
  origin, exactly in integers: the maxima stay 42 and 12 (36 and 9 when a zero vertex is involved), so
  ``Delta3_F = (sqrt 2 + sqrt 42 |b| + 2 sqrt 3 c)/n`` is unchanged.
* l1: the triangle-inequality proofs hold as they are (``||A - B||_1 <= 2``, ``||delta||_1 <= 2``, ``||r||_1,
  ||Q||_1, ||R||_1 <= 1``); ``test_spectral_sensitivity.test_l1_bounds_by_vertex_enumeration`` also checks them
  over the hulls with the origin, exactly (M2 jointly; M3 term by term), so ``(2 + 4a)/n`` and
  ``(2 + 12|b| + 6c)/n`` are unchanged.

``test_spectral_sensitivity.test_brute_force_with_units_without_usable_documents`` searches neighbouring
corpora (exhaustively over one replaced document on five small corpora, and by hill climbing at both levels)
in which the old or the new unit is empty, out of vocabulary or shorter than 3 tokens, and other units may be
too: no change exceeds the bounds, M2's Frobenius change reaches ``1/sqrt 2`` of its bound (the most a zero
unit allows, above) and M3's about a sixth to a third of its bound.

Whitened tensor (Thm. 5, Lemma 28, Eq. 64)
------------------------------------------
Eq. 64 is not an upper bound: Eq. 60 bounds ``M3(W,W,W) - M3(W',W',W')`` by ``||M3|| ||W - W'||^3``, but the
map is trilinear, not linear, so the difference has first-order terms ``M3(W - W', W, W) + ...`` that are
linear in ``||W - W'||``. Lemma 28 also constructs ``W' = W A D^{-1/2} A^T``, which spans the top-k
eigenspace of M2 rather than of M2', so it is not the whitening the algorithm computes on the
neighbouring corpus (nor a rotation of it), and the last inequality of Eq. 58 mixes units
(``1/sqrt(sigma_k - ||E||) <= 1/(sigma_k sqrt(...))``). Finally the released whitened tensor depends on the
eigenbasis chosen (signs, rotations within near-degenerate eigenvalues), which a basis-free bound cannot
control. :func:`lemma28_paper` and :func:`eq64_paper` keep the printed expressions for reference.

What we use instead (configurations 2-4): whiten with the *released* noisy M2 (edge e8), so that W is
public; then ``T(D) - T(D') = (M3_hat - M3_hat')(W, W, W)`` and, since ``||A(W, W, W)||_F <= ||A||_F ||W||_2^3``
and ``||W||_2 = lambda_k^{-1/2}`` for ``W = U Lambda^{-1/2}``,

    Delta_T = Delta3_F / lambda_k(M2_released)^{3/2}               (:func:`whitened_tensor_sensitivity`)

with ``Delta3_F`` the Frobenius bound above (document or user level alike).

a global sensitivity given the released W, with no spectral-gap precondition.

Tensor decomposition (Thm. 6-7, App. H.4-H.5, Lemma 9)
------------------------------------------------------
H.4 applies the simultaneous power method's perturbation theorem (Wang & Lu 2017) with ``T(D)`` as the
exactly orthogonally decomposable tensor; a finite-sample ``T(D)`` is not, so ``2 sqrt(k) Delta_T/gamma_s``
does not bound the change of the power method's output. Lemma 9's 2/N sensitivity of ``gamma_s`` comes
from a proof (H.7) that bounds the change of the tensor's eigenvalues by the change of the tensor, which is
``Delta_T`` (local, data dependent) and not 2/N; for sigma_k(M2) the proof's own Weyl argument gives
``Delta2``, not 2/N.

What we use instead (configurations 3-4): the decomposition of Jennrich's algorithm,
``v_i`` = eigenvectors of ``M_theta = T(I, I, theta)`` for a public unit vector theta, whose perturbation is a
matrix eigenvector perturbation. With ``||M_theta - M_theta'||_op <= ||T - T'||_F <= Delta_T``, gap
``gamma = min_i min(rho_{i-1} - rho_i, rho_i - rho_{i+1})`` of M_theta's eigenvalues and the
Davis-Kahan variant of Yu, Wang & Samworth (2015, Cor. 1), some sign s gives
``||s v_i' - v_i|| <= 2^{3/2} Delta_T / gamma``. The released vectors ``w_i = T(I, v_i, v_i)`` (= lambda_i v_i for an
orthogonally decomposable T) do not depend on the sign of v_i, and

    ||w_i - w_i'|| <= ||T - T'||_F + 2 ||T||_F ||v_i - s v_i'|| <= Delta_T (1 + 2^{5/2} ||T||_F / gamma),

so the k x k matrix ``[w_1 ... w_k]`` has L2 sensitivity ``sqrt(k) Delta_T (1 + 2^{5/2} ||T||_F / gamma)``
(:func:`jennrich_sensitivity`). It depends on the data through ``gamma`` and ``||T||_F``, whose global
sensitivities given the public W are ``2 Delta_T`` (Weyl: every eigenvalue of M_theta moves by at most
``Delta_T``) and ``Delta_T`` (triangle inequality): Procedure 1 releases a lower confidence bound of
``gamma`` and an upper one of ``||T||_F`` with the Laplace mechanism (:mod:`.procedure1`).
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
    """Sensitivity of M2_hat for replace-one-unit: l1 ``(2 + 4a)/n`` (App. H.1), Frobenius ``sqrt(2 + 4a^2)/n``.

    ``a = alpha0/(alpha0+1)``, ``n`` the public number of units (documents or users, counted before filtering:
    units without a usable document are in n with zero statistics); see the module docstring.
    """
    n = _check_units(n_units, norm)
    a, _, _ = lda_coefficients(alpha0)
    return ((2.0 + 4.0 * a) if norm == "l1" else math.sqrt(2.0 + 4.0 * a * a)) / n


def delta_m3(n_units: int, alpha0: float, *, norm: str) -> float:
    """Sensitivity of M3_hat: l1 ``(2 + 12|b| + 6c)/n`` (App. H.2 corrected: all of B1-B3), Frobenius
    ``(sqrt 2 + sqrt 42 |b| + 2 sqrt 3 c)/n`` (module docstring)."""
    n = _check_units(n_units, norm)
    _, b, c = lda_coefficients(alpha0)
    if norm == "l1":
        return (2.0 + 12.0 * abs(b) + 6.0 * c) / n
    return (math.sqrt(2.0) + math.sqrt(42.0) * abs(b) + 2.0 * math.sqrt(3.0) * c) / n


def delta_m3_paper(n_docs: int, alpha0: float) -> float:
    """App. H.2 as printed, ``2/N + 4|b|/N + 6c (N-1)/(N(N-2))`` -- *not* an upper bound (misses B2, B3)."""
    _, b, c = lda_coefficients(alpha0)
    N = float(n_docs)
    return 2.0 / N + 4.0 * abs(b) / N + 6.0 * c * (N - 1.0) / (N * (N - 2.0))


def m3_l1_norm_bound(alpha0: float) -> float:
    """``||M3_hat||_1 <= 1 + 3|b| + c`` (each average of probability tensors has l1 norm 1)."""
    _, b, c = lda_coefficients(alpha0)
    return 1.0 + 3.0 * abs(b) + c


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


# -- the printed expressions (reference only; see the module docstring for why they are not used) -----

def lemma28_paper(delta2: float, sigma_k: float, sigma_k1: float, n_topics: int) -> float:
    """Lemma 28 as printed: ``sqrt(2k) Delta2 / (sigma_k sqrt((sigma_k + sigma_{k+1})/2))``."""
    return math.sqrt(2 * n_topics) * delta2 / (sigma_k * math.sqrt(0.5 * (sigma_k + sigma_k1)))


def eq64_paper(n_docs: int, alpha0: float, sigma_k: float, sigma_k1: float, n_topics: int,
               delta3: float | None = None) -> float:
    """Eq. 64 as printed (with Eq. 62's bound on ||M3||): not an upper bound (trilinearity, see above)."""
    N = float(n_docs)
    a0 = alpha0
    m3 = 1 + 6 * a0 / (a0 + 2) * N / (N - 1) + 6 * a0 ** 2 / ((a0 + 1) * (a0 + 2)) * N ** 3 / (N * (N - 1) * (N - 2))
    d2 = delta_m2(n_docs, alpha0, norm="l1")
    d3 = delta_m3_paper(n_docs, alpha0) if delta3 is None else delta3
    half = 0.5 * (sigma_k + sigma_k1)
    k = n_topics
    return m3 * (2 * k) ** 1.5 * d2 ** 3 / (sigma_k * math.sqrt(half)) ** 3 + d3 * k ** 1.5 / half ** 1.5


def h4_paper(delta_t: float, gamma_s: float, n_topics: int) -> float:
    """App. H.4 as printed: ``2 sqrt(k) Delta_T / gamma_s`` (assumes T(D) exactly orthogonally decomposable)."""
    return 2.0 * math.sqrt(n_topics) * delta_t / gamma_s
