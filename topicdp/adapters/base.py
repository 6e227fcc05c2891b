"""The adapter protocol: a model *spec* is a deterministic function f: Corpus -> K x V topic-word matrix.

Every spec is also a scikit-learn estimator: ``fit(corpus)`` sets ``topic_word_`` (f of the corpus), and
``get_params``/``set_params``/``clone`` see its hyper-parameters, so :class:`topicdp.TopicDP` is a
meta-estimator over it like any other scikit-learn one.

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
from typing import Any, ClassVar

import numpy as np

from sklearn.base import BaseEstimator

from ..topics import canonical_order


class TopicModelSpec(BaseEstimator, ABC):
    """A topic model with fixed hyper-parameters and seed, as a function of the corpus.

    Subclasses implement :meth:`_fit` (raw K x V matrix in any topic order) and declare ``name``.
    :meth:`fit_topic_word` validates the output and returns it in canonical order, or, when the spec was given
    public starting topics (its ``start_param``), in the start's order. :meth:`fit` is the estimator form.

    Parameters
    ----------
    n_topics : int
        K, the number of topics (rows of the output).
    random_state : int
        Seed of the model; fixed so that f is deterministic.
    **params
        The model's own hyper-parameters (each subclass documents them) and its library estimator's keyword arguments
        (:attr:`native`); ``get_params`` lists them beside ``n_topics`` and ``random_state``. Any other name, and the
        library's names for what the adapter sets itself (``n_components``, ``num_topics``, ``id2word``), is refused
        by name when the parameters are first used (``fit``, ``describe``).

    Attributes
    ----------
    topic_word_ : ndarray (K, V)
        f(corpus), set by :meth:`fit`.
    n_features_in_ : int
        V.
    """

    name: ClassVar[str] = "abstract"
    #: whether rows are probability vectors (post-processing renormalises only those)
    probabilistic: bool = True  # an instance may say otherwise (CallableModel)
    #: the parameter holding public starting topics (K, V), for models that take them
    start_param: ClassVar[str | None] = None

    #: the model's own defaults, under the parameters a caller gives
    defaults: ClassVar[dict[str, Any]] = {}
    #: ``"module:Class"`` of the library estimator that receives the further keyword arguments (None: not checked)
    native: ClassVar[str | None] = None
    #: the adapter's own parameters beside ``n_topics`` and ``random_state``
    own_params: ClassVar[tuple[str, ...]] = ()
    #: the library's parameters the adapter sets itself -> what to pass instead
    reserved: ClassVar[dict[str, str]] = {}

    def __init__(self, n_topics: int, random_state: int = 0, **params: Any) -> None:
        # stored as given (scikit-learn's convention: clone and set_params see exactly these); checked when used
        self.n_topics = n_topics
        self.random_state = random_state
        self._given = dict(params)

    @property
    def params(self) -> dict[str, Any]:
        """The hyper-parameters in effect: the given ones over the model's defaults, resolved and checked
        (:meth:`_resolve`; ``ValueError`` naming a parameter that is out of range or unknown)."""
        self._check_names()
        return self._resolve(dict(self._given))

    def _check_names(self) -> None:
        """Refuse a parameter that is neither the adapter's own nor one its library estimator takes, naming it (a
        misspelt or foreign name would otherwise be swallowed), and the library's names for what the adapter sets
        itself (``n_components``: the number of topics is ``n_topics``)."""
        if self.native is None:
            return
        import importlib
        import inspect

        module, name = self.native.split(":")
        signature = inspect.signature(getattr(importlib.import_module(module), name).__init__)
        native = {p.name for p in signature.parameters.values()
                  if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
        for key in self._given:
            if key in self.reserved:
                raise ValueError(f"{type(self).__name__} does not take {key!r}: {self.reserved[key]}")
            if key not in native and key not in self.own_params:
                own = ", ".join(("n_topics", "random_state", *self.own_params))
                raise ValueError(f"{type(self).__name__} got an unknown parameter {key!r}: it takes {own}, and the "
                                 f"keyword arguments of {module}.{name}")

    def _resolve(self, params: dict[str, Any]) -> dict[str, Any]:
        """The effective hyper-parameters from the given ones (subclasses resolve ``None``s and check ranges)."""
        return {**self.defaults, **params}

    # scikit-learn's estimator protocol: the hyper-parameters are n_topics, random_state and **params
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {"n_topics": self.n_topics, "random_state": self.random_state, **self._given}

    def set_params(self, **params: Any) -> "TopicModelSpec":
        merged = {**self.get_params(), **params}
        self.__init__(**merged)  # type: ignore[misc]  # re-validates, as the constructor does
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # counts
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y=None) -> "TopicModelSpec":
        """Fit on a :class:`topicdp.Corpus` or a document-term count matrix; sets ``topic_word_`` = f(X).

        A matrix becomes a corpus with one user per document and words named by their column.
        """
        from ..corpus import as_corpus

        corpus = as_corpus(X)
        self.topic_word_ = self.fit_topic_word(corpus)
        self.n_features_in_ = corpus.n_words
        return self

    @abstractmethod
    def _fit(self, corpus) -> np.ndarray:
        """Fit the model on ``corpus`` and return its raw (K, V) topic-word matrix."""

    def fit_topic_word(self, corpus) -> np.ndarray:
        """f(corpus): the (K, V) topic-word matrix, float64, in canonical order or in the public start's order.

        From public starting topics row k grew from start k: that order is a deterministic function of the data
        and the start, and unlike the canonical order it does not flip when two top words swap ranks.
        """
        from .._validation import check_int

        check_int(self.n_topics, "n_topics", low=1)
        check_int(self.random_state, "random_state", low=0)
        params = self.params  # resolved and checked before any work
        if self.n_topics > corpus.n_words:
            raise ValueError(
                f"n_topics must be at most the vocabulary size ({corpus.n_words}), got {self.n_topics}"
            )
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
        schedule), read from the spec alone; the measured Delta_s is the evidence.

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

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{type(self).__name__}(n_topics={self.n_topics}, random_state={self.random_state}{', ' if args else ''}{args})"


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
