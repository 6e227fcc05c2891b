"""Held-out perplexity by document completion: closed forms and the true model beating a random one."""

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp.datasets import synthetic_lda
from topicdp.metrics import heldout_perplexity, infer_theta, split_documents


@pytest.fixture(scope="module")
def corpus():
    return synthetic_lda(600, 80, 4, beta=0.1, alpha0=1.0, mean_length=60, random_state=11)


def test_uniform_topics_give_perplexity_v(corpus):
    assert heldout_perplexity(np.ones((4, 80)), corpus.X, random_state=0) == pytest.approx(80.0)


def test_single_topic_closed_form(corpus):
    p = np.asarray(corpus.X.sum(axis=0)).ravel() + 1.0
    p /= p.sum()
    _, X_eval = split_documents(corpus.X, 0.5, random_state=3)
    counts = np.asarray(X_eval.sum(axis=0)).ravel()
    expected = np.exp(-(counts * np.log(p)).sum() / counts.sum())
    assert heldout_perplexity(p[None, :], corpus.X, random_state=3) == pytest.approx(expected)


def test_true_model_beats_random_and_uniform(corpus):
    true = heldout_perplexity(corpus.topic_word, corpus.X, alpha=corpus.alpha[0], random_state=0)
    rng = np.random.default_rng(0)
    random = heldout_perplexity(rng.dirichlet(np.full(80, 0.1), size=4), corpus.X, random_state=0)
    assert true < 0.5 * 80 and true < 0.2 * random


def test_split_preserves_tokens_and_fraction():
    X = sp.csr_matrix(np.array([[3, 0, 2, 5], [1, 0, 0, 0], [0, 4, 0, 0]]))
    obs, ev = split_documents(X, 0.5, random_state=0)
    np.testing.assert_array_equal((obs + ev).toarray()[[0, 2]], X.toarray()[[0, 2]])
    assert obs.sum(axis=1).A.ravel().tolist() == [5, 0, 2]  # floor(10/2), single-token doc dropped, floor(4/2)
    assert ev[1].nnz == 0 and obs[1].nnz == 0


def test_fold_in_recovers_single_topic_documents():
    mu = np.array([[0.7, 0.3, 0.0, 0.0], [0.0, 0.0, 0.4, 0.6]])
    X = sp.csr_matrix(np.array([[30, 12, 0, 0], [0, 0, 20, 31]]))
    theta = infer_theta(mu, X, alpha=0.1)
    assert theta[0, 0] > 0.97 and theta[1, 1] > 0.97


def test_negative_topic_word_is_refused(corpus):
    with pytest.raises(ValueError, match="negative"):
        heldout_perplexity(corpus.topic_word - 0.1, corpus.X)
