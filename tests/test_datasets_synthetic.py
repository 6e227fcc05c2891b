"""synthetic_lda: ground truth, alpha / mu controls, bursty topics (spectral paper 000_* Sec. 7)."""

import numpy as np
import pytest

from topicdp.datasets import synthetic_lda


def test_same_seed_same_corpus_and_simplex_rows():
    a = synthetic_lda(200, 40, 3, random_state=7, mean_length=30)
    b = synthetic_lda(200, 40, 3, random_state=7, mean_length=30)
    assert (a.X != b.X).nnz == 0 and np.array_equal(a.topic_word, b.topic_word)
    np.testing.assert_allclose(a.topic_word.sum(axis=1), 1.0)
    assert a.X.shape == (200, 40) and a.X.dtype == np.int64


def test_defaults_are_unchanged_by_the_new_keywords():
    """Passing the new keywords at their defaults draws exactly the same corpus (other benchmarks rely on it)."""
    a = synthetic_lda(150, 30, 3, random_state=1, bursty=True, mean_length=20)
    b = synthetic_lda(150, 30, 3, random_state=1, bursty=True, mean_length=20,
                      alpha_concentration=None, bursty_mass=0.5, n_bursty=None, topic_word=None)
    assert (a.X != b.X).nnz == 0 and np.array_equal(a.topic_word, b.topic_word)


def test_word_frequencies_match_the_generative_model():
    """E[word v] = sum_j (alpha_j / alpha0) mu_jv; a 4000-document corpus matches within 5 standard errors."""
    s = synthetic_lda(4000, 20, 3, alpha0=2.0, beta=1.0, mean_length=50, random_state=3)
    expected = (s.alpha / s.alpha0) @ s.topic_word
    counts = np.asarray(s.X.sum(axis=0)).ravel()
    freq = counts / counts.sum()
    # theta varies per document, so tokens are over-dispersed; a per-document bootstrap bounds the error
    per_doc = np.asarray(s.X.toarray(), float)
    rng = np.random.default_rng(0)
    boots = [per_doc[rng.integers(0, 4000, 4000)].sum(0) for _ in range(100)]
    se = np.std([b / b.sum() for b in boots], axis=0)
    assert np.all(np.abs(freq - expected) < 5 * se + 1e-4)


def test_random_asymmetric_alpha_sums_to_alpha0():
    s = synthetic_lda(10, 30, 5, alpha0=3.0, alpha_concentration=0.5, random_state=0)
    assert s.alpha0 == pytest.approx(3.0)
    assert np.ptp(s.alpha) > 0.1  # not symmetric
    sym = synthetic_lda(10, 30, 5, alpha0=3.0, random_state=0)
    np.testing.assert_allclose(sym.alpha, 0.6)


def test_bursty_topics_plant_one_distinct_word_of_the_given_mass():
    s = synthetic_lda(10, 200, 4, beta=1.0, bursty=True, bursty_mass=0.7, n_bursty=2, random_state=2)
    top = s.topic_word.max(axis=1)
    assert np.all(top[:2] >= 0.7)  # planted mass plus the word's own share
    assert np.all(top[2:] < 0.1)  # Dirichlet(1) over 200 words: no word near 0.7
    planted = s.topic_word[:2].argmax(axis=1)
    assert planted[0] != planted[1]


def test_small_beta_gives_naturally_bursty_topics():
    sparse = synthetic_lda(5, 500, 3, beta=0.01, random_state=4).topic_word
    dense = synthetic_lda(5, 500, 3, beta=10.0, random_state=4).topic_word
    assert sparse.max(axis=1).min() > 0.2 and dense.max(axis=1).max() < 0.02


def test_explicit_topic_word_is_used():
    mu = np.array([[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.25, 0.75]])
    s = synthetic_lda(300, 4, 2, topic_word=mu, random_state=0, mean_length=10)
    np.testing.assert_array_equal(s.topic_word, mu)
    # documents only use words of their topics' supports; both supports appear
    assert s.X.sum() > 0 and np.all(np.asarray(s.X.sum(axis=0)).ravel() > 0)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"bursty": True, "bursty_mass": 1.5}, "bursty_mass"),
        ({"bursty": True, "n_bursty": 9}, "n_bursty"),
        ({"alpha_concentration": -1.0}, "alpha_concentration"),
        ({"topic_word": np.ones((3, 5))}, "topic_word"),
    ],
)
def test_invalid_controls_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        synthetic_lda(5, 5, 3, random_state=0, **kwargs)


def test_alpha_and_alpha_concentration_are_exclusive():
    with pytest.raises(ValueError, match="alpha_concentration"):
        synthetic_lda(5, 5, 2, alpha=np.ones(2), alpha_concentration=1.0)
