"""The noise of the spectral configurations: symmetric matrices and M3 noise applied in whitened space."""

import numpy as np

from topicdp.spectral.noise import symmetric_matrix_noise, symmetric_tensor_noise, whitened_m3_noise
from topicdp.spectral.tensor import multilinear, symmetrize


def test_symmetric_matrix_noise_law():
    """Sym(F): symmetric, variance s^2 on the diagonal and s^2/2 off it, uncorrelated unique entries.

    Statistics: sample variances of n Gaussian draws have relative s.d. sqrt(2/n): n = 600 diagonal
    entries (5.8 %) and ~180 000 off-diagonal ones (0.33 %); the bounds are 5 s.d.; the correlation of
    distinct unique entries has s.d. 1/sqrt(n).
    """
    d, s = 600, 0.7
    E = symmetric_matrix_noise(d, s, np.random.default_rng(0), block=64)  # many blocks, odd boundary
    assert np.array_equal(E, E.T)
    diag = np.diag(E)
    iu = np.triu_indices(d, 1)
    off = E[iu]
    assert abs(diag.var() / s ** 2 - 1) < 5 * np.sqrt(2 / d)
    assert abs(off.var() / (s ** 2 / 2) - 1) < 5 * np.sqrt(2 / off.size)
    corr = np.corrcoef(off[:-1], off[1:])[0, 1]
    assert abs(corr) < 5 / np.sqrt(off.size)


def test_symmetric_tensor_noise_is_symmetric():
    T = symmetric_tensor_noise(4, 1.0, np.random.default_rng(1))
    assert np.allclose(T, symmetrize(T), atol=1e-15)


def _symmetrizer(k):
    P = np.zeros((k ** 3, k ** 3))
    for i in range(k ** 3):
        e = np.zeros(k ** 3)
        e[i] = 1
        P[:, i] = symmetrize(e.reshape(k, k, k)).ravel()
    return P


def test_whitened_noise_has_the_covariance_of_explicit_d3_noise():
    """Sym(F)(W, W, W) for d^3 i.i.d. F, and the k^3 sampler, both have covariance s^2 P (G x G x G) P.

    Statistics: for n i.i.d. Gaussian vectors the sample covariance entry S_ij has variance
    (C_ii C_jj + C_ij^2)/n. We test every entry of both samples' covariance against the analytic C at
    5.5 such s.d. (two-sided 4e-8 per entry; 2 x 64 entries: family-wise < 1e-5), fixed seeds. The
    naive "i.i.d. unique entries, mirrored" noise has a different covariance; the test also shows that
    its covariance is many s.d. away, i.e. the test has the power to tell the two apart.
    """
    d, k, s, n = 4, 2, 0.8, 40_000
    rng = np.random.default_rng(2)
    W = rng.standard_normal((d, k))
    G = W.T @ W
    P = _symmetrizer(k)
    C = s ** 2 * P @ np.kron(np.kron(G, G), G) @ P.T

    F = s * rng.standard_normal((n, d, d, d))
    F = (F + F.transpose(0, 1, 3, 2) + F.transpose(0, 2, 1, 3) + F.transpose(0, 2, 3, 1)
         + F.transpose(0, 3, 1, 2) + F.transpose(0, 3, 2, 1)) / 6
    explicit = np.einsum("nijl,ia,jb,lc->nabc", F, W, W, W).reshape(n, -1)
    whitened = np.stack([whitened_m3_noise(W, s, rng).ravel() for _ in range(n)])

    sd = np.sqrt((np.outer(np.diag(C), np.diag(C)) + C ** 2) / n)
    for sample in (explicit, whitened):
        S = sample.T @ sample / n  # mean zero known
        assert np.all(np.abs(S - C) <= 5.5 * sd + 1e-15)

    # the other reading of "symmetric noise": unique entries i.i.d. N(0, s^2), mirrored
    naive = np.zeros((d ** 3, d ** 3))
    seen = {}
    for idx in np.ndindex(d, d, d):
        key = tuple(sorted(idx))
        seen.setdefault(key, []).append(np.ravel_multi_index(idx, (d, d, d)))
    for members in seen.values():
        for a in members:
            for b in members:
                naive[a, b] = s ** 2
    WWW = np.kron(np.kron(W, W), W)
    C_naive = WWW.T @ naive @ WWW
    assert np.max(np.abs(C_naive - C) / sd) > 50


def test_explicit_reference_matches_whitening_of_a_fixed_tensor():
    rng = np.random.default_rng(3)
    W = rng.standard_normal((5, 2))
    A = symmetrize(rng.standard_normal((5, 5, 5)))
    assert np.allclose(multilinear(A, W), np.einsum("ijl,ia,jb,lc->abc", A, W, W, W))
