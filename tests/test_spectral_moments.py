"""Moments of the spectral backend: implicit == explicit, Lemma 3 identities, the 1/sqrt(N) rate."""

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp.datasets import synthetic_lda
from topicdp.spectral.moments import M2Operator, lda_coefficients, prepare_corpus, whitened_m3
from topicdp.spectral.tensor import multilinear

from spectral_reference import explicit_moments, population_moments


def _small_corpus(seed, n_docs=7, n_words=5):
    rng = np.random.default_rng(seed)
    X = rng.poisson(1.2, size=(n_docs, n_words))
    X[0] = 0
    X[1, :] = 0
    X[1, 0] = 2  # a 2-token document: left out
    X[2, 1] = 6  # repeated words exercise the diagonal corrections
    return sp.csr_matrix(X)


@pytest.mark.parametrize("seed,alpha0,chunk", [(0, 1.0, None), (1, 0.3, 2), (2, 7.5, 3)])
def test_implicit_moments_equal_explicit(seed, alpha0, chunk, monkeypatch):
    if chunk:  # passes over X in blocks of `chunk` documents give the same sums
        monkeypatch.setattr("topicdp.spectral.moments.ROW_CHUNK", chunk)
    X = _small_corpus(seed)
    _, M2, M3 = explicit_moments(X, alpha0)  # loops over documents and distinct index tuples
    corpus = prepare_corpus(X)
    assert corpus.n_short == int((np.asarray(X.sum(axis=1)).ravel() < 3).sum()) >= 2
    assert corpus.n_docs >= 4
    M2_op = M2Operator(corpus, alpha0).dense()
    assert np.max(np.abs(M2_op - M2)) <= 1e-10 * np.max(np.abs(M2))
    W = np.random.default_rng(seed + 10).standard_normal((X.shape[1], 3))
    T = whitened_m3(corpus, alpha0, W)
    T_explicit = multilinear(M3, W)
    assert np.max(np.abs(T - T_explicit)) <= 1e-10 * np.max(np.abs(T_explicit))
    # W = I gives the full tensor
    assert np.allclose(whitened_m3(corpus, alpha0, np.eye(X.shape[1])), M3, rtol=0, atol=1e-12)


def _dirichlet_moments(alpha):
    """E[theta], E[theta theta], E[theta theta theta] of Dirichlet(alpha) (Lemma 23, Eqs. 13-15)."""
    a0 = alpha.sum()
    e1 = alpha / a0
    e2 = (np.outer(alpha, alpha) + np.diag(alpha)) / (a0 * (a0 + 1))
    k = alpha.size
    e3 = np.einsum("i,j,l->ijl", alpha, alpha, alpha)
    I = np.eye(k)
    diag2 = np.einsum("t,ti,tj->tij", alpha, I, I)  # alpha_t e_t e_t
    e3 += np.einsum("tij,l->ijl", diag2, alpha) + np.einsum("tjl,i->ijl", diag2, alpha) \
        + np.einsum("til,j->ijl", diag2, alpha)
    e3 += 2 * np.einsum("t,ti,tj,tl->ijl", alpha, I, I, I)
    return e1, e2, e3 / (a0 * (a0 + 1) * (a0 + 2))


def test_lemma3_needs_the_standard_constants():
    """Lemma 3's identity holds with -alpha0/(alpha0+2), 2 alpha0^2/(...) (Eq. 7's b, c), not as printed."""
    rng = np.random.default_rng(3)
    alpha = np.array([0.5, 1.2, 1.3])  # alpha0 = 3, where the printed -1/(alpha0+2) differs
    mu = rng.dirichlet(np.ones(6), size=3)
    e1, e2, e3 = _dirichlet_moments(alpha)
    Ex1 = e1 @ mu
    Ex12 = mu.T @ e2 @ mu
    Ex123 = multilinear(e3, mu)
    a, b, c = lda_coefficients(alpha.sum())
    sym = np.einsum("ab,c->abc", Ex12, Ex1)
    sym = sym + sym.transpose(0, 2, 1) + sym.transpose(2, 1, 0)
    cube = np.einsum("a,b,c->abc", Ex1, Ex1, Ex1)
    _, M2, M3 = population_moments(mu, alpha)
    assert np.allclose(Ex12 - a * np.outer(Ex1, Ex1), M2, atol=1e-14)
    assert np.allclose(Ex123 + b * sym + c * cube, M3, atol=1e-14)
    a0 = alpha.sum()
    printed = Ex123 - sym / (a0 + 2) + 2 / (a0 * (a0 + 1) * (a0 + 2)) * cube
    assert np.max(np.abs(printed - M3)) > 1e-3


def test_empirical_moments_converge_at_root_n_rate():
    """||M_hat - M||_F ~ C / sqrt(N) (Lemma 22: unbiased averages of i.i.d. documents).

    Statistics: M_hat is a U-statistic of i.i.d. documents, so E||M_hat - M||_F^2 = tr(Cov)/N + O(1/N^2).
    We average the squared error over 8 independent corpora at each N and fit the log-log slope over
    N = 1k..64k. Over 8 independent repetitions of this whole test the slope had mean -0.53 and s.d.
    0.06, and the 64x ratio of errors ranged 6.4-13.6 (expected 8): slope in [-0.7, -0.35] and
    ratio in [4, 16] are about 3-sigma statements; the seeds are fixed, so the test is deterministic.
    """
    k, d, alpha0 = 3, 6, 1.0
    truth = synthetic_lda(10, d, k, alpha0=alpha0, beta=0.5, random_state=11)
    mu, alpha = truth.topic_word, truth.alpha
    _, M2, M3 = population_moments(mu, alpha)
    Ns = [1000, 4000, 16000, 64000]
    err2, err3 = [], []
    for N in Ns:
        e2 = e3 = 0.0
        for rep in range(8):
            rng = np.random.default_rng(1000 * rep + N)
            X = _draw(mu, alpha, N, rng)
            corpus = prepare_corpus(X)
            e2 += np.sum((M2Operator(corpus, alpha0).dense() - M2) ** 2)
            e3 += np.sum((whitened_m3(corpus, alpha0, np.eye(d)) - M3) ** 2)
        err2.append(np.sqrt(e2 / 8))
        err3.append(np.sqrt(e3 / 8))
    for err in (err2, err3):
        slope = np.polyfit(np.log(Ns), np.log(err), 1)[0]
        assert -0.7 <= slope <= -0.35, (slope, err)
        assert 4.0 <= err[0] / err[-1] <= 16.0


def _draw(mu, alpha, N, rng):
    theta = rng.dirichlet(alpha, size=N)
    lengths = rng.poisson(20, size=N) + 3
    word_probs = theta @ mu
    return sp.csr_matrix(np.vstack([rng.multinomial(l, p) for l, p in zip(lengths, word_probs)]))


def test_prepare_corpus_validation():
    with pytest.raises(ValueError, match="fewer than 3 tokens"):
        prepare_corpus(sp.csr_matrix(np.array([[1, 1, 0], [2, 0, 0], [0, 0, 1]])))
    with pytest.raises(ValueError, match="non-negative integer"):
        prepare_corpus(sp.csr_matrix(np.array([[1.5, 2, 0], [2, 2, 2], [3, 0, 1]])))
    with pytest.raises(ValueError, match="non-negative integer counts .found the negative value"):
        prepare_corpus(sp.csr_matrix(np.array([[-1, 5, 0], [2, 2, 2], [3, 0, 1]])))
    with pytest.raises(ValueError, match="2-D|2D"):
        prepare_corpus(np.array([1, 2, 3]))
    assert prepare_corpus([[1, 2, 3], [0, 3, 0], [1, 1, 1]]).n_docs == 3  # array-likes are accepted, as in scikit-learn
    c = prepare_corpus(sp.csr_matrix(np.array([[3, 0, 0], [1, 1, 1], [0, 2, 2], [1, 0, 0]])))
    assert (c.n_docs, c.n_short) == (3, 1)


@pytest.mark.parametrize("seed,alpha0,chunk", [(3, 1.0, None), (4, 0.3, 2)])
def test_user_weighted_moments_equal_explicit(seed, alpha0, chunk, monkeypatch):
    """Per-user weighting: operator and whitened tensor against the loops over per-user averages."""
    if chunk:
        monkeypatch.setattr("topicdp.spectral.moments.ROW_CHUNK", chunk)
    X = _small_corpus(seed, n_docs=11)
    users = np.array([5, 5, 1, 1, 1, 9, 2, 2, 7, 7, 7])  # users 5 loses both of its documents (< 3 tokens)
    _, M2, M3 = explicit_moments(X, alpha0, users=users)
    corpus = prepare_corpus(X, users=users)
    assert corpus.n_units == len(set(users[np.asarray(X.sum(axis=1)).ravel() >= 3]))
    assert np.max(np.abs(M2Operator(corpus, alpha0).dense() - M2)) <= 1e-10 * np.max(np.abs(M2))
    W = np.random.default_rng(seed).standard_normal((X.shape[1], 3))
    T_explicit = multilinear(M3, W)
    assert np.max(np.abs(whitened_m3(corpus, alpha0, W) - T_explicit)) <= 1e-10 * np.max(np.abs(T_explicit))


def test_one_document_per_user_is_document_level():
    X = _small_corpus(5, n_docs=9)
    doc, usr = prepare_corpus(X), prepare_corpus(X, users=np.arange(9)[::-1])
    assert usr.n_units == doc.n_docs
    assert np.allclose(M2Operator(usr, 1.0).dense(), M2Operator(doc, 1.0).dense(), rtol=0, atol=1e-15)
    W = np.random.default_rng(0).standard_normal((5, 2))
    assert np.allclose(whitened_m3(usr, 1.0, W), whitened_m3(doc, 1.0, W), rtol=0, atol=1e-13)


def test_user_weighted_moments_estimate_the_population_moments():
    """Users owning 1-9 documents: the per-user moments estimate Lemma 3's moments. Averaging a user's
    i.i.d. documents can only lower the variance of its unit statistic, so the error with U users is at
    most about that of the document-level estimator with N = U documents (one per user); we compare with
    that estimator on the first document of each user and allow 1.5x for the seed."""
    data = synthetic_lda(12_000, 40, 3, alpha0=1.0, random_state=3)
    rng = np.random.default_rng(3)
    users = np.sort(rng.integers(0, 2400, size=12_000))
    _, M2_pop, _ = population_moments(data.topic_word, data.alpha)
    err_user = np.linalg.norm(M2Operator(prepare_corpus(data.X, users=users), 1.0).dense() - M2_pop)
    first = np.r_[True, users[1:] != users[:-1]]
    err_doc = np.linalg.norm(M2Operator(prepare_corpus(data.X[first]), 1.0).dense() - M2_pop)
    assert err_user <= 1.5 * err_doc
    assert err_user <= 0.1 * np.linalg.norm(M2_pop)


def test_users_argument_validation():
    X = _small_corpus(0)
    with pytest.raises(ValueError, match="users must have one entry per row"):
        prepare_corpus(X, users=np.arange(3))
    with pytest.raises(ValueError, match="at least 3 users"):
        prepare_corpus(X, users=np.zeros(7))
