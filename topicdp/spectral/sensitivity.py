r"""Sensitivities of the spectral algorithm's nodes (``000_*``, App. H), with proofs where the text has gaps.

Neighbouring corpora: replace one document, N public (Sec. 3 of the paper). All bounds are in the entry-wise
l1 norm, which bounds the Frobenius norm (the L2 sensitivity the Gaussian mechanism needs) and the
spectral norm.

Moments (Thm. 4)
----------------
``Delta2 = (2 + 4a)/N`` with ``a = alpha0/(alpha0+1)`` (App. H.1, exact as printed; proof: the change is
``(M2^N - M2^N')/N - a/(N(N-1)) (delta S^T + S delta^T)`` with ``||M2^n||_1 = 1``, ``||delta||_1 <= 2`` and
``||S_{-N}||_1 = N-1``).

``Delta3 = (2 + 12|b| + 6c)/N`` with ``b = -alpha0/(alpha0+2)``, ``c = 2 alpha0^2/((alpha0+1)(alpha0+2))``.
App. H.2 prints ``2/N + 4|b|/N + 6c(N-1)/(N(N-2))``: its step (b) bounds one placement B1 by ``4|b|/N``
and then says B2, B3 "have a similar behavior" but does not add them. By the triangle inequality the
three placements contribute ``3 * 4|b|/N``, and the bound is attained in order: when the replaced
document's words occur in no other document the three placements have disjoint supports
(``test_spectral_sensitivity`` finds neighbouring corpora whose change exceeds the printed value).
Step (c): the terms of ``sum_{distinct} M1^n M1^m M1^p`` that contain the replaced document are
``3 (N-1)(N-2)`` products of l1 norm at most ``||delta||_1 <= 2``, giving ``6c/N`` (the printed
``6c(N-1)/(N(N-2))`` is a slightly larger, also valid, bound; we use the exact count).

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

    Delta_T = Delta3 / lambda_k(M2_released)^{3/2}                 (:func:`whitened_tensor_sensitivity`)

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

from .moments import lda_coefficients


def delta_m2(n_docs: int, alpha0: float) -> float:
    """l1 sensitivity of M2_hat, ``(2 + 4 alpha0/(alpha0+1)) / N`` (App. H.1)."""
    a, _, _ = lda_coefficients(alpha0)
    return (2.0 + 4.0 * a) / n_docs


def delta_m3(n_docs: int, alpha0: float) -> float:
    """l1 sensitivity of M3_hat, ``(2 + 12|b| + 6c) / N`` (App. H.2 corrected: all three placements B1-B3)."""
    _, b, c = lda_coefficients(alpha0)
    return (2.0 + 12.0 * abs(b) + 6.0 * c) / n_docs


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
    d2 = delta_m2(n_docs, alpha0)
    d3 = delta_m3_paper(n_docs, alpha0) if delta3 is None else delta3
    half = 0.5 * (sigma_k + sigma_k1)
    k = n_topics
    return m3 * (2 * k) ** 1.5 * d2 ** 3 / (sigma_k * math.sqrt(half)) ** 3 + d3 * k ** 1.5 / half ** 1.5


def h4_paper(delta_t: float, gamma_s: float, n_topics: int) -> float:
    """App. H.4 as printed: ``2 sqrt(k) Delta_T / gamma_s`` (assumes T(D) exactly orthogonally decomposable)."""
    return 2.0 * math.sqrt(n_topics) * delta_t / gamma_s
