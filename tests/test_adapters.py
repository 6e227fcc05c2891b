import re

import numpy as np
import pytest

from topicdp.adapters import CallableModel, GensimLDAMulticore, canonical_order, make_model, MODELS


@pytest.fixture(scope="module")
def small(lee_corpus):
    return lee_corpus.subset_documents(np.arange(80))


@pytest.mark.parametrize("name", list(MODELS))
def test_same_data_same_spec_bit_identical_and_canonical(name, small):
    model = make_model(name, 4, random_state=3)
    a = model.fit_topic_word(small)
    b = make_model(name, 4, random_state=3).fit_topic_word(small)
    assert a.shape == (4, small.n_words) and np.array_equal(a, b)
    assert np.all(a >= 0) and np.allclose(a.sum(axis=1), 1.0, atol=1e-6)
    assert np.array_equal(canonical_order(a), np.arange(4))  # already in canonical order


def test_canonical_order_is_a_function_of_the_set_of_rows():
    rng = np.random.default_rng(0)
    W = rng.dirichlet(np.full(50, 0.1), size=12)
    ref = W[canonical_order(W)]
    for seed in range(5):
        P = W[np.random.default_rng(seed).permutation(12)]
        assert np.array_equal(P[canonical_order(P)], ref)
    top = np.argmax(ref, axis=1)
    assert np.all(np.diff(top) >= 0)  # primary key: index of each topic's top word


def test_reference_lda_is_the_gensim_lda_adapter(small):
    # topicdp.topics.reference_lda serves code below the adapters (the dp-vem forecast) with the same matrix
    from topicdp.topics import reference_lda

    expected = make_model("gensim-lda", 4, 2, passes=2).fit_topic_word(small)
    assert np.array_equal(reference_lda(small, 4, random_state=2, passes=2), expected)
    with pytest.raises(ValueError, match="n_topics"):
        reference_lda(small, small.n_words + 1)


def test_callable_wrong_shape_or_nan_fails(small):
    with pytest.raises(ValueError, match="shape"):
        CallableModel(lambda c: np.ones((3, 5)), n_topics=3).fit_topic_word(small)
    with pytest.raises(ValueError, match="non-finite"):
        CallableModel(lambda c: np.full((2, c.n_words), np.nan), n_topics=2).fit_topic_word(small)
    with pytest.raises(TypeError, match="func must be a callable"):  # checked when used, as every parameter
        CallableModel("not a function", n_topics=2).fit_topic_word(small)


def test_too_many_topics_and_nondeterministic_multicore(small):
    with pytest.raises(ValueError, match="n_topics"):
        make_model("gensim-lda", small.n_words + 1).fit_topic_word(small)
    with pytest.raises(ValueError, match="workers"):  # checked when the parameters are used, before any fit
        GensimLDAMulticore(4, workers=2).params
    with pytest.raises(ValueError, match="model must be one of"):
        make_model("no-such-model", 3)


def test_lsi_weights_are_squared_unit_loadings(small):
    from gensim.models import LsiModel

    W = make_model("gensim-lsi", 3, random_state=0).fit_topic_word(small)
    dictionary, bow = small.to_gensim()
    u = LsiModel(bow, id2word=dictionary, num_topics=3, random_seed=0, power_iters=2, extra_samples=100).get_topics()
    expected = (u**2) / (u**2).sum(axis=1, keepdims=True)
    assert np.allclose(np.sort(W, axis=None), np.sort(expected[canonical_order(expected)], axis=None))
    assert np.allclose((u**2).sum(axis=1), 1.0)  # unit-norm loadings: the squares are already on the simplex


@pytest.mark.parametrize("name, param", [("gensim-lda", "init"), ("sklearn-nmf", "init_topics")])
def test_a_public_start_keeps_its_rows_and_is_deterministic(name, param):
    """From public starting topics (here the generating ones), row k of the fit grows from row k of the start:
    matched to the truth by the identity (gensim's fit also ends closer to it than from its random start),
    the same on a refit, and described by a digest of the start (the sampler's cache key)."""
    import numpy as np

    from topicdp import Corpus, make_model
    from topicdp.datasets import synthetic_lda
    from topicdp.metrics import match_topics, recovery_error

    data = synthetic_lda(1500, 60, 4, beta=0.05, random_state=3)
    corpus = Corpus(X=data.X, vocabulary=[f"w{i}" for i in range(60)], doc_users=np.arange(1500))
    started = make_model(name, 4, 0, **{param: data.topic_word})
    W = started.fit_topic_word(corpus)
    assert list(match_topics(W, data.topic_word)) == [0, 1, 2, 3]
    if name == "gensim-lda":  # batch passes from the start end nearer the truth (NMF converges either way)
        assert recovery_error(W, data.topic_word) < recovery_error(make_model(name, 4, 0).fit_topic_word(corpus),
                                                                   data.topic_word)
    assert np.array_equal(W, started.fit_topic_word(corpus))
    described = started.describe()["params"][param]
    assert described["array"] == [4, 60] and len(described["sha256"]) == 16


def test_tomotopy_adapter_is_deterministic_with_one_worker(small):
    """tomotopy (optional extra): a seeded one-worker Gibbs run is bit-identical across runs; the adapter says it is
    not expected to be stable (a Gibbs sample; draws consumed in corpus order) and refuses several workers."""
    pytest.importorskip("tomotopy")
    from topicdp.adapters import TomotopyLDA

    model = TomotopyLDA(4, random_state=3, iterations=50)
    a = model.fit_topic_word(small)
    assert np.array_equal(a, TomotopyLDA(4, random_state=3, iterations=50).fit_topic_word(small))
    assert a.shape == (4, small.n_words) and np.allclose(a.sum(axis=1), 1.0)
    assert np.array_equal(canonical_order(a), np.arange(4))
    assert not np.array_equal(a, TomotopyLDA(4, random_state=4, iterations=50).fit_topic_word(small))
    assert model.stability()[0] is False
    with pytest.raises(ValueError, match="workers must be 1"):  # checked when the parameters are used
        TomotopyLDA(4, workers=2).params


@pytest.mark.parametrize("name, given, refused", [
    ("sklearn-lda", {"n_components": 3}, "does not take 'n_components': the number of topics is n_topics"),
    ("sklearn-lda", {"max_itr": 3}, "unexpected keyword argument 'max_itr'"),
    ("sklearn-lda", {"n_jobs": 2}, "does not take 'n_jobs'"),
    ("sklearn-nmf", {"n_components": 3}, "does not take 'n_components'"),
    ("gensim-lda", {"n_components": 3}, "does not take 'n_components': the number of topics is n_topics"),
    ("gensim-lda", {"num_topics": 3}, "does not take 'num_topics': the number of topics is n_topics"),
    ("gensim-lda", {"id2word": {}}, "does not take 'id2word'"),
    ("gensim-lda", {"pases": 2}, "unexpected keyword argument 'pases'"),
    ("gensim-lsi", {"power_iter": 2}, "unexpected keyword argument 'power_iter'"),
    ("gensim-lsi", {"random_seed": 2}, "does not take 'random_seed': the seed is random_state"),
    ("vem", {"n_iteration": 2}, "unexpected keyword argument 'n_iteration'"),
    ("spectral", {"n_components": 3}, "does not take 'n_components'"),
])
def test_a_parameter_the_model_does_not_take_is_refused_by_name(name, given, refused):
    """Every spec takes its parameters explicitly: a misspelt or foreign name is a TypeError from the constructor
    (Python's own), and the library's names for what the adapter sets itself say what to pass instead."""
    from topicdp import make_model

    with pytest.raises(TypeError, match=re.escape(refused)):
        make_model(name, 2, 0, **given)


def test_the_library_keyword_arguments_and_the_adapters_own_are_accepted():
    from topicdp import make_model

    assert make_model("sklearn-lda", 2, 0, learning_decay=0.6, document_start="constant").params["learning_decay"] == 0.6
    assert make_model("gensim-lda", 2, 0, passes=3, learning="batch").params["passes"] == 3
