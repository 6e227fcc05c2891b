"""The adapter protocol: a model *spec* is a scikit-learn estimator computing a deterministic f: Corpus -> K x V.

Sensitivity sampling (TopicDP, Alg. 1) measures ``||f(D) - f(D')||_F`` over neighbouring corpora, so f has a fixed
seed, one thread where threads change the result, and its topics in :func:`topicdp.topics.canonical_order`
(aligning f(D) to f(D') after the fact would measure another function).
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np

from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, InvalidParameterError, Options, make_constraint

from ..topics import canonical_order

#: the constraints every spec puts on its number of topics and its seed (an int: f must be deterministic, and a
#: RandomState or Generator would be a stream consumed by each fit, not a seed), and those many parameters share
N_TOPICS = POSITIVE_INT = [Interval(Integral, 1, None, closed="left")]
SEED = COUNT = [Interval(Integral, 0, None, closed="left")]
POSITIVE, NON_NEGATIVE = [Interval(Real, 0, None, closed="neither")], [Interval(Real, 0, None, closed="left")]
UNIT_INTERVAL = [Interval(Real, 0, 1, closed="both")]


class CountTags:
    """scikit-learn's tags of an estimator fitted on counts (:class:`TopicModelSpec`, :class:`topicdp.TopicDP`)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # counts
        tags.input_tags.sparse = True
        return tags


class TopicModelSpec(CountTags, BaseEstimator, ABC):
    """A topic model with fixed hyper-parameters and seed, as a function of the corpus.

    Subclasses store their parameters in ``__init__``, declare them in ``_parameter_constraints`` (checked when
    used), implement :meth:`_fit` (raw K x V in any order) and declare ``name``. Every subclass takes ``n_topics``
    and, except :class:`CallableModel`, an int ``random_state``; the library's own names for them (``n_components``,
    ``num_topics``, ``id2word``, ...) are refused with a ``TypeError`` saying what to pass.
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
        """The hyper-parameters in effect beside ``n_topics`` and ``random_state``, validated and resolved."""
        self._validate_params()
        given = {k: v for k, v in self.get_params(deep=False).items() if k not in ("n_topics", "random_state")}
        return self._resolve(given)

    def _validate_params(self) -> None:
        """Check every parameter against ``_parameter_constraints`` (a bool is not taken for a number)."""
        for key, value in self.get_params(deep=False).items():
            constraints = [make_constraint(c) for c in self._parameter_constraints.get(key, ())]
            if not constraints or any(_satisfies(c, value) for c in constraints):
                continue
            allowed = [_allowed(c) for c in constraints if not c.hidden]
            text = allowed[0] if len(allowed) == 1 else f"{', '.join(allowed[:-1])} or {allowed[-1]}"
            shown = f"an array of shape {value.shape}" if isinstance(value, np.ndarray) else repr(value)
            raise InvalidParameterError(f"{key} must be {text}, got {shown} (a parameter of {type(self).__name__})")

    def _resolve(self, params: dict[str, Any]) -> dict[str, Any]:
        """The effective hyper-parameters (subclasses resolve ``None`` defaults and check pairs of parameters)."""
        return params

    def fit(self, X, y=None) -> "TopicModelSpec":
        """Fit on a :class:`topicdp.Corpus` or a count matrix (one user per document); sets ``topic_word_`` = f(X)."""
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
        """f(corpus): the (K, V) matrix, float64, in canonical order or, from public starting topics, in theirs (row k
        grew from start k). A corpus without documents (a private fact) has the uniform topics: f is defined on every
        corpus a neighbour relation reaches, within the global bounds of output perturbation."""
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
        """``(expected, reason)``: whether this configuration is expected to be a *stable* function of the data.

        Deterministic is not enough: an f that jumps between local optima for some neighbours, or treats a document by
        its position, gives a large sampled sensitivity. ``True``: no known source of jumps; ``False``: a known one,
        named with the parameter that removes it; ``None``: not assessed.
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


#: Why an LDA-like fit from random topics is not a stable f (shared by the adapters whose ``init`` removes it).
RANDOM_START_REASON = ("its topics start at random draws (seeded), and LDA fits from random starts land in different "
                       "local optima for some neighbouring corpora: pass public starting topics (init)")


def variational_lda_stability(params: dict[str, Any], *, learning: str, step: str, chunk: str, order: str,
                              repeats: str) -> tuple[bool, str]:
    """:meth:`TopicModelSpec.stability` of a variational-Bayes LDA (gensim's, scikit-learn's): stable only from public
    starting topics, with batch learning (``params[learning] == "batch"``) and a constant document start (the other
    arguments word the reasons)."""
    reasons = []
    if params.get("init") is None:
        reasons.append(RANDOM_START_REASON)
    if params[learning] != "batch":
        reasons.append(f"online learning: an M-step every {step}, so removing a unit shifts every later {chunk} "
                       f"boundary ({learning}='batch')")
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
