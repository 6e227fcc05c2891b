"""One model abstraction: every model spec is a scikit-learn estimator whose ``fit`` sets ``topic_word_``, and
TopicDP is a meta-estimator over one whose ``fit(corpus)`` sets ``release_``, with the ledger passed in and the
sampler's options grouped once (:class:`topicdp.samplers.SensitivitySampling`). scikit-learn's common checks over
the adapters and TopicDP are in ``test_estimator_checks.py`` with the other estimators'.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from topicdp import CallableModel, Corpus, GensimLDA, PrivacyLedger, SklearnNMF, TopicDP
from topicdp.datasets import synthetic_lda
from topicdp.samplers import PRIVATE_ORACLE, SensitivitySampling, sample_sensitivity
from facts import raises_facts


# -- tiny corpora ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def corpora() -> tuple[Corpus, Corpus]:
    """A private corpus of 20 users and a disjoint public reference with the same 30 words."""
    X = synthetic_lda(160, 30, 3, alpha0=1.0, mean_length=40, random_state=0).X.tocsr()
    vocab = [f"w{j}" for j in range(30)]
    private = Corpus.from_matrix(X[:80], vocab, np.arange(80) // 4)
    reference = Corpus.from_matrix(X[80:], vocab, np.arange(80) // 4)
    return private, reference


def _unigram(corpus) -> np.ndarray:
    counts = np.asarray(corpus.X.sum(axis=0)).ravel() + 1.0
    return (counts / counts.sum())[None, :]


UNIGRAM = CallableModel(_unigram, n_topics=1, name="unigram")


# -- the model specs as estimators ------------------------------------------------------------------------------

def test_spec_fit_sets_topic_word_equal_to_f(corpora):
    private, _ = corpora
    model = SklearnNMF(3, random_state=0)
    assert model.fit(private) is model
    assert np.array_equal(model.topic_word_, model.fit_topic_word(private)) and model.n_features_in_ == 30
    assert not [k for k in vars(clone(model)) if k.endswith("_") and not k.startswith("_")]  # nothing fitted in clone


def test_spec_params_are_stored_as_given_and_resolved_when_used():
    """get_params returns what was passed (clone and set_params rely on it); the effective parameters, with the
    model's defaults and its resolution of None, are ``params``; an out-of-range value is refused when used."""
    model = GensimLDA(4, random_state=1, init=None)
    given = model.get_params()  # every explicit parameter, as given or at its default (None: resolved when used)
    assert (given["n_topics"], given["random_state"], given["init"], given["learning"], given["passes"]) == (
        4, 1, None, None, None)
    assert model.params["learning"] == "online" and model.params["passes"] == 1
    batch = model.set_params(init=np.ones((4, 5)))
    assert batch is model and model.params["learning"] == "batch" and model.params["document_start"] == "constant"
    bad = GensimLDA(4, learning="sometimes")  # stored: scikit-learn's constructors do not validate
    with raises_facts(ValueError, "learning", "'batch'", "'online'", "None", "got 'sometimes'", ordered=True):
        bad.describe()
    with pytest.raises(ValueError, match=r"n_topics must be an int in the range \[1, inf\), got 0"):
        SklearnNMF(0).fit(np.ones((3, 4)))


def test_callable_model_clones_with_its_own_parameters(corpora):
    private, _ = corpora
    copy = clone(UNIGRAM)
    assert copy.get_params() == {"func": _unigram, "n_topics": 1, "name": "unigram", "probabilistic": True}
    assert np.array_equal(copy.fit(private).topic_word_, _unigram(private))


# -- TopicDP as a meta-estimator --------------------------------------------------------------------------------

def test_topicdp_fit_sets_release_and_clones(corpora):
    private, reference = corpora
    dp = TopicDP(UNIGRAM, epsilon=2.0, delta=1e-5, random_state=0,
                 sampling=SensitivitySampling(reference, 0.3, sizing="exchangeable", random_state=0))
    assert dp.fit(private, vocabulary_source="public") is dp
    assert dp.topic_word_ is dp.release_.topic_word and dp.report_ is dp.release_.report
    assert dp.report_.guarantee == "random-DP" and dp.n_features_in_ == 30
    again = clone(dp)
    copied = again.get_params()["sampling"]  # clone copies the options, P with them
    assert (copied.gamma, copied.sizing, copied.random_state) == (0.3, "exchangeable", 0)
    assert copied.distribution.fingerprint() == reference.fingerprint() and again.model is not dp.model
    assert not hasattr(again, "release_")
    # the same seeds: the same release (a second release of the same data, which is flagged)
    with pytest.warns(UserWarning, match="overlap"):
        assert np.array_equal(again.fit(private, vocabulary_source="public").topic_word_, dp.topic_word_)


def test_topicdp_keeps_no_ledger_a_shared_one_composes(corpora):
    """A privatizer holds no budget state: without a ledger each report composes its own release; with the same
    ledger passed to two fits, the second report lists both entries."""
    private, _ = corpora
    dp = TopicDP(UNIGRAM, epsilon=1.0, delta=1e-5, sensitivity="global", random_state=0)
    with pytest.warns(UserWarning, match="overlap"):  # the repeated fit without a ledger is flagged
        first, second = dp.fit(private).report_, dp.fit(private).report_
    assert len(first.composition) == len(second.composition) == 1
    assert not hasattr(dp, "ledger")
    ledger = PrivacyLedger()
    dp.fit(private, ledger=ledger)
    composed = dp.fit(private, ledger=ledger).report_
    assert len(composed.composition) == 2 and len(ledger) == 2
    assert any("shared ledger holds 2 entries" in note for note in composed.notes)


@pytest.mark.parametrize("kwargs, error, match", [
    ({}, ValueError, "needs sampling=SensitivitySampling"),
    ({"sampling": SensitivitySampling()}, ValueError, "needs sampling=SensitivitySampling"),
    ({"sensitivity": "global", "sampling": SensitivitySampling(PRIVATE_ORACLE)}, ValueError,
     "sampling applies to mechanism='gaussian' with sensitivity='sampled' only"),
    ({"sampling": {"gamma": 0.1}}, ValueError, "needs sampling=SensitivitySampling"),
])
def test_topicdp_sampling_is_required_on_the_sampled_road_and_refused_elsewhere(corpora, kwargs, error, match):
    private, _ = corpora
    with pytest.raises(error, match=match):
        TopicDP(UNIGRAM, epsilon=1.0, **kwargs).fit(private)


def test_topicdp_refuses_a_model_that_is_not_a_spec(corpora):
    private, _ = corpora
    with raises_facts(TypeError, "model", "LatentDirichletAllocation", "NMF", ordered=True):
        TopicDP(lambda c: None, epsilon=1.0, sensitivity="global").fit(private)


# -- the sampler's options, grouped once ------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    ({"gamma": 0.7}, "gamma"),
    ({"gamma": 0.0}, "gamma"),
    ({"sizing": "fast"}, "sizing"),
    ({"n_pairs": 0}, "n_pairs"),
    ({"random_state": -1}, "random_state"),
    ({"max_minutes": 0}, "max_minutes"),
    ({"distribution": "private"}, "distribution must be a public reference Corpus, 'private-oracle'"),
])
def test_sampling_options_are_checked_when_made(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SensitivitySampling(**kwargs)


def test_sampling_states_p_and_refuses_too_few_pairs(corpora):
    private, reference = corpora
    assert SensitivitySampling(PRIVATE_ORACLE).private_oracle and not SensitivitySampling(reference).private_oracle
    with pytest.raises(ValueError, match="needs the sampling distribution P"):
        sample_sensitivity(UNIGRAM, private, SensitivitySampling(gamma=0.3))
    with pytest.raises(ValueError, match="n_pairs must be at least h=4"):
        sample_sensitivity(UNIGRAM, private, SensitivitySampling(reference, 0.2, "exchangeable", n_pairs=3))
    sample = sample_sensitivity(UNIGRAM, private, SensitivitySampling(reference, 0.2, "exchangeable", n_pairs=3,
                                                                      insecure_testing=True, random_state=0))
    assert sample.h == 3 and not sample.sufficient and sample.distribution["kind"] == "public-reference"


def test_the_report_states_every_contribution_bound_of_the_corpus(corpora):
    """The bounds are public facts of the release (the cuts they made are not: they are counted on private data)."""
    private, _ = corpora
    bounded = private.bound(random_state=0, max_tokens_per_user=100)
    report = TopicDP(UNIGRAM, epsilon=1.0, delta=1e-5, sensitivity="global", random_state=0).fit(bounded).report_
    assert report.details["corpus"]["bounding"] == {"max_docs_per_user": None, "max_tokens_per_doc": None,
                                                    "max_tokens_per_user": 100}
    assert "tokens_cut_by_max_tokens_per_user" not in str(report.details["corpus"])


def test_the_sampled_road_cuts_p_to_the_private_corpus_bounds_and_says_so(corpora):
    """A pair swaps one bounded unit: the report's P names the bounds its records were cut to."""
    private, reference = corpora
    bounded = private.bound(random_state=0, max_tokens_per_user=100)
    sampling = SensitivitySampling(reference, 0.2, "exchangeable", random_state=0)
    report = TopicDP(UNIGRAM, epsilon=1.0, unit="user", sampling=sampling, random_state=0).fit(bounded).report_
    assert report.sampling_distribution["bounds"] == {"max_tokens_per_user": 100}
    assert "public-reference (records cut to max_tokens_per_user=100)" in report.summary()
    plain = TopicDP(UNIGRAM, epsilon=1.0, unit="user", sampling=sampling, random_state=0).fit(private).report_
    assert "bounds" not in plain.sampling_distribution and "records cut" not in plain.summary()


# -- transform and the wrapped model's parameters ---------------------------------------------------------------

def test_transform_gives_the_document_topic_proportions_under_the_released_topics(corpora):
    from sklearn.exceptions import NotFittedError

    private, reference = corpora
    dp = TopicDP(SklearnNMF(3, random_state=0), epsilon=1.0, sensitivity="global", random_state=0)
    with pytest.raises(NotFittedError):
        dp.transform(reference)
    theta = dp.fit(private, ledger=PrivacyLedger()).transform(reference)
    assert theta.shape == (reference.n_docs, 3) and np.allclose(theta.sum(axis=1), 1.0)
    assert np.array_equal(theta, dp.release_.transform(reference))
    assert np.array_equal(dp.transform(reference.X[:5]), theta[:5])
    with pytest.raises(ValueError, match="X has 29 features, but TopicDP is expecting 30 features"):
        dp.transform(reference.X[:, :29])


def test_get_params_deep_shows_the_wrapped_models_parameters():
    params = TopicDP(GensimLDA(4, random_state=2, passes=3), epsilon=1.0).get_params(deep=True)
    assert params["model__n_topics"] == 4 and params["model__random_state"] == 2 and params["model__passes"] == 3
