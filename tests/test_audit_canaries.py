"""Canary builders on the minimal (X, doc_users, vocabulary) interface, and the synthetic statistic."""

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp.audit import as_corpus_data, long_document_canary, make_canary, outlier_user_canary, typical_user_canary
from topicdp.audit.canaries import BoundedContributionSum, synthetic_corpus


@pytest.fixture(scope="module")
def corpus():
    return synthetic_corpus(n_users=30, n_words=80, random_state=0)


def _rows(data):
    return {tuple(r) for r in data.X.toarray().astype(int)}


def test_typical_user_add_remove(corpus):
    pair = typical_user_canary(corpus, random_state=0)
    D, Dp = pair.D, pair.D_prime
    assert Dp.n_users == D.n_users + 1 == corpus.n_users
    assert D.vocabulary == Dp.vocabulary == corpus.vocabulary
    n_canary = pair.details["canary_docs"]
    assert Dp.X.shape[0] == D.X.shape[0] + n_canary
    assert (abs(Dp.X[: D.X.shape[0]] - D.X)).nnz == 0  # D' = D + the canary's rows, appended
    canary_rows = Dp.X[D.X.shape[0] :]
    assert np.all(Dp.doc_users[D.X.shape[0] :] == D.n_users)
    assert set(pair.canary_words) == set(np.flatnonzero(np.asarray(canary_rows.sum(axis=0)).ravel()))
    assert pair.canary_weights.sum() == pytest.approx(1.0)


def test_outlier_user_adds_fresh_vocabulary_to_both_datasets(corpus):
    vocab = list(corpus.vocabulary) + ["zzcanary0"]  # a collision the builder must avoid
    X = sp.hstack([corpus.X, sp.csr_matrix((corpus.X.shape[0], 1), dtype=corpus.X.dtype)], format="csr")
    pair = outlier_user_canary((X, corpus.doc_users, vocab), n_docs=7, doc_length=30, n_words=4, random_state=0)
    D, Dp = pair.D, pair.D_prime
    assert D.vocabulary == Dp.vocabulary and len(D.vocabulary) == len(vocab) + 4
    assert len(set(D.vocabulary)) == len(D.vocabulary)
    fresh = pair.canary_words
    assert np.all(fresh == np.arange(len(vocab), len(vocab) + 4))
    assert D.X[:, fresh].nnz == 0  # no one else uses the canary's words
    canary_rows = Dp.X[D.X.shape[0] :]
    assert canary_rows.shape[0] == 7 and np.all(np.asarray(canary_rows.sum(axis=1)).ravel() == 30)
    assert canary_rows[:, : len(vocab)].nnz == 0


def test_long_document(corpus):
    longest = int(np.asarray(corpus.X.sum(axis=1)).max())
    pair = long_document_canary(corpus, random_state=0)
    doc = pair.D_prime.X[-1]
    assert pair.D_prime.X.shape[0] == corpus.X.shape[0] + 1
    assert doc.sum() == 10 * longest and doc.nnz <= 20
    assert pair.unit == "document"
    replaced = long_document_canary(corpus, length=500, neighbours="replace-one", random_state=0)
    assert replaced.D_prime.X.shape == corpus.X.shape
    assert np.array_equal(replaced.D_prime.doc_users, replaced.D.doc_users)
    assert (abs(replaced.D_prime.X - replaced.D.X)).sum(axis=1).astype(bool).sum() == 1  # one document differs


@pytest.mark.parametrize("kind", ["typical", "outlier"])
def test_replace_one_keeps_the_number_of_users(corpus, kind):
    pair = make_canary(kind, corpus, neighbours="replace-one", random_state=3)
    assert pair.D_prime.n_users == pair.D.n_users and "replaced_user" in pair.details


@pytest.mark.parametrize("kind", ["typical", "outlier", "long-document"])
@pytest.mark.parametrize("neighbours", ["add-remove", "replace-one"])
def test_bounded_contribution_sum_has_its_proven_sensitivity(corpus, kind, neighbours):
    f = BoundedContributionSum(n_rows=4)
    pair = make_canary(kind, corpus, neighbours=neighbours, random_state=5)
    dist = np.linalg.norm(f(pair.D_prime) - f(pair.D))
    assert 0 < dist <= f.sensitivity(neighbours) + 1e-9


def test_bounded_contribution_sum_matches_a_direct_loop(corpus):
    f = BoundedContributionSum(n_rows=3)
    X = corpus.X.toarray().astype(float)
    h = (np.arange(X.shape[1]) * 2654435761) % 1000003
    rows = np.rint(X @ h).astype(np.int64) % 3
    W = np.zeros((3, X.shape[1]))
    for u in range(corpus.n_users):
        block = np.zeros_like(W)
        for d in np.flatnonzero(corpus.doc_users == u):
            block[rows[d]] += X[d]
        W += block / max(1.0, np.linalg.norm(block))
    np.testing.assert_allclose(f(corpus), W, atol=1e-9)


def test_duck_typed_corpus_and_as_corpora(corpus):
    obj = SimpleNamespace(X=corpus.X, doc_users=corpus.doc_users + 10, vocabulary=tuple(corpus.vocabulary))
    data = as_corpus_data(obj)
    assert data.doc_users.min() == 0 and data.n_users == corpus.n_users
    pair = make_canary("typical", obj, random_state=0)
    built = pair.as_corpora(lambda X, vocabulary, users: (X.shape, len(vocabulary), len(users)))
    assert built[0] == (pair.D.X.shape, len(pair.D.vocabulary), pair.D.X.shape[0])


def test_works_with_the_project_corpus_class(corpus):
    from topicdp.corpus import Corpus

    real = Corpus.from_matrix(corpus.X, corpus.vocabulary, corpus.doc_users)
    pair = make_canary("outlier", real, random_state=0)
    D, Dp = pair.as_corpora(Corpus.from_matrix)
    assert D.n_words == Dp.n_words == real.n_words + 10
    assert Dp.n_users == D.n_users + 1


def test_bad_inputs(corpus):
    with pytest.raises(TypeError, match="corpus"):
        as_corpus_data([1, 2])
    with pytest.raises(ValueError, match="doc_users"):
        as_corpus_data((corpus.X, corpus.doc_users[:-1], corpus.vocabulary))
    with pytest.raises(ValueError, match="vocabulary"):
        as_corpus_data((corpus.X, corpus.doc_users, corpus.vocabulary[:-1]))
    with pytest.raises(ValueError, match="neighbours"):
        make_canary("typical", corpus, neighbours="swap")
    with pytest.raises(ValueError, match="canary"):
        make_canary("celebrity", corpus)
    with pytest.raises(ValueError, match="n_docs"):
        outlier_user_canary(corpus, n_docs=0)
