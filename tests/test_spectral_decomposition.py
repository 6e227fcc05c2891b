"""Eigen-solver, tensor power method, Jennrich's algorithm and the non-private estimator."""

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp.datasets import synthetic_lda
from topicdp.metrics import recovery_error
from topicdp.spectral import SpectralLDA
from topicdp.spectral.tensor import jennrich, power_method, symmetrize
from topicdp.spectral.whitening import top_eigenpairs, whiten


def _planted(k, seed, values=None):
    rng = np.random.default_rng(seed)
    V, _ = np.linalg.qr(rng.standard_normal((k, k)))
    lam = np.sort(rng.uniform(1.0, 3.0, k))[::-1] if values is None else np.asarray(values, float)
    return lam, V, np.einsum("j,aj,bj,cj->abc", lam, V, V, V)


def _match(V, Vhat):
    """Max over components of min_j ||v_i - vhat_j|| (sign-fixed)."""
    return max(min(np.linalg.norm(V[:, i] - Vhat[:, j]) for j in range(V.shape[1])) for i in range(V.shape[1]))


@pytest.mark.parametrize("k,seed", [(3, 0), (8, 1), (20, 2)])
def test_power_method_recovers_planted_decomposition(k, seed):
    lam, V, T = _planted(k, seed)
    dec = power_method(T, rng=np.random.default_rng(seed))
    assert _match(V, dec.vectors) < 1e-8
    assert np.allclose(np.sort(dec.values), np.sort(lam), atol=1e-8)
    assert dec.residual < 1e-8


def test_power_method_equal_eigenvalues_and_small_noise():
    """Equal eigenvalues (symmetric alpha) and a perturbation E: error O(||E|| / lambda) (Anandkumar et al. 2014)."""
    lam, V, T = _planted(10, 5, values=np.full(10, 2.0))
    E = symmetrize(np.random.default_rng(6).standard_normal((10, 10, 10))) * 1e-3
    dec = power_method(T + E, rng=np.random.default_rng(7))
    assert _match(V, dec.vectors) < 50 * np.linalg.norm(E) / 2.0
    assert np.all(dec.values > 0)


def test_jennrich_recovers_planted_decomposition():
    lam, V, T = _planted(6, 3)
    theta = np.random.default_rng(4).standard_normal(6)
    dec, rho = jennrich(T, theta / np.linalg.norm(theta))
    assert _match(V, dec.vectors) < 1e-8
    assert np.all(np.diff(rho) <= 0)


def test_top_eigenpairs_match_dense():
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((60, 60)))
    vals = np.concatenate([[5, 4, 3.5, 3], rng.uniform(-0.5, 0.5, 56)])
    A = (Q * vals) @ Q.T
    pairs = top_eigenpairs(lambda B: A @ B, 60, 5, rng=rng, tol=1e-12, n_converge=4)
    ref = np.sort(np.linalg.eigvalsh(A))[::-1]
    assert np.allclose(pairs.values[:4], ref[:4], atol=1e-10)
    for i in range(4):
        assert abs(abs(pairs.vectors[:, i] @ Q[:, i]) - 1) < 1e-9


def test_whiten_rejects_too_few_positive_eigenvalues():
    A = np.diag([2.0, 1.0, -1.0, -2.0, 0.0])
    with pytest.raises(ValueError, match="only 2 positive eigenvalue"):
        whiten(lambda B: A @ B, 5, 3, rng=np.random.default_rng(0))


def test_spectral_lda_recovers_synthetic_topics():
    data = synthetic_lda(20_000, 300, 5, alpha0=1.0, random_state=3)
    model = SpectralLDA(5, 1.0, random_state=0).fit(data.X)
    assert model.topic_word_.shape == (5, 300)
    assert np.allclose(model.topic_word_.sum(axis=1), 1.0) and np.all(model.topic_word_ >= 0)
    assert recovery_error(model.topic_word_, data.topic_word) < 0.1
    assert np.allclose(np.sort(model.alpha_), np.sort(data.alpha), rtol=0.25)
    assert model.n_short_documents_ == 0 and model.n_documents_ == 20_000
    again = SpectralLDA(5, 1.0, random_state=0).fit(data.X)
    assert np.array_equal(again.topic_word_, model.topic_word_)


def test_spectral_lda_clip_mode_and_short_documents():
    data = synthetic_lda(3000, 100, 3, random_state=4)
    X = sp.vstack([data.X, sp.csr_matrix(np.eye(100)[:7] * 2)]).tocsr()
    model = SpectralLDA(3, 1.0, random_state=0, simplex="clip").fit(X)
    assert model.n_short_documents_ == 7
    assert np.all(np.isfinite(model.topic_word_)) and np.allclose(model.topic_word_.sum(axis=1), 1)


@pytest.mark.parametrize("kwargs,match", [
    ({"n_topics": 1, "alpha0": 1.0}, "n_topics"),
    ({"n_topics": 40, "alpha0": 1.0}, "vocabulary"),
    ({"n_topics": 3, "alpha0": 0.0}, "alpha0"),
    ({"n_topics": 3, "alpha0": -1.0}, "alpha0"),
])
def test_bad_parameters(kwargs, match):
    X = sp.csr_matrix(np.random.default_rng(0).poisson(2.0, (50, 40)))
    with pytest.raises(ValueError, match=match):
        SpectralLDA(**kwargs).fit(X)


def test_bad_corpora():
    with pytest.raises(ValueError, match="fewer than 3 tokens"):
        SpectralLDA(2, 1.0).fit(sp.csr_matrix(np.eye(10) * 2))
    # every document uses only words 0 and 1: M2_hat has rank <= 2 < k = 3
    rng = np.random.default_rng(0)
    X = np.zeros((200, 10))
    X[:, :2] = rng.poisson(3.0, (200, 2)) + 2
    with pytest.raises(ValueError, match="positive eigenvalue"):
        SpectralLDA(3, 1.0, random_state=0).fit(sp.csr_matrix(X))


def test_adapter_is_deterministic():
    from topicdp.adapters import make_model

    data = synthetic_lda(2000, 80, 4, random_state=2)

    class C:
        X = data.X
        n_words = 80

    spec = make_model("spectral", 4, 0, alpha0=1.0)
    W1, W2 = spec.fit_topic_word(C), spec.fit_topic_word(C)
    assert W1.shape == (4, 80) and np.array_equal(W1, W2)
    assert recovery_error(W1, data.topic_word) < 0.3
