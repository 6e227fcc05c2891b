"""Make the model a user already has (:data:`WHAT_CAN_BE_WRAPPED`), fitted or not, the toolkit's equivalent adapter.

Only its *definition* (class and constructor parameters) is used, never its fitted state (:data:`WHY_NOT_FITTED`).
Where the model is not expected to be stable (:meth:`TopicModelSpec.stability`) and a public reference P is given,
its stable form is used (starting topics fitted on P, batch learning, a constant document start, a fixed number of
iterations), every change listed for the report; ``keep_model=True`` keeps the model as given apart from what
determinism needs (an integer seed, one thread).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .base import TopicModelSpec
from .gensim import GENSIM_BATCH, GensimLDA, GensimLDAMulticore
from .sklearn import SklearnLDA, SklearnNMF

#: the number of iterations of scikit-learn's LDA from public topics (:class:`SklearnLDA`'s ``max_iter``)
STABLE_LDA_ITERATIONS = 3

WHAT_CAN_BE_WRAPPED = (
    "model must be one of: a scikit-learn LatentDirichletAllocation or NMF, a gensim LdaModel, LdaMulticore, "
    "HdpModel or LsiModel, a tomotopy LDAModel, or the toolkit's non-private topicdp.variational.VariationalLDA or "
    "topicdp.spectral.SpectralLDA (fitted or not; its class and parameters are used), one of the toolkit's adapters "
    "(a TopicModelSpec from topicdp.adapters: SklearnLDA, SklearnNMF, GensimLDA, GensimHDP, GensimLSI, TomotopyLDA, "
    "VariationalModel, SpectralModel, ...), or CallableModel(func, n_topics) for a deterministic function corpus -> "
    "(K, V) array")
NO_REFERENCE = ("no public reference P was given, so the model is kept as given: its stable form starts from topics "
                "fitted on P")
_GENSIM_SEED = "random_state: gensim stores a RandomState, whose seed cannot be recovered -> 0"
_NO_ID2WORD = "the model's id2word is not used: the vocabulary is the corpus'"
WHY_NOT_FITTED = (
    "A fitted model's state is never used: the sensitivity sampler refits the model on neighbouring corpora, so the "
    "model is taken as its definition (class and parameters), and topics fitted on the private data would be "
    "published without noise if f started from them")


@dataclass(frozen=True)
class WrappedModel:
    """The spec f that a release fits, the class the user gave, every change made to it (with the reason) and notes."""

    spec: TopicModelSpec
    given: str
    changes: tuple[str, ...] = field(default=())
    notes: tuple[str, ...] = field(default=())

    @property
    def wrapped(self) -> bool:
        """Whether the user gave a model that is not a spec, turned into one."""
        return self.given != _qualname(self.spec)

    def summary(self) -> str:
        """One line for the report's notes and the log."""
        head = (f"model: the given {self.given} became {type(self.spec).__name__} with its parameters (its fitted "
                "state, if any, is not used)")
        if self.changes:
            return f"{head}; changed: {'; '.join(self.changes)}"
        return f"{head}; nothing changed"


@dataclass(frozen=True)
class _Setting:
    """What a wrap needs besides the model (:func:`wrap_model`'s keywords)."""

    reference: Any
    unit: str
    keep_model: bool
    vocabulary: Any
    bounds: dict | None


def _qualname(obj) -> str:
    """``module.Class`` by its public path (``sklearn.decomposition._lda`` reads ``sklearn.decomposition``)."""
    cls = type(obj)
    module = ".".join(part for part in cls.__module__.split(".") if not part.startswith("_"))
    return f"{module}.{cls.__qualname__}"


def copy_model(model):
    """``sklearn.base.clone(model, safe=False)``; a tomotopy model (not picklable; only read) is shared instead."""
    from sklearn.base import clone

    if type(model).__module__.startswith("tomotopy"):
        return model
    return clone(model, safe=False)


def model_kind(model) -> str:
    """The kind of ``model`` (``"spec"``, ``"sklearn-lda"``, ..., ``"spectral"``); a ``TypeError`` saying what can be
    wrapped otherwise."""
    if isinstance(model, TopicModelSpec):
        return "spec"
    from sklearn.decomposition import NMF, LatentDirichletAllocation

    # the classes that can be wrapped (an optional library imported only for its own); their subclasses are refused
    module = type(model).__module__
    if module.startswith("gensim."):
        from gensim.models import HdpModel, LdaModel, LdaMulticore, LsiModel

        kinds: dict[type, str] = {LdaMulticore: "gensim-lda-multicore", LdaModel: "gensim-lda",
                                  HdpModel: "gensim-hdp", LsiModel: "gensim-lsi"}
    elif module.startswith("tomotopy"):
        import tomotopy

        kinds = {tomotopy.LDAModel: "tomotopy-lda"}
    elif module.startswith("topicdp."):
        from ..spectral import SpectralLDA
        from ..variational import VariationalLDA

        kinds = {VariationalLDA: "vem", SpectralLDA: "spectral"}
    else:
        kinds = {}
    kinds.update({LatentDirichletAllocation: "sklearn-lda", NMF: "sklearn-nmf"})
    if type(model) in kinds:
        return kinds[type(model)]
    if isinstance(model, tuple(kinds)):
        raise TypeError(f"{WHAT_CAN_BE_WRAPPED}; got {_qualname(model)}, a subclass whose own behaviour the adapter "
                        "would not keep: wrap a function that fits it in CallableModel. " + WHY_NOT_FITTED)
    hint = ""
    if module.startswith("topicdp.") and type(model).__name__ in ("DPVariationalEM", "DPVariationalLDA",
                                                                  "DPSpectralMoments"):
        hint = " (already a private estimator: fit it directly; TopicDP releases a non-private model with noise)"
    elif callable(model) and not hasattr(model, "fit"):
        hint = " (a function: CallableModel(func, n_topics=K) wraps it)"
    raise TypeError(f"{WHAT_CAN_BE_WRAPPED}; got {_qualname(model)}{hint}. {WHY_NOT_FITTED}")


def _seed(params: dict, name: str = "random_state") -> tuple[int, list[str]]:
    """The model's seed as an int, and the change made to it (f must be deterministic)."""
    seed = params.pop(name, None)
    if seed is None:
        return 0, [f"{name} None -> 0 (f must be deterministic)"]
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and int(seed) >= 0:
        return int(seed), []
    raise ValueError(f"{name} cannot be carried over: got {type(seed).__name__} ({seed!r}); f must be deterministic, "
                     f"so pass an integer seed >= 0 (a RandomState or Generator is a stream, not a seed)")


#: public starts by (P's fingerprint, the start's definition): TopicDP wraps its model once to sample and once to
#: fit, and the second wrap reuses the first one's deterministic fit on P; the oldest is dropped first
_STARTS: dict = {}
_MAX_STARTS = 8


def _public_start(reference, definition: tuple, fit) -> np.ndarray:
    import joblib

    # joblib.hash reads arrays (a gensim alpha) exactly, where their repr would round them
    key = (reference.fingerprint(), joblib.hash(definition))
    if key not in _STARTS:
        if len(_STARTS) >= _MAX_STARTS:
            _STARTS.pop(next(iter(_STARTS)))
        _STARTS[key] = np.asarray(fit(), dtype=float)
    return _STARTS[key].copy()


def wrap_model(model, *, reference=None, unit: str = "user", keep_model: bool = False,
               vocabulary=None, bounds: dict | None = None) -> WrappedModel:
    """The spec f for ``model`` (a spec as given; the others read through ``get_params``, gensim's configuration
    attributes or tomotopy's ``init_params``), with the changes made to it.

    Parameters
    ----------
    reference : Corpus or None
        The public reference P: with it (and without ``keep_model``) an unstable model gets the stable form.
    unit, vocabulary, bounds
        The privacy unit, the private corpus' vocabulary (P must be on it) and contribution bounds (at the user
        level the stable form weighs no user more than P's median user cut to them).
    """
    kind = model_kind(model)
    if kind == "spec":
        return WrappedModel(model, _qualname(model))
    given, setting = _qualname(model), _Setting(reference, unit, keep_model, vocabulary, bounds)
    if kind.startswith("sklearn"):
        from sklearn.base import clone

        model = clone(model)  # the unfitted estimator: the fitted state is not even read
    return _READERS[kind](model, given, setting)


def _estimator_params(model, name: str = "n_components") -> tuple[dict, int, int, list[str]]:
    """An estimator's ``get_params`` without its number of topics and seed, those two, and the seed's change."""
    params = model.get_params(deep=False)
    n_topics = _n_topics(params, name)
    return (params, n_topics, *_seed(params))


def _n_topics(params: dict, name: str = "n_components") -> int:
    k = params.pop(name)
    if not isinstance(k, numbers.Integral) or isinstance(k, bool) or k < 1:
        raise ValueError(f"{name} cannot be carried over: got {k!r}; the number of topics must be an integer >= 1 "
                         "stated in advance (a count chosen from the private data would be a private statistic)")
    return int(k)


def _wrap_sklearn_lda(model, given: str, setting: _Setting) -> WrappedModel:
    params, n_topics, seed, changes = _estimator_params(model)
    n_jobs = params.pop("n_jobs", None)
    if n_jobs not in (None, 1):
        changes.append(f"n_jobs {n_jobs} -> 1 (TopicDP's n_jobs runs neighbour pairs in parallel)")
    spec = SklearnLDA(n_topics, seed, **params)
    as_given = _kept_as_given(spec, given, changes, (), setting)
    if as_given is not None:
        return as_given
    from sklearn.decomposition import LatentDirichletAllocation as LDA

    # the start: the user's LatentDirichletAllocation as given (its seed, one job) fitted on the public P
    definition, reference = {**params, "n_components": n_topics, "random_state": seed, "n_jobs": 1}, setting.reference
    stable = {**params, "init": _public_start(reference, ("LatentDirichletAllocation", definition),
                                              lambda: LDA(**definition).fit(reference.X).components_)}
    changes.append(f"start: the model as given (random_state {seed}) fitted on P, instead of random draws")
    batch = {"learning_method": "batch", "max_iter": min(params["max_iter"], STABLE_LDA_ITERATIONS),
             "evaluate_every": -1 if (params["evaluate_every"] or 0) > 0 else params["evaluate_every"]}
    for name, value in batch.items():
        if value != params[name]:
            why = " (no perplexity stop)" if name == "evaluate_every" else ""
            changes.append(f"{name} {params[name]} -> {value}{why}")
            stable[name] = value
    stable["document_start"] = "constant"
    changes.append("document start: random draws in row order -> constant")
    weight = _user_weight(setting, stable, changes)
    spec = SklearnLDA(n_topics, seed, **stable)
    return WrappedModel(spec, given, tuple(changes), (
        "The changes make the model the toolkit's stable form of scikit-learn's LDA (SklearnLDA: from topics fitted "
        f"on P, batch variational Bayes, a position-independent document start, a fixed number of iterations{weight}), "
        "so that neighbouring corpora move f little and the sampled sensitivity stays small; keep_model=True keeps the "
        "model as given.",))


def _user_weight(setting: _Setting, stable: dict, changes: list) -> str:
    """At the user level, cap every user's weight at P's median user's norm (not tokens: a user of few repeated words
    moves a Frobenius distance as a much larger user would); returns the words the stable form's note adds."""
    if setting.unit != "user":
        return ""
    from ..inference.estep import unit_norms
    from ..samplers.sampler import bounded_like

    cut = bounded_like(setting.reference, setting.bounds or {})  # P cut to the private bounds, as the sampler cuts
    stable["max_user_norm"] = float(np.median(unit_norms(cut.X, cut.doc_users, cut.n_users)))
    changes.append(f"user weight: word counts -> a norm of at most {stable['max_user_norm']:,.1f} a user (P's median "
                   "user), and in each topic at most that norm times K times the topic's share, so that no user pulls "
                   "the topics more than another")
    return ", no user weighing more than P's median user"


def _gensim_prior(values, name: str, optimized: bool, changes: list):
    """A gensim prior: a scalar if uniform, else its array (alpha); None if learned or over the model's vocabulary."""
    values = np.asarray(values, dtype=np.float64)
    if optimized:
        changes.append(f"{name} 'auto' -> {'symmetric' if name == 'alpha' else 'None (1/K)'} (an 'auto' prior is "
                       "learned from the data it was fitted on, which must not be used)")
        return None
    if values.size and np.all(values == values.flat[0]):
        return float(values.flat[0])
    if name == "alpha":
        return values  # a fixed asymmetric prior over topics: a function of K alone
    changes.append("eta (per word, over the model's own id2word) -> None (1/K): the vocabulary is the corpus'")
    return None


def _wrap_gensim_lda(model, given: str, setting: _Setting) -> WrappedModel:
    """gensim's LdaModel/LdaMulticore from its attributes (never its id2word, ``state`` or ``expElogbeta``)."""
    changes = [_GENSIM_SEED]
    notes: list[str] = [_NO_ID2WORD]
    params: dict = {name: getattr(model, name) for name in (
        "passes", "iterations", "chunksize", "decay", "offset", "update_every", "eval_every", "gamma_threshold",
        "minimum_probability")}
    params["dtype"] = np.dtype(model.dtype).type
    for name in ("alpha", "eta"):
        prior = _gensim_prior(getattr(model, name), name, bool(getattr(model, f"optimize_{name}")), changes)
        if prior is not None:
            params[name] = prior
    n_topics = int(model.num_topics)
    multicore = model_kind(model) == "gensim-lda-multicore"
    if multicore:
        params.pop("update_every")  # LdaMulticore takes no update_every
        workers = getattr(model, "workers", 1)
        if workers != 1:
            changes.append(f"workers {workers} -> 1 (several workers merge updates in timing order: not deterministic)")
        params["workers"] = 1
    # gensim's eval_every None (no evaluation) is the adapter's 0: its None stands for the learning's default
    kept = {**params, "eval_every": params["eval_every"] or 0}
    spec: TopicModelSpec = (GensimLDAMulticore if multicore else GensimLDA)(n_topics, 0, **kept)
    as_given = _kept_as_given(spec, given, changes, notes, setting)
    if as_given is not None:
        return as_given
    from sklearn.base import clone

    reference = setting.reference
    # the start: the model as given (seed 0: gensim keeps no seed) fitted on the public P
    start = _public_start(reference, (type(spec).__qualname__, spec.get_params()),
                          lambda: clone(spec).fit(reference).topic_word_)
    if multicore:
        changes.append("LdaMulticore -> LdaModel (batch learning, which LdaMulticore does not offer)")
        params.pop("workers")
    given_settings = ("alpha", "iterations", "gamma_threshold")  # E-step settings and a fixed prior: kept as given
    stable = {k: v for k, v in params.items() if (k not in GENSIM_BATCH or k in given_settings) and k != "chunksize"}
    changes.append("start: the model as given (seed 0) fitted on P, instead of random draws")
    for name, value in (item for item in GENSIM_BATCH.items() if item[0] not in given_settings):
        old = params.get(name, "-")
        if name == "dtype":
            old, value = np.dtype(old).name if old != "-" else old, np.dtype(value).name
        if old != value and not (name == "update_every" and multicore):
            changes.append(f"{name} {old} -> {value}")
    if params.get("chunksize") is not None:
        changes.append(f"chunksize {params['chunksize']} -> all documents (one E-step per pass)")
    changes.append("learning online -> batch; document start: random draws in corpus order -> constant")
    weight = _user_weight(setting, stable, changes)
    spec = GensimLDA(n_topics, 0, init=start, learning="batch", document_start="constant", **stable)
    return WrappedModel(spec, given, tuple(changes), (*notes, (
        "The changes make the model the toolkit's stable form of gensim's LDA (GensimLDA: from topics fitted on P, "
        f"batch variational Bayes, a position-independent document start, a fixed number of passes{weight}); "
        "keep_model=True keeps the model as given.")))


def _wrap_sklearn_nmf(model, given: str, setting: _Setting) -> WrappedModel:
    params, n_topics, seed, changes = _estimator_params(model)
    if params.get("init") == "custom":
        raise ValueError("init='custom' cannot be carried over: it needs W and H at fit time, and starting H from "
                         "topics fitted on the private data would publish them; use SklearnNMF(init_topics=...) "
                         "with topics fitted on a public corpus")
    spec = SklearnNMF(n_topics, seed, **params)
    return WrappedModel(spec, given, tuple(changes), (
        "NMF has no known stable form (SklearnNMF.stability: even from public topics a few neighbouring corpora "
        "move it far), so its parameters are kept as given",))


def _kept_as_given(spec: TopicModelSpec, given: str, changes: list, notes, setting: _Setting) -> WrappedModel | None:
    """The model as given where no stable form is needed, asked for or possible (no P); else None (P checked)."""
    if setting.keep_model or spec.stability()[0] is not False:
        return WrappedModel(spec, given, tuple(changes), tuple(notes))
    if setting.reference is None:
        return WrappedModel(spec, given, tuple(changes), (*notes, NO_REFERENCE))
    if setting.vocabulary is not None and tuple(setting.reference.vocabulary) != tuple(setting.vocabulary):
        raise ValueError("the stable form of the model starts from topics fitted on the public reference P, which "
                         "needs P on the corpus' vocabulary: build P with vocabulary=corpus.vocabulary (or pass "
                         "keep_model=True to keep the model as given, with its stability warning)")
    return None


def _no_stable_form(spec: TopicModelSpec) -> str:
    name = type(spec).__name__
    return (f"{name} has no known stable form ({name}.stability: {spec.stability()[1]}), so its parameters are kept "
            "as given")


def _wrap_tomotopy_lda(model, given: str, setting: _Setting) -> WrappedModel:
    """tomotopy's LDAModel from ``init_params`` (its constructor's arguments) and its two settable options."""
    import tomotopy

    from .tomotopy import TomotopyLDA

    init = getattr(model, "init_params", None)
    if not isinstance(init, dict):
        raise ValueError("this tomotopy LDAModel does not record its constructor's arguments (init_params; a copy() "
                         "or a model saved by tomotopy before 0.9 lacks them), so its seed, priors and word filters "
                         "cannot be read: pass TomotopyLDA(n_topics, random_state, alpha=..., eta=..., ...) instead")
    if init.get("transform") is not None:
        raise ValueError("transform cannot be carried over: TomotopyLDA adds each document's words as they are; pass "
                         "the corpus already transformed, or CallableModel(func, n_topics) with a function that "
                         "builds and trains the model")
    alpha = np.atleast_1d(np.asarray(init.get("alpha", 0.1), dtype=np.float64))
    if not np.all(alpha == alpha[0]):
        raise ValueError(f"alpha cannot be carried over: got one value per topic ({alpha.tolist()}), and TomotopyLDA "
                         "takes a symmetric alpha; pass LDAModel(alpha=<float>) or TomotopyLDA(alpha=<float>)")
    changes: list[str] = []
    if init.get("seed") is None:
        changes.append("seed None -> 0 (tomotopy drew one from std::random_device, which cannot be recovered; f must "
                       "be deterministic)")
    seed, _ = _seed({"seed": 0 if init.get("seed") is None else init["seed"]}, "seed")
    changes.append("iterations: not held by the model (train() takes them) -> 200, TomotopyLDA's default (pass "
                   "TomotopyLDA(..., iterations=N) to choose)")
    notes = ["the model's documents, vocabulary and an alpha optimised in training are not used: the documents and "
             "words are the corpus', the priors those given to LDAModel; f trains with one worker (reproducible)"]
    if init.get("corpus") is not None:
        notes.append("the corpus given to LDAModel is not used: the documents are the corpus fit is given")
    spec = TomotopyLDA(int(model.k), seed, alpha=float(alpha[0]), eta=float(init.get("eta", 0.01)),
                       optim_interval=int(model.optim_interval), burn_in=int(model.burn_in),
                       tw=tomotopy.TermWeight(model.tw).name.lower(), min_cf=int(init.get("min_cf", 0)),
                       min_df=int(init.get("min_df", 0)), rm_top=int(init.get("rm_top", 0)))
    return WrappedModel(spec, given, tuple(changes), (*notes, _no_stable_form(spec)))


def _wrap_gensim_hdp(model, given: str, setting: _Setting) -> WrappedModel:
    """gensim's HdpModel from its attributes (``m_T``, ``m_kappa``, ...; never ``m_lambda`` or ``lda_alpha``)."""
    from .gensim import GensimHDP

    if model.max_time is not None:
        raise ValueError(f"max_time cannot be carried over: got {model.max_time!r}; a time limit makes f depend on "
                         "the machine's speed, not on the corpus alone; pass HdpModel(max_time=None) (max_chunks "
                         "bounds the work deterministically)")
    changes = [_GENSIM_SEED]
    if model.outputdir is not None:
        changes.append(f"outputdir {model.outputdir!r} -> none (f writes no files)")
    T = int(model.m_T)
    changes.append(f"n_topics: HdpModel has no number of topics to release (it uses up to T of them) -> T={T}, every "
                   f"row of get_topics() (GensimHDP(K, T={T}) releases the K with the largest stick weights instead)")
    spec = GensimHDP(T, 0, T=T, K=int(model.m_K), max_chunks=model.max_chunks, chunksize=int(model.chunksize),
                     kappa=float(model.m_kappa), tau=float(model.m_tau) - 1,  # gensim stores tau + 1
                     alpha=model.m_alpha, gamma=model.m_gamma, eta=model.m_eta, scale=model.m_scale,
                     var_converge=model.m_var_converge)
    return WrappedModel(spec, given, tuple(changes), (
        "the model's id2word and corpus are not used: the words and documents are the corpus'", _no_stable_form(spec)))


def _wrap_gensim_lsi(model, given: str, setting: _Setting) -> WrappedModel:
    """gensim's LsiModel from its attributes (never its id2word or projection, the fitted SVD)."""
    from .gensim import GensimLSI

    if getattr(model, "dispatcher", None) is not None:
        raise ValueError("a distributed LsiModel cannot be carried over: a cluster makes f depend on more than the "
                         "corpus; pass LsiModel(distributed=False)")
    seed, changes = _seed({"random_seed": model.random_seed}, "random_seed")
    spec = GensimLSI(_n_topics({"num_topics": model.num_topics}, "num_topics"), seed, chunksize=int(model.chunksize),
                     decay=float(model.decay), onepass=bool(model.onepass), power_iters=int(model.power_iters),
                     extra_samples=int(model.extra_samples), dtype=np.dtype(model.dtype).type)
    return WrappedModel(spec, given, tuple(changes), (
        _NO_ID2WORD, _no_stable_form(spec)))


def _wrap_vem(model, given: str, setting: _Setting) -> WrappedModel:
    """The toolkit's VariationalLDA by ``get_params``; with P, its stable form starts from topics fitted on P."""
    from .variational import VariationalModel

    params, n_topics, seed, changes = _estimator_params(model, "n_topics")
    notes = []
    if params["init"] is not None:
        notes.append("init is carried over as given: starting topics must come from public data, never the private "
                     "corpus")
    spec = VariationalModel(n_topics, seed, **params)
    as_given = _kept_as_given(spec, given, changes, notes, setting)
    if as_given is not None:
        return as_given
    from ..forecast import public_init

    reference, unit = setting.reference, setting.unit  # the toolkit's public start, fitted once per P and setting
    stable = {**params, "init": _public_start(reference, ("public_init", n_topics, unit, seed),
                                              lambda: public_init(reference, n_topics, unit=unit, random_state=seed))}
    changes.append("start: topics fitted on P instead of random draws")
    if params["warmup_iterations"] not in ("auto", 0):
        changes.append(f"warmup_iterations {params['warmup_iterations']} -> 0 (public topics need no warm-up)")
        stable["warmup_iterations"] = 0
    spec = VariationalModel(n_topics, seed, **stable)
    return WrappedModel(spec, given, tuple(changes), (
        "The change makes the model the toolkit's stable form of its variational EM (VariationalModel: a fixed "
        "number of full-batch EM iterations from topics fitted on P); keep_model=True keeps the model as given.",))


def _wrap_spectral(model, given: str, setting: _Setting) -> WrappedModel:
    """The toolkit's SpectralLDA by ``get_params``."""
    from .spectral import SpectralModel

    params, n_topics, seed, changes = _estimator_params(model, "n_topics")
    spec = SpectralModel(n_topics, seed, **params)
    return WrappedModel(spec, given, tuple(changes), (_no_stable_form(spec),))


#: kind (:func:`model_kind`) -> the reader that turns such a model into its spec
_READERS = {"sklearn-lda": _wrap_sklearn_lda, "sklearn-nmf": _wrap_sklearn_nmf, "gensim-lda": _wrap_gensim_lda,
            "gensim-lda-multicore": _wrap_gensim_lda, "tomotopy-lda": _wrap_tomotopy_lda,
            "gensim-hdp": _wrap_gensim_hdp, "gensim-lsi": _wrap_gensim_lsi, "vem": _wrap_vem,
            "spectral": _wrap_spectral}


__all__ = ["WrappedModel", "model_kind", "wrap_model", "WHAT_CAN_BE_WRAPPED", "WHY_NOT_FITTED"]
