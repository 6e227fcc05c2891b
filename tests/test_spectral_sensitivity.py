"""Sensitivity bounds of the spectral backend against brute-force searches over neighbouring corpora."""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp.spectral.moments import M2Operator, prepare_corpus, whitened_m3
from topicdp.spectral.procedure1 import laplace_bound
from topicdp.spectral.sensitivity import (delta_m2, delta_m3, delta_m3_paper, jennrich_sensitivity,
                                          whitened_tensor_sensitivity)
from topicdp.spectral.tensor import apply_vv, eigengaps, jennrich


def _moments(X, alpha0):
    c = prepare_corpus(sp.csr_matrix(X))
    return M2Operator(c, alpha0).dense(), whitened_m3(c, alpha0, np.eye(X.shape[1]))


@pytest.mark.parametrize("alpha0", [0.5, 1.0, 5.0])
@pytest.mark.parametrize("n_docs", [4, 9])
def test_worst_case_neighbours_attain_corrected_bounds(alpha0, n_docs):
    """Other documents on disjoint word sets, the replaced one a repeated word: the change of M3_hat
    equals (2 + 12|b| + 6c)/N, above App. H.2's printed bound (which omits B2 and B3)."""
    N = n_docs
    d = 3 * (N - 1) + 2
    D = np.zeros((N, d))
    for n in range(1, N):
        D[n, 3 * (n - 1):3 * n] = 1
    D[0, d - 2] = 3
    D2 = D.copy()
    D2[0] = 0
    D2[0, d - 1] = 3
    M2a, M3a = _moments(D, alpha0)
    M2b, M3b = _moments(D2, alpha0)
    ch3 = np.abs(M3a - M3b).sum()
    assert ch3 <= delta_m3(N, alpha0) * (1 + 1e-12)
    assert ch3 >= delta_m3(N, alpha0) * (1 - 1e-12)  # tight
    assert ch3 > delta_m3_paper(N, alpha0) * 1.1      # the printed bound is violated
    assert np.abs(M2a - M2b).sum() <= delta_m2(N, alpha0) * (1 + 1e-12)


def test_brute_force_search_never_exceeds_bounds():
    """All replacements of one document by any count vector of length 3-4 over 4 words, on random tiny
    corpora (and on the corpus of single-word documents, where the M2 bound is nearly attained)."""
    d, alpha0 = 4, 1.0
    cands = [np.array(v) for v in itertools.product(range(5), repeat=d) if 3 <= sum(v) <= 4]
    rng = np.random.default_rng(0)
    worst2 = worst3 = 0.0
    for trial in range(12):
        N = int(rng.integers(3, 7))
        D = np.array([cands[i] for i in rng.integers(len(cands), size=N)]) if trial else np.array([[0, 0, 0, 3]] * 5)
        N = D.shape[0]
        M2a, M3a = _moments(D, alpha0)
        for c in cands:
            D2 = D.copy()
            D2[0] = c
            M2b, M3b = _moments(D2, alpha0)
            worst2 = max(worst2, np.abs(M2a - M2b).sum() / delta_m2(N, alpha0))
            worst3 = max(worst3, np.abs(M3a - M3b).sum() / delta_m3(N, alpha0))
    assert worst2 <= 1 + 1e-12 and worst3 <= 1 + 1e-12
    assert worst2 > 0.75  # the search does reach near the bound


def test_whitened_tensor_sensitivity_given_public_whitening():
    rng = np.random.default_rng(1)
    d, k, alpha0 = 6, 3, 1.0
    U, _ = np.linalg.qr(rng.standard_normal((d, k)))
    lam = np.array([0.3, 0.1, 0.02])
    W = U / np.sqrt(lam)
    cands = [np.array(v) for v in itertools.product(range(4), repeat=d) if sum(v) == 3]
    worst = 0.0
    for trial in range(6):
        N = 5
        D = np.array([cands[i] for i in rng.integers(len(cands), size=N)])
        Ta = whitened_m3(prepare_corpus(sp.csr_matrix(D)), alpha0, W)
        for c in cands[::3]:
            D2 = D.copy()
            D2[0] = c
            Tb = whitened_m3(prepare_corpus(sp.csr_matrix(D2)), alpha0, W)
            worst = max(worst, np.linalg.norm(Ta - Tb) / whitened_tensor_sensitivity(delta_m3(N, alpha0), lam[-1]))
    assert 0.05 < worst <= 1 + 1e-12


def test_jennrich_release_sensitivity():
    """||[T(I,v_i,v_i)] - [T'(I,v_i',v_i')]||_F <= sqrt(k) ||T - T'||_F (1 + 2^{5/2} ||T||_F / gap) for
    perturbations of a nearly orthogonally decomposable T (random and eigen-gap-targeted directions)."""
    rng = np.random.default_rng(2)
    k = 4
    V, _ = np.linalg.qr(rng.standard_normal((k, k)))
    T = np.einsum("j,aj,bj,cj->abc", [3.0, 2.5, 2.0, 1.5], V, V, V)
    T += 0.05 * rng.standard_normal((k, k, k))
    T = (T + T.transpose(0, 2, 1) + T.transpose(1, 0, 2) + T.transpose(1, 2, 0) + T.transpose(2, 0, 1)
         + T.transpose(2, 1, 0)) / 6
    theta = rng.standard_normal(k)
    theta /= np.linalg.norm(theta)
    dec, rho = jennrich(T, theta)
    gap = float(np.min(eigengaps(rho)))
    w = apply_vv(T, dec.vectors)
    worst = 0.0
    for scale in (1e-4, 1e-3, 1e-2, 3e-2):
        for _ in range(200):
            E = rng.standard_normal((k, k, k))
            E = (E + E.transpose(0, 2, 1) + E.transpose(1, 0, 2) + E.transpose(1, 2, 0) + E.transpose(2, 0, 1)
                 + E.transpose(2, 1, 0)) / 6
            E *= scale / np.linalg.norm(E)
            dec2, _ = jennrich(T + E, theta)
            w2 = apply_vv(T + E, dec2.vectors)
            bound = jennrich_sensitivity(scale, gap, np.linalg.norm(T), k)
            worst = max(worst, np.linalg.norm(w - w2) / bound)
    assert 0.005 < worst <= 1.0


def test_laplace_bound_fails_with_probability_delta():
    """P[lower > value] = delta exactly: with n = 200 000 draws the empirical rate has s.d. 4.9e-4 at
    delta = 0.05; we allow 5 s.d."""
    rng = np.random.default_rng(3)
    n, delta = 200_000, 0.05
    fails = sum(laplace_bound("q", 1.0, 0.5, 2.0, delta, rng).bound > 1.0 for _ in range(n))
    assert abs(fails / n - delta) < 5 * np.sqrt(delta * (1 - delta) / n)
    up = laplace_bound("q", 1.0, 0.5, 2.0, delta, rng, side="upper")
    assert up.bound > up.noisy


def test_sigma_k_lower_bound_uses_weyl_sensitivity():
    """Procedure 1 for sigma_k(M2): Laplace scale Delta2/eps (Weyl), not Lemma 9's 2/N."""
    from topicdp.spectral.procedure1 import sigma_k_lower_bound

    b = sigma_k_lower_bound(0.01, 1000, 1.0, 0.5, 1e-6, np.random.default_rng(0))
    assert b.sensitivity == delta_m2(1000, 1.0) == 4.0 / 1000
    assert math.isclose(b.scale, b.sensitivity / 0.5)
    assert math.isclose(b.noisy - b.bound, b.scale * math.log(1 / 2e-6))
