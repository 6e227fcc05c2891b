"""SklearnLDA's per-user weight (``max_user_norm``) checked against the identities it comes from: with every weight
1 the statistic is scikit-learn's own, and a user whose documents are doubled (their counts, and so their norm,
doubled) weighs what they weighed once."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp import Corpus, SklearnLDA


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.poisson(0.3, (60, 40)))
    X = X[np.asarray(X.sum(axis=1)).ravel() > 0]
    return Corpus(X=X, vocabulary=tuple(f"w{j}" for j in range(40)), doc_users=np.arange(X.shape[0]) % 15)


def _start(k: int = 4, v: int = 40) -> np.ndarray:
    return np.random.default_rng(1).random((k, v)) + 0.1


def _user_norms(corpus: Corpus) -> np.ndarray:
    """||a_u||_2 of each user's summed counts, computed densely (independently of the package's sparse one)."""
    A = np.zeros((corpus.n_users, corpus.n_words))
    np.add.at(A, corpus.doc_users, corpus.X.toarray())
    return np.sqrt((A ** 2).sum(axis=1))


def _largest_user_doubled(corpus: Corpus) -> tuple[float, Corpus]:
    """The largest user's norm, and the corpus with that user's documents appended once more."""
    norms = _user_norms(corpus)
    big = int(np.argmax(norms))
    docs = np.flatnonzero(corpus.doc_users == big)
    return float(norms[big]), Corpus(X=sp.vstack([corpus.X, corpus.X[docs]]).tocsr(), vocabulary=corpus.vocabulary,
                                      doc_users=np.concatenate([corpus.doc_users, corpus.doc_users[docs]]))


@pytest.mark.parametrize("init", [None, "public"])
def test_weights_of_one_give_scikit_learns_statistic(corpus, init):
    """A cap no user's counts, nor any user's part of a topic, reach weighs every document 1: the recomputed
    statistic is scikit-learn's (both starts; differences are rounding accumulated over the iterations)."""
    start = _start() if init else None
    cap = 1e6 * float(_user_norms(corpus).max())
    plain = SklearnLDA(4, 0, init=start).fit_topic_word(corpus)
    weighted = SklearnLDA(4, 0, init=start, max_user_norm=cap).fit_topic_word(corpus)
    assert np.abs(plain - weighted).max() < 1e-8


def test_a_user_doubled_weighs_what_they_weighed_once(corpus):
    """Doubling the largest user's documents with the cap at their norm halves their weight: the constant
    document start makes each copy's E-step the original's, so the weighted statistic, and f, are unchanged; the
    unweighted f moves."""
    largest, doubled = _largest_user_doubled(corpus)
    capped = SklearnLDA(4, 0, init=_start(), max_user_norm=largest)
    assert np.abs(capped.fit_topic_word(corpus) - capped.fit_topic_word(doubled)).max() < 1e-12
    plain = SklearnLDA(4, 0, init=_start())
    assert np.abs(plain.fit_topic_word(corpus) - plain.fit_topic_word(doubled)).max() > 1e-3


def test_the_weight_needs_batch_learning_and_a_positive_cap(corpus):
    with pytest.raises(ValueError, match="max_user_norm .* needs learning_method='batch'"):
        SklearnLDA(4, 0, learning_method="online", max_user_norm=10.0).fit_topic_word(corpus)
    with pytest.raises(ValueError, match=r"max_user_norm must be a float in the range \(0.0, inf\)"):
        SklearnLDA(4, 0, max_user_norm=0.0).fit_topic_word(corpus)


def test_gensims_weights_of_one_give_gensims_statistic_and_a_doubled_user_weighs_once(corpus):
    """The same two identities through gensim's E-step (GensimLDA's batch stable form)."""
    pytest.importorskip("gensim")
    from topicdp import GensimLDA

    largest, doubled = _largest_user_doubled(corpus)
    plain = GensimLDA(4, 0, init=_start())
    unreached = GensimLDA(4, 0, init=_start(), max_user_norm=1e6 * largest)
    assert np.abs(plain.fit_topic_word(corpus) - unreached.fit_topic_word(corpus)).max() < 1e-8
    weighted = GensimLDA(4, 0, init=_start(), max_user_norm=largest)
    assert np.abs(weighted.fit_topic_word(corpus) - weighted.fit_topic_word(doubled)).max() < 1e-12
    assert np.abs(plain.fit_topic_word(corpus) - plain.fit_topic_word(doubled)).max() > 1e-3
    assert np.abs(plain.fit_topic_word(corpus) - plain.fit_topic_word(doubled)).max() > 1e-3
    with pytest.raises(ValueError, match="max_user_norm .* needs learning='batch'"):
        GensimLDA(4, 0, max_user_norm=10.0).fit_topic_word(corpus)


def test_a_users_part_of_each_topic_is_capped_as_computed_densely(corpus):
    """The statistic with a per-user, per-topic cap against a dense loop over users and topics: user u's part of
    row k, S_uk, is weighed min(1, cap * K * pi_k / ||S_uk||), pi_k row k's share of the statistic's mass; at a cap
    where some parts are cut (asserted) the two agree to rounding, and no weighed part exceeds its limit; with the
    share squared the weights are the dense loop's too."""
    from topicdp.inference.estep import dirichlet_expectation, statistic_from_gamma, user_topic_weights

    rng = np.random.default_rng(2)
    k, X = 4, corpus.X.toarray().astype(np.float64)
    gamma, exp_beta = rng.random((X.shape[0], k)) + 0.5, rng.random((k, X.shape[1])) + 0.05
    weights = rng.random(X.shape[0]) + 0.5
    theta = np.exp(dirichlet_expectation(gamma))
    ratio = X * weights[:, None] / (theta @ exp_beta + np.finfo(np.float64).eps)
    parts = np.zeros((corpus.n_users, k, X.shape[1]))  # S_uk[v] = beta_kv sum_{d of u} ratio_dv theta_dk
    for d, u in enumerate(corpus.doc_users):
        parts[u] += theta[d][:, None] * ratio[d][None, :] * exp_beta
    mass = parts.sum(axis=(0, 2))
    cap = float(np.median(np.linalg.norm(parts, axis=2)))  # a cap that cuts about half of the parts
    limit = cap * k * mass / mass.sum()
    w = np.minimum(1.0, limit / np.linalg.norm(parts, axis=2))
    assert 0.2 < np.mean(w < 1) < 0.8
    expected = (w[:, :, None] * parts).sum(axis=0)
    got = statistic_from_gamma(sp.csr_matrix(X), gamma, exp_beta, weights, doc_users=corpus.doc_users,
                               max_user_norm=cap)
    assert np.abs(got - expected).max() < 1e-10 * np.abs(expected).max()
    assert np.all(np.linalg.norm(w[:, :, None] * parts, axis=2) <= limit * (1 + 1e-12))
    squared = np.minimum(1.0, cap * (k * mass / mass.sum()) ** 2 / np.linalg.norm(parts, axis=2))
    got = user_topic_weights(sp.csr_matrix(ratio), theta, exp_beta, corpus.doc_users, cap, share_power=2.0)
    assert np.abs(got - squared[corpus.doc_users]).max() < 1e-12 and not np.allclose(squared, w)
