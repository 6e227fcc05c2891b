"""The stable configurations of the wrapped LDA implementations (gensim ``LdaModel``, scikit-learn
``LatentDirichletAllocation``): public topic start, batch learning, position-independent document start.

What is checked: bit-identical refits; that a document's position no longer matters (permuting the corpus changes the
output only by floating-point summation order, where gensim's and scikit-learn's random document starts change it
by far more); that removing one document after one batch pass moves the topics by no more than the bound derived in
:func:`test_one_batch_pass_moves_by_at_most_the_removed_documents_share`; that the public start is used; and that
the configurations that are not expected to be stable say so before any fit.
"""

import logging

import numpy as np
import pytest

from topicdp import Corpus, TopicDP, make_model
from topicdp.samplers import SensitivitySampling
from topicdp.adapters import CallableModel, GensimLDAMulticore
from topicdp.datasets import synthetic_lda

K, V = 4, 60


@pytest.fixture(scope="module")
def data():
    return synthetic_lda(600, V, K, beta=0.05, random_state=3)


@pytest.fixture(scope="module")
def corpus(data):
    return Corpus(X=data.X, vocabulary=[f"w{i}" for i in range(V)], doc_users=np.arange(data.X.shape[0]))


@pytest.fixture(scope="module")
def start(data):
    """A public start that is not the truth (so that fitting moves away from it): the truth mixed with uniform."""
    return 0.5 * data.topic_word + 0.5 / V


STABLE = [("gensim-lda", {}), ("sklearn-lda", {})]


@pytest.mark.parametrize("name, extra", STABLE)
def test_stable_configuration_is_deterministic_and_says_so(name, extra, corpus, start):
    model = make_model(name, K, 0, init=start, **extra)
    assert model.stability()[0] is True
    assert model.describe()["stability"]["expected"] is True
    a = model.fit_topic_word(corpus)
    assert np.array_equal(a, make_model(name, K, 0, init=start, **extra).fit_topic_word(corpus))
    assert a.shape == (K, V) and np.allclose(a.sum(axis=1), 1.0)


@pytest.mark.parametrize("name", ["gensim-lda", "sklearn-lda"])
def test_document_order_matters_only_by_rounding_with_the_constant_start(name, corpus, start):
    """Permuting the documents: with the constant document start the output changes only by the order of
    floating-point sums (float64: below 1e-12); with the libraries' random start, each document's start is the
    draw at its position, and the output moves by orders of magnitude more."""
    perm = np.random.default_rng(0).permutation(corpus.n_docs)
    shuffled = corpus.subset_documents(perm)
    stable = make_model(name, K, 0, init=start)
    moved = np.linalg.norm(stable.fit_topic_word(corpus) - stable.fit_topic_word(shuffled))
    assert moved < 1e-12
    positional = make_model(name, K, 0, init=start, document_start="random")
    assert positional.stability()[0] is False
    moved_before = np.linalg.norm(positional.fit_topic_word(corpus) - positional.fit_topic_word(shuffled))
    assert moved_before > 1e-7 and moved_before > 1e4 * max(moved, 1e-16)


def test_online_learning_depends_on_chunk_boundaries(corpus, start):
    """gensim's online learning (chunks of 200 here) from the same public start: the permuted corpus ends elsewhere,
    even with the constant document start, because the M-steps see different chunks."""
    perm = np.random.default_rng(1).permutation(corpus.n_docs)
    online = make_model("gensim-lda", K, 0, init=start, learning="online", document_start="constant", chunksize=200,
                        passes=2)
    assert online.stability()[0] is False
    assert np.linalg.norm(online.fit_topic_word(corpus) - online.fit_topic_word(corpus.subset_documents(perm))) > 1e-6


def test_one_batch_pass_moves_by_at_most_the_removed_documents_share(corpus, start):
    """Bound for one batch pass from a public start with the constant document start.

    Every document's E-step sees the same topics (the start) and starts from the same gamma, so removing document d
    changes nothing in the other documents' statistics: lambda_k(D) = lambda_k(D - d) + m_k with m_k = sum_w n_dw
    phi_dwk >= 0 and sum_k m_k = L_d (d's tokens). Row k of f is lambda_k / M_k with M_k = sum_w lambda_kw(D); so
    f(D)_k = (1 - t) f(D - d)_k + t m_k / |m_k| with t = |m_k| / M_k, and ||f(D)_k - f(D - d)_k||_1 <= 2 |m_k| / M_k.
    Hence ||f(D) - f(D - d)||_F <= sum_k ||.||_2 <= sum_k ||.||_1 <= 2 L_d / min_k M_k (up to rounding)."""
    from topicdp.topics import gensim_lda_model

    model = make_model("gensim-lda", K, 0, init=start, passes=1)
    params = {k: v for k, v in model.params.items() if k != "learning"}
    fitted = gensim_lda_model(corpus, K, 0, chunksize=corpus.n_docs, **params)
    mass = fitted.state.get_lambda().sum(axis=1)
    full = model.fit_topic_word(corpus)
    assert np.allclose(full, fitted.get_topics())
    lengths = np.asarray(corpus.X.sum(axis=1)).ravel()
    for d in (0, int(np.argmax(lengths)), corpus.n_docs - 1):
        rest = corpus.subset_documents(np.delete(np.arange(corpus.n_docs), d))
        distance = np.linalg.norm(full - model.fit_topic_word(rest))
        bound = 2 * lengths[d] / mass.min()
        assert 0 < distance <= bound + 1e-12
    # gensim's random document start: the same removal also moves every later document's start
    positional = make_model("gensim-lda", K, 0, init=start, passes=1, document_start="random")
    d = 0
    rest = corpus.subset_documents(np.arange(1, corpus.n_docs))
    perm_free = np.linalg.norm(full - model.fit_topic_word(rest))
    assert np.linalg.norm(positional.fit_topic_word(corpus) - positional.fit_topic_word(rest)) != perm_free
    assert lengths[d] > 0


@pytest.mark.parametrize("name", ["gensim-lda", "sklearn-lda"])
def test_the_public_start_is_used_and_keeps_its_rows(name, corpus, start):
    """Permuting the start's rows permutes the output's rows (row k grows from start row k); a different start
    gives a different fit."""
    perm = np.array([2, 0, 3, 1])
    a = make_model(name, K, 0, init=start).fit_topic_word(corpus)
    b = make_model(name, K, 0, init=start[perm]).fit_topic_word(corpus)
    assert np.allclose(b, a[perm], atol=1e-10)
    assert not np.allclose(a, make_model(name, K, 0).fit_topic_word(corpus), atol=1e-3)


def test_gensim_zero_passes_returns_the_scaled_start(corpus, start):
    """With no pass, gensim's lambda is the installed start (V per row) plus eta = 1/K: the start really is gensim's
    starting point, scaled to its own mass."""
    W = make_model("gensim-lda", K, 0, init=start, passes=0).fit_topic_word(corpus)
    lam = start / start.sum(axis=1, keepdims=True) * V + 1.0 / K
    assert np.allclose(W, lam / lam.sum(axis=1, keepdims=True), atol=1e-12)


def test_sklearn_start_replaces_its_random_topics(corpus, start):
    """scikit-learn with max_iter=0 keeps the installed start: components_ = V start_k / sum(start_k)."""
    W = make_model("sklearn-lda", K, 0, init=start, max_iter=0).fit_topic_word(corpus)
    assert np.allclose(W, start / start.sum(axis=1, keepdims=True), atol=1e-12)


def test_defaults_unchanged_and_flagged(corpus):
    """Without a public start the adapters keep the libraries' defaults (online gensim, random starts) and say that
    this configuration is not expected to be stable, naming the parameters that fix it."""
    g = make_model("gensim-lda", K, 0)
    assert g.params["learning"] == "online" and g.params["document_start"] == "random"
    assert g.params["chunksize"] == 2000 and "update_every" not in g.params
    expected, reason = g.stability()
    assert expected is False and "init" in reason and "learning='batch'" in reason
    s = make_model("sklearn-lda", K, 0)
    assert s.params["document_start"] == "random" and s.stability()[0] is False
    assert make_model("gensim-hdp", K, 0).stability()[0] is False
    assert make_model("vem", K, 0).stability()[0] is False
    assert make_model("gensim-lsi", K, 0).stability()[0] is False  # measured: its singular vectors rotate
    assert make_model("spectral", K, 0).stability()[0] is False  # measured: some neighbours change its eigenvectors
    # measured to jump for a few neighbouring corpora from either start, so neither is announced as stable
    assert make_model("sklearn-nmf", K, 0).stability()[0] is False
    assert make_model("sklearn-nmf", K, 0, init_topics=np.ones((K, 5))).stability()[0] is False


def test_invalid_options_name_the_parameter(start):
    """Checked when the parameters are used (scikit-learn's convention: the constructor stores), before any fit."""
    with pytest.raises(ValueError, match="learning must be"):
        make_model("gensim-lda", K, 0, learning="stochastic").params
    with pytest.raises(ValueError, match="document_start must be"):
        make_model("gensim-lda", K, 0, document_start="zeros").params
    with pytest.raises(ValueError, match="document_start must be"):
        make_model("sklearn-lda", K, 0, document_start="zeros").params
    with pytest.raises(ValueError, match="learning must be 'online'"):
        GensimLDAMulticore(K, learning="batch").params


def test_sklearn_init_shape_is_checked(corpus):
    with pytest.raises(ValueError, match="init must be a non-negative"):
        make_model("sklearn-lda", K, 0, init=np.ones((K, V + 1))).fit_topic_word(corpus)


class _Unfittable(CallableModel):
    """A spec that says it is unstable and fails when fitted: the warning must come before any fit."""

    def __init__(self):
        super().__init__(lambda c: (_ for _ in ()).throw(RuntimeError("fitted")), n_topics=2)

    def stability(self):
        return False, "a test spec"


def test_topicdp_warns_before_any_fit(corpus, caplog):
    privatizer = TopicDP(_Unfittable(), epsilon=1.0, delta=1e-5,
                         sampling=SensitivitySampling(corpus, 0.1, "exchangeable", random_state=0))
    with caplog.at_level(logging.WARNING, logger="topicdp"), pytest.raises(RuntimeError, match="fitted"):
        privatizer.sample_sensitivity(corpus)
    assert any("NOT expected to be a stable function" in r.getMessage() and "a test spec" in r.getMessage()
               for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="topicdp"), pytest.raises(RuntimeError, match="fitted"):
        privatizer.fit(corpus)
    assert any("NOT expected" in r.getMessage() for r in caplog.records)


@pytest.mark.filterwarnings("ignore::topicdp.RepeatedReleaseWarning")  # test releases of one corpus
def test_report_notes_say_unstable_and_stable_says_nothing(corpus, start, caplog):
    # the notes depend on the model, not on the sample's size: gamma 0.3 (3 pairs) keeps this test's fits few
    sampling = SensitivitySampling(corpus, 0.3, "exchangeable", random_state=0)
    privatizer = TopicDP(make_model("gensim-lda", K, 0, init=start, passes=2), epsilon=3.0, delta=1e-5, sampling=sampling,
                         random_state=0)
    with caplog.at_level(logging.WARNING, logger="topicdp"):
        stable = privatizer.fit(corpus).release_
    assert not any("NOT expected" in r.getMessage() for r in caplog.records)
    assert not any("NOT expected" in n for n in stable.report.notes)
    assert stable.report.details["model"]["stability"]["expected"] is True
    unstable = privatizer.set_params(model=make_model("gensim-lda", K, 0)).fit(corpus).release_
    assert any("NOT expected to be a stable function" in n for n in unstable.report.notes)
