"""transform: document-topic proportions of new documents folded into a released matrix."""

import numpy as np
import pytest
import scipy.sparse as sp

from topicdp import CallableModel, Corpus, PrivateRelease, TopicDP
from topicdp.variational import DPVariationalEM, VariationalLDA

# a grid search fits once per candidate and fold: the repeated releases it warns about: the repeated-release warning
# is expected here (elsewhere it is an error, pyproject.toml)
pytestmark = pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")


K, V, OWN = 3, 30, 10


def block_topics() -> np.ndarray:
    """Topic k puts 0.9 on its own 10 words (0.09 each) and 0.1 on the other 20 (0.005 each)."""
    W = np.full((K, V), 0.1 / (V - OWN))
    for k in range(K):
        W[k, k * OWN:(k + 1) * OWN] = 0.9 / OWN
    return W


@pytest.fixture(scope="module")
def release():
    corpus = Corpus.from_matrix(sp.csr_matrix(np.ones((4, V), dtype=np.int64)), [f"w{j}" for j in range(V)])
    model = CallableModel(lambda c: block_topics(), n_topics=K, name="blocks")
    noisy = TopicDP(model, epsilon=1.0, delta=1e-5, sensitivity="global", random_state=0).fit(corpus).release_
    # the same report on the noiseless block topics: transform only reads topic_word and vocabulary
    return PrivateRelease(topic_word=block_topics(), noisy=None, vocabulary=noisy.vocabulary, report=noisy.report)


def test_document_of_one_topics_words_goes_to_that_topic(release):
    """20 tokens, all among topic k's own words. From the uniform start every token has responsibility
    0.09 / (0.09 + 2 x 0.005) = 0.9 for topic k; a larger gamma_k only raises it (the likelihood ratio is the
    same 18 for every token), so gamma_k >= alpha + 0.9 x 20 at every later step and
    theta_k >= (1/3 + 18) / (1 + 20) = 0.873 with alpha = 1/K."""
    X = np.zeros((K, V))
    for k in range(K):
        X[k, k * OWN:k * OWN + 5] = 4
    theta = release.transform(X)
    assert theta.shape == (K, K)
    assert np.allclose(theta.sum(axis=1), 1.0)
    assert np.all(np.diag(theta) >= (1 / 3 + 18) / 21)


def test_rows_sum_to_one_and_a_corpus_with_the_same_vocabulary_is_accepted(release):
    rng = np.random.default_rng(0)
    dense = rng.poisson(0.5, size=(8, V))
    dense[3] = 0  # an empty document gets the prior mean
    counts = sp.csr_matrix(dense)
    theta = release.transform(counts)
    assert np.allclose(theta.sum(axis=1), 1.0) and np.allclose(theta[3], 1 / K)
    same = Corpus.from_matrix(counts[[0, 1, 2, 4]], release.vocabulary)
    assert np.allclose(release.transform(same), theta[[0, 1, 2, 4]])


def test_columns_must_match_the_release(release):
    with pytest.raises(ValueError, match=f"X has {V - 1} features, but the release is expecting {V}"):
        release.transform(np.ones((2, V - 1)))
    other = Corpus.from_matrix(sp.csr_matrix(np.ones((2, V), dtype=np.int64)), [f"x{j}" for j in range(V)])
    with pytest.raises(ValueError, match="vocabulary=release.vocabulary"):
        release.transform(other)
    with pytest.raises(ValueError, match="non-negative counts .found the negative value"):
        release.transform(-np.ones((2, V)))


def test_estimator_transform_uses_its_release(lee_corpus):
    small = lee_corpus.subset_documents(np.arange(40))
    model = DPVariationalEM(3, epsilon=2.0, unit="document", n_iterations=2, random_state=0).fit(small)
    theta = model.transform(small)
    assert theta.shape == (40, 3) and np.allclose(theta.sum(axis=1), 1.0)
    assert np.allclose(model.release_.transform(small.X, alpha=model.alpha_), theta)


def _grid_corpus():
    from topicdp.datasets import synthetic_lda

    return sp.csr_matrix(synthetic_lda(400, 30, 3, beta=0.1, mean_length=80, random_state=0).X)


@pytest.mark.parametrize("make", [
    lambda: __import__("topicdp.spectral", fromlist=["SpectralLDA"]).SpectralLDA(n_topics=2, alpha0=1.0, random_state=0),
    lambda: __import__("topicdp.spectral", fromlist=["DPSpectralMoments"]).DPSpectralMoments(
        n_topics=2, alpha0=1.0, configuration=1, epsilon=1e4, delta=1e-6, unit="document", random_state=0),
    lambda: __import__("topicdp.baselines", fromlist=["SVILDA"]).SVILDA(n_topics=2, n_iterations=20, random_state=0),
    lambda: VariationalLDA(2, unit="document", n_iterations=5, random_state=0),
], ids=["SpectralLDA", "DPSpectralMoments", "SVILDA", "VariationalLDA"])
def test_grid_search_works_without_a_scoring_argument(make):
    """score() is minus the log held-out perplexity, so GridSearchCV can pick n_topics on its own."""
    from sklearn.model_selection import GridSearchCV

    X = _grid_corpus()
    search = GridSearchCV(make(), {"n_topics": [2, 3]}, cv=2).fit(X)
    scores = search.cv_results_["mean_test_score"]
    assert search.best_params_["n_topics"] in (2, 3) and np.all(np.isfinite(scores))
    # the perplexity of V = 30 words lies in (1, 30) for any topics, so the score lies in (-log 30, 0)
    assert np.all((scores > -np.log(30)) & (scores < 0))


def test_score_is_higher_for_the_true_topics_than_for_uniform_ones():
    from topicdp.datasets import synthetic_lda

    data = synthetic_lda(400, 30, 3, beta=0.1, mean_length=80, random_state=0)
    model = VariationalLDA(3, unit="document", n_iterations=1, random_state=0).fit(data.X)
    fitted = model.score(data.X)
    model.topic_word_ = np.full((3, 30), 1 / 30)
    assert fitted > model.score(data.X) == pytest.approx(-np.log(30), abs=1e-9)
