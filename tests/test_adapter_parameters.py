"""Every model spec takes its parameters explicitly, as a scikit-learn estimator does: keywords with stated defaults
in ``__init__``, stored unchanged, declared in a ``_parameter_constraints`` table and checked when the spec is used,
so that ``get_params`` shows the real parameters (nested under TopicDP's ``model``) and a name the spec does not
take is a ``TypeError`` from Python itself."""

from __future__ import annotations

import importlib
import inspect
import re

import numpy as np
import pytest
from sklearn.base import clone

from topicdp import TopicDP
from topicdp.adapters import (MODELS, CallableModel, GensimHDP, GensimLDA, GensimLDAMulticore, GensimLSI, SklearnLDA,
                              SklearnNMF, TomotopyLDA, VariationalModel, make_model)
from topicdp.adapters.spectral import SpectralModel

SPECS = [SklearnLDA, SklearnNMF, GensimLDA, GensimLDAMulticore, GensimHDP, GensimLSI, TomotopyLDA, VariationalModel,
         SpectralModel]


@pytest.fixture(scope="module")
def small(lee_corpus):
    return lee_corpus.subset_documents(np.arange(80))


def _parameters(cls) -> dict[str, inspect.Parameter]:
    return {n: p for n, p in inspect.signature(cls.__init__).parameters.items() if n != "self"}


@pytest.mark.parametrize("cls", SPECS + [CallableModel])
def test_parameters_are_explicit_declared_and_documented(cls):
    parameters = _parameters(cls)
    assert not [p for p in parameters.values() if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    assert set(parameters) == set(cls._parameter_constraints)  # each one has its constraints
    section = cls.__doc__.split("Parameters\n    ----------")[1].split("\n    Notes\n")[0]
    undocumented = [n for n in parameters if not re.search(rf"(^|[\s,]){n}\b", section)]
    assert not undocumented


@pytest.mark.parametrize("cls", SPECS)
def test_the_defaults_are_stored_unchanged_and_satisfy_the_constraints(cls):
    spec = cls()
    assert spec.get_params() == {n: p.default for n, p in _parameters(cls).items()}
    spec._validate_params()  # no default is out of its own range
    assert spec.n_topics == 10 and spec.random_state == 0  # one stated default for every spec


@pytest.mark.parametrize("cls", SPECS)
def test_n_components_is_refused_naming_n_topics(cls):
    with pytest.raises(TypeError, match=f"{cls.__name__} .*'n_components'.* n_topics"):  # the class, name, remedy
        cls(n_components=3)


def test_a_wrapped_sklearn_estimator_keeps_its_own_n_components():
    from sklearn.decomposition import LatentDirichletAllocation

    params = TopicDP(LatentDirichletAllocation(n_components=3), epsilon=1.0).get_params(deep=True)
    assert params["model__n_components"] == 3 and "model__n_topics" not in params


@pytest.mark.parametrize("spec, message", [
    (SklearnLDA(3, learning_decay=1.5), "learning_decay must be a float in the range [0.0, 1.0], got 1.5"),
    (SklearnLDA(True), "n_topics must be an int in the range [1, inf), got True"),
    (SklearnLDA(3, random_state=np.random.RandomState(0)), "random_state must be an int in the range [0, inf), got "
                                                           "RandomState"),
    (SklearnNMF(3, init="custom"), "init must be one of 'nndsvd', 'nndsvda', 'nndsvdar', 'random' or None, got "
                                   "'custom'"),
    (GensimLDA(3, passes=-1), "passes must be an int in the range [0, inf) or None, got -1"),
    (GensimLDA(3, dtype=np.int64), "dtype must be one of float16, float32, float64 or None"),
    (GensimHDP(3, T=2), "T (HDP truncation) must be at least n_topics=3, got 2"),
    (VariationalModel(3, unit="word"), "unit must be one of 'document', 'user', got 'word'"),
    (VariationalModel(3, n_iterations=3, warmup_iterations=5), "warmup_iterations must be an integer in [0, 2]"),
    (SpectralModel(1), "n_topics must be an int in the range [2, inf), got 1"),
    (TomotopyLDA(3, workers=2), "workers must be 1"),
    (CallableModel(len, 3, probabilistic="yes"), "probabilistic must be an instance of 'bool'"),
])
def test_a_value_out_of_range_is_stored_then_refused_when_used_naming_the_range(spec, message, small):
    """scikit-learn's convention: the constructor stores (so clone and set_params work), the use validates, with
    a message naming the parameter, what it must be and what it got, before anything is fitted."""
    assert clone(spec).get_params().keys() == spec.get_params().keys()
    with pytest.raises(ValueError, match=re.escape(message)):
        spec.fit(small)
    with pytest.raises(ValueError, match=re.escape(message)):
        spec.describe()  # what reports and the sensitivity cache read
    assert not hasattr(spec, "topic_word_")


@pytest.mark.parametrize("name", list(MODELS))
def test_fit_sets_topic_word_and_components(name, small):
    spec = make_model(name, 3, 0)
    assert spec.fit(small) is spec
    assert spec.components_ is spec.topic_word_ and spec.topic_word_.shape == (3, small.n_words)
    assert spec.n_features_in_ == small.n_words


@pytest.mark.parametrize("cls", SPECS)
def test_stability_is_stated_before_any_fit(cls):
    spec = cls(3)
    expected, reason = spec.stability()
    assert expected in (True, False, None) and len(reason) > 20
    assert not [k for k in vars(spec) if k.endswith("_")]  # nothing was fitted to say it


def test_stability_follows_the_explicit_parameters():
    start = np.ones((3, 20))
    assert SklearnLDA(3, init=start).stability()[0] is True
    assert SklearnLDA(3, init=start, learning_method="online").stability()[0] is False
    assert GensimLDA(3, init=start).stability()[0] is True
    assert GensimLDA(3, init=start, document_start="random").stability()[0] is False
    assert VariationalModel(3, init=start).stability()[0] is True


def test_topicdp_shows_the_specs_parameters_nested_and_sets_them():
    dp = TopicDP(model=SklearnLDA(3, max_iter=5), epsilon=1.0)
    params = dp.get_params(deep=True)
    nested = {k.removeprefix("model__") for k in params if k.startswith("model__")}
    assert nested == set(SklearnLDA().get_params())
    assert params["model__max_iter"] == 5 and params["model__learning_decay"] == 0.7
    assert dp.set_params(model__max_iter=2) is dp and dp.model.max_iter == 2
    copy = clone(dp)
    assert copy.model is not dp.model and copy.model.get_params() == dp.model.get_params()
    with pytest.raises(ValueError, match="Invalid parameter 'n_components'"):
        dp.set_params(model__n_components=4)


def test_callable_model_sets_its_name_and_keeps_the_registry_name():
    spec = CallableModel(len, 2, name="mine")
    assert spec.set_params(name="other") is spec and spec.get_params()["name"] == "other"
    assert spec.name == "callable" and spec.label == "other"
    assert clone(spec).label == "other"


def test_make_model_passes_the_cli_parameters_on():
    spec = make_model("gensim-lda", 4, 2, passes=3, learning="batch")
    assert isinstance(spec, GensimLDA) and spec.get_params()["passes"] == 3 and spec.random_state == 2
    with pytest.raises(TypeError, match="unexpected keyword argument 'pases'"):
        make_model("gensim-lda", 4, pases=3)


# library -> (parameters the adapter does not take, parameters whose default the adapter states differently)
LIBRARY = {
    SklearnLDA: ("sklearn.decomposition:LatentDirichletAllocation", {"n_components", "n_jobs"},
                 {"max_iter", "random_state"}),
    SklearnNMF: ("sklearn.decomposition:NMF", {"n_components"}, {"init", "max_iter", "random_state"}),
    GensimLDA: ("gensim.models:LdaModel",
                {"corpus", "num_topics", "id2word", "distributed", "ns_conf", "callbacks", "per_word_topics",
                 "minimum_phi_value"},
                {"chunksize", "passes", "update_every", "decay", "eval_every", "dtype", "random_state"}),
    GensimLDAMulticore: ("gensim.models:LdaMulticore",
                         {"corpus", "num_topics", "id2word", "batch", "per_word_topics", "minimum_phi_value"},
                         {"chunksize", "passes", "decay", "eval_every", "dtype", "random_state", "workers"}),
    GensimHDP: ("gensim.models:HdpModel", {"corpus", "id2word", "max_time", "outputdir"}, {"random_state"}),
    GensimLSI: ("gensim.models:LsiModel", {"corpus", "num_topics", "id2word", "distributed", "random_seed"}, set()),
    VariationalModel: ("topicdp.variational:VariationalLDA", set(), {"n_iterations", "random_state"}),
    SpectralModel: ("topicdp.spectral:SpectralLDA", set(), {"random_state"}),
}


@pytest.mark.parametrize("cls", list(LIBRARY), ids=lambda c: c.__name__)
def test_the_adapter_takes_its_librarys_parameters_with_its_defaults(cls):
    """Each library parameter is the adapter's, with the library's default, or is listed here as not taken (and
    said so in the class's documentation) or as stated differently (documented there): a library release that
    adds or changes one fails here instead of being silently dropped."""
    path, not_taken, differ = LIBRARY[cls]
    module, name = path.split(":")
    library = _parameters(getattr(pytest.importorskip(module), name) if "." not in module
                          else getattr(importlib.import_module(module), name))
    ours = _parameters(cls)
    for key, parameter in library.items():
        if key in not_taken:
            assert key not in ours, key
            continue
        assert key in ours, f"{cls.__name__} does not take {path}'s {key!r}"
        if key not in differ:
            assert ours[key].default == parameter.default, key
