"""The adapter protocol: a model *spec* is a deterministic function f: Corpus -> K x V topic-word matrix.

Every spec is also a scikit-learn estimator with explicit parameters: ``__init__`` stores each keyword unchanged,
``fit(corpus)`` validates them against the class's ``_parameter_constraints`` (scikit-learn's ``Interval``,
``StrOptions``, ...) and sets ``topic_word_`` (f of the corpus), and ``get_params``/``set_params``/``clone`` see
exactly those parameters, so :class:`topicdp.TopicDP` is a meta-estimator over it like any other scikit-learn one.

Sensitivity sampling (TopicDP, Alg. 1) measures ||f(D) - f(D')||_F over neighbouring corpora, so f must
be a deterministic function of the data: every adapter fixes its model's seed, runs single-threaded where
threads would change the result, and returns its topics in a *canonical order* that depends only on the
output (topic models are invariant to permuting topics; aligning f(D) to f(D') after the fact would
measure a different function).

The canonical order is :func:`topicdp.topics.canonical_order` (defined below the adapters, since the audit
and the readability forecast need it too): topics sorted by their ranked word lists, a deterministic
function of the *set* of rows.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from numbers import Integral
from typing import Any, ClassVar

import numpy as np

from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, InvalidParameterError, Options, make_constraint

from ..topics import canonical_order

#: the constraints every spec puts on its number of topics and its seed (an int: f must be deterministic, and a
#: RandomState or Generator would be a stream consumed by each fit, not a seed)
N_TOPICS = [Interval(Integral, 1, None, closed="left")]
SEED = [Interval(Integral, 0, None, closed="left")]


class TopicModelSpec(BaseEstimator, ABC):
    """A topic model with fixed hyper-parameters and seed, as a function of the corpus.

    Subclasses take their parameters explicitly in ``__init__`` (stored unchanged), declare them in
    ``_parameter_constraints``, implement :meth:`_fit` (raw K x V matrix in any topic order) and declare ``name``.
    :meth:`fit_topic_word` validates the parameters and the output and returns it in canonical order, or, when the
    spec was given public starting topics (its ``start_param``), in the start's order. :meth:`fit` is the estimator
    form.

    Every subclass takes ``n_topics`` (K, the rows of the output) and, except :class:`CallableModel`,
    ``random_state`` (an int seed: f must be deterministic). The library's own names for what the toolkit's
    parameters hold (``n_components``, ``num_topics``, ``id2word``, ...) are refused by name with a ``TypeError``
    that says what to pass instead; any other unknown name is refused by Python itself.

    Attributes
    ----------
    topic_word_ : ndarray (K, V)
        f(corpus), set by :meth:`fit`.
    components_ : ndarray (K, V)
        The same matrix, under scikit-learn's name for a decomposition's topics (rows on the simplex for a
        probabilistic model, not a library's unnormalised pseudo-counts).
    n_features_in_ : int
        V.
    """

    name: ClassVar[str] = "abstract"
    #: whether rows are probability vectors (post-processing renormalises only those)
    probabilistic: bool = True  # an instance may say otherwise (CallableModel)
    #: the parameter holding public starting topics (K, V), for models that take them
    start_param: ClassVar[str | None] = None
    #: the library's names for what the adapter sets itself -> what to pass instead (refused by name)
    refused: ClassVar[dict[str, str]] = {"n_components": "the number of topics is n_topics"}
    #: scikit-learn's constraint table: parameter -> the constraints of which one must hold (checked when used)
    _parameter_constraints: ClassVar[dict[str, list]] = {"n_topics": N_TOPICS, "random_state": SEED}

    def __new__(cls, *args: Any, **kwargs: Any):
        # before __init__, whose own TypeError for an unknown name would not say what to pass instead
        for key in kwargs:
            if key in cls.refused:
                raise TypeError(f"{cls.__name__} does not take {key!r}: {cls.refused[key]}")
        return super().__new__(cls)

    @property
    def params(self) -> dict[str, Any]:
        """The hyper-parameters in effect beside ``n_topics`` and ``random_state``: the stored ones validated
        (:meth:`_validate_params`) and resolved (:meth:`_resolve`: a ``None`` that stands for a default depending
        on other parameters becomes that default)."""
        self._validate_params()
        given = {k: v for k, v in self.get_params(deep=False).items() if k not in ("n_topics", "random_state")}
        return self._resolve(given)

    def _validate_params(self) -> None:
        """Check every parameter against ``_parameter_constraints``.

        scikit-learn's constraint objects and its ``InvalidParameterError`` (a ``ValueError`` and a ``TypeError``),
        with a message in the toolkit's words: the parameter, what it must be and what it got. A bool is not taken
        for a number (``Interval(Integral)`` alone would accept ``True``).
        """
        for key, value in self.get_params(deep=False).items():
            constraints = [make_constraint(c) for c in self._parameter_constraints.get(key, ())]
            if not constraints or any(_satisfies(c, value) for c in constraints):
                continue
            allowed = [_allowed(c) for c in constraints if not c.hidden]
            text = allowed[0] if len(allowed) == 1 else f"{', '.join(allowed[:-1])} or {allowed[-1]}"
            raise InvalidParameterError(f"{key} must be {text}, got {_shown(value)} (a parameter of "
                                        f"{type(self).__name__})")

    def _resolve(self, params: dict[str, Any]) -> dict[str, Any]:
        """The effective hyper-parameters from the stored ones (subclasses resolve ``None``s and check what a
        constraint table cannot state, e.g. one parameter against another)."""
        return params

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # counts
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y=None) -> "TopicModelSpec":
        """Fit on a :class:`topicdp.Corpus` or a document-term count matrix; sets ``topic_word_`` = f(X) (and
        ``components_``, the same matrix).

        A matrix becomes a corpus with one user per document and words named by their column.
        """
        from ..corpus import as_corpus

        corpus = as_corpus(X)
        self.topic_word_ = self.fit_topic_word(corpus)
        self.components_ = self.topic_word_
        self.n_features_in_ = corpus.n_words
        return self

    @abstractmethod
    def _fit(self, corpus) -> np.ndarray:
        """Fit the model on ``corpus`` and return its raw (K, V) topic-word matrix."""

    def fit_topic_word(self, corpus) -> np.ndarray:
        """f(corpus): the (K, V) topic-word matrix, float64, in canonical order or in the public start's order.

        From public starting topics row k grew from start k: that order is a deterministic function of the data
        and the start, and unlike the canonical order it does not flip when two top words swap ranks.

        A corpus without documents (a release's private corpus may hold none, and whether it does is private) has
        f = the uniform topics, the same for every model: no library fits on zero rows, and f must be defined on
        every corpus a neighbour relation reaches. A data-independent value keeps f a function of the data, and its
        rows are probability vectors, so the global bounds of output perturbation (any two such matrices differ by
        at most sqrt(2K) in Frobenius norm, 2K in L1) hold for it as for any fit.
        """
        params = self.params  # validated and resolved before any work
        if self.n_topics > corpus.n_words:
            raise ValueError(
                f"n_topics must be at most the vocabulary size ({corpus.n_words}), got {self.n_topics}"
            )
        n_docs = corpus.n_docs if hasattr(corpus, "n_docs") else corpus.X.shape[0]  # a duck-typed corpus has X
        if n_docs == 0:
            return np.full((self.n_topics, corpus.n_words), 1.0 / corpus.n_words)
        W = np.asarray(self._fit(corpus), dtype=np.float64)
        expected = (self.n_topics, corpus.n_words)
        if W.shape != expected:
            raise ValueError(f"model {self.name!r} returned a matrix of shape {W.shape}, expected {expected}")
        if not np.all(np.isfinite(W)):
            raise ValueError(f"model {self.name!r} returned non-finite values (NaN or inf)")
        if self.start_param is not None and params.get(self.start_param) is not None:
            return np.ascontiguousarray(W)
        return np.ascontiguousarray(W[canonical_order(W)])

    def stability(self) -> tuple[bool | None, str]:
        """Whether this configuration is expected to be a *stable* function of the data, and why, before any fit.

        Deterministic is not enough for sensitivity sampling to give a usable noise scale: if f jumps between local
        optima for some neighbouring corpora, or treats a document differently depending on its position in the
        corpus, the sampled sensitivity Delta_s (an order statistic of ||f(D) - f(D')||_F over pairs from P) is
        large and the release is noise. This is a statement about the configuration (its start, its learning
        schedule), read from the parameters alone; the measured Delta_s is the evidence.

        Returns
        -------
        (expected, reason) : (bool or None, str)
            ``True``: no known source of jumps; ``False``: a known one, named in ``reason`` with the parameter that
            removes it; ``None``: not assessed for this model.
        """
        return None, "not assessed for this model"

    def describe(self) -> dict[str, Any]:
        """JSON-serialisable description (used in reports and in the sensitivity cache key)."""
        expected, reason = self.stability()
        return {
            "model": self.name,
            "n_topics": self.n_topics,
            "random_state": self.random_state,
            "params": {k: _describe_value(v) for k, v in sorted(self.params.items())},
            "stability": {"expected": expected, "reason": reason},
        }

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.describe(), sort_keys=True).encode()).hexdigest()[:16]


def _satisfies(constraint, value) -> bool:
    if isinstance(value, (bool, np.bool_)) and isinstance(constraint, Interval):
        return False  # True is an Integral to Python, not a number of topics or iterations
    return bool(constraint.is_satisfied_by(value))


def _allowed(constraint) -> str:
    """What a constraint allows, in words; a set of options sorted (a set's order changes between runs)."""
    if isinstance(constraint, Options):
        names = sorted(getattr(o, "__name__", repr(o)) if isinstance(o, type) else repr(o)
                       for o in constraint.options)
        return f"one of {', '.join(names)}"
    return str(constraint)


def _shown(value) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return repr(value)


#: Why an LDA-like fit from random topics is not a stable f (shared by the adapters whose ``init`` removes it).
RANDOM_START_REASON = ("its topics start at random draws (seeded), and LDA fits from random starts land in different "
                       "local optima for some neighbouring corpora: pass public starting topics (init)")


def variational_lda_stability(params: dict[str, Any], *, batch: bool, online_reason: str, order: str,
                              repeats: str) -> tuple[bool, str]:
    """:meth:`TopicModelSpec.stability` of a variational-Bayes LDA (gensim's, scikit-learn's) from its resolved
    parameters: stable only from public starting topics (``init``), with batch learning and every document's gamma
    started at a constant (``document_start="constant"``).

    ``online_reason`` says why the library's online learning is not stable (with the parameter that turns it off),
    ``order`` names the order the random document starts are drawn in, ``repeats`` what the fixed count counts.
    """
    reasons = []
    if params.get("init") is None:
        reasons.append(RANDOM_START_REASON)
    if not batch:
        reasons.append(online_reason)
    if params["document_start"] != "constant":
        reasons.append(f"each document's gamma starts at random draws taken in {order}, which change for every "
                       "document after a removed one (document_start='constant')")
    if reasons:
        return False, "; ".join(reasons)
    return True, ("batch variational Bayes from public starting topics with a position-independent document start "
                  f"and a fixed number of {repeats}")


def _describe_value(v):
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_describe_value(x) for x in v]
    if isinstance(v, np.ndarray):  # e.g. public starting topics: a digest, not a (truncated) repr
        data = np.ascontiguousarray(v, dtype=np.float64)
        return {"array": list(data.shape), "sha256": hashlib.sha256(data.tobytes()).hexdigest()[:16]}
    return repr(v)
